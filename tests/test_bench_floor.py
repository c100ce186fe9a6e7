"""The analyzer benchmark's floor (analyzer/crates/tracelab-analyzer/examples/floor.rs)
against the full profile on public real traces: both read and decode every
frame alike, and the floor's packets and IP bytes per 5-tuple add up to what
the profile's conn.log gives every connection (orig/resp_ip_bytes). One
accounting checks the other, so the floor the benchmark times is known to do
the work it claims."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from public_datasets import public_dataset
from support import ROOT, cargo_build
from tracelab_models.zeeklog import read_conn_logs

TRACES = [
    "real/zeek/bro.org.pcap",
    "real/ndpi/netflix.pcap",
    "real/chrissanders-packets/http_espn.pcapng",
    "real/ndpi/gnutella.pcap",
    "real/libtrace/vlan.pcap",
]
FLOOR = ROOT / "analyzer" / "target" / "release" / "examples" / "floor"


@pytest.fixture(scope="module")
def floor() -> Path:
    cargo_build(ROOT / "analyzer" / "Cargo.toml", "--example", "floor")
    return FLOOR


def run_floor(floor: Path, trace: Path, stage: str) -> dict[str, int]:
    r = subprocess.run([str(floor), str(trace), stage], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    assert words[:2] == ["stage", stage], r.stdout
    return {k: int(v) for k, v in zip(words[2::2], words[3::2], strict=True)}


def conn_log_totals(path: Path) -> tuple[int, int]:
    """Packets and IP bytes of every connection in a Zeek conn.log."""
    log, _ = read_conn_logs(path)

    def total(*cols: str) -> int:
        return sum(sum(log.column(c).to_pylist()) for c in cols)

    return total("orig_pkts", "resp_pkts"), total("orig_ip_bytes", "resp_ip_bytes")


@pytest.mark.parametrize("trace", TRACES)
def test_floor_accounts_as_the_profile(floor, trace, tmp_path):
    path = public_dataset(trace)
    out = tmp_path / "profile"
    r = subprocess.run(
        [sys.executable, "-m", "tracelab.cli", "profile", str(path), "-o", str(out), "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    packets = json.loads((out / "summary.json").read_text())["packets"]
    read, decode, count = (run_floor(floor, path, s) for s in ("read", "decode", "count"))
    assert read["frames"] == decode["frames"] == count["frames"] == packets["read"]
    assert decode["decoded"] == count["decoded"] == packets["decoded"]
    assert decode["skipped"] == packets["skipped_total"]
    assert count["flow_packets"] == count["decoded"]
    pkts, ip_bytes = conn_log_totals(out / "conn.log")
    assert (count["flow_packets"], count["flow_ip_bytes"]) == (pkts, ip_bytes)
