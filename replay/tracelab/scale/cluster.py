"""Independent runs on a Dask cluster (issue #20, item 5).

`replay sweep` and `experiments run` take `--workers N` (a
`distributed.LocalCluster` of N single-threaded worker processes on this
machine; `auto`: one per core) or `--scheduler ADDRESS` (an existing
cluster, whose workers need tracelab installed and the inputs at the same
paths). Each run is one task; results come back in submission order, so a
command's outputs are those of the serial loop for the same seeds. A worker
that dies is replaced by its nanny and the scheduler runs its tasks again
elsewhere (a task that takes down `distributed.scheduler.allowed-failures`
+ 1 workers, 3 + 1 by default, is given up). A run that fails with an error
of its own is not retried: runs are deterministic. Without either
option the runs stay in this process and Dask is not imported, so
`tracelab --help` and serial runs pay nothing for it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

# Connecting to --scheduler gives up after this long (seconds).
CONNECT_TIMEOUT_S = 10


class ClusterError(Exception):
    """The cluster cannot be started or reached, or a task failed on it."""


@dataclass(frozen=True)
class Cluster:
    """Where runs go: `workers` local worker processes, or the cluster at
    `scheduler`; neither means in this process."""

    workers: int | None = None
    scheduler: str | None = None

    @property
    def distributed(self) -> bool:
        return self.workers is not None or self.scheduler is not None


def worker_count(text: str) -> int:
    """`--workers` value: a positive integer or `auto` (the machine's cores)."""
    if text == "auto":
        return os.cpu_count() or 1
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of workers or `auto`, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"needs at least 1 worker, got {n}")
    return n


def add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--workers",
        type=worker_count,
        metavar="N|auto",
        help="run the independent runs as Dask tasks on N local worker processes (auto: one per core)",
    )
    group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run them on the existing Dask cluster at ADDRESS (tcp://host:8786); its workers need tracelab "
        "and the inputs at the same paths",
    )


def from_options(ns: argparse.Namespace) -> Cluster:
    return Cluster(workers=ns.workers, scheduler=ns.scheduler)


def run_all(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    cluster: Cluster,
    done: Callable[[int, Any], None],
    quiet: bool = False,
) -> list[Any]:
    """`[fn(item) for item in items]`, on `cluster` when it is distributed.
    `done(index, result)` is called in this process as each run finishes
    (in item order when serial, in completion order on a cluster)."""
    if not cluster.distributed:
        results = []
        for i, item in enumerate(items):
            results.append(fn(item))
            done(i, results[-1])
        return results
    if not items:
        return []
    with connect(cluster, quiet) as client:
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        futures = client.map(fn, items, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            # A run's own error is raised here as it would be serially.
            for future in as_completed(futures):
                done(index[future.key], future.result())
        except KilledWorker as e:
            raise ClusterError(f"a run kept killing its workers and was given up: {e}") from None
        return [f.result() for f in futures]


@contextmanager
def connect(cluster: Cluster, quiet: bool) -> Iterator[Any]:
    """A `distributed.Client` of the cluster, with a LocalCluster of its own
    when `workers` is given; both closed on exit."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError('--workers and --scheduler need Dask: pip install "tracelab[scale]"') from None
    local = None
    try:
        if cluster.scheduler is not None:
            client = Client(cluster.scheduler, timeout=CONNECT_TIMEOUT_S)
        else:
            # Processes, one thread each: the engine and ns-3 are native
            # code that holds a core per run.
            local = LocalCluster(
                n_workers=cluster.workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            )
            client = Client(local)
    except OSError as e:
        if local is not None:
            local.close()
        raise ClusterError(f"cannot reach {cluster.scheduler or 'a local cluster'}: {e}") from None
    try:
        if not quiet:
            print(f"Dask dashboard: {client.dashboard_link}", file=sys.stderr)
        yield client
    finally:
        client.close()
        if local is not None:
            local.close()
