"""E-JG-7: JumboGen's unit-level oracles (docs/reference/algorithms.md §5), run
through the engine module's JumboGen path (`tracelab_engine.jumbogen_path`:
the ingress, RED and egress cores of click-elements/core, back to back)."""

from __future__ import annotations

import random

import tracelab_engine as engine

from .outcome import Context, Outcome

US, MS = 10**6, 10**9  # picoseconds
H_IP, H_P = 20, 38  # outer IPv4 header; Ethernet IFG 12 + preamble 8 + MAC 14 + FCS 4


def always_select(drop_fraction: float) -> dict:
    """A partial-drop router that selects every JumboGram and asks for ⌈N·drop_fraction⌉ trailing packets:
    RED thresholds at 0 (Red_w = 1) and every arrival a JumboGram (jg_fraction = 1, so dropPercent = 1)."""
    return {
        "mode": "pd",
        "min_th": 0,
        "max_th": 0,
        "min_pkt_drop": drop_fraction,
        "max_pkt_drop": drop_fraction,
        "jg_fraction_weight": 1.0,
    }


def poisson_arrivals(rate_pps: float, count: int, sizes: tuple[int, int], seed: int) -> list[tuple[int, int]]:
    """`count` packets, Poisson at `rate_pps`, arrival times on the 1-µs grid of QTime, uniform sizes."""
    rng = random.Random(seed)
    t, out = 0.0, []
    for _ in range(count):
        t += rng.expovariate(rate_pps)
        out.append((round(t * 1e6) * US, rng.randint(*sizes)))
    return out


def added_delays(packets: list[tuple[int, int]], r: dict) -> list[int]:
    """Egress release − ingress arrival of every delivered packet (ps)."""
    return [e - a for (a, _), e, ok in zip(packets, r["egress_ps"], r["delivered"], strict=True) if ok]


def e_jg_7(count: int, ctx: Context) -> Outcome:
    o = Outcome(
        "E-JG-7",
        "JumboGen unit-level oracles ([002 §2.1–§3.1])",
        ["oracle", "measured", "published / formula"],
    )
    o.config = {"qtime_stream_packets": count, "jfet_ms": 1, "mtu": 8192, "unit_us": 1}
    o.notes += [
        "tracelab_engine.jumbogen_path: the JumboGen ingress core (MTU 8192 B, JFET 1 ms) → JumboGen-aware RED "
        "routers → egress split, back to back at the release instant (no queueing or transmission time): the "
        "oracles are about the cores, not about a network.",
        "cost = (JumboGram wire bytes + H_p) − Σ(packet + H_p), H_p = 38 B (IFG 12 + preamble 8 + MAC 14 + FCS 4), "
        "outer IPv4 header 20 B: measured from the ingress core's wire bytes, beside the core's formula "
        "jg::net_cost_bytes.",
        "Partial drop: three routers that select the 12-packet JumboGram and ask for 4, 3, 5 trailing packets "
        "(RED thresholds 0, jg_fraction 1, min = max PktDrop = 4/12, 3/12, 5/12).",
        f"QTime streams: {count} Poisson packets at 20 000 pkt/s (λ·JFET = 20), seed {ctx.seed}, arrival times "
        "on the 1-µs grid of QTime/pQTime; hold (the seed's simulation, ⚠AMB-14) with 40–200-B packets (a "
        "JumboGram never fills) and early release when full with 700–1500-B packets (most fill before JFET), "
        "each with and without egress shaping. With hold and no full JumboGram, a JumboGram holds the first "
        "packet for JFET and the λ·JFET later ones (uniform in the window) for JFET/2 on average: mean ingress "
        "wait = JFET·(1 + λJ/2)/(1 + λJ) = 0.524 ms.",
    ]

    # cost(N) measured from the ingress core's JumboGram of N 100-B packets.
    for n in (1, 2, 3, 5, 10):
        pk = [(i * US, 100) for i in range(n)]
        r = engine.jumbogen_path(pk)
        (g,) = r["grams"]
        cost = (g["wire_bytes"] + H_P) - sum(size + H_P for _, size in pk)
        formula = engine.jumbogram_net_cost(n)
        o.rows.append([f"cost(N={n}) B", cost, formula])
        overhead = g["wire_bytes"] - H_IP - 100 * n
        o.rows.append([f"JumboGram header, N={n} (B)", overhead, 6 + 4 * n])
        o.check(f"N={n}: overhead = 6 + 4N", overhead == g["header_bytes"] == 6 + 4 * n, str(overhead))
        o.check(f"N={n}: measured cost = H_IP + 6 + 4N − H_p(N − 1)", cost == formula, f"{cost} vs {formula}")
        if n == 2:
            o.check("cost(N=2) = −4 B", cost == -4, str(cost), published=-4, tolerance="exact")

    # [002 §2.3]: N = 12; A asks 4 -> 4 dropped; B asks 3 -> 0 more; C asks 5 -> 1 more.
    pk = [(i * US, 100 + i) for i in range(12)]
    r = engine.jumbogen_path(pk, routers=[always_select(k / 12) for k in (4, 3, 5)])
    (g,) = r["grams"]
    dropped = sum(g["removed"])
    o.rows.append(["partial drop 12 → (4, 3, 5): removed per router", "/".join(map(str, g["removed"])), "4/0/1"])
    o.rows.append(["partial drop: dropped / delivered", f"{dropped} / {g['delivered']}", "5 / 7"])
    o.check("partial drop removed 4, 0, 1 packets at A, B, C", g["removed"] == [4, 0, 1], str(g["removed"]))
    o.check(
        "partial drop 12 → 5 dropped, 7 delivered",
        (dropped, g["delivered"]) == (5, 7),
        f"{dropped} / {g['delivered']}",
        published="5 / 7",
        tolerance="exact",
    )
    o.check(
        "partial drop removes the trailing packets: the first 7 are delivered",
        r["delivered"] == [True] * 7 + [False] * 5,
    )
    fd = engine.jumbogen_path(pk, routers=[{**always_select(4 / 12), "mode": "fd"}])
    o.check("full drop: a selected JumboGram is dropped whole", fd["grams"][0]["delivered"] == 0)

    # QTime <= JFET: a Poisson stream through the ingress, shaped and unshaped.
    rate, jfet = 20000.0, MS
    lam_j = rate * jfet / 10**12
    expected_wait = jfet * (1 + lam_j / 2) / (1 + lam_j)
    for early in (False, True):
        mode = "early release" if early else "hold"
        pk = poisson_arrivals(rate, count, (700, 1500) if early else (40, 200), 70 + ctx.seed)
        for shaping in (True, False):
            r = engine.jumbogen_path(pk, jfet_ps=jfet, early_release=early, shaping=shaping)
            qtime = [g["qtime_units"] * US for g in r["grams"]]
            delays = added_delays(pk, r)
            of_gram = [qtime[gi] for gi, ok in zip(r["gram"], r["delivered"], strict=True) if ok]
            label = f"{mode}, {'shaped' if shaping else 'unshaped'}"
            o.rows.append(
                [
                    f"{label}: JumboGrams / mean, max QTime ms / max added delay ms",
                    f"{len(qtime)} / {sum(qtime) / len(qtime) / MS:.3f} / {max(qtime) / MS:.3f} / "
                    f"{max(delays) / MS:.3f}",
                    "QTime ≤ JFET = 1 ms",
                ]
            )
            o.check(f"{label}: every QTime ≤ JFET", max(qtime) <= jfet, f"max {max(qtime) / MS:.3f} ms")
            if early:
                early_grams = sum(q < jfet for q in qtime)
                o.check(
                    f"{label}: full JumboGrams leave before JFET",
                    early_grams > 0 and r["ingress"]["full_closes"] >= early_grams,
                    f"{early_grams} of {len(qtime)}",
                )
            o.check(
                f"{label}: every packet delivered once",
                len(delays) == count and r["ingress"]["encapsulated"] == count,
                str(len(delays)),
            )
            if shaping:
                o.check(
                    f"{label}: every packet's added delay = its JumboGram's QTime",
                    delays == of_gram,
                    f"{sum(d != q for d, q in zip(delays, of_gram, strict=True))} differ",
                )
            else:
                o.check(f"{label}: no added delay above JFET", max(delays) <= jfet, f"max {max(delays) / MS:.3f} ms")
            if not early and shaping:
                wait = r["ingress"]["wait_total_ps"] / count
                closes = r["ingress"]["full_closes"]
                o.rows.append([f"{label}: mean ingress wait ms", f"{wait / MS:.4f}", f"{expected_wait / MS:.4f}"])
                o.check(
                    "hold: mean ingress wait = JFET(1 + λJ/2)/(1 + λJ)",
                    closes == 0 and abs(wait - expected_wait) <= 0.02 * expected_wait,
                    f"{wait / MS:.4f} vs {expected_wait / MS:.4f} ms, {closes} full",
                    tolerance="±2 % (sampling)",
                )
                o.check("hold: every added delay = JFET", set(delays) == {jfet}, f"{len(set(delays))} distinct")
    return o
