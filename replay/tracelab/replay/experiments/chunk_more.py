"""E-CHK-5 and E-CHK-6: chunking efficiency over Λ ([000 §7.3], Figs. 12–13) and
the ten-application study with 3 and 10 buffers ([000 §7.4], Tables V–IX),
open loop in the engine with the setup of E-CHK-1..4 (runs.py)."""

from __future__ import annotations

import tracelab_engine as engine

from . import chunk_analytic as ca
from .outcome import Context, Outcome
from .runs import CHK_CLASSES, CHK_NOTES, S, chk_sources

LAMBDAS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9)
PATTERNS = {
    "homogeneous": lambda lam: (lam / 3,) * 3,
    "sensing dominant": lambda lam: (round(lam - 0.02, 4), 0.01, 0.01),
    "file dominant": lambda lam: (0.01, 0.01, round(lam - 0.02, 4)),
}
SCHEMES = {
    "BasiCQ": "basicq(shim=0)",
    "ChuMQ": "chumq(shim=0)",
    "ChuMQ+CEA": "chumq(shim=0, cea=1)",
    "ChuTQ (DCF)": "chutq(policy=dcf, shim=0)",
    "ChuTQ (TPF)": "chutq(policy=tpf, shim=0)",
    "ChuTQ (DCF)+CEA": "chutq(policy=dcf, shim=0, cea=1)",
}


def mean_chunk_bytes(element: str, shares: tuple[float, ...], seconds: float, seed: int) -> float:
    duration = int(seconds * S)
    cfg = {
        "sources": chk_sources(shares, 0, duration, seed),
        "nodes": [{"element": element, "rate": "10G"}],
        "classes": CHK_CLASSES,
        "max_delay_samples": 0,
    }
    return engine.run(cfg)["nodes"][0]["mean_transmission_bytes"]


def e_chk_5(seconds: float, ctx: Context) -> Outcome:
    """[000 §7.3] Figs. 12–13: mean chunk size L̄_c vs Λ."""
    o = Outcome(
        "E-CHK-5",
        "Chunking efficiency ([000 §7.3], Figs. 12–13)",
        ["pattern", "Λ", *SCHEMES, "ChuMQ Eq. 5–6"],
    )
    o.config = {"seconds": seconds, "lambdas": list(LAMBDAS), "schemes": SCHEMES}
    o.notes += [
        *CHK_NOTES,
        f"Traffic active for {seconds * 1000:g} ms per point; L̄_c = mean bytes per transmitted chunk. Patterns: "
        "homogeneous (Λ/3 each), sensing and file dominant (the minor classes at λ = 0.01 each, as in E-CHK-3).",
        "ChuMQ Eq. 5–6 is the analytic curve of [000 §6] as printed: it counts k arrivals in the timer window "
        "without the head-of-line packet (algorithms.md §6.7), so it lies below the simulated ChuMQ where timers "
        "form the chunks.",
        "With file-dominant traffic a chunk stops before the 1500-B packet that would exceed 9000 B, so BasiCQ "
        "and ChuTQ chunks average about 7850 B there: '≈ MTU' is read as ≥ 85 % of the MTU.",
        "ChuTQ + CEA adds at most about 100 B here against the seed's ≈ 500 B (Fig. 13(b)); the reason is not "
        "established. A likely one: the engine's ChuTQ moves a class buffer's head into the chunking buffer as "
        "soon as it has room (⚠AMB-21's default pull instant), so when a chunk closes the other classes' heads are "
        "mostly in it already and CEA finds little that still fits.",
    ]
    table: dict[tuple[str, float], dict[str, float]] = {}
    for pattern, shares_of in PATTERNS.items():
        for lam in LAMBDAS:
            shares = shares_of(lam)
            got = {name: mean_chunk_bytes(el, shares, seconds, 50 + ctx.seed) for name, el in SCHEMES.items()}
            table[pattern, lam] = got
            o.rows.append([pattern, lam, *(f"{v:.0f}" for v in got.values()), f"{ca.mean_chunk_bytes(shares):.0f}"])
    busy = [lam for lam in LAMBDAS if lam >= 0.3]
    near_mtu = [
        f"{p} {lam} {s} {table[p, lam][s]:.0f}"
        for p in PATTERNS
        for lam in busy
        for s in ("BasiCQ", "ChuTQ (DCF)", "ChuTQ (TPF)")
        if table[p, lam][s] < 0.85 * ca.MTU
    ]
    o.check(
        "BasiCQ and ChuTQ ≈ MTU except at very small Λ (Λ ≥ 0.3)",
        not near_mtu,
        "; ".join(near_mtu) or "all ≥ 7650 B",
        tolerance="≥ 85 % of the MTU (our reading)",
    )
    smaller = [
        f"{p} {lam}"
        for p in ("sensing dominant", "file dominant")
        for lam in LAMBDAS
        if table[p, lam]["ChuMQ"] >= table[p, lam]["BasiCQ"]
    ]
    o.check("imbalanced: ChuMQ's chunks smaller than BasiCQ's at every Λ", not smaller, "; ".join(smaller) or "all")
    trio = ("BasiCQ", "ChuTQ (DCF)", "ChuTQ (TPF)")
    spread = max(
        max(table[p, lam][s] for s in trio) / min(table[p, lam][s] for s in trio) - 1
        for p in ("homogeneous", "file dominant")
        for lam in LAMBDAS
    )
    o.check(
        "homogeneous and file dominant: ChuTQ (DCF) = ChuTQ (TPF) = BasiCQ",
        spread <= 0.05,
        f"largest spread {100 * spread:.1f} %",
        tolerance="±5 % (our reading; the spec's S default is ±25 %)",
    )
    gain = {
        (p, lam): table[p, lam]["ChuMQ+CEA"] / table[p, lam]["ChuMQ"] - 1
        for p in PATTERNS
        for lam in LAMBDAS
        if lam < 0.4
    }
    top = max(gain, key=gain.get)
    o.check(
        "ChuMQ + CEA raises L̄_c by up to ≈ 90 % at Λ < 0.4",
        abs(gain[top] - 0.9) <= 0.25 * 0.9,
        f"+{100 * gain[top]:.0f} % ({top[0]}, Λ = {top[1]})",
        published="≈ +90 %",
        tolerance="±25 %",
    )
    added = {
        (p, lam): table[p, lam]["ChuTQ (DCF)+CEA"] - table[p, lam]["ChuTQ (DCF)"]
        for p in ("sensing dominant", "file dominant")
        for lam in LAMBDAS
    }
    top = max(added, key=added.get)
    o.check(
        "ChuTQ + CEA adds ≈ 500 B (Fig. 13(b), an imbalanced pattern)",
        abs(added[top] - 500) <= 0.25 * 500,
        f"at most +{added[top]:.0f} B ({top[0]}, Λ = {top[1]})",
        published="≈ +500 B",
        tolerance="±25 %",
    )
    return o
