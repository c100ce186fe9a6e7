"""E-THS-16: legacy vs topological vs apps workload models driving the
enterprise dumbbell ([003 §9.3], Tables 9.1-9.2, Figs. 9.9-9.14), in closed
loop with real TCP (`tracelab replay ns3`, click-elements/ns3/model_replay.cc).

The workload model is built from the tables: Table 9.1's shares, Table 9.2's
link delays, and what the seeds leave open stated in the notes (Poisson
arrivals; Pareto sizes alpha 1.2, mean 60 KB (40 x 1500 B, algorithms.md §11),
bounded at 10 MB; the apps model's trains and think times). The same seed
gives every variant the same connections (arrivals, sizes, hosts): the
variants differ only in how the model places and carries them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import ns3
from .outcome import Context, Outcome

SCHEDULERS = {"FIFO": "fifo", "SCFQ": "scfq", "Run2C": "run2c", "LAS": "las", "EFD": "efd(th=30000)"}
RATE = 10_000_000  # the bottleneck 11-12 (algorithms.md §10)
# Offered payload bytes (both directions) / bottleneck rate. Underload: the
# seeds' 8 Mb/s; overload: NOT IN SEEDS, 24 Mb/s, i.e. about 1.3 on the
# download direction (54 % of the bytes) and 1.1 on the upload one.
LOADS = {"underload": 0.8, "overload": 2.4}
MEAN_SIZE = 60_000.0  # bytes, 40 x 1500 B
MAX_FLOW = 10e6
# The thesis's TCP starts from one segment (Eq. 5.10's flights 1, 2, 3, ...),
# as the other closed-loop experiments run it; ns-3's default is 10.
THESIS_TCP = ("--ns3::TcpSocket::InitialCwnd=1",)

# Tables 9.1 and 9.2 as published (exact decimal arithmetic below).
TABLE_9_1 = {
    "legacy": {"download": "0.54", "upload": "0.46"},
    "topological": {
        "intranet": {"download": "0.45", "upload": "0.45"},
        "internet": {"download": "0.09", "upload": "0.01"},
    },
}
TABLE_9_2_MS = {"12-y": "5.45", "12-w": "0.5", "12-v": "50"}

NOTES = [
    "Workload model from Tables 9.1-9.2; NOT IN SEEDS and chosen here: Poisson connection arrivals, "
    "Pareto sizes (alpha 1.2, mean 60 KB = 40 x 1500 B as algorithms.md §11, bounded at 10 MB), "
    "load = offered payload bytes of both directions / 10 Mb/s: underload 0.8 (the seeds' 8 Mb/s), "
    "overload 2.4 (about 1.3 on the download direction).",
    "Apps model (NOT IN SEEDS beyond 'trace replay over UDP vs bulk TCP'): trains of 1-8 full-size "
    "packets alternating client/server, think times 0-100 ms uniform; the UDP trace player sends "
    "each train's datagrams at the access rate; bulk = the same sizes as one TCP train per direction.",
    "Legacy and topological variants carry each connection as bulk TCP (the thesis's FTP/GENERIC); "
    "the element runs on both directions of the bottleneck, buffer 300 packets (wired); TCP NewReno "
    "from an initial window of 1 segment, delayed ACKs, 1448-byte segments.",
    "Only the wired dumbbell: the 802.11a WLAN variant (30-MSS AP buffer) is not built (no WLAN "
    "model in the ns-3 scenario), so its S-check is not run.",
]


def _fit(family: str, params: dict[str, float], ks_d: float) -> dict[str, Any]:
    return {"family": family, "params": params, "log_likelihood": 0.0, "ks_d": ks_d, "ks_p": 1.0, "qq_log10_rms": 0.0}


def _empirical(lo: float, hi: float) -> dict[str, Any]:
    p = [i / 100 for i in range(101)]
    return {"n": 101, "mean": (lo + hi) / 2, "p": p, "v": [lo + (hi - lo) * x for x in p]}


def table_model(mean_gap_s: float = 0.1) -> dict[str, Any]:
    """The workload model of Tables 9.1-9.2 in tracelab's model format."""
    alpha = 1.2
    xm = MEAN_SIZE * (alpha - 1) / alpha
    side = {
        "train_size_pkts": {"values": list(range(1, 9)), "counts": [1] * 8},
        "warmup_s": _empirical(0.0, 0.1),
        "pacing_per_pkt_s": _empirical(0.0, 0.0),
        "packet_size_bytes": {"values": [1500], "counts": [1]},
    }
    t = TABLE_9_1["topological"]
    ms = {k: float(v) / 1e3 for k, v in TABLE_9_2_MS.items()}
    return {
        "schema": "tracelab.workload-model",
        "version": 1,
        "provenance": {
            "source_trace": None,
            "profile_dir": "Tables 9.1-9.2 of [003]",
            "analyzer_version": None,
            "tool": "tracelab-models",
            "tool_version": "E-THS-16 (built from the tables, not derived)",
            "parameters": {},
        },
        "flows": {
            "connections": 1000,
            "size_bytes": {
                "variable": "flow size (bytes)",
                "n": 1000,
                "dropped_non_positive": 0,
                "fits": [_fit("pareto", {"alpha": alpha, "xm": xm}, 0.0), _fit("exponential", {"scale": MEAN_SIZE}, 1)],
                "best": "pareto",
                "reason": "Table 9.x workload (E-THS-16)",
            },
            "interarrival_s": {
                "variable": "flow inter-arrival (s)",
                "n": 1000,
                "dropped_non_positive": 0,
                "fits": [_fit("exponential", {"scale": mean_gap_s}, 0.0)],
                "best": "exponential",
                "reason": "Poisson arrivals",
            },
        },
        "legacy": {
            "shares": {k: float(v) for k, v in TABLE_9_1["legacy"].items()},
            "rtt_s": 2 * ms["12-y"],
            "link_delays_s": {"x-11": 0.0, "11-12": 0.0, "12-y": ms["12-y"]},
        },
        "topological": {
            "shares": {s: {d: float(v) for d, v in t[s].items()} for s in t},
            "rtt_s": {
                "intranet": {"n": 1, "mean": 2 * ms["12-w"], "median": 2 * ms["12-w"]},
                "internet": {"n": 1, "mean": 2 * ms["12-v"], "median": 2 * ms["12-v"]},
            },
            "rtt_method": "data-ack",
            "link_delays_s": {"x-11": 0.0, "11-12": 0.0, "12-w": ms["12-w"], "12-v": ms["12-v"]},
        },
        "apps": {s: {side_: side for side_ in ("orig", "resp")} for s in ("intranet", "internet")},
    }


@dataclass(frozen=True)
class Run:
    scheduler: str
    view: str
    transfer: str
    load: float

    def name(self) -> str:
        return f"{self.scheduler}-{self.view}-{self.transfer}-load{self.load:g}"


def _run(model: dict[str, Any], run: Run, duration: float, drain: float, seed: int, workdir: Path):
    budgets = {n: None for n in ns3.class_names(run.view)}
    setup = ns3.Setup(
        SCHEDULERS[run.scheduler], RATE, duration + drain, seed, run.view, run.transfer, budgets, THESIS_TCP
    )
    schedule = ns3.draw_schedule(
        model,
        duration=duration,
        seed=seed,
        rate_bps=RATE,
        load=run.load,
        view=run.view,
        transfer=run.transfer,
        max_flow=MAX_FLOW,
    )
    wall = ns3.simulate(schedule, setup, workdir / run.name())
    return schedule, ns3.metrics(schedule, setup, workdir / run.name() / "ns3", wall)


def _mean_resp(m: dict[str, Any], cls: str | None = None) -> float:
    k = m["overall"] if cls is None else next(c for c in m["classes"] if c["name"] == cls)
    v = k["response_time"]["mean_s"]
    return float("nan") if v is None else v


def _spread(values: list[float]) -> float:
    """max / min over the schedulers."""
    return max(values) / min(values)


def e_ths_16(scale: tuple[float, float], ctx: Context) -> Outcome:
    duration, drain = scale
    o = Outcome(
        "E-THS-16",
        "Workload models: legacy vs topological vs apps ([003 §9.3], Tables 9.1-9.2)",
        ["model", "load", "scheduler", "connections", "unfinished", "mean resp s", "intranet s", "Internet s"],
    )
    # A-checks: the tables' arithmetic, exact in decimal fractions.
    f = {k: Fraction(v) for k, v in TABLE_9_2_MS.items()}
    t1 = {s: {d: Fraction(v) for d, v in x.items()} for s, x in TABLE_9_1["topological"].items()}
    leg = {d: Fraction(v) for d, v in TABLE_9_1["legacy"].items()}
    for d in ("download", "upload"):
        total = t1["intranet"][d] + t1["internet"][d]
        o.check(
            f"Table 9.1: intranet + Internet {d} = legacy {d}",
            total == leg[d],
            str(float(total)),
            published=str(float(leg[d])),
            tolerance="exact",
        )
    for link, rtt in (("12-w", 1), ("12-v", 100), ("12-y", Fraction("10.9"))):
        o.check(
            f"Table 9.2: RTT 2 x {link} = {float(rtt):g} ms",
            2 * f[link] == rtt,
            f"{float(2 * f[link]):g} ms",
            published=f"{float(rtt):g} ms",
            tolerance="exact",
        )
    mix = Fraction("0.9") * 2 * f["12-w"] + Fraction("0.1") * 2 * f["12-v"]
    o.check(
        "Table 9.2: legacy RTT 10.9 ms = 0.9 x 1 ms + 0.1 x 100 ms",
        mix == 2 * f["12-y"],
        f"{float(mix):g} ms",
        published="10.9 ms",
        tolerance="exact",
    )

    if ns3.binary() is None:
        raise ns3.Ns3ReplayError("ns-3 is not built: build the adapters with `make ns3`")
    if ctx.workdir is None:
        raise ns3.Ns3ReplayError("closed-loop experiments need a work directory")
    model = table_model()
    runs = [Run(s, v, "bulk", load) for load in LOADS.values() for v in ("legacy", "topological") for s in SCHEDULERS]
    runs += [Run(s, "topological", t, LOADS["underload"]) for t in ("udp",) for s in SCHEDULERS]
    with ThreadPoolExecutor(max_workers=ctx.jobs) as pool:
        done = list(pool.map(lambda r: _run(model, r, duration, drain, ctx.seed, ctx.workdir), runs))
    res = {r: m for r, (_, m) in zip(runs, done, strict=True)}
    schedules = {r: s for r, (s, _) in zip(runs, done, strict=True)}
    o.tools["ns3"] = next(iter(res.values()))["simulator"]["ns3_version"]
    o.config.update(
        duration_s=duration,
        drain_s=drain,
        rate_bps=RATE,
        loads=LOADS,
        schedulers=SCHEDULERS,
        mean_size_bytes=MEAN_SIZE,
        max_flow_bytes=MAX_FLOW,
        buffer_packets=300,
    )
    o.notes += [*NOTES, f"{duration:g} s of arrivals per run, {drain:g} s drain, one seed ({ctx.seed})."]
    for r in runs:
        m = res[r]
        lbl = "apps/" + r.transfer if r.transfer == "udp" else r.view
        intr = _mean_resp(m, "intranet-download") if r.view == "topological" else float("nan")
        inet = _mean_resp(m, "internet-download") if r.view == "topological" else float("nan")
        o.rows.append(
            [
                lbl,
                f"{r.load:g}",
                r.scheduler,
                m["connections"]["scheduled"],
                m["connections"]["unfinished"],
                f"{_mean_resp(m):.3f}",
                f"{intr:.3f}",
                f"{inet:.3f}",
            ]
        )

    # The schedule carries Table 9.1: each connection's scope is drawn with the
    # scope's share as probability (so the byte shares hold in expectation; a
    # heavy tail makes one run's byte shares noisy), and its bytes split by
    # the scope's upload share.
    sched = schedules[Run("FIFO", "topological", "bulk", LOADS["underload"])]
    n = len(sched)
    total = sum(b for t in sched.trains for _, b, _ in t)
    for k, scope in enumerate(ns3.SCOPES):
        share = t1[scope]["download"] + t1[scope]["upload"]
        count = sum(1 for i in range(n) if sched.scope[i] == k) / n
        se = (float(share) * (1 - float(share)) / n) ** 0.5
        mine = [t for i, t in enumerate(sched.trains) if sched.scope[i] == k]
        nbytes = sum(b for t in mine for _, b, _ in t)
        up = sum(b for t in mine for s, b, _ in t if s == 0) / nbytes
        want_up = float(t1[scope]["upload"] / share)
        o.check(
            f"drawn {scope} connections = Table 9.1 share {float(share):g} ± 3 standard errors",
            abs(count - float(share)) <= 3 * se,
            f"{count:.3f} of {n} connections ({nbytes / total:.3f} of the bytes)",
            published=f"{float(share):g}",
            tolerance=f"±{3 * se:.3f} (binomial)",
        )
        o.check(
            f"drawn {scope} upload / (download + upload) = Table 9.1 {want_up:.3f} ± 0.005",
            abs(up - want_up) <= 0.005,
            f"{up:.4f}",
            published=f"{want_up:.4f}",
            tolerance="±0.005 (whole bytes per connection)",
        )

    under, over = LOADS["underload"], LOADS["overload"]
    for load in (under, over):
        ratios = [
            _mean_resp(res[Run(s, "topological", "bulk", load)]) / _mean_resp(res[Run(s, "legacy", "bulk", load)])
            for s in SCHEDULERS
        ]
        o.check(
            f"S: legacy and topological give similar overall mean response times (load {load:g})",
            all(0.67 <= x <= 1.5 for x in ratios),
            ", ".join(f"{s} {x:.2f}" for s, x in zip(SCHEDULERS, ratios, strict=True)),
            published="similar",
            tolerance="topological / legacy within [0.67, 1.5] per scheduler",
        )
    ratios = [
        _mean_resp(res[Run(s, "topological", "bulk", under)], "intranet-download")
        / _mean_resp(res[Run(s, "topological", "bulk", under)])
        for s in SCHEDULERS
    ]
    o.check(
        "S: wired, low-latency (intranet) traffic ≈ overall (underload)",
        all(0.7 <= x <= 1.3 for x in ratios),
        ", ".join(f"{s} {x:.2f}" for s, x in zip(SCHEDULERS, ratios, strict=True)),
        published="≈ overall",
        tolerance="intranet / overall within ±30 %",
    )
    spread = {
        load: _spread([_mean_resp(res[Run(s, "topological", "bulk", load)], "internet-download") for s in SCHEDULERS])
        for load in (under, over)
    }
    o.check(
        "S: scheduling barely changes high-latency (Internet) traffic in underload",
        spread[under] <= 1.5,
        f"max/min over schedulers {spread[under]:.3f}",
        published="barely",
        tolerance="≤ 1.5",
    )
    o.check(
        "S: ... and matters in overload",
        spread[over] > spread[under] and spread[over] > 1.5,
        f"max/min {spread[over]:.3f} (underload {spread[under]:.3f})",
        published="matters",
        tolerance="> 1.5 and > underload's",
    )
    bulk = _spread([_mean_resp(res[Run(s, "topological", "bulk", under)]) for s in SCHEDULERS])
    udp = _spread([_mean_resp(res[Run(s, "topological", "udp", under)]) for s in SCHEDULERS])
    o.check(
        "S: apps model (UDP trace player, completed loss-free transfers): pacing blurs the schedulers' differences",
        udp < bulk,
        f"max/min over schedulers: UDP {udp:.2f}, bulk TCP {bulk:.2f}",
        published="blurred",
        tolerance="UDP spread < bulk TCP spread",
    )
    o.notes.append(
        "Mean response times: completed connections only (a UDP flow completes when every datagram arrived)."
    )
    return o
