"""`tracelab replay sweep` and `tracelab experiments run` with `--workers N |
--scheduler ADDRESS`: the runs as Dask tasks (tracelab.scale.cluster) give
the serial results, run for run, and a worker killed mid-sweep is replaced
and its run done again."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pyarrow.parquet as pq
import pytest
from tracelab.replay.cli import main

pytest.importorskip("distributed")

GRID = "sources: ['poisson(load={load}, size=1500, count=%d, seed={seed})']\n" + (
    "nodes: [{element: 'fifo(capacity=100)', rate: 10G}]\ngrid: {load: [0.5, 1.2], seed: [1, 2]}\n"
)
# What differs between two runs of the same configuration: the wall clock.
TIMING = ("wall_seconds",)


def sweep(tmp_path, name: str, count: int, *options: str) -> tuple[object, dict[str, dict]]:
    spec = tmp_path / "grid.yaml"
    spec.write_text(GRID % count)
    out = tmp_path / name
    assert main(["sweep", str(spec), "-o", str(out), "-q", *options]) == 0
    table = pq.read_table(out / "sweep.parquet")
    metrics = {}
    for p in sorted(out.glob("*/metrics.json")):
        doc = json.loads(p.read_text())
        doc.pop("timing")
        doc["tool"].pop("command")  # the options and output folder given
        metrics[p.parent.name] = doc
    return table.drop_columns(list(TIMING)), metrics


def test_a_sweep_on_two_workers_equals_the_serial_sweep(tmp_path):
    serial = sweep(tmp_path, "serial", 20_000)
    assert len(serial[1]) == 4
    assert sweep(tmp_path, "dask", 20_000, "--workers", "2") == serial


def test_a_worker_killed_mid_sweep_is_replaced_and_the_result_is_the_serial_one(tmp_path):
    """On a cluster of the test's own (--scheduler), whose scheduler says
    which worker holds a run: that worker's process is killed."""
    from distributed import Client, LocalCluster

    count = 3_000_000  # runs of ~0.5 s
    serial = sweep(tmp_path, "serial", count)
    result: dict[str, object] = {}
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        pids = client.run(os.getpid)
        address = cluster.scheduler_address
        runner = threading.Thread(
            target=lambda: result.setdefault("dask", sweep(tmp_path, "dask", count, "--scheduler", address)),
            daemon=True,
        )
        runner.start()
        killed = None
        deadline = time.monotonic() + 60
        while killed is None and runner.is_alive() and time.monotonic() < deadline:
            busy = [worker for worker, tasks in client.processing().items() if tasks and worker in pids]
            if busy:
                killed = pids[busy[0]]
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.01)
        runner.join(120)
    assert killed is not None, "no worker was seen holding a run"
    assert result["dask"] == serial


def test_an_unreachable_scheduler_is_one_line_and_status_2(tmp_path, capsys):
    spec = tmp_path / "grid.yaml"
    spec.write_text(GRID % 1000)
    status = main(["sweep", str(spec), "-o", str(tmp_path / "s"), "-q", "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "127.0.0.1:9" in err[0], err


def test_experiments_on_two_workers_give_the_serial_results(tmp_path):
    from tracelab.replay.experiments.cli import main as experiments

    ids = ["E-CHK-1", "E-CHK-2", "E-CHK-3"]
    results = {}
    for name, options in (("serial", []), ("dask", ["--workers", "2"])):
        assert experiments(["run", *ids, "--quick", "-o", str(tmp_path / name), *options]) == 0
        results[name] = {}
        for i in ids:
            doc = json.loads((tmp_path / name / i / "result.json").read_text())
            doc.pop("wall_s")
            results[name][i] = doc
    assert results["dask"] == results["serial"]
