"""Writing replay results: metrics.json, packets.parquet, sweep tables."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import tracelab_engine as engine

from .. import __version__

SCHEMA_VERSION = 1
FATES = ["delivered", *engine.drop_reasons()]  # fate code 0, then 1 + DropReason


def write_metrics(
    path: Path, config: dict[str, Any], metrics: dict[str, Any], argv: list[str], config_hash: str | None = None
) -> None:
    """metrics.json: what was run (the full engine configuration, the command;
    in a sweep the run's key, config_hash) and everything measured. Times are
    integers in picoseconds (`*_ps`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema": "tracelab.replay.metrics",
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "tracelab", "version": __version__, "command": argv},
        "config": config,
        **({"config_hash": config_hash} if config_hash else {}),
        **metrics,
    }
    path.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n")


def write_detail(path: Path, detail: dict[str, Any]) -> None:
    """packets.parquet: one row per offered packet, in offer order."""
    # pyarrow takes ~0.3 s to import: only runs that write Parquet (--detail,
    # sweeps) pay it, not every replay's start-up.
    import pyarrow as pa
    import pyarrow.parquet as pq

    codes = detail["fate"].astype("int32")
    codes[codes == 255] = len(FATES)  # still in the network at the end
    fate = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array([*FATES, "in_network"]))
    table = pa.table(
        {
            "uid": pa.array(range(len(detail["fate"])), pa.uint64()),
            "source": detail["source"],
            "cls": detail["cls"],
            "length": detail["length"],
            "flow": detail["flow"],
            "fate": fate,
            "node": detail["node"],
            "created_ps": detail["created_ps"],
            "end_ps": detail["end_ps"],
            "queue_delay_ps": detail["queue_delay_ps"],
        }
    )
    pq.write_table(table, path)


def flat_row(point: dict[str, str], metrics: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = dict(point)
    for c in [metrics["overall"], *metrics["classes"]]:
        p = c["name"]
        for key in ("offered", "delivered", "dropped_total", "violations", "r_v", "eplr"):
            row[f"{p}.{key}"] = c[key]
        row[f"{p}.queue_delay_mean_ps"] = c["queue_delay"]["mean_ps"]
        row[f"{p}.queue_delay_p99_ps"] = c["queue_delay"]["p99_ps"]
    for i, n in enumerate(metrics["nodes"]):
        for key in ("transmissions", "mean_transmission_bytes", "eta", "out_bps", "utilization"):
            row[f"node{i}.{key}"] = n[key]
    row["mpps_in_virtual"] = metrics["timing"]["mpps_in_virtual"]
    row["wall_seconds"] = metrics["timing"]["wall_seconds"]
    return row


def write_sweep(directory: Path, rows: list[tuple[dict[str, str], dict[str, Any]]]) -> None:
    import pyarrow as pa  # see write_detail
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    flat = [flat_row(point, m) for point, m in rows]
    columns = sorted({k for r in flat for k in r}, key=lambda k: (k.count("."), k))
    table = pa.table({k: [r.get(k) for r in flat] for k in columns})
    pq.write_table(table, directory / "sweep.parquet")
    (directory / "sweep.json").write_text(json.dumps(flat, indent=2) + "\n")


def fmt_time(ps: float) -> str:
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("us", 1e6), ("ns", 1e3)):
        if abs(ps) >= scale:
            return f"{ps / scale:.3f} {unit}"
    return f"{ps:.0f} ps" if not math.isnan(ps) else "n/a"


def fmt_pps(mpps: float) -> str:
    for unit, scale in (("Mpps", 1.0), ("kpps", 1e-3)):
        if mpps >= scale:
            return f"{mpps / scale:.3f} {unit}"
    return f"{mpps * 1e6:.1f} pps"


def summary_lines(m: dict[str, Any]) -> list[str]:
    t = m["timing"]
    lines = [
        f"{'class':<12} {'offered':>10} {'delivered':>10} {'dropped':>9} {'R_v':>8} {'EPLR':>8} "
        f"{'mean qdelay':>12} {'p99 qdelay':>12}"
    ]
    for c in [*m["classes"], m["overall"]]:
        q = c["queue_delay"]
        lines.append(
            f"{c['name']:<12} {c['offered']:>10} {c['delivered']:>10} {c['dropped_total']:>9} "
            f"{c['r_v']:>8.4f} {c['eplr']:>8.4f} {fmt_time(q['mean_ps']):>12} {fmt_time(q['p99_ps']):>12}"
        )
    for i, n in enumerate(m["nodes"]):
        lines.append(
            f"node {i} {n['element']}: {n['transmissions']} transmissions, "
            f"mean {n['mean_transmission_bytes']:.0f} B, utilization {n['utilization']:.3f}, eta {n['eta']:.4f}"
        )
    lines.append(
        f"virtual {fmt_time(t['span_ps'])}: {fmt_pps(t['mpps_in_virtual'])} in, "
        f"{fmt_pps(t['mpps_out_virtual'])} out; wall {t['wall_seconds']:.3f} s ({fmt_pps(t['wall_mpps'])})"
    )
    return lines
