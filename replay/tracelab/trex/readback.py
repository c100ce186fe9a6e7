"""Reading a TRex run back: delay violations per class and Mpps (what the runbook shows).

TRex reports latency per packet group as a logarithmic histogram: key k (usec) counts
the packets with latency in [k, next(k)), where next(10) = 20, ..., next(90) = 100,
next(100) = 200 (one significant digit). A budget inside a bucket cannot be resolved,
so violations are given as bounds: `low` counts the buckets at or above the budget,
`high` adds the bucket that straddles it. Latency packets lost in the DUT are counted
apart (TRex's `dropped`): a lost packet missed its deadline too, R_v includes it.
"""

from __future__ import annotations

import math


def bucket_upper(k: int) -> int:
    """Upper edge (usec) of TRex's latency bucket starting at ``k`` usec."""
    if k <= 0:
        return 1
    scale = 10 ** math.floor(math.log10(k))
    return (k // scale + 1) * scale


def violations(histogram: dict, budget_usec: float) -> tuple[int, int]:
    """(low, high) bounds of the packets whose latency exceeded ``budget_usec``."""
    low = high = 0
    for key, count in histogram.items():
        k = int(key)
        if k >= budget_usec:
            low += count
            high += count
        elif bucket_upper(k) > budget_usec:
            high += count
    return low, high


def class_summary(plan: dict, pgid_stats: dict) -> list[dict]:
    """Per class of an STL plan: latency packets sent/received/lost, mean and max latency,
    and the R_v bounds against the class budget (None without a budget)."""
    out = []
    latency = pgid_stats.get("latency", {})
    flows = pgid_stats.get("flow_stats", {})
    for cls in plan["classes"]:
        pg = cls["latency"]["pg_id"]
        lat = latency.get(str(pg), latency.get(pg, {}))
        fs = flows.get(str(pg), flows.get(pg, {}))
        inner = lat.get("latency", {})
        hist = inner.get("histogram", {})
        received = sum(hist.values())
        lost = lat.get("err_cntrs", {}).get("dropped", 0)
        row = {
            "class": cls["name"],
            "pg_id": pg,
            "tx_pkts": _total(fs.get("tx_pkts")),
            "rx_pkts": _total(fs.get("rx_pkts")),
            "lost": lost,
            "latency_avg_usec": inner.get("average"),
            "latency_max_usec": inner.get("total_max"),
            "budget_s": cls["budget_s"],
            "r_v_low": None,
            "r_v_high": None,
        }
        if cls["budget_s"] is not None and received + lost > 0:
            lo, hi = violations(hist, cls["budget_s"] * 1e6)
            row["r_v_low"] = (lo + lost) / (received + lost)
            row["r_v_high"] = (hi + lost) / (received + lost)
        out.append(row)
    return out


def _total(per_port):
    """TRex gives per-port counters as {port: n, ..., 'total': n}."""
    if isinstance(per_port, dict):
        return per_port.get("total", sum(v for k, v in per_port.items() if k != "total"))
    return per_port


def mpps(port_stats: dict, ports, duration_s: float) -> dict:
    """Mean Mpps sent and received over ``ports`` during a run of ``duration_s`` seconds,
    from TRex's port packet counters (opackets/ipackets; the stats are cleared at start)."""

    def total(key):
        return sum(port_stats.get(str(p), port_stats.get(p, {})).get(key, 0) for p in ports)

    return {
        "tx_pkts": total("opackets"),
        "rx_pkts": total("ipackets"),
        "tx_mpps": total("opackets") / duration_s / 1e6,
        "rx_mpps": total("ipackets") / duration_s / 1e6,
    }
