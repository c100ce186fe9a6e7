"""The experiment definitions. Every choice the seeds leave open is named
in the outcome's `notes` (NOT IN SEEDS / ⚠AMB)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import tracelab_engine as engine

from . import chunk_analytic as ca
from .outcome import Context, Outcome

US, MS, S = 10**6, 10**9, 10**12  # picoseconds


# ------------------------------------------------------------------ chunking

CHK_CLASSES = [
    {"name": "sensing", "budget": "50us"},
    {"name": "realtime", "budget": "100us"},
    {"name": "file", "budget": "200us"},
]
CHK_SCHEMES = {
    "BasiCQ": "basicq(shim=0)",
    "ChuMQ": "chumq(shim=0)",
    "ChuTQ (DCF)": "chutq(policy=dcf, shim=0)",
    "ChuTQ (TPF)": "chutq(policy=tpf, shim=0)",
}
CHK_NOTES = [
    "Poisson arrivals per class (the analysis' assumption; the seed's process is not stated).",
    "No chunk header (shim=0, the seed's 0 bytes); X = D = 0 so W_max = Q; buffer capacity 16384 "
    "packets per core (NOT IN SEEDS).",
    "η = chunks per second / 5 M PPS (the ingress edge, ⚠AMB-26).",
]


def chk_sources(shares, start_ps: int, stop_ps: int, seed: int) -> list[str]:
    return [
        f"poisson(load={share}, size={size}, cls={i}, start={start_ps}ps, stop={stop_ps}ps, seed={seed + i})"
        for i, (share, size) in enumerate(zip(shares, ca.SIZES, strict=True))
        if share > 0
    ]


def chk_run(element: str, sources: list[str], duration_ps: int, **extra) -> dict[str, Any]:
    cfg = {
        "sources": sources,
        "nodes": [{"element": element, "rate": "10G", **extra}],
        "classes": CHK_CLASSES,
        "measure_from": 0,
        "measure_until": duration_ps,
        "max_delay_samples": 0,
    }
    return engine.run(cfg)


def e_chk_1(scale: float, ctx: Context) -> Outcome:
    """Table III: chunking at Λ = 0.9, homogeneous."""
    o = Outcome(
        "E-CHK-1",
        "Effect of chunking at Λ = 0.9, homogeneous ([000] Table III)",
        ["scheme", "η", "η published", "output Gb/s", "published", "P_loss"],
    )
    o.notes += [
        *CHK_NOTES,
        f"Traffic active for {scale * 1000:g} ms (the seed: 1 s).",
        "Without chunking: a FIFO node whose per-packet processing floor is 200 ns (5 M PPS) in front of the "
        "10 Gb/s link; buffer 1000 packets (NOT IN SEEDS).",
    ]
    duration = int(scale * S)
    shares = (0.3, 0.3, 0.3)
    sources = chk_sources(shares, 0, duration, seed=10 + ctx.seed)
    published = {
        "Basic scheme without chunking": (0.902, 3.52),
        "BasiCQ": (0.026, 8.97),
        "ChuMQ": (0.025, 8.97),
        "ChuTQ (DCF)": (0.026, 8.97),
        "ChuTQ (TPF)": (0.025, 8.97),
    }
    runs = {"Basic scheme without chunking": chk_run("fifo(capacity=1000)", sources, duration, min_service="200ns")}
    for scheme, element in CHK_SCHEMES.items():
        runs[scheme] = chk_run(element, sources, duration)
    offered = runs["BasiCQ"]["overall"]
    zeta = offered["offered"] / (duration / S) / 5e6
    for scheme, m in runs.items():
        n = m["nodes"][0]
        o_all = m["overall"]
        gbps = o_all["delivered_bytes"] * 8 / (duration / S) / 1e9
        p_loss = o_all["dropped_total"] / o_all["offered"]
        eta_pub, gbps_pub = published[scheme]
        o.rows.append([scheme, f"{n['eta']:.4f}", eta_pub, f"{gbps:.2f}", gbps_pub, f"{p_loss:.4f}"])
        if scheme != "Basic scheme without chunking":
            o.check(f"{scheme}: P_loss = 0", p_loss == 0, f"{p_loss:.2e}", published=0, tolerance="exact")
            o.check(
                f"{scheme}: η within ±0.003 of {eta_pub}",
                abs(n["eta"] - eta_pub) <= 0.003,
                f"{n['eta']:.4f}",
                published=eta_pub,
                tolerance="±0.003",
            )
            o.check(
                f"{scheme}: output 8.97 ± 0.05 Gb/s",
                abs(gbps - 8.97) <= 0.05,
                f"{gbps:.3f}",
                published=8.97,
                tolerance="±0.05 Gb/s",
            )
    basic = runs["Basic scheme without chunking"]
    fwd = basic["overall"]["delivered"] / basic["overall"]["offered"]
    o.check("ζ (incoming PPS / 5 M) ≈ 2.28", abs(zeta - 2.28) <= 0.03, f"{zeta:.3f}")
    o.check("without chunking ≈ 40 % of packets forwarded (0.902/2.28)", abs(fwd - 0.40) <= 0.05, f"{fwd:.3f}")
    return o


def e_chk_2(scale: None, ctx: Context) -> Outcome:
    """The analytic quantities of [000 §6] (type A)."""
    o = Outcome("E-CHK-2", "ChuMQ analytic model ([000 §6], Eq. 1–6)", ["quantity", "computed", "published"])
    o.notes.append("M̄_c(T) = 1 + λT (⚠AMB-25); published values are quoted to two decimals.")
    cases = [
        ("file dominant, M̄_c sensing", (0.01, 0.01, 0.88), 0, 16.63),
        ("file dominant, M̄_c real-time", (0.01, 0.01, 0.88), 1, 7.25),
        ("sensing dominant, M̄_c real-time", (0.88, 0.01, 0.01), 1, 7.25),
        ("sensing dominant, M̄_c file", (0.88, 0.01, 0.01), 2, 2.66),
    ]
    for label, shares, i, pub in cases:
        v = ca.mean_chunk_population(shares[i], ca.SIZES[i], ca.TIMERS[i])
        o.rows.append([label, f"{v:.4f}", pub])
        # 2.6667 is printed as 2.66 (truncated, not rounded): accept either.
        o.check(
            f"{label} = {pub}",
            abs(v - pub) <= 0.005 or int(v * 100) / 100 == pub,
            f"{v:.4f}",
            published=pub,
            tolerance="±0.005 or truncated",
        )
    o.rows.append(["chunk transmission time (µs)", f"{ca.CHUNK_TIME * 1e6:.3f}", 7.2])
    o.check("chunk time 7.2 µs", abs(ca.CHUNK_TIME - 7.2e-6) < 1e-15)
    o.rows.append(["K (40/200/1500 B)", "/".join(str(ca.k_max(s)) for s in ca.SIZES), "225/45/6"])
    o.check("K = 225/45/6", [ca.k_max(s) for s in ca.SIZES] == [225, 45, 6])
    hom = [ca.p_timer(0.9 / 3, s, t) for s, t in zip(ca.SIZES, ca.TIMERS, strict=True)]
    o.rows.append(["P(MTU excess) homogeneous Λ=0.9", " / ".join(f"{1 - p:.3f}" for p in hom), "≈1 for all"])
    o.check("homogeneous Λ > 0.5: P(MTU excess) ≈ 100 % for every class", all(1 - p > 0.99 for p in hom))
    return o


def e_chk_3(scale: float, ctx: Context) -> Outcome:
    """R_v vs Λ (Λ < 1): ChuMQ simulation vs the Eq. 4 bounds; BasiCQ, ChuTQ = 0."""
    o = Outcome(
        "E-CHK-3",
        "R_v vs Λ, imbalanced (file dominant) ([000 §7.2.1], Figs. 9–10)",
        ["Λ", "class", "ChuMQ R_v", "Eq.4 lower", "approx", "upper", "BasiCQ", "ChuTQ DCF", "max excess µs"],
    )
    o.notes += [
        *CHK_NOTES,
        f"Traffic active for {scale * 1000:g} ms per point.",
        "ChuMQ contention (chumq contention=timer_first, the default): when the link is free, a buffer whose "
        "timer has expired goes first, lowest index first ([000 §4.2]), then a buffer above the MTU, lowest "
        "index first; a minor-class chunk therefore waits for the chunk on the wire and for lower-index chunks "
        "ready at the same instant. Here the minor classes are the lower indices, so contention=priority (the "
        "lowest-index ready buffer, whatever made it ready) gives the same R_v. With the spec's literal FIFO of "
        "formed chunks (contention=fifo) the dominant class's MTU chunks queue as an M/D/1 at ρ ≈ 0.9 and at "
        "Λ = 0.9 the minor classes left the Eq. 4 bounds (R_v 0.196/0.183, max excess 48 µs against the seed's "
        "7.82 µs).",
    ]
    duration = int(scale * S)
    minor_rv = {0: [], 1: []}
    for lam in (0.3, 0.5, 0.7, 0.9):
        shares = (0.01, 0.01, round(lam - 0.02, 4))
        sources = chk_sources(shares, 0, duration, seed=20 + ctx.seed)
        chumq = chk_run(CHK_SCHEMES["ChuMQ"], sources, duration)
        basic = chk_run(CHK_SCHEMES["BasiCQ"], sources, duration)
        dcf = chk_run(CHK_SCHEMES["ChuTQ (DCF)"], sources, duration)
        for i in range(3):
            lo, ap, up = ca.rv_bounds(shares, i)
            rv = chumq["classes"][i]["r_v"]
            exc = chumq["classes"][i]["excess_delay"]["max_ps"] / US
            o.rows.append(
                [
                    lam,
                    CHK_CLASSES[i]["name"],
                    f"{rv:.4f}",
                    f"{lo:.4f}",
                    f"{ap:.4f}",
                    f"{up:.4f}",
                    f"{basic['classes'][i]['r_v']:.4f}",
                    f"{dcf['classes'][i]['r_v']:.4f}",
                    f"{exc:.2f}",
                ]
            )
            if i < 2:
                minor_rv[i].append(rv)
                o.check(
                    f"Λ={lam} {CHK_CLASSES[i]['name']}: ChuMQ R_v within the Eq.4 bounds",
                    lo <= rv <= up,
                    f"{rv:.4f} in [{lo:.4f}, {up:.4f}]",
                )
            if i == 2:
                o.check(f"Λ={lam}: dominant class R_v = 0", rv == 0, f"{rv:.4f}")
            o.check(
                f"Λ={lam} {CHK_CLASSES[i]['name']}: BasiCQ and ChuTQ R_v = 0",
                basic["classes"][i]["r_v"] == 0 and dcf["classes"][i]["r_v"] == 0,
            )
        if lam == 0.9:
            exc = max(chumq["classes"][i]["excess_delay"]["max_ps"] for i in range(3)) / US
            o.check("Λ=0.9: max excess in (7.2, 14.4] µs", 7.2 < exc <= 14.4, f"{exc:.2f} µs")
    o.check(
        "minor classes: R_v grows with Λ",
        all(b >= a for r in minor_rv.values() for a, b in itertools.pairwise(r)),
        str(minor_rv),
    )
    o.check(
        "longer-packet minor class (real-time) has the larger R_v",
        all(rt >= se for se, rt in zip(minor_rv[0], minor_rv[1], strict=True)),
    )
    return o


def e_chk_4(scale: float, ctx: Context) -> Outcome:
    """Table IV: overload Λ = 0.8 → 1.2 → 0.8, R_v of the overload period."""
    o = Outcome(
        "E-CHK-4",
        "Overload Λ = 0.8 → 1.2 → 0.8 ([000 §7.2.2], Table IV)",
        ["scheme", "sensing %", "pub.", "real-time %", "pub.", "file %", "pub.", "dropped"],
    )
    o.notes += [
        *CHK_NOTES,
        f"Timeline scaled to {scale * 1000:g} ms (the seed: 1 s, overload from 0.3 to 0.5 of it); R_v over "
        "the packets created during the overload (window inferred).",
        "R_v = violating delivered packets / delivered packets of the class.",
        "ChuTQ runs with expired=last: a head-of-line packet whose residual r <= 0 ranks below every live one "
        "(all expired packets equal, ties to the lower class). The seed leaves this case unspecified and the "
        "spec's default (expired=first, alpha = +inf) lets the expired packets of every class take precedence in "
        "overload, so DCF/TPF lose their protection; the rows marked 'expired=first' show that default, "
        "unchecked. The literal alpha = 1/r (negative once expired) fixes TPF but leaves DCF sensing near 99 %.",
        "ChuMQ runs with contention=timer_first: at the link-free instant expired timers go first (lowest "
        "index), then buffers above the MTU. [000 §4.2] orders simultaneous expiries by index and §7.2.2 "
        "credits the protection to the timers ('the value of the timer for packets with short acceptable "
        "waiting times is set to a small value, thereby allowing priority control to work'). In overload the "
        "backlogged file buffer's head is always expired, so a sensing or real-time buffer above the MTU waits "
        "for its own timer and then for the chunk on the wire: with the link saturated by 7.2-µs chunks the "
        "wait is uniform on [0, 7.2) µs, a sensing chunk spans the 18 µs in which 9000 B of sensing arrive at "
        "4 Gb/s, and the packet at offset a violates iff the wait exceeds a, so R_v(sensing) ≈ 3.6/18 = 20 % "
        "(published 20.42 %); real-time chunks also wait behind sensing chunks expiring with them (38.33 %). "
        "The unchecked rows show the other readings: contention=priority (the lowest-index ready buffer, "
        "whatever made it ready: sensing and real-time leave on MTU excess within 18 µs, R_v 0) and the spec's "
        "literal FIFO of formed chunks (contention=fifo: every class behind the growing chunk FIFO, ≈ 99 %).",
    ]
    d = int(scale * S)
    t1, t2 = int(0.3 * d), int(0.5 * d)
    sources = chk_sources((0.8 / 3,) * 3, 0, d, seed=30 + ctx.seed) + chk_sources(
        (0.4 / 3,) * 3, t1, t2, seed=40 + ctx.seed
    )
    published = {
        "BasiCQ": (99.88, 99.76, 99.55),
        "ChuMQ": (20.42, 38.33, 99.84),
        "ChuTQ (DCF)": (0.00, 0.00, 99.79),
        "ChuTQ (TPF)": (99.90, 0.00, 0.00),
    }
    schemes = {
        k: v.replace("shim=0)", "shim=0, expired=last)") if k.startswith("ChuTQ") else v for k, v in CHK_SCHEMES.items()
    }

    def row(label: str, scheme: str, element: str) -> list[float]:
        """Runs `element` over the overload, adds its table row, returns R_v (%) per class."""
        cfg = {
            "sources": sources,
            "nodes": [{"element": element, "rate": "10G"}],
            "classes": CHK_CLASSES,
            "measure_from": t1,
            "measure_until": t2,
            "max_delay_samples": 0,
        }
        m = engine.run(cfg)
        rv = [100 * c["r_v"] for c in m["classes"]]
        measured_beside_published = [
            x for got, want in zip(rv, published[scheme], strict=True) for x in (f"{got:.2f}", want)
        ]
        o.rows.append([label, *measured_beside_published, m["overall"]["dropped_total"]])
        return rv

    for scheme, element in schemes.items():
        rv = row(scheme, scheme, element)
        pub = published[scheme]
        for i, (got, want) in enumerate(zip(rv, pub, strict=True)):
            name = CHK_CLASSES[i]["name"]
            if want >= 99:
                o.check(
                    f"{scheme} {name}: ≥ 95 % (published {want})",
                    got >= 95,
                    f"{got:.2f}",
                    published=want,
                    tolerance="≥ 95",
                )
            elif want == 0:
                o.check(
                    f"{scheme} {name}: ≤ 0.5 % (published 0.00)",
                    got <= 0.5,
                    f"{got:.2f}",
                    published=want,
                    tolerance="≤ 0.5",
                )
            else:
                o.check(
                    f"{scheme} {name}: {want} ± 10 points",
                    abs(got - want) <= 10,
                    f"{got:.2f}",
                    published=want,
                    tolerance="±10 points",
                )
    # The other readings, shown for comparison (not checked): the spec's
    # default for expired ChuTQ packets, ChuMQ's lowest-index ready buffer and literal chunk FIFO.
    others = {
        "ChuTQ (DCF), expired=first": ("ChuTQ (DCF)", CHK_SCHEMES["ChuTQ (DCF)"]),
        "ChuTQ (TPF), expired=first": ("ChuTQ (TPF)", CHK_SCHEMES["ChuTQ (TPF)"]),
        "ChuMQ, contention=priority": ("ChuMQ", "chumq(shim=0, contention=priority)"),
        "ChuMQ, contention=fifo": ("ChuMQ", "chumq(shim=0, contention=fifo)"),
    }
    for label, (scheme, element) in others.items():
        row(label, scheme, element)
    return o


# ------------------------------------------------------------------ MTQ / QTL

MTQ_GROUP_HOPS = {0: "0-2", 1: "0-1", 2: "1-2", 3: "2", 4: "0"}  # model 2: nodes 1..3 are 0..2 here


def e_mtq_4(scale: float, ctx: Context) -> Outcome:
    """Tables 2–3: model 2, D = 10 ms, configurations (a)–(d)."""
    o = Outcome(
        "E-MTQ-4",
        "QTL + MTQ, D = 10 ms, model 2 ([004 §5.3], Tables 2–3)",
        ["config", "node1 1*/2*", "node2 1*/2*", "node3 1*/2*", "3*", "4*", "delay n1/n2/n3 ms", "published delay"],
    )
    o.notes += [
        "80 exponential ON/OFF flows per group (350/650 ms, 80 kb/s mean, 200 B, CBR when ON), "
        "three 20 Mb/s nodes with 200-packet buffers; propagation delays 0 (only queueing matters).",
        f"Duration {scale:g} s (NOT IN SEEDS); counts therefore compare as ratios.",
        "1* = overflow + MTQ discards, 2* = QTL discards, 4* = delivered with total queueing delay > D.",
        "The local delay estimate includes the residual of the packet in service (mtqqtl in_service=1, the "
        "⚠AMB-27 alternative): it is then the packet's actual queueing delay. With the spec default (excluded) "
        "the estimate misses up to 80 µs per node and a 30-s run delivers about 10 000 packets of (c) just "
        "above D = 10 ms, against the published 4* = 0.",
    ]
    configs = {"(a)": {}, "(b)": {"mtq": "5ms"}, "(c)": {"qtl": "10ms"}, "(d)": {"mtq": "5ms", "qtl": "10ms"}}
    pub_delay = {
        "(a)": (4.24, 3.92, 3.76),
        "(b)": (1.52, 1.28, 1.20),
        "(c)": (2.64, 1.36, 0.88),
        "(d)": (1.52, 1.28, 0.96),
    }
    totals, late, max_qd = {}, {}, {}
    for name, hdr in configs.items():
        sources = [
            f"onoff(flows=80, rate=80k, size=200, on=exp(350ms), off=exp(650ms), cls={g}, hops={h}, "
            f"stop={scale}s, seed={99 + ctx.seed + g})"
            for g, h in MTQ_GROUP_HOPS.items()
        ]
        cfg = {
            "sources": sources,
            "nodes": [{"element": "mtqqtl(capacity=200, in_service=1)", "rate": "20M"}] * 3,
            "classes": [{"name": f"g{g}", "budget": "10ms", **hdr} for g in MTQ_GROUP_HOPS],
            "max_delay_samples": 0,
        }
        m = engine.run(cfg)
        cells = []
        total = 0
        for n in m["nodes"]:
            d = n["dropped"]
            one, two = d["buffer_full"] + d["early_discard"], d["budget_expired"]
            total += one + two
            cells.append(f"{one}/{two}")
        late[name] = sum(c["violations"] for c in m["classes"])
        totals[name] = total
        max_qd[name] = m["overall"]["queue_delay"]["max_ps"]
        delays = [n["mean_queue_delay_ps"] / MS for n in m["nodes"]]
        o.rows.append(
            [
                name,
                *cells,
                total,
                late[name],
                "/".join(f"{x:.2f}" for x in delays),
                "/".join(str(x) for x in pub_delay[name]),
            ]
        )
        if name == "(b)":
            o.check(
                "(b) MTQ: mean delays well below (a) at every node",
                all(x < 0.6 * y for x, y in zip(delays, [float(v) for v in o.rows[0][6].split("/")], strict=True)),
            )
    for name in ("(c)", "(d)"):
        o.check(
            f"{name} QTL = 10 ms: no packet delivered with queueing > 10 ms (INV)",
            max_qd[name] <= 10 * MS,
            f"max {max_qd[name] / MS:.3f} ms",
        )
        o.check(f"{name} QTL alone or combined: zero receiver discards (4*)", late[name] == 0, str(late[name]))
    for label, (x, y), pub in [
        ("3*(b)/3*(a)", ("(b)", "(a)"), 1.51),
        ("3*(c)/3*(a)", ("(c)", "(a)"), 2.51),
        ("3*(d)/3*(b)", ("(d)", "(b)"), 1.04),
    ]:
        r = totals[x] / totals[y] if totals[y] else float("inf")
        o.check(f"{label} ≈ {pub} ± 25 %", abs(r - pub) <= 0.25 * pub, f"{r:.2f}", published=pub, tolerance="±25 %")
    o.check(
        "(d) lowest application discards + network total among (a), (b)",
        totals["(d)"] + late["(d)"] < min(totals["(a)"] + late["(a)"], totals["(b)"] + late["(b)"]),
    )
    return o


# ------------------------------------------------------------------ thesis

THS_SIZES = (1.0, 6, 6667)  # bzipf(shape, min, max) packets: P(k) ∝ k^-(shape+1)
THS_P_INS = 0.01


def insertion_fraction(p_ins: float, shape: float, lo: int, hi: int, control: int = 0) -> tuple[float, float]:
    """(E[1 − (1−p)^(N + control)], mean N) for N ~ bzipf(shape, lo, hi): the share of flows that
    X-Protect's per-packet test inserts into its table at some packet, `control` packets per flow (a TCP
    flow's SYN, handshake ACK and FIN) tested besides the N data packets. Both tables keep an entry until
    30–35 s after the flow's last packet, so X-Protect/LAS ≈ this share when flows are short next to the
    timeout."""
    w = [k ** -(shape + 1) for k in range(lo, hi + 1)]
    total = sum(w)
    inserted = sum(x * (1 - (1 - p_ins) ** (k + control)) for k, x in enumerate(w, start=lo)) / total
    return inserted, sum(x * k for k, x in enumerate(w, start=lo)) / total


def implied_p_ins(share: float, shape: float, lo: int, hi: int) -> float:
    """The p_ins at which X-Protect inserts the fraction `share` of bzipf(shape, lo, hi) flows: the inverse
    of `insertion_fraction` in p (it grows with p), by bisection to 1e-6."""
    below, above = 0.0, 1.0
    while above - below > 1e-6:
        p = (below + above) / 2
        below, above = (p, above) if insertion_fraction(p, shape, lo, hi)[0] < share else (below, p)
    return (below + above) / 2


def e_ths_3(scale: float, ctx: Context) -> Outcome:
    """Table 4.1: flow-table sizes of LAS, X-Protect and EFD (open-loop part)."""
    o = Outcome(
        "E-THS-3",
        "Flow-table size, LAS vs X-Protect vs EFD ([003] Table 4.1, open loop)",
        [
            "load",
            "LAS mean",
            "pub.",
            "X-Protect mean",
            "pub.",
            "X/LAS",
            "pub.",
            "E[1−(1−p)^N]",
            "EFD mean",
            "pub.",
            "EFD max",
            "queue max",
        ],
    )
    share, mean_n = insertion_fraction(THS_P_INS, *THS_SIZES)
    bound = 1 - (1 - THS_P_INS) ** 40
    # Little's law on Table 4.1's own LAS mean at 8 Mb/s: entries live ≥ 32.5 s on average, so at most
    # 392.5 / 32.5 flows/s arrive, and the mean flow carries at least 8 Mb/s over that rate.
    little_rate = 392.4961 / 32.5
    little_mean = 8e6 / 8 / little_rate / 1500
    heavier_shape = 0.85  # bzipf(0.85, 6, 6667): mean ≈ 60 packets, above the Little bound
    tcp_share, heavier_mean = insertion_fraction(THS_P_INS, heavier_shape, *THS_SIZES[1:], control=3)
    o.notes += [
        "Open loop (no TCP): Poisson flow arrivals, bounded Zipf sizes bzipf(1.0, 6, 6667) packets of 1500 B "
        f"(mean {mean_n:.0f} packets ≈ the thesis' 40 MSS; CoV 4.8 — the seed's CoV 6 is not reachable with "
        "these bounds), each flow sent at its 100 Mb/s access rate into a 10 Mb/s bottleneck, buffer 300 packets.",
        f"LAS and X-Protect tables scanned every 5 s, entries idle ≥ 30 s removed; X-Protect p_ins = {THS_P_INS} "
        "tested at every packet of an untracked flow ([003 §4.6.1]: 'a test is performed at each packet arrival "
        "for flows that have not already be incorporated in the flow table', 'a low probability, say 1%'). "
        "Table sizes are time-weighted means over the run.",
        f"Duration {scale:g} s (the seed: 1000 s). Closed-loop TCP is not modelled, so absolute sizes differ "
        "(LAS ≈ flow arrival rate × 32.5 s here); the checks are the spec's ratios and the invariant.",
        "X-Protect/LAS in [0.35, 0.65] (the spec's tolerance around the thesis' 'roughly halves', published "
        "0.45 and 0.50) is not reachable with the seed's p = 1 %. A flow's X-Protect entry lives from the packet "
        "that passes the test to 30–35 s after the flow's last packet, its LAS entry from the first packet to "
        "30–35 s after the last, so with flows short next to the timeout X-Protect/LAS is the share of flows "
        "ever inserted, E[1 − (1−p)^N]. That function of N is concave: by Jensen's inequality the share is at "
        f"most 1 − (1−p)^E[N] = {bound:.3f} for a mean of 40 packets, whatever the size distribution, and "
        f"{share:.3f} for the bounded Zipf used here, which the simulation reproduces (X/LAS column, model "
        "check ±0.03). The thesis' own Table 4.2 does not leave room for TCP to close the gap at 8 Mb/s: short "
        "flows average 21 MSS (≤ 1 − 0.99^24 = 21.4 % inserted, counting three control packets), long ones "
        "(≈ 1000 MSS, 2 % of flows, half the bytes) are all inserted, and even with X-Protect entries at their "
        "longest (35 s after FIFO's response times) against LAS entries at their shortest (30 s after LAS's), "
        "X-Protect/LAS ≤ 0.27. The check's why computes the p_ins, or the mean flow size at p = 1 %, that the "
        "published ratio implies; the seed states neither (⚠AMB-6: p_ins NOT IN SEEDS beyond 'say 1%'), so the "
        "spec's check stays failing.",
        "Other readings checked, none reaching 0.35 with p = 1 %: Table 4.1's own LAS mean (392.5 entries at "
        f"8 Mb/s, each living ≥ 32.5 s) caps the arrival rate at {little_rate:.1f} flows/s by Little's law, so "
        f"the thesis' mean flow is at least {little_mean:.0f} packets; bounded Zipf sizes with a mean of "
        f"{heavier_mean:.0f} packets (shape {heavier_shape:g}, 6 to 6667) and TCP's three control packets "
        f"tested as well give E[1 − (1−p)^(N+3)] = {tcp_share:.3f}; weighting entries by closed-loop "
        "lifetimes (each flow's entry longer by its transfer time at 2 Mb/s, 40 s for 6667 packets) adds less "
        "than 0.01.",
    ]
    published = {0.8: (392.4961, 176.8407, 1.9997), 1.5: (704.0326, 352.9599, 27.9053)}
    shape, lo, hi = THS_SIZES
    for load, pub in published.items():
        src = (
            f"flows(load={load}, link=10M, packets=bzipf({shape},{lo},{hi}), size=1500, peak=100M, "
            f"stop={scale}s, seed={6 + ctx.seed})"
        )
        sizes = {}
        efd_max = qmax = 0
        for name, element in [
            ("las", "las(capacity=300)"),
            ("xprotect", f"xprotect(capacity=300, p_ins={THS_P_INS})"),
            ("efd", "efd(capacity=300, th=30000)"),
        ]:
            m = engine.run(
                {
                    "sources": [src],
                    "nodes": [{"element": element, "rate": "10M"}],
                    "until": f"{scale}s",
                    "max_delay_samples": 0,
                }
            )
            n = m["nodes"][0]
            sizes[name] = n["flow_table"]["time_weighted_mean"]
            if name == "efd":
                efd_max, qmax = n["flow_table"]["max"], n["highwater_packets"]
        ratio = sizes["xprotect"] / sizes["las"]
        o.rows.append(
            [
                load,
                f"{sizes['las']:.1f}",
                pub[0],
                f"{sizes['xprotect']:.1f}",
                pub[1],
                f"{ratio:.3f}",
                f"{pub[1] / pub[0]:.3f}",
                f"{share:.3f}",
                f"{sizes['efd']:.2f}",
                pub[2],
                efd_max,
                qmax,
            ]
        )
        o.check(f"load {load}: EFD table ≤ queue length (INV)", efd_max <= qmax, f"{efd_max} ≤ {qmax}")
        o.check(f"load {load}: LAS/EFD ≥ 10", sizes["las"] >= 10 * sizes["efd"], f"{sizes['las'] / sizes['efd']:.1f}")
        pub_ratio = pub[1] / pub[0]
        o.check(
            f"load {load}: X-Protect/LAS in [0.35, 0.65]",
            0.35 <= ratio <= 0.65,
            f"{ratio:.2f}",
            published=f"{pub_ratio:.3f}",
            tolerance="[0.35, 0.65]",
            why=f"X-Protect/LAS is the share of flows ever inserted, E[1 − (1−p)^N] = {share:.3f} here (the model "
            f"check). The published {pub_ratio:.3f} implies p_ins = "
            f"{implied_p_ins(pub_ratio, *THS_SIZES):.1%} with these sizes, or, at the seed's p_ins = 1 %, a mean "
            f"flow of at least ln(1 − {pub_ratio:.3f}) / ln(0.99) = {math.log(1 - pub_ratio) / math.log(0.99):.0f} "
            f"packets (Jensen; reached only by equal-size flows) against the thesis' 40 MSS and {mean_n:.0f} here; "
            "the seed states neither such a p_ins (only 'say 1%', ⚠AMB-6) nor such sizes.",
        )
        o.check(
            f"load {load}: X-Protect/LAS = E[1 − (1−p)^N] ± 0.03 (model)",
            abs(ratio - share) <= 0.03,
            f"{ratio:.3f} vs {share:.3f}",
        )
        o.check(f"load {load}: EFD at most a few tens of entries", sizes["efd"] <= 50, f"{sizes['efd']:.2f}")
    return o
