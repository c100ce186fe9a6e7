"""The `tracelab profile` front: expands capture globs the shell left
quoted, runs the analyzer on them as one capture (with `--workers` or
`--scheduler`, in parallel on Dask: tracelab.scale.parallel), and with
`--partition date|hour` rewrites the outputs as a partitioned dataset
(tracelab.scale.partition). Both are imported only when asked for."""

from __future__ import annotations

import glob
from collections.abc import Callable
from pathlib import Path

from ..errors import OUTPUT, USAGE, fail
from ..parts import run_analyzer

GLOB_CHARACTERS = ("*", "?")
GRANULARITIES = ("date", "hour")
WRAPPER_HELP = """
Options of `tracelab profile` (not of tracelab-analyzer):
      --partition <date|hour>
          Write the tables as a hive-partitioned Parquet dataset (DIR/connections/date=.../hour=.../),
          by the UTC date (and hour) of each row's time; needs -o DIR. See docs/analyzer.md
      --workers <N|auto>
          Profile in parallel on a Dask LocalCluster of N worker processes (auto: one per core), one
          shard of the connections each, merged into the serial profile's outputs; needs -o DIR.
          See docs/scale.md
      --scheduler <ADDRESS>
          The same on the existing Dask cluster at ADDRESS (tcp://host:8786), one shard per worker
          thread; the workers need tracelab and the capture (and DIR's parent) at the same paths
  A quoted glob ('captures/*.pcap.gz') is expanded like the shell does."""


def expand_globs(argv: list[str]) -> list[str]:
    """Each argument holding `*` or `?` that names no file and matches some
    is replaced by its matches, sorted (the analyzer orders capture files by
    their first timestamp anyway). Options and their values hold neither."""
    expanded: list[str] = []
    for arg in argv:
        if any(c in arg for c in GLOB_CHARACTERS) and not arg.startswith("-") and not Path(arg).exists():
            matches = sorted(glob.glob(arg))
            if matches:
                expanded.extend(matches)
                continue
        expanded.append(arg)
    return expanded


def take_option(argv: list[str], names: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """`NAME VALUE` or `NAME=VALUE` (the last one given) and argv without it."""
    value: str | None = None
    rest: list[str] = []
    args = iter(argv)
    for arg in args:
        name, eq, inline = arg.partition("=")
        if name in names:
            value = inline if eq else next(args, None)
        else:
            rest.append(arg)
    return value, rest


def out_dir(argv: list[str]) -> str | None:
    value, _ = take_option(argv, ("-o", "--out"))
    return value


def main(argv: list[str]) -> int:
    argv = expand_globs(argv)
    partition, argv = take_option(argv, ("--partition",))
    workers, argv = take_option(argv, ("--workers",))
    scheduler, argv = take_option(argv, ("--scheduler",))
    if "-h" in argv or "--help" in argv:
        status = run_analyzer(argv)
        print(WRAPPER_HELP)
        return status
    run = run_analyzer
    if workers is not None or scheduler is not None:
        parallel = parallel_runner(workers, scheduler)
        if isinstance(parallel, int):
            return parallel
        run = parallel
    if partition is None:
        return run(argv)
    if partition not in GRANULARITIES:
        return fail(USAGE, f"--partition must be one of {', '.join(GRANULARITIES)}, got `{partition}`")
    out = out_dir(argv)
    if out is None:
        return fail(USAGE, "--partition needs -o DIR (the dataset's folder)")
    status = run(argv)
    if status != 0:
        return status
    from .partition import PartitionError, partition_profile

    try:
        partition_profile(Path(out), partition)
    except PartitionError as e:
        return fail(OUTPUT, e)
    return 0


def parallel_runner(workers: str | None, scheduler: str | None) -> Callable[[list[str]], int] | int:
    """The parallel profile for `--workers`/`--scheduler`, or the usage
    error's status."""
    import argparse

    from .cluster import Cluster, worker_count

    if workers is not None and scheduler is not None:
        return fail(USAGE, "--workers and --scheduler exclude each other")
    try:
        cluster = Cluster(workers=None if workers is None else worker_count(workers), scheduler=scheduler)
    except argparse.ArgumentTypeError as e:
        return fail(USAGE, f"--workers: {e}")

    def run(argv: list[str]) -> int:
        from .parallel import profile_parallel

        return profile_parallel(argv, cluster)

    return run
