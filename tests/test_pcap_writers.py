"""The project's two pcap writers write the same bytes for the same packets.

Rust has one writer (`tracelab_pcap::write`: the trace generator and the analyzer's
test captures), Python one (`replay/tracelab/synth/pcap.py`, numpy-vectorised for
`tracelab synth`); docs/decisions/0003-one-pcap-writer-per-language.md says why they
are two. Here both render the same seeded mix of TCP and UDP packets (every flag
combination, lengths from the bare headers to 1500 bytes, a UDP datagram whose
checksum computes to 0, timestamps across second boundaries) at three snap lengths,
and the files must be equal byte for byte. Both copies of the RFC 1071 checksum are
also checked against the RFC's own worked example (the Rust one in its unit tests).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from support import ROOT, cargo_build
from tracelab.synth import pcap

RENDER_FRAMES = ROOT / "analyzer" / "target" / "release" / "examples" / "render_frames"
COLUMNS = ["time_us", "proto", "src", "dst", "sport", "dport", "ip_len", "ip_id", "seq", "ack", "flags"]


@pytest.fixture(scope="module")
def render_frames():
    cargo_build(ROOT / "analyzer" / "Cargo.toml", "-p", "tracelab-pcap", "--example", "render_frames")
    return RENDER_FRAMES


def packets(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    proto = np.where(rng.random(n) < 0.3, pcap.UDP, pcap.TCP).astype(np.uint8)
    headers = np.where(proto == pcap.TCP, 40, 28)
    ip_len = np.where(rng.random(n) < 0.4, headers, rng.integers(headers, 1501))
    p = {
        "time_us": 1_700_000_000_000_000 + np.cumsum(rng.integers(0, 400_000, n)),
        "proto": proto,
        "src": rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
        "dst": rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
        "sport": rng.integers(0, 2**16, n).astype(np.uint16),
        "dport": rng.integers(0, 2**16, n).astype(np.uint16),
        "ip_len": ip_len.astype(np.uint16),
        "ip_id": rng.integers(0, 2**16, n).astype(np.uint16),
        "seq": rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
        "ack": rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
        "flags": (np.arange(n) % 32).astype(np.uint8),
    }
    # A UDP datagram from 0.0.0.0 to 0.0.0.0 whose checksum computes to 0 (sent as
    # ffff): the pseudo-header (17 + 8), the UDP length (8) and the source port sum
    # to ffff.
    p["proto"][0], p["src"][0], p["dst"][0], p["ip_len"][0] = pcap.UDP, 0, 0, 28
    p["sport"][0], p["dport"][0] = 0xFFFF - (17 + 8 + 8), 0
    return p


def python_bytes(p: dict[str, np.ndarray], snaplen: int) -> bytes:
    return pcap.file_header(snaplen) + pcap.render(p, snaplen)


def rust_bytes(render_frames, p: dict[str, np.ndarray], snaplen: int) -> bytes:
    lines = "\n".join(" ".join(str(int(p[c][i])) for c in COLUMNS) for i in range(len(p["time_us"])))
    run = subprocess.run([str(render_frames), str(snaplen)], input=lines.encode() + b"\n", capture_output=True)
    assert run.returncode == 0, run.stderr.decode()
    return run.stdout


def first_difference(a: bytes, b: bytes) -> str:
    at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    return f"lengths {len(a)} and {len(b)}; from byte {at}: {a[at : at + 16].hex()} vs {b[at : at + 16].hex()}"


@pytest.mark.parametrize("snaplen", [pcap.MIN_SNAPLEN, 96, 65535])
def test_rust_and_python_writers_write_the_same_bytes(render_frames, snaplen):
    p = packets(3000, seed=22)
    ours, theirs = python_bytes(p, snaplen), rust_bytes(render_frames, p, snaplen)
    assert ours == theirs, first_difference(ours, theirs)
    # Not vacuous: the datagram built to checksum to 0 carries ffff.
    assert ours[24 + 16 + 14 + 20 + 6 : 24 + 16 + 14 + 20 + 8] == b"\xff\xff"


def test_rust_writer_refuses_bad_input_in_one_line(render_frames):
    run = subprocess.run([str(render_frames), "96"], input=b"1 1 0 0 0 0 40 0 0 0 0\n", capture_output=True)
    assert run.returncode == 1
    assert run.stderr.decode() == "render_frames: line 1: protocol 1 is neither TCP (6) nor UDP (17)\n"


def test_python_checksum_of_the_rfc_1071_example():
    """RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to 2ddf0, fold to ddf2;
    the checksum is 220d, and 0 over the data with it appended; an odd last byte is
    the high half of a word."""
    rows = np.array([[0x00, 0x01, 0xF2, 0x03, 0xF4, 0xF5, 0xF6, 0xF7, 0x22, 0x0D]], dtype=np.uint8)
    assert pcap._fold(pcap._words(rows, 0, 8)).tolist() == [0x220D]
    assert pcap._fold(pcap._words(rows, 0, 10)).tolist() == [0]
    assert pcap._fold(pcap._words(rows, 0, 3)).tolist() == [~(0x0001 + 0xF200) & 0xFFFF]
