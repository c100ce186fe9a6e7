#!/usr/bin/env python3
"""Same decisions everywhere: every core's ns-3 queue disc against the replay
engine, packet by packet, on recorded traces (ACKs and retransmissions
included).

For each (trace, rate, element spec) the engine (the reference, through its
Python module `tracelab_engine`, per-packet detail on) and the ns-3 driver
(`tl-ns3-decisions`, same_decisions.cc: the queue disc built from the same
spec string, driven by the ns-3 simulator on the engine's link model) replay
the trace into one queue followed by a link of that rate. Every packet must
get the same arrival time, length and fate (delivered, buffer_full,
pushed_out, early_discard, budget_expired) at the same picosecond:
transmission start for a delivered packet, the drop instant otherwise.

Prints `PASS <case>: N packets (D delivered, X dropped), 0 mismatches` or
`FAIL <case>: ...` with the first differences, one line per case, then one
summary line per core; exit 1 if any case failed. `SKIPPED (reason)` when
the driver is not built (`make ns3`) or the engine module is missing.

  same_decisions.py [--driver build/ns3/tl-ns3-decisions] [--keep DIR] [-k SUBSTRING]
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "datasets" / "public" / "zeek-baselines"

REAL = ROOT / "datasets" / "public" / "real"

# Real IPv4 traces: one HTTP download with its ACKs and retransmissions, a
# short one, a long HTTP exchange, a web page over 26 flows, a streaming
# session over 119 flows.
TRACES = {
    "m57-49583": (DATA / "m57-long-http" / "m57-long-49583-80.pcap", [1_000_000, 2_000_000]),
    "m57-49600": (DATA / "m57-long-http" / "m57-long-49600-80.pcap", [1_000_000]),
    "no-crlf": (DATA / "http-no-crlf" / "no_crlf.pcap", [1_000_000, 10_000_000]),
    "bro.org": (REAL / "zeek" / "bro.org.pcap", [500_000, 1_000_000]),
    "netflix": (REAL / "ndpi" / "netflix.pcap", [100_000, 300_000]),
}
# IPv6 traces (the queue discs key an IPv6 flow by its directional 5-tuple,
# as an IPv4 one): FTP control and data connections over IPv6 (12 flows),
# four HTTP streams over IPv6, and a mixed IPv4/IPv6 web session. Through
# every single-packet spec (the chunk encoding carries IPv4 packets only).
TRACES_IPV6 = {
    "ftp-ipv6": (DATA / "ftp-ipv6" / "ipv6.pcap", [10_000]),
    "http-ipv6": (REAL / "pcapplusplus" / "four_ipv6_http_streams.pcap", [50_000, 100_000]),
    "wikipedia-v4v6": (DATA / "wikipedia" / "wikipedia.pcap", [50_000]),
}

# Every mechanism with an ns-3 adapter, with buffers small enough that the
# traces fill them; the options of the two-level and flow-state cores too
# (in_service=0: the packet on the wire leaves the buffer when pulled; the
# default keeps it counted until its transmission ends, algorithms.md §2;
# table_seed, decimal or hex, set on each kind of flow table).
SPECS = [
    "fifo(capacity=20)",
    "fifo(capacity=20000, granularity=bytes)",
    "fifo(capacity=20, in_service=0)",
    "efd(capacity=20)",
    "efd(capacity=20, th=5000)",
    "efd(capacity=20, th=5000, counter=served)",
    "efd(capacity=20, th=5000, high=las, low=las)",
    "efd(capacity=20, th=5000, in_service=0)",
    "efd(capacity=20000, th=5000, granularity=bytes, precheck=1)",
    "befd(capacity=20, th=5000, push_out=0)",
    "pefd(capacity=20, th=4)",
    "efdack(capacity=20, th=5000)",
    "efd(capacity=20, th=5000, table_seed=0x2a)",
    "run2c(capacity=20, th=5000)",
    "run2cack(capacity=20, th=5000)",
    "run2c(capacity=20, th=5000, table_seed=42)",
    "sift(capacity=20, p=0.2, ts=2)",
    "xprotect(capacity=20, p_ins=0.3, th=5000)",
    "las(capacity=20)",
    "lasack(capacity=20)",
    "las(capacity=20, in_service=0)",
    "lars(capacity=20, tau=100ms, beta=0.5)",
    "lars(capacity=20, ack=1)",
    "scfq(capacity=20)",
    "scfq(capacity=20000, granularity=bytes)",
    "scfq(capacity=20, table_seed=0xfedcba9876543210)",
    "ncq(capacity=20)",
    "ncqplus(capacity=20)",
    "ncqplus(capacity=20, tiny_rate=incoming, favor_acks=1, push_out=1)",
    "mtqqtl(capacity=20)",
]

# MTQ/QTL with every packet marked (the engine: one class with mtq=, qtl=;
# ns-3: a TlMtqQtlTag on every packet), and the chunking queues with every
# packet's waiting-time budget (the engine: the class budget; ns-3: the
# Budgets attribute). (spec, marks): marks are the driver's extra arguments.
MARKED = [
    ("mtqqtl(capacity=20)", {"mtq_us": 40_000, "qtl_ns": 80_000_000}),
    ("mtqqtl(capacity=20, in_service=1)", {"mtq_us": 40_000, "qtl_ns": 80_000_000}),
    ("mtqqtl(capacity=50)", {"qtl_ns": 60_000_000}),
    ("mtqqtl(capacity=50, in_service=1)", {"mtq_us": 30_000}),
    ("basicq", {"budget": "100us"}),
    ("basicq(capacity=20, mtu=4000)", {"budget": "100us"}),
    ("chumq", {"budget": "100us"}),
    ("chumq(capacity=20, cea=1)", {"budget": "150us"}),
    ("chumq(contention=fifo, restart=now)", {"budget": "100us"}),
    ("chumq(contention=priority, timers=20us/40us/80us)", {"budget": "30us"}),
    ("chutq", {"budget": "100us"}),
    ("chutq(policy=tpf, cea=1)", {"budget": "100us"}),
    ("chutq(policy=cef, expired=last, capacity=20)", {"budget": "60us"}),
]
CHUNKING = ("basicq", "chumq", "chutq")


def relabel_ipv6(src: Path, dst: Path, seed: int) -> Path:
    """A copy of a little-endian pcap (Ethernet or raw IP) whose IPv6 packets
    carry seeded random flow labels: the flow key leaves the label aside, so
    every decision must stay the engine's."""
    import random
    import struct

    rng = random.Random(seed)
    data = bytearray(src.read_bytes())
    magic, linktype = struct.unpack_from("<I", data, 0)[0], struct.unpack_from("<I", data, 20)[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D) or linktype not in (1, 12, 101, 229):
        raise ValueError(f"{src}: not a little-endian Ethernet or raw-IP pcap")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        ip = off + 16 + (14 if linktype == 1 else 0)
        if ip + 4 <= off + 16 + incl and data[ip] >> 4 == 6:
            label = rng.getrandbits(20)
            data[ip + 1] = (data[ip + 1] & 0xF0) | label >> 16
            data[ip + 2 : ip + 4] = (label & 0xFFFF).to_bytes(2, "big")
        off += 16 + incl
    dst.write_bytes(data)
    return dst


def engine_run(engine, trace: Path, rate: int, spec: str, marks: dict) -> list[tuple]:
    node = {"element": spec, "rate": str(rate)}
    if spec.split("(")[0] in CHUNKING:
        node["overhead"] = 20  # the outer IPv4 header of the ns-3 chunk packet
    cfg = {"sources": [f"pcap(path='{trace}')"], "nodes": [node], "detail": True}
    cls = {"name": "marked"}
    if "mtq_us" in marks:
        cls["mtq"] = f"{marks['mtq_us']}us"
    if "qtl_ns" in marks:
        cls["qtl"] = f"{marks['qtl_ns']}ns"
    if "budget" in marks:
        cls["budget"] = marks["budget"]
    if marks:
        cfg["classes"] = [cls]
    m = engine.run(cfg)
    d = m["detail"]
    fates = ["delivered", *engine.drop_reasons()]
    out = []
    for created, length, fate, end, qd in zip(
        d["created_ps"], d["length"], d["fate"], d["end_ps"], d["queue_delay_ps"], strict=True
    ):
        name = fates[fate] if fate < len(fates) else "in_network"
        at = int(created + qd) if name == "delivered" else int(end)
        out.append((int(created), int(length), name, at))
    return out


def ns3_run(driver: Path, trace: Path, rate: int, spec: str, out: Path, marks: dict) -> tuple[list[tuple], str, str]:
    extra = [f"{k}={v}" for k, v in marks.items()]
    p = subprocess.run([str(driver), str(trace), str(rate), spec, str(out), *extra], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{driver.name} exited {p.returncode}: {p.stderr.strip()}")
    with out.open() as f:
        header = f.readline().strip()
        rows = [(int(r["arrival_ps"]), int(r["length"]), r["fate"], int(r["at_ps"])) for r in csv.DictReader(f)]
    return rows, header, p.stdout.strip()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", type=Path, default=ROOT / "build" / "ns3" / "tl-ns3-decisions")
    ap.add_argument("--keep", type=Path, help="keep the driver's CSV files here")
    ap.add_argument("-k", dest="only", default="", help="only the cases whose name contains this")
    ns = ap.parse_args(argv)
    if not ns.driver.exists():
        print(f"SKIPPED (ns-3 same-decisions driver not built: {ns.driver}; run `make ns3`)")
        return 0
    try:
        import tracelab_engine as engine
    except ImportError:
        print("SKIPPED (the engine module tracelab_engine is not installed: run scripts/setup.sh)")
        return 0

    work = ns.keep or Path(tempfile.mkdtemp(prefix="tl-ns3-"))
    work.mkdir(parents=True, exist_ok=True)
    # cases, packets, mismatches, dropped, pushed out, early (MTQ) or expired (QTL)
    # and chunks sent (chunking cores)
    per_core: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0])
    failed = 0
    version = ""
    v4_cases = [(s, {}) for s in SPECS] + MARKED
    v6_cases = [(s, {}) for s in SPECS] + [(s, m) for s, m in MARKED if s.split("(")[0] not in CHUNKING]
    # The IPv6 HTTP streams again with every packet's flow label random.
    http6, http6_rates = TRACES_IPV6["http-ipv6"]
    relabeled = {"http-ipv6-labels": (relabel_ipv6(http6, work / "http-ipv6-labels.pcap", 1), http6_rates)}
    for tname, (trace, rates) in {**TRACES, **TRACES_IPV6, **relabeled}.items():
        for rate in rates:
            for spec, marks in v4_cases if tname in TRACES else v6_cases:
                case = f"{tname}@{rate / 1e6:g}M {spec}" + "".join(f" {k}={v}" for k, v in marks.items())
                if ns.only not in case:
                    continue
                core = spec.split("(")[0]
                ref = engine_run(engine, trace, rate, spec, marks)
                safe = "".join(c if c.isalnum() else "_" for c in case)
                try:
                    got, header, summary = ns3_run(ns.driver, trace, rate, spec, work / f"{safe}.csv", marks)
                except RuntimeError as e:
                    print(f"FAIL {case}: {e}")
                    failed += 1
                    continue
                version = version or header
                bad = [i for i, (a, b) in enumerate(zip(ref, got, strict=False)) if a != b]
                if len(ref) != len(got):
                    bad.append(min(len(ref), len(got)))
                dropped = sum(r[2] != "delivered" for r in ref)
                stats = per_core[core]
                stats[0] += 1
                stats[1] += len(ref)
                stats[2] += len(bad)
                stats[3] += dropped
                stats[4] += sum(r[2] == "pushed_out" for r in ref)
                stats[5] += sum(r[2] in ("early_discard", "budget_expired") for r in ref)
                chunks = re.search(r"(\d+) chunks", summary)
                stats[6] += int(chunks[1]) if chunks else 0
                what = f"{len(ref)} packets ({len(ref) - dropped} delivered, {dropped} dropped)"
                if bad:
                    failed += 1
                    first = "; ".join(
                        f"#{i}: engine {ref[i] if i < len(ref) else None} ns-3 {got[i] if i < len(got) else None}"
                        for i in bad[:3]
                    )
                    print(f"FAIL {case}: {what}, {len(bad)} mismatches; {first}")
                else:
                    print(f"PASS {case}: {what}, 0 mismatches")
    # The comparison must see a difference where there is one: the engine's
    # EFD against the ns-3 FIFO on a trace where they decide differently.
    if not ns.only:
        trace, rates = TRACES["m57-49583"]
        ref = engine_run(engine, trace, rates[0], "efd(capacity=20, th=5000)", {})
        got, _, _ = ns3_run(ns.driver, trace, rates[0], "fifo(capacity=20)", work / "negative.csv", {})
        n = sum(a != b for a, b in zip(ref, got, strict=True))
        if n:
            print(f"PASS negative control: engine efd vs ns-3 fifo differ on {n} of {len(ref)} packets")
        else:
            print("FAIL negative control: engine efd vs ns-3 fifo compare equal (the comparison sees nothing)")
            failed += 1
    print(f"\n{version.lstrip('# ').split(',')[0] if version else 'ns-3'}: per core")
    for core, (cases, packets, mism, dropped, pushed, early, chunks) in per_core.items():
        print(
            f"  {core:<9} {cases:>3} cases {packets:>7} packets {dropped:>6} dropped"
            f" ({pushed:>5} pushed out, {early:>5} early/expired) {mism:>4} mismatches"
            + (f"; {chunks} chunks" if chunks else "")
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
