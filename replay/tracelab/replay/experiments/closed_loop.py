"""The thesis experiments in closed loop: real TCP (ns-3 NewReno, 1448-byte
segments, delayed ACKs) through the tracelab cores as ns-3 queue discs, in
the wired dumbbell of [003 §4.4] (`tl-ns3-dumbbell`, click-elements/ns3/).
Every choice the seeds leave open is named in the outcome's notes.

Each experiment lists the dumbbell runs it needs; `simulate` runs them,
`ctx.jobs` at a time, into ctx.workdir, and reuses a run whose arguments
and binary are unchanged (E-THS-4 and E-THS-5 share their underload runs).
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...parts import REPO_ROOT
from .outcome import Context, Outcome

NS3_MISSING = "build the ns-3 adapters with `make ns3` (or set TRACELAB_NS3_DUMBBELL)"
SEGMENT = 1448  # TCP payload bytes; 1500-byte IP packets with the timestamp option
WIRE_PACKET = 1502  # bytes on the bottleneck per full segment (IP + 2-byte PPP header)
BOTTLENECK = 10e6  # bits per second


class Ns3Error(Exception):
    """A dumbbell run failed."""


def dumbbell_binary() -> Path | None:
    """$TRACELAB_NS3_DUMBBELL, or the one `make ns3` builds."""
    explicit = os.environ.get("TRACELAB_NS3_DUMBBELL")
    path = Path(explicit) if explicit else REPO_ROOT / "build" / "ns3" / "tl-ns3-dumbbell"
    return path if path.is_file() else None


@dataclass(frozen=True)
class Run:
    qdisc: str
    load: float  # offered TCP payload bits per second
    duration: float  # seconds of flow arrivals
    drain: float  # seconds simulated after the last arrival
    seed: int
    cbr_rate: float = 0
    delay: str = "1ms"

    def args(self) -> list[str]:
        a = [
            f"--qdisc={self.qdisc}",
            f"--load={self.load:g}",
            f"--duration={self.duration:g}",
            f"--drain={self.drain:g}",
            f"--seed={self.seed}",
            f"--delay={self.delay}",
        ]
        return a + ([f"--cbrRate={self.cbr_rate:g}"] if self.cbr_rate else [])

    def dirname(self) -> str:
        name = "_".join(a.removeprefix("--") for a in self.args())
        return "".join(c if c.isalnum() or c in "=.-_" else "-" for c in name)


@dataclass(frozen=True)
class Flow:
    size: int  # bytes
    start: float
    response: float | None  # None: not completed
    max_stall: float


@dataclass(frozen=True)
class Result:
    summary: dict[str, Any]
    flows: list[Flow]


def _run_one(binary: Path, workdir: Path, run: Run) -> Result:
    out = workdir / run.dirname()
    stamp = out / "run.json"
    key = {"args": run.args(), "binary_mtime_ns": binary.stat().st_mtime_ns}
    if not (stamp.is_file() and json.loads(stamp.read_text()) == key):
        out.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([str(binary), *run.args(), f"--out={out}"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise Ns3Error(f"tl-ns3-dumbbell {' '.join(run.args())} exited {proc.returncode}: {proc.stderr.strip()}")
        stamp.write_text(json.dumps(key))
    flows = []
    with open(out / "flows.csv", newline="") as f:
        for r in csv.DictReader(f):
            done = r["response_s"] != ""
            flows.append(
                Flow(
                    int(r["size_bytes"]),
                    float(r["start_s"]),
                    float(r["response_s"]) if done else None,
                    float(r["max_stall_s"]),
                )
            )
    return Result(json.loads((out / "summary.json").read_text()), flows)


def simulate(ctx: Context, runs: Iterable[Run]) -> dict[Run, Result]:
    binary = dumbbell_binary()
    if binary is None:
        raise Ns3Error(f"ns-3 is not built: {NS3_MISSING}")
    if ctx.workdir is None:
        raise Ns3Error("closed-loop experiments need a work directory")
    runs = list(dict.fromkeys(runs))
    with ThreadPoolExecutor(max_workers=ctx.jobs) as pool:
        results = list(pool.map(lambda r: _run_one(binary, ctx.workdir, r), runs))
    return dict(zip(runs, results, strict=True))


def ns3_version(results: dict[Run, Result]) -> str:
    return next(iter(results.values())).summary["ns3_version"]


def long_threshold(flows: list[Flow]) -> int:
    """The smallest size of the 'long' flows: the largest flows carrying half of all bytes ([003 §4.6.2])."""
    sizes = sorted((f.size for f in flows), reverse=True)
    half, acc = sum(sizes) / 2, 0
    for s in sizes:
        acc += s
        if acc >= half:
            return s
    return sizes[-1]


def mean(xs: list[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def order_text(values: dict[str, float]) -> str:
    return " < ".join(k for k, _ in sorted(values.items(), key=lambda kv: kv[1]))


# ------------------------------------------------------------------ E-THS-4 / E-THS-5

THS4_SCHEDULERS = {
    "FIFO": "fifo",
    "LAS": "las",
    "Run2C": "run2c(th=30000)",
    "EFD": "efd(th=30000)",
    "LARS": "lars",
}
THS4_LOADS = {8e6: 20.0, 15e6: 0.0}  # offered load -> drain seconds
# Table 4.2: (short mean, long mean) response times, seconds.
THS4_PUBLISHED = {
    8e6: {
        "FIFO": (0.390, 3.519),
        "LAS": (0.070, 3.944),
        "Run2C": (0.108, 3.861),
        "EFD": (0.090, 3.758),
        "LARS": (0.073, 3.842),
    },
    15e6: {
        "FIFO": (3.264, 55.788),
        "LAS": (0.104, 34.517),
        "Run2C": (0.848, 58.406),
        "EFD": (0.705, 40.014),
        "LARS": (1.521, 64.882),
    },
}
THS4_MEAN_SIZE = {8e6: (21, 1020), 15e6: (21, 1086)}  # MSS, short and long
THS4_NOTES = [
    "ns-3 3.44 dumbbell ([003 §4.4]): 5 senders, 5 receivers, 100 Mb/s access, 10 Mb/s bottleneck, 1 ms per "
    "link, 300-packet bottleneck buffer, FIFO elsewhere; TCP NewReno (the thesis: QualNet GENERIC-FTP), "
    "1448-byte segments, delayed ACK (2 segments), 65 535-byte receive window.",
    "Flow sizes bounded Zipf P(k) ∝ k^-2 on [6, 6906] segments (algorithms.md §11; mean 39.4 segments, "
    "CoV 4.9 — the seeds' CoV 6 is not reachable with these bounds; ch.4's parameters are NOT IN SEEDS), "
    "Poisson arrivals at load / mean size between random sender/receiver pairs.",
    "Short/long split: long flows are the largest flows carrying half of all offered bytes. Response times of "
    "completed flows only. Run2C and EFD th = 30 000 bytes (20 packets); LAS, LARS with their spec defaults.",
]


def ths4_runs(duration: float, seed: int) -> dict[tuple[float, str], Run]:
    return {
        (load, name): Run(spec, load, duration, drain, seed)
        for load, drain in THS4_LOADS.items()
        for name, spec in THS4_SCHEDULERS.items()
    }


def e_ths_4(duration: float, ctx: Context) -> Outcome:
    """Table 4.2: response times of short and long flows, 8 and 15 Mb/s."""
    o = Outcome(
        "E-THS-4",
        "Response times, short and long flows ([003 §4.6.2], Table 4.2)",
        [
            "load",
            "scheduler",
            "short mean s",
            "pub.",
            "short/FIFO",
            "pub.",
            "long mean s",
            "pub.",
            "completed",
            "incomplete",
            "median incomplete MSS",
        ],
    )
    runs = ths4_runs(duration, ctx.seed)
    results = simulate(ctx, runs.values())
    o.tools["ns3"] = ns3_version(results)
    o.config.update(
        duration_s=duration, loads_bps=list(THS4_LOADS), drain_s=list(THS4_LOADS.values()), schedulers=THS4_SCHEDULERS
    )
    o.notes += [
        *THS4_NOTES,
        f"{duration:g} s of arrivals per run (the thesis: 1000 s), one seed; 8 Mb/s runs drain for 20 s, "
        "15 Mb/s runs stop with the arrivals (the overloaded queue never drains).",
        "Not checked: the EFD/Run2C transition near th (Fig. 4.9).",
    ]
    for load in THS4_LOADS:
        lbl = f"{load / 1e6:g} Mb/s"
        flows = results[runs[load, "FIFO"]].flows
        thr = long_threshold(flows)
        short_mss = mean([f.size / SEGMENT for f in flows if f.size < thr])
        long_mss = mean([f.size / SEGMENT for f in flows if f.size >= thr])
        pub_short, pub_long = THS4_MEAN_SIZE[load]
        o.check(
            f"{lbl}: mean short-flow size ≈ {pub_short} MSS ± 25 %",
            abs(short_mss - pub_short) <= 0.25 * pub_short,
            f"{short_mss:.1f} MSS",
            published=pub_short,
            tolerance="±25 %",
        )
        o.check(
            f"{lbl}: mean long-flow size ≈ {pub_long} MSS ± 25 %",
            abs(long_mss - pub_long) <= 0.25 * pub_long,
            f"{long_mss:.0f} MSS (long: ≥ {thr / SEGMENT:.0f} MSS)",
            published=pub_long,
            tolerance="±25 %",
        )
        short, long, incomplete_median = {}, {}, {}
        for name in THS4_SCHEDULERS:
            fl = results[runs[load, name]].flows
            short[name] = mean([f.response for f in fl if f.response is not None and f.size < thr])
            long[name] = mean([f.response for f in fl if f.response is not None and f.size >= thr])
            inc = [f.size / SEGMENT for f in fl if f.response is None]
            incomplete_median[name] = statistics.median(inc) if inc else None
            pub = THS4_PUBLISHED[load][name]
            ratio, pub_ratio = short[name] / short["FIFO"], pub[0] / THS4_PUBLISHED[load]["FIFO"][0]
            o.rows.append(
                [
                    lbl,
                    name,
                    f"{short[name]:.3f}",
                    pub[0],
                    f"{ratio:.3f}",
                    f"{pub_ratio:.3f}",
                    f"{long[name]:.3f}",
                    pub[1],
                    len(fl) - len(inc),
                    len(inc),
                    "" if not inc else f"{incomplete_median[name]:.0f}",
                ]
            )
            if name != "FIFO":
                o.check(
                    f"{lbl} {name}: short-flow mean / FIFO's within ±30 % of {pub_ratio:.3f}",
                    abs(ratio - pub_ratio) <= 0.3 * pub_ratio,
                    f"{ratio:.3f}",
                    published=f"{pub_ratio:.3f}",
                    tolerance="±30 %",
                )
        if load == 8e6:
            want = ["LAS", "LARS", "EFD", "Run2C", "FIFO"]
            got = sorted(short, key=short.get)
            o.check(
                f"{lbl}: short flows LAS < LARS < EFD < Run2C ≪ FIFO (≪: Run2C ≤ FIFO / 2)",
                got == want and short["Run2C"] <= short["FIFO"] / 2,
                order_text(short),
                published=" < ".join(want),
                tolerance="order",
            )
            avg = mean(list(long.values()))
            o.check(
                f"{lbl}: long-flow means within ±30 % of their average (published 3.52–3.94 s, CIs overlap)",
                all(abs(v - avg) <= 0.3 * avg for v in long.values()),
                ", ".join(f"{k} {v:.2f}" for k, v in long.items()),
                published="3.519–3.944 s",
                tolerance="±30 %",
            )
        else:
            want = ["LAS", "EFD", "Run2C", "LARS", "FIFO"]
            o.check(
                f"{lbl}: short flows LAS < EFD < Run2C < LARS < FIFO",
                sorted(short, key=short.get) == want,
                order_text(short),
                published=" < ".join(want),
                tolerance="order",
            )
            fifo_inc = incomplete_median["FIFO"]
            o.check(
                f"{lbl}: FIFO's incomplete transfers mostly short (median size below the long split)",
                fifo_inc is not None and fifo_inc * SEGMENT < thr,
                f"median {fifo_inc} MSS, split {thr / SEGMENT:.0f} MSS" if fifo_inc else "none incomplete",
                published="Fig. 4.8",
                tolerance="median < split",
            )
            others = {k: v for k, v in incomplete_median.items() if k != "FIFO"}
            o.check(
                f"{lbl}: the others' incomplete transfers mostly long (median size at or above the split)",
                all(v is not None and v * SEGMENT >= thr for v in others.values()),
                ", ".join(f"{k} {v:.0f}" if v else f"{k} none" for k, v in others.items()) + " MSS",
                published="Fig. 4.8",
                tolerance="median ≥ split",
            )
    return o


LOCKOUT_S = 2.0  # a plateau: no progress for longer than one 1-s minimum RTO plus its retransmission


def e_ths_5(duration: float, ctx: Context) -> Outcome:
    """Fig. 4.11: progress of the three largest transfers, underload."""
    o = Outcome(
        "E-THS-5",
        "Lock-outs: longest interval without progress of the 3 largest transfers ([003 §4.6.3], Fig. 4.11)",
        ["scheduler", "largest transfers MSS", "longest stall s (each)", "max s"],
    )
    all_runs = ths4_runs(duration, ctx.seed)
    names = ["LAS", "LARS", "EFD", "Run2C"]
    runs = {n: all_runs[8e6, n] for n in names}
    results = simulate(ctx, runs.values())
    o.tools["ns3"] = ns3_version(results)
    o.config.update(duration_s=duration, load_bps=8e6, schedulers={n: THS4_SCHEDULERS[n] for n in names})
    o.notes += [
        *THS4_NOTES,
        f"The underload runs of E-THS-4 (8 Mb/s, {duration:g} s of arrivals, 20 s drain).",
        "Longest interval without progress: the longest gap between a transfer's start and the successive "
        "deliveries of its data to the receiver, up to its completion (or the end of the run). The spec suggests "
        f"the metric; the threshold is ours: a plateau is a stall > {LOCKOUT_S:g} s (ns-3's minimum RTO is 1 s, so "
        "one timeout and its retransmission stay below it).",
    ]
    worst = {}
    for n in names:
        top = sorted(results[runs[n]].flows, key=lambda f: f.size, reverse=True)[:3]
        worst[n] = max(f.max_stall for f in top)
        o.rows.append(
            [
                n,
                ", ".join(f"{f.size / SEGMENT:.0f}" for f in top),
                ", ".join(f"{f.max_stall:.2f}" for f in top),
                f"{worst[n]:.2f}",
            ]
        )
    o.check(
        f"LAS shows plateaus (a stall > {LOCKOUT_S:g} s)",
        worst["LAS"] > LOCKOUT_S,
        f"{worst['LAS']:.2f} s",
        published="plateaus (Fig. 4.11)",
        tolerance=f"> {LOCKOUT_S:g} s",
    )
    for n in ("LARS", "EFD"):
        o.check(
            f"{n} smooth (no stall > {LOCKOUT_S:g} s)",
            worst[n] <= LOCKOUT_S,
            f"{worst[n]:.2f} s",
            published="smooth",
            tolerance=f"≤ {LOCKOUT_S:g} s",
        )
    o.check(
        "Run2C mostly smooth (its longest stall below LAS's)",
        worst["Run2C"] < worst["LAS"],
        f"{worst['Run2C']:.2f} s vs {worst['LAS']:.2f} s",
        published="mostly smooth",
        tolerance="< LAS",
    )
    return o
