"""The parallel profile (issue #20, item 2; docs/scale.md): shards of the
connections tracked by separate analyzer runs (`--shard I/N`), merged
(`--merge`) into outputs byte-equal to the serial profile of the same
capture; on Dask with `tracelab profile --workers N | --scheduler ADDRESS`,
also when the worker holding a shard is killed mid-run.

The capture is a generated trace cut into uneven rotated files (so
connections span file boundaries), profiled with short inactivity timeouts
(so connections end by timeout in many epochs; tcpmix's port-22 sessions
keep the tracker's 1 h per-port timeout). The oracle is the serial profile;
which shard a connection lands in is recomputed here from the analyzer's
documented hash, independently of it, to check that the UDP servers'
peers really are split between shards."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from support import ROOT, run_tracelab, tcpmix
from test_rotated_captures import pcap_bytes, read_pcap

ANALYZER = ROOT / "analyzer" / "target" / "release" / "tracelab-analyzer"
OPTIONS = ("--local", "10.0.0.0/8", "--tcp-inactivity", "2", "--udp-inactivity", "1", "--threads", "1")
OUTPUTS = (
    "conn.log",
    "connections.parquet",
    "hosts.parquet",
    "load.parquet",
    "samples/rtt.parquet",
    "samples/trains.parquet",
    "samples/warmups.parquet",
    "samples/packet_sizes.parquet",
    "summary.json",
)


def analyzer(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ANALYZER), *args, "--quiet", "--no-progress"], capture_output=True, text=True)


def cut(trace: Path, into: Path, pieces: int, seed: int) -> Path:
    """`trace` cut at random points into `pieces` uneven pcap files."""
    link_type, records = read_pcap(trace)
    cuts = sorted(random.Random(seed).sample(range(1, len(records)), pieces - 1))
    into.mkdir()
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(records)], strict=True)):
        (into / f"part-{i}.pcap").write_bytes(pcap_bytes(link_type, records[a:b]))
    return into


def assert_same_profile(got: Path, want: Path) -> None:
    for name in OUTPUTS:
        assert (got / name).read_bytes() == (want / name).read_bytes(), name


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> tuple[Path, Path]:
    """Rotated files and their serial profile."""
    base = tmp_path_factory.mktemp("parallel")
    files = cut(tcpmix(base / "whole.pcap", 40_000, seed=9), base / "captures", 4, seed=9)
    serial = base / "serial"
    run = analyzer(str(files), *OPTIONS, "-o", str(serial))
    assert run.returncode == 0, run.stderr
    return files, serial


@pytest.mark.parametrize("count", [1, 2, 3])
def test_shards_merged_equal_the_serial_profile(capture, tmp_path, count):
    files, serial = capture
    shards = []
    for i in range(count):
        shards.append(tmp_path / f"shard-{i}")
        run = analyzer(str(files), *OPTIONS, "--shard", f"{i}/{count}", "-o", str(shards[-1]))
        assert run.returncode == 0, run.stderr
    merge = [a for s in reversed(shards) for a in ("--merge", str(s))]  # any order
    run = analyzer(str(files), *OPTIONS, *merge, "-o", str(tmp_path / "merged"))
    assert run.returncode == 0, run.stderr
    assert_same_profile(tmp_path / "merged", serial)
    # The shards split the connections between them.
    counts = [json.loads((s / "summary.json").read_text())["shard"]["connections"] for s in shards]
    total = json.loads((serial / "summary.json").read_text())["connections"]["total"]
    assert sum(counts) == total and (count == 1 or all(0 < n < total for n in counts))


def test_the_capture_exercises_timeouts_and_file_boundaries(capture, tmp_path):
    """The short timeouts end connections that the defaults keep whole, and
    connections run across the files' boundaries."""
    files, serial = capture
    run = analyzer(str(files), "--local", "10.0.0.0/8", "--threads", "1", "-o", str(tmp_path / "default"))
    assert run.returncode == 0, run.stderr
    short = pq.read_table(serial / "connections.parquet")
    default = pq.read_table(tmp_path / "default" / "connections.parquet")
    assert short.num_rows > default.num_rows
    bounds = [json.loads((serial / "summary.json").read_text())["trace"]["files"][i]["last_ts"] for i in range(3)]
    starts = [t.timestamp() for t in short.column("ts").to_pylist()]
    ends = [t + (d or 0) for t, d in zip(starts, short.column("duration").to_pylist(), strict=True)]
    spanning = [b for b in bounds if any(t < b < e for t, e in zip(starts, ends, strict=True))]
    assert spanning == bounds


def splitmix64(z: int) -> int:
    mask = (1 << 64) - 1
    z = (z + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def shard_of(orig: str, orig_p: int, resp: str, resp_p: int, proto: int, count: int) -> int:
    """tracelab_flow::Tracker::shard_of for IPv4 hosts (IPv4-mapped, folded
    as little-endian 128-bit words): the high word of hash * count."""

    def fold(host: str) -> int:
        v = int.from_bytes(bytes(10) + b"\xff\xff" + bytes(int(x) for x in host.split(".")), "little")
        return (v & ((1 << 64) - 1)) ^ (v >> 64)

    h = splitmix64(fold(orig) ^ fold(resp) ^ ((orig_p ^ resp_p) << 8) ^ proto)
    return (h * count) >> 64


def test_udp_servers_with_peers_in_several_shards_are_servers(capture, tmp_path):
    """A host is a UDP server when it answered on one port to two peer
    endpoints; its peers sit in different shards, so no shard alone can
    decide it: the merge does, over every shard's connections."""
    files, serial = capture
    conns = pq.read_table(serial / "connections.parquet").to_pylist()
    hosts = {h["host"]: h for h in pq.read_table(serial / "hosts.parquet").to_pylist()}
    udp = [c for c in conns if c["proto"] == "udp" and c["resp_bytes"]]
    split = {}
    for c in udp:
        shard = shard_of(c["id.orig_h"], c["id.orig_p"], c["id.resp_h"], c["id.resp_p"], 17, 3)
        split.setdefault(c["id.resp_h"], set()).add(shard)
    servers = [h for h, shards in split.items() if len(shards) == 3]
    assert servers, "no UDP server with peers in all three shards"
    assert all(hosts[h]["server"] for h in servers)
    counts = []
    for i in range(3):
        shard = tmp_path / f"shard-{i}"
        assert analyzer(str(files), *OPTIONS, "--shard", f"{i}/3", "-o", str(shard)).returncode == 0
        counts.append(json.loads((shard / "summary.json").read_text())["shard"]["connections"])
    # The recomputed hash is the analyzer's: it predicts each shard's size.
    predicted = [0, 0, 0]
    for c in conns:
        predicted[shard_of(c["id.orig_h"], c["id.orig_p"], c["id.resp_h"], c["id.resp_p"], c["ip_proto"], 3)] += 1
    assert predicted == counts


def test_merge_refuses_shards_that_do_not_make_one_run(capture, tmp_path):
    files, _ = capture
    for i in range(2):
        assert analyzer(str(files), *OPTIONS, "--shard", f"{i}/2", "-o", str(tmp_path / f"s{i}")).returncode == 0
    cases = {
        "is missing": ("--merge", str(tmp_path / "s0"), "--merge", str(tmp_path / "s0")),
        "other options": ("--merge", str(tmp_path / "s0"), "--merge", str(tmp_path / "s1"), "--tcp-inactivity", "3"),
        "not a readable shard": ("--merge", str(tmp_path / "nowhere"), "--merge", str(tmp_path / "s1")),
    }
    for what, merge in cases.items():
        options = [o for o in OPTIONS if o not in ("--tcp-inactivity", "2")] if "3" in merge else list(OPTIONS)
        run = analyzer(str(files), *options, *merge, "-o", str(tmp_path / "m"))
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 3 and len(lines) == 1, (what, run.stderr)
        assert not (tmp_path / "m").exists()
    assert (
        "given twice"
        in analyzer(
            str(files),
            *OPTIONS,
            "--merge",
            str(tmp_path / "s0"),
            "--merge",
            str(tmp_path / "s0"),
            "-o",
            str(tmp_path / "m"),
        ).stderr
    )
    assert analyzer(str(files), "--shard", "2/2", "-o", str(tmp_path / "x")).returncode == 2


needs_dask = pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="Dask is not installed")


@needs_dask
def test_the_profile_on_two_local_workers_equals_the_serial_profile(capture, tmp_path):
    files, serial = capture
    out = tmp_path / "dask"
    run = run_tracelab("profile", str(files), *OPTIONS, "--workers", "2", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert "shards done: 2/2" in run.stderr and "Dask dashboard: http" in run.stderr
    assert_same_profile(out, serial)
    # The shards' directory is gone.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask"]


@needs_dask
def test_a_worker_killed_mid_profile_is_replaced_and_the_profile_is_the_serial_one(tmp_path):
    """On a cluster of the test's own (--scheduler), whose scheduler says
    which worker holds a shard: that worker's process is killed."""
    from distributed import Client, LocalCluster

    files = cut(tcpmix(tmp_path / "whole.pcap", 1_500_000, seed=4), tmp_path / "captures", 3, seed=4)
    (tmp_path / "whole.pcap").unlink()
    serial = tmp_path / "serial"
    assert analyzer(str(files), *OPTIONS, "-o", str(serial)).returncode == 0
    out = tmp_path / "dask"
    result: dict[str, subprocess.CompletedProcess] = {}
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        pids = client.run(os.getpid)
        address = cluster.scheduler_address
        runner = threading.Thread(
            target=lambda: result.setdefault(
                "dask", run_tracelab("profile", str(files), *OPTIONS, "--scheduler", address, "-o", str(out))
            ),
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
        runner.join(180)
    assert killed is not None, "no worker was seen holding a shard"
    assert result["dask"].returncode == 0, result["dask"].stderr
    assert_same_profile(out, serial)


def test_parallel_options_without_an_output_or_with_bad_workers_are_one_line(tmp_path):
    for args, says in ((["--workers", "2"], "-o DIR"), (["--workers", "0", "-o", "x"], "--workers")):
        run = run_tracelab("profile", "trace.pcap", *args, cwd=tmp_path)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1 and says in lines[0], run.stderr
