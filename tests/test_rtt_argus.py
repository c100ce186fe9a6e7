"""Handshake RTT (SYN→SYN/ACK and SYN/ACK→ACK at the capture point, §9.3)
against argus, an independent flow meter, on public real traces: argus'
`synack` and `ackdat` are the same two components."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from public_datasets import public_dataset

ROOT = Path(__file__).resolve().parents[1]
TRACES = [
    "real/zeek/bro.org.pcap",
    "real/ndpi/netflix.pcap",
    "real/chrissanders-packets/http_espn.pcapng",
    "real/ndpi/reddit.pcap",
    "real/pcapplusplus/example.pcap",
    "zeek-baselines/wikipedia/wikipedia.pcap",
    "zeek-baselines/ftp-ipv4/ipv4.pcap",
    "real/ndpi/KakaoTalk_talk.pcap",
]
TOLERANCE_S = 2e-6  # argus prints microseconds


def argus_handshakes(trace: Path, tmp: Path) -> dict[tuple, tuple[float, float]]:
    out = tmp / (trace.name + ".argus")
    subprocess.run(["argus", "-r", str(trace), "-w", str(out)], check=True, capture_output=True)
    text = subprocess.run(
        [
            "ra",
            "-r",
            str(out),
            "-n",
            "-u",
            "-c",
            ",",
            "-s",
            "saddr",
            "sport",
            "daddr",
            "dport",
            "synack",
            "ackdat",
            "-",
            "tcp",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    flows = {}
    for line in text.splitlines()[1:]:
        s, sp, d, dp, synack, ackdat = line.split(",")
        if synack and ackdat and float(synack) > 0 and float(ackdat) > 0:
            # argus writes a record per status interval; the first holds the handshake.
            flows.setdefault((s, int(sp), d, int(dp)), (float(synack), float(ackdat)))
    return flows


@pytest.mark.skipif(
    shutil.which("argus") is None or shutil.which("ra") is None,
    reason="argus/ra not installed (apt-get install argus-server argus-client)",
)
def test_handshake_rtt_matches_argus(tmp_path):
    compared = agreed = 0
    for t in TRACES:
        trace = public_dataset(t)
        out = tmp_path / trace.name
        r = subprocess.run(
            [sys.executable, "-m", "tracelab.cli", "profile", str(trace), "-o", str(out), "--quiet"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        ours = {}
        for row in pq.read_table(out / "connections.parquet").to_pylist():
            if row["rtt_syn_synack_s"] is not None and row["rtt_synack_ack_s"] is not None:
                key = (row["id.orig_h"], row["id.orig_p"], row["id.resp_h"], row["id.resp_p"])
                ours[key] = (row["rtt_syn_synack_s"], row["rtt_synack_ack_s"])
        theirs = argus_handshakes(trace, tmp_path)
        for key, (synack, ackdat) in theirs.items():
            if key not in ours:
                continue
            compared += 1
            a, b = ours[key]
            if abs(a - synack) <= TOLERANCE_S and abs(b - ackdat) <= TOLERANCE_S:
                agreed += 1
            else:
                print(f"{t} {key}: ours {a:.6f}/{b:.6f} argus {synack:.6f}/{ackdat:.6f}")
    print(f"handshake RTT: {agreed}/{compared} connections agree with argus within {TOLERANCE_S * 1e6:.0f} us")
    assert compared >= 150
    assert agreed == compared  # 215/215 when written
