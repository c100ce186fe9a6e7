"""`tracelab synth`'s pcap holds exactly the packets it plans.

Synth writes through the project's one pcap writer, the Rust `tracelab_pcap::write`
behind `tracelab-analyzer write-pcap` (docs/decisions/0003-one-pcap-writer-per-language.md).
Here a seeded mix of TCP and UDP packets (every flag combination, lengths from the
bare headers to 1500 bytes, services' first payload bytes, a UDP datagram whose
checksum computes to 0, timestamps across second boundaries) goes through it at three
snap lengths, and an independent reader written here (struct and the RFC 1071 sum
by hand) reads every field back: the record header, Ethernet, IPv4 and the transport
header equal the planned columns, the payload is the planned first bytes then zeros,
and the IPv4 and TCP/UDP checksums of the whole packet verify.
"""

from __future__ import annotations

import struct
import subprocess

import numpy as np
import pytest
from tracelab.parts import analyzer_binary
from tracelab.synth import SynthError, payloads, pcap


def rfc1071(data: bytes) -> int:
    """RFC 1071's checksum, word by word."""
    if len(data) % 2:
        data += b"\0"
    s = sum((data[i] << 8) | data[i + 1] for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def test_the_oracle_checksum_on_the_rfc_1071_example():
    """RFC 1071 section 3: 0001 f203 f4f5 f6f7 -> 220d; 0 with it appended."""
    data = bytes([0x00, 0x01, 0xF2, 0x03, 0xF4, 0xF5, 0xF6, 0xF7])
    assert rfc1071(data) == 0x220D
    assert rfc1071(data + b"\x22\x0d") == 0


def packets(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    proto = np.where(rng.random(n) < 0.3, pcap.UDP, pcap.TCP).astype(np.uint8)
    headers = np.where(proto == pcap.TCP, 40, 28)
    ip_len = np.where(rng.random(n) < 0.4, headers, rng.integers(headers, 1501))
    # A service's first bytes where the payload holds them.
    sig = rng.integers(0, len(payloads.TABLE), n)
    fits = ip_len - headers >= np.asarray(payloads.MIN_LEN)[sig]
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
        "payload": np.where(fits, sig, 0),
    }
    # A UDP datagram from 0.0.0.0 to 0.0.0.0 whose checksum computes to 0 (sent as
    # ffff): the pseudo-header (17 + 8), the UDP length (8) and the source port sum
    # to ffff.
    p["proto"][0], p["src"][0], p["dst"][0], p["ip_len"][0], p["payload"][0] = pcap.UDP, 0, 0, 28, 0
    p["sport"][0], p["dport"][0] = 0xFFFF - (17 + 8 + 8), 0
    return p


def check_packet(p: dict, i: int, snaplen: int, rec: bytes, frame: bytes) -> None:
    """Packet i of the plan `p` against its pcap record header `rec` and bytes `frame`."""
    tcp = int(p["proto"][i]) == pcap.TCP
    ip_len = int(p["ip_len"][i])
    wire = max(14 + ip_len, 60)
    t = int(p["time_us"][i])
    assert struct.unpack("<IIII", rec) == (t // 1_000_000, t % 1_000_000, min(wire, snaplen), wire)
    assert len(frame) == min(wire, snaplen)
    src, dst = (int(p[k][i]).to_bytes(4, "big") for k in ("src", "dst"))
    assert frame[:14] == b"\x02\x00" + dst + b"\x02\x00" + src + b"\x08\x00"
    ip = frame[14:34]
    proto = pcap.TCP if tcp else pcap.UDP
    assert struct.unpack(">BBHHHBB", ip[:10]) == (0x45, 0, ip_len, int(p["ip_id"][i]), 0x4000, 64, proto)
    assert ip[12:20] == src + dst and rfc1071(ip) == 0
    l4_len = 20 if tcp else 8
    head = payloads.TABLE[int(p["payload"][i])]
    segment_len = ip_len - 20
    # The whole segment as planned: the captured header, the head, zeros.
    segment = frame[34 : 34 + l4_len] + head + bytes(segment_len - l4_len - len(head))
    assert frame[34:] == (segment + bytes(wire - 14 - ip_len))[: len(frame) - 34]
    ports = struct.unpack(">HH", segment[:4])
    assert ports == (int(p["sport"][i]), int(p["dport"][i]))
    if tcp:
        seq, ack, off, flags, win, _, urg = struct.unpack(">IIBBHHH", segment[4:20])
        planned = (int(p["seq"][i]), int(p["ack"][i]), 0x50, int(p["flags"][i]), 65535, 0)
        assert (seq, ack, off, flags, win, urg) == planned
    else:
        length, sent = struct.unpack(">HH", segment[4:8])
        assert length == segment_len and sent != 0
    pseudo = src + dst + bytes([0, proto]) + struct.pack(">H", segment_len)
    assert rfc1071(pseudo + segment) == 0


@pytest.mark.parametrize("snaplen", [pcap.MIN_SNAPLEN, 96, 65535])
def test_the_pcap_holds_the_planned_packets(tmp_path, snaplen):
    p = packets(3000, seed=22)
    assert (p["payload"] > 0).sum() > 500  # not vacuous: many packets carry a head
    pcap.write(tmp_path / "s.pcap", p, snaplen)
    data = (tmp_path / "s.pcap").read_bytes()
    assert struct.unpack("<IHHiIII", data[:24]) == (pcap.PCAP_MAGIC_US, 2, 4, 0, 0, snaplen, 1)
    at = 24
    for i in range(len(p["time_us"])):
        incl = struct.unpack_from("<I", data, at + 8)[0]
        check_packet(p, i, snaplen, data[at : at + 16], data[at + 16 : at + 16 + incl])
        at += 16 + incl
    assert at == len(data)
    # Not vacuous: the datagram built to checksum to 0 carries ffff.
    assert data[24 + 16 + 14 + 20 + 6 : 24 + 16 + 14 + 20 + 8] == b"\xff\xff"


def test_chunks_stream_into_one_file(tmp_path):
    """Chunks written one after the other make the file the whole plan makes."""
    p = packets(500, seed=5)
    pcap.write(tmp_path / "whole.pcap", p, 96)
    with pcap.open_pcap(tmp_path / "chunks.pcap", 96) as out:
        for lo in range(0, 500, 120):
            out.write({k: v[lo : lo + 120] for k, v in p.items()})
    assert (tmp_path / "chunks.pcap").read_bytes() == (tmp_path / "whole.pcap").read_bytes()


def test_a_bad_packet_names_itself_and_keeps_the_previous_file(tmp_path):
    out = tmp_path / "s.pcap"
    out.write_bytes(b"previous")
    p = packets(100, seed=1)
    p["ip_len"][37] = 30 if p["proto"][37] == pcap.TCP else 20
    with pytest.raises(SynthError, match=r"packet 37: IPv4 length \d+ is shorter than its headers"):
        pcap.write(out, p, 96)
    assert out.read_bytes() == b"previous"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.pcap"]


def test_an_error_in_synth_mid_stream_keeps_the_previous_file(tmp_path):
    out = tmp_path / "s.pcap"
    out.write_bytes(b"previous")
    with pytest.raises(RuntimeError, match="planning failed"), pcap.open_pcap(out, 96) as w:
        w.write(packets(100, seed=1))
        raise RuntimeError("planning failed")
    assert out.read_bytes() == b"previous"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.pcap"]


def test_the_writer_refuses_bad_streams_in_one_line(tmp_path):
    binary = analyzer_binary()
    assert binary is not None, "the analyzer is not built (make build)"
    run = subprocess.run(
        [str(binary), "write-pcap", "-o", str(tmp_path / "x.pcap")], input=b"GIF89a" + bytes(10), capture_output=True
    )
    assert run.returncode == 3
    assert run.stderr.decode() == (
        'tracelab-analyzer write-pcap: the packet stream does not start with "TLPKTS01" (not a synth packet stream)\n'
    )
    run = subprocess.run(
        [str(binary), "write-pcap", "--snaplen", "40", "-o", str(tmp_path / "x.pcap")], input=b"", capture_output=True
    )
    assert run.returncode == 2
    assert run.stderr.decode() == "tracelab-analyzer write-pcap: --snaplen must be 54..=262144, got 40\n"
    head = pcap.STREAM_MAGIC + b"\x00\x00"
    run = subprocess.run(
        [str(binary), "write-pcap", "-o", str(tmp_path / "no" / "x.pcap")], input=head, capture_output=True
    )
    assert run.returncode == 4 and "No such file or directory" in run.stderr.decode()
    assert not (tmp_path / "x.pcap").exists()
