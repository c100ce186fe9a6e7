"""The `tracelab profile` front: expands capture globs the shell left
quoted, runs the analyzer on them as one capture, and with `--partition
date|hour` rewrites the outputs as a partitioned dataset
(tracelab.scale.partition, imported only then)."""

from __future__ import annotations

import glob
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
    if "-h" in argv or "--help" in argv:
        status = run_analyzer(argv)
        print(WRAPPER_HELP)
        return status
    if partition is None:
        return run_analyzer(argv)
    if partition not in GRANULARITIES:
        return fail(USAGE, f"--partition must be one of {', '.join(GRANULARITIES)}, got `{partition}`")
    out = out_dir(argv)
    if out is None:
        return fail(USAGE, "--partition needs -o DIR (the dataset's folder)")
    status = run_analyzer(argv)
    if status != 0:
        return status
    from .partition import PartitionError, partition_profile

    try:
        partition_profile(Path(out), partition)
    except PartitionError as e:
        return fail(OUTPUT, e)
    return 0
