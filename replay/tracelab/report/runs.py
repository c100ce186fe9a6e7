"""Report sections for replay results: one run (metrics.json, optional packets.parquet)
and sweeps (sweep.json rows, one run directory per grid point).

What metrics.json carries per class (offered, delivered, drops by reason, R_v, EPLR,
delay quantiles) and per node (transmissions = chunks, their sizes, flow-table
occupancy in time) is shown as is; delay CDFs are exact when the run kept per-packet
detail (packets.parquet), otherwise drawn through the stored quantiles and labelled so.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from .html import Page, cdf, fig, fmt

QUANTILES = (("min_ps", 0.0), ("p50_ps", 0.5), ("p90_ps", 0.9), ("p99_ps", 0.99), ("p999_ps", 0.999), ("max_ps", 1.0))


# Grid parameters that repeat a point rather than move it: aggregated (median and band).
REPETITION_PARAMS = ("seed", "rep", "repetition", "repeat", "run")
AXIS_LABELS = {"load": "offered load (fraction of the link rate)", "capacity": "buffer capacity (packets)"}


class ReportError(ValueError):
    pass


def is_run(path: Path) -> bool:
    return (path / "metrics.json").is_file()


def is_sweep(path: Path) -> bool:
    return (path / "sweep.json").is_file()


def read_document(path: Path, schema: str) -> dict:
    """A tracelab JSON output whose `schema` must be `schema`; else one ReportError."""
    try:
        d = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ReportError(f"{path}: not a readable {path.name} ({e})") from e
    if d.get("schema") != schema:
        raise ReportError(f"{path}: schema {d.get('schema')!r}, expected {schema}")
    return d


def read_metrics(path: Path) -> dict:
    return read_document(path, "tracelab.replay.metrics")


def render_run(page: Page, run_dir: Path, tag: str) -> dict:
    m = read_metrics(run_dir / "metrics.json")
    page.h(2, f"Replay run: {run_dir}", nav=f"Run {run_dir.name}")
    cmd = " ".join(m.get("tool", {}).get("command") or [])
    if cmd:
        page.p(f"Command: {cmd}", note=True)
    classes = [*m["classes"], m["overall"]]
    page.table(
        [
            "class",
            "budget",
            "offered",
            "delivered",
            "dropped",
            "buffer full",
            "pushed out",
            "early discard",
            "budget expired",
            "violations",
            "R_v",
            "EPLR",
            "mean delay",
            "p99 delay",
        ],
        [
            [
                c["name"],
                _time(c["budget_ps"]),
                c["offered"],
                c["delivered"],
                c["dropped_total"],
                c["dropped"]["buffer_full"],
                c["dropped"]["pushed_out"],
                c["dropped"]["early_discard"],
                c["dropped"]["budget_expired"],
                c["violations"],
                c["r_v"],
                c["eplr"],
                _time(c["queue_delay"]["mean_ps"]),
                _time(c["queue_delay"]["p99_ps"]),
            ]
            for c in classes
        ],
    )
    t = m["timing"]
    page.p(
        f"Virtual time {_time(t['span_ps'])}: {t['mpps_in_virtual']:.3f} Mpps in, {t['mpps_out_virtual']:.3f} Mpps "
        f"out; wall {t['wall_seconds']:.3f} s ({t['wall_mpps']:.2f} Mpps). Conservation holds: "
        f"{m['conservation']['holds']}."
    )
    page.table(
        [
            "node",
            "element",
            "rate",
            "transmissions (chunks)",
            "mean chunk B",
            "min B",
            "max B",
            "packets per chunk",
            "utilization",
            "eta",
            "flow table mean",
            "flow table max",
        ],
        [
            [
                i,
                n["element"],
                f"{n['rate_bps'] / 1e9:g} Gb/s",
                n["transmissions"],
                n["mean_transmission_bytes"],
                n["min_transmission_bytes"],
                n["max_transmission_bytes"],
                n["mean_packets_per_transmission"],
                n["utilization"],
                n["eta"],
                (n.get("flow_table") or {}).get("time_weighted_mean"),
                (n.get("flow_table") or {}).get("max"),
            ]
            for i, n in enumerate(m["nodes"])
        ],
    )
    _delay_cdf(page, run_dir, m, tag)
    for i, n in enumerate(m["nodes"]):
        ft = n.get("flow_table")
        if ft and sum(ft["time_at_size_ps"]) > 0:
            share = np.asarray(ft["time_at_size_ps"], dtype=float)
            share /= share.sum()
            f, ax = fig()
            ax.bar(np.arange(len(share)), share, width=1.0, lw=0)
            ax.set_xlabel("flow-table size (flows)")
            ax.set_ylabel("share of time")
            page.figure(
                f,
                f"{tag}_flowtable{i}",
                f"Node {i} ({n['element']}): share of time spent at each flow-table size "
                f"(time-weighted mean {ft['time_weighted_mean']:.2f} flows, max {ft['max']}).",
            )
    return {"offered": m["overall"]["offered"], "delivered": m["overall"]["delivered"]}


def _delay_cdf(page: Page, run_dir: Path, m: dict, tag: str) -> None:
    f, ax = fig()
    detail = run_dir / "packets.parquet"
    if detail.is_file():
        t = pq.read_table(detail, columns=["cls", "fate", "queue_delay_ps"])
        fate = np.array(t.column("fate").to_pylist(), dtype=object)
        cls = np.asarray(t.column("cls").to_numpy())
        delay = np.asarray(t.column("queue_delay_ps").to_numpy(), dtype=float) / 1e6
        for k, c in enumerate(m["classes"]):
            cdf(ax, delay[(cls == k) & (fate == "delivered")], c["name"])
        how = "exact, from packets.parquet (delivered packets); shaded: 95 % DKW confidence band"
    else:
        for c in m["classes"]:
            q = c["queue_delay"]
            if q["count"]:
                x = [q[k] / 1e6 for k, _ in QUANTILES]
                ax.plot(x, [p for _, p in QUANTILES], marker="o", label=f"{c['name']} (n={q['count']})")
        ax.set_ylabel("P(X ≤ x)  (CDF)")
        how = "through the quantiles stored in metrics.json (min, p50, p90, p99, p99.9, max)"
    if not ax.lines:
        import matplotlib.pyplot as plt

        plt.close(f)
        page.p("No delivered packet: no delay distribution.", note=True)
        return
    budgets = False
    for c in m["classes"]:
        if c["budget_ps"]:
            ax.axvline(c["budget_ps"] / 1e6, ls="--", lw=0.8, color="k", label=None if budgets else "delay budget")
            budgets = True
    ax.set_xlabel("queueing delay (µs)")
    ax.legend(loc="lower right")
    page.figure(
        f,
        f"{tag}_delay",
        f"Queueing delay CDF per class, {how}" + ("; dashed: delay budgets." if budgets else "."),
    )


def render_sweep(page: Page, sweep_dir: Path, tag: str) -> dict:
    try:
        rows = json.loads((sweep_dir / "sweep.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ReportError(f"{sweep_dir / 'sweep.json'}: not readable ({e})") from e
    page.h(2, f"Sweep: {sweep_dir} ({len(rows)} runs)", nav=f"Sweep {sweep_dir.name}")
    if not rows:
        page.p("The sweep has no runs.", note=True)
        return {"runs": 0}
    params = [k for k in rows[0] if "." not in k and k not in ("mpps_in_virtual", "wall_seconds")]
    classes = sorted({k.split(".")[0] for r in rows for k in r if k.endswith(".r_v")})
    page.table(
        params + [f"{c} {v}" for c in classes for v in ("R_v", "EPLR")],
        [[r[p] for p in params] + [r.get(f"{c}.{v}") for c in classes for v in ("r_v", "eplr")] for r in rows],
    )
    reps = [p for p in params if p.lower() in REPETITION_PARAMS]
    for x in params:
        xs = _numbers([r[x] for r in rows])
        if xs is None or x in reps:
            continue
        others = [p for p in params if p != x and p not in reps]
        groups = defaultdict(list)
        for r, xv in zip(rows, xs, strict=True):
            groups[tuple(r[p] for p in others)].append((xv, r))
        n_rep = max(len([p for p in pts if p[0] == xv]) for pts in groups.values() for xv, _ in pts)
        band = _band_text(reps, n_rep)
        for metric, label in (("r_v", "R_v (delay-violation ratio)"), ("eplr", "EPLR (loss ratio)")):
            f, ax = fig()
            for key, pts in groups.items():
                suffix = ", ".join(f"{p}={v}" for p, v in zip(others, key, strict=True))
                for c in classes:
                    _median_band(ax, pts, f"{c}.{metric}", f"{c}{' ' + suffix if suffix else ''}")
            ax.set_xlabel(_axis_label(x))
            ax.set_ylabel(label)
            ax.legend(loc="best")
            page.figure(f, f"{tag}_{metric}_vs_{x}", f"{label} per class against {x}{band}")
        chunk = [k for k in rows[0] if k.endswith(".mean_transmission_bytes")]
        if chunk:
            f, ax = fig()
            for key, pts in groups.items():
                suffix = ", ".join(f"{p}={v}" for p, v in zip(others, key, strict=True))
                for k in chunk:
                    _median_band(ax, pts, k, f"{k.split('.')[0]}{' ' + suffix if suffix else ''}")
            ax.set_xlabel(_axis_label(x))
            ax.set_ylabel("mean chunk (transmission) size (bytes)")
            ax.legend(loc="best")
            page.figure(f, f"{tag}_chunk_vs_{x}", f"Mean transmission (chunk) size per node against {x}{band}")
    return {"runs": len(rows)}


def _median_band(ax, pts, key: str, label: str) -> None:
    """The median over repetitions at each x, with the spread of the repetitions shaded."""
    by_x = defaultdict(list)
    for xv, r in pts:
        v = r.get(key)
        if v is not None and np.isfinite(v):
            by_x[xv].append(float(v))
    if not by_x:
        return
    xs = np.array(sorted(by_x))
    vals = [np.array(by_x[x]) for x in xs]
    (line,) = ax.plot(xs, [np.median(v) for v in vals], marker="o", ms=4, label=label)
    if max(len(v) for v in vals) > 1:
        lo, hi = (0, 100) if max(len(v) for v in vals) < 5 else (10, 90)
        ax.fill_between(
            xs,
            [np.percentile(v, lo) for v in vals],
            [np.percentile(v, hi) for v in vals],
            color=line.get_color(),
            alpha=0.18,
            lw=0,
        )


def _band_text(reps: list[str], n_rep: int) -> str:
    if n_rep <= 1:
        return "."
    what = " x ".join(reps) if reps else "runs with the same parameters"
    spread = "min–max" if n_rep < 5 else "10–90 % quantiles"
    return f"; line: median over {n_rep} repetitions ({what}), shaded: {spread}."


def _axis_label(name: str) -> str:
    return AXIS_LABELS.get(name, name)


def _numbers(values):
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError):
        return None


def _time(ps) -> str:
    if ps is None:
        return "–"
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("us", 1e6), ("ns", 1e3)):
        if abs(ps) >= scale:
            return f"{ps / scale:.3f} {unit}"
    return fmt(float(ps)) + " ps"
