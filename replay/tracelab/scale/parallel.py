"""`tracelab profile ... --workers N|auto | --scheduler ADDRESS`: the profile
in parallel on Dask, equal to the serial profile (issue #20, item 2;
docs/scale.md "The parallel profile").

Phase 1: one Dask task per shard runs `tracelab-analyzer TRACE... --shard
I/N -o SHARD_DIR`: it reads the whole capture (so its network time and
epochs are the capture's), tracks only the connections of its shard and
writes their records. Phase 2, here in the client's process:
`tracelab-analyzer TRACE... --merge SHARD_DIR... -o DIR` merges them in the
serial output order through the serial code. A shard directory is put in
place whole or not at all, so a task that Dask runs again (its worker died)
leaves no trace of the first attempt. There are as many shards as worker
threads: `--workers N` starts N single-threaded workers (tracelab.scale.cluster).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import INTERNAL, OUTPUT, USAGE, fail
from ..parts import analyzer_binary
from .cluster import Cluster, ClusterError, connect

# Options of the analyzer that a shard run must not repeat (clap refuses an
# option given twice) or that only the merge's output uses.
FLAGS_FOR_THE_MERGE_ONLY = ("--json", "-q", "--quiet", "--no-progress")
OPTIONS_SET_PER_SHARD = ("-o", "--out", "--threads")

_LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def _die_with_the_worker() -> None:
    """In the analyzer's process before it starts: SIGKILL when the worker
    that started it dies, so a killed worker leaves no shard run behind
    (its task runs again elsewhere)."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def run_shard(argv: list[str]) -> dict[str, Any]:
    """One Dask task: the analyzer with `argv` (a `--shard` run), on the
    worker. Its status, first stderr line (the analyzer's error is one
    line; clap's usage errors start with theirs), wall and CPU seconds."""
    binary = analyzer_binary()
    if binary is None:
        return {"status": INTERNAL, "error": "tracelab-analyzer is not installed on this worker", "cpu_s": 0.0}
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(binary), *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_die_with_the_worker
    )
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    proc.stderr.close()
    # wait4, not wait: this child's own CPU time. (Not its ru_maxrss: Linux
    # counts in it the worker's RSS, which the child had until its exec.)
    _, wait_status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(wait_status)
    lines = stderr.decode(errors="replace").strip().splitlines()
    return {
        "status": proc.returncode,
        "error": lines[0] if lines else f"tracelab-analyzer {' '.join(argv)}: exit status {proc.returncode}",
        "wall_s": time.monotonic() - started,
        "cpu_s": usage.ru_utime + usage.ru_stime,
    }


def split_argv(argv: list[str]) -> tuple[list[str], dict[str, str | None], list[str]]:
    """(the analyzer's arguments a shard repeats, the per-shard options'
    values, the flags only the merge takes)."""
    common: list[str] = []
    values: dict[str, str | None] = {}
    merge_flags: list[str] = []
    args = iter(argv)
    for arg in args:
        name, eq, inline = arg.partition("=")
        if name in OPTIONS_SET_PER_SHARD:
            values[name] = inline if eq else next(args, None)
        elif arg in FLAGS_FOR_THE_MERGE_ONLY:
            merge_flags.append(arg)
        else:
            common.append(arg)
    return common, values, merge_flags


def profile_parallel(argv: list[str], cluster: Cluster) -> int:
    """The profile of `argv` (the analyzer's arguments, -o given) as shard
    tasks on `cluster` and a merge here; the analyzer's exit status."""
    common, values, merge_flags = split_argv(argv)
    out = values.get("-o") or values.get("--out")
    if not out:
        return fail(USAGE, "--workers and --scheduler need -o DIR")
    if "--shard" in common or "--merge" in common or any(a.startswith(("--shard=", "--merge=")) for a in common):
        return fail(USAGE, "--shard and --merge are the parallel profile's own: not with --workers or --scheduler")
    quiet = "-q" in merge_flags or "--quiet" in merge_flags or "--json" in merge_flags
    target = Path(out).absolute()
    work = target.parent / f".{target.name}.shards-{os.getpid()}"
    try:
        work.mkdir(parents=True, exist_ok=False)
    except OSError as e:
        return fail(OUTPUT, f"{work}: cannot create the shards' directory: {e}")
    try:
        try:
            with connect(cluster, quiet) as client:
                shards = run_shards(
                    client, shard_count(client, cluster), common, values.get("--threads") or "1", work, quiet
                )
        except ClusterError as e:
            return fail(USAGE, e)
        failed = next((r for r in shards if r["status"] != 0), None)
        if failed is not None:
            # A shard's own error (an unreadable capture, a bad option) is
            # the analyzer's: its line and status, as serially.
            print(failed["error"], file=sys.stderr)
            return failed["status"] if failed["status"] > 0 else INTERNAL
        merge = [*common, *merge_flags, "-o", out]
        for i in range(len(shards)):
            merge += ["--merge", str(work / f"shard-{i}")]
        binary = analyzer_binary()
        assert binary is not None  # resolve_profile checked it
        return subprocess.call([str(binary), *merge])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def shard_count(client: Any, cluster: Cluster) -> int:
    """One shard per worker thread: `--workers N` is N, a cluster's is the
    sum of its workers' threads."""
    count = sum(client.nthreads().values()) if cluster.scheduler else cluster.workers
    if not count:
        raise ClusterError("the cluster has no workers")
    return count


def run_shards(
    client: Any, count: int, common: list[str], threads: str, work: Path, quiet: bool
) -> list[dict[str, Any]]:
    """Runs the `count` shard tasks on the cluster of `client`; their
    results (run_shard's) in shard order. Progress (shards done / N) on
    stderr."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    commands = [
        [
            *common,
            "--shard",
            f"{i}/{count}",
            "--threads",
            threads,
            "--no-progress",
            "-q",
            "-o",
            str(work / f"shard-{i}"),
        ]
        for i in range(count)
    ]
    futures = client.map(run_shard, commands, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[dict[str, Any]] = [{} for _ in range(count)]
    done = 0
    try:
        for future in as_completed(futures):
            results[index[future.key]] = future.result()
            done += 1
            if not quiet:
                print(f"\rshards done: {done}/{count}", end="\n" if done == count else "", file=sys.stderr)
    except KilledWorker as e:
        raise ClusterError(f"a shard kept killing its workers and was given up: {e}") from None
    return results
