#!/usr/bin/env python3
"""Writes the raw seeds of the fuzz targets from the repository's own public
traces, keeping only files whose licence (datasets/public/MANIFEST.md) is
permissive: BSD-3-Clause, Apache-2.0, MIT or Unlicense. GPL, LGPL and
unlicensed traces are never copied into the corpus.

  readers: every such trace under 64 KiB, whole (pcap or pcapng)
  decode:  up to 4 frames per (trace, link type) of the classic pcap ones,
           as the target reads them: link-type selector, wire excess 0, frame
  service: up to 4 TCP/UDP payload heads per trace (Ethernet, IPv4/IPv6),
           as the target reads them: protocol, ports, length excess 0, payload

The output is raw; analyzer/fuzz/README.md shows the `-merge=1` run that
minimises it into corpus/<target>/.

  analyzer/fuzz/seed-corpus.py OUT_DIR
"""

from __future__ import annotations

import hashlib
import re
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "datasets" / "public"
PERMISSIVE = {"BSD-3-Clause", "Apache-2.0", "MIT", "Unlicense"}
MAX_TRACE = 64 * 1024
PER_KIND = 4
# The order of LINK_TYPES in fuzz_targets/decode.rs: byte 0 selects by index.
DECODE_SELECTOR = {1: 0, 101: 1, 228: 2, 229: 3, 113: 4, 276: 5, 0: 6, 108: 7, 9: 8, 50: 9, 239: 10, 12: 11, 14: 12}


def permissive_traces() -> list[Path]:
    traces = []
    for line in (PUBLIC / "MANIFEST.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and re.fullmatch(r"`[^`]+\.pcap(ng)?`", cells[1]) and cells[5] in PERMISSIVE:
            path = PUBLIC / cells[1].strip("`")
            if path.stat().st_size <= MAX_TRACE:
                traces.append(path)
    return traces


def pcap_frames(data: bytes):
    """(link type, frame) of a classic pcap file, either byte order; nothing for pcapng."""
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        order = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        order = ">"
    else:
        return
    link = struct.unpack(order + "I", data[20:24])[0] & 0x0FFFFFFF
    pos = 24
    while pos + 16 <= len(data):
        cap = struct.unpack(order + "I", data[pos + 8 : pos + 12])[0]
        frame = data[pos + 16 : pos + 16 + cap]
        if len(frame) < cap:
            return
        yield link, frame
        pos += 16 + cap


def transport_payload(frame: bytes):
    """(proto selector, sport, dport, payload) of an Ethernet IPv4/IPv6 TCP/UDP frame, else None."""
    if len(frame) < 14:
        return None
    ethertype, ip = struct.unpack(">H", frame[12:14])[0], frame[14:]
    if ethertype == 0x0800 and len(ip) >= 20:
        proto, l4 = ip[9], ip[(ip[0] & 0x0F) * 4 :]
    elif ethertype == 0x86DD and len(ip) >= 40:
        proto, l4 = ip[6], ip[40:]
    else:
        return None
    if proto == 6 and len(l4) >= 20:
        return 0, l4[0:2], l4[2:4], l4[(l4[12] >> 4) * 4 :]
    if proto == 17 and len(l4) >= 8:
        return 1, l4[0:2], l4[2:4], l4[8:]
    return None


def write(out: Path, kind: str, blob: bytes) -> None:
    folder = out / kind
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(blob).hexdigest()).write_bytes(blob)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    traces = permissive_traces()
    for trace in traces:
        data = trace.read_bytes()
        write(out, "readers", data)
        per_link: dict[int, int] = {}
        services = 0
        for link, frame in pcap_frames(data):
            if link in DECODE_SELECTOR and per_link.get(link, 0) < PER_KIND:
                per_link[link] = per_link.get(link, 0) + 1
                write(out, "decode", bytes([DECODE_SELECTOR[link], 0]) + frame)
            found = transport_payload(frame) if link == 1 else None
            if found and found[3] and services < PER_KIND:
                services += 1
                sel, sport, dport, payload = found
                # The target reads a port whose high byte is a multiple of 4 as one of
                # its port-gated ones; the payload is what matters in the seed.
                write(out, "service", bytes([sel]) + sport + dport + b"\0\0" + payload)
    print(f"{len(traces)} permissively licensed traces under {MAX_TRACE // 1024} KiB -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
