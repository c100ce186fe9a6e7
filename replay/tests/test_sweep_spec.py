"""`tracelab replay sweep SPEC.yaml`: the spec's grid (elements x loads x
seeds) expands to every combination, each run stored with its configuration,
and --grid overrides one dimension."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from tracelab.replay.cli import main

SPEC = Path(__file__).resolve().parents[1] / "sweeps" / "efd-vs-fifo.yaml"


def test_example_spec_expands_its_grid(tmp_path):
    out = tmp_path / "sweep"
    assert main(["sweep", str(SPEC), "--grid", "seed=1", "--grid", "load=0.5,1.3", "-o", str(out), "-q"]) == 0
    rows = pq.read_table(out / "sweep.parquet").to_pylist()
    assert len(rows) == 2 * 2  # 2 elements (from the spec) x 2 loads (--grid) x 1 seed
    runs = sorted(p.parent.name for p in out.glob("*/metrics.json"))
    assert runs == sorted(
        f"element={e},load={load},seed=1"
        for e in ("fifo(capacity=300)", "efd(capacity=300, th=30000)")
        for load in ("0.5", "1.3")
    )
    for p in out.glob("*/metrics.json"):
        m = json.loads(p.read_text())
        text = json.dumps(m)
        assert "{" + "element}" not in text and "bzipf(1.1,6,6667)" in text  # the configuration it ran with
    # Same seed and load: both elements were offered the same packets.
    by = {(r["element"], r["load"]): r for r in rows}
    assert by[("fifo(capacity=300)", "1.3")]["all.offered"] == by[("efd(capacity=300, th=30000)", "1.3")]["all.offered"]


def test_spec_grid_must_be_lists(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.read_text().replace("  seed: [1, 2]", "  seed: 1"))
    assert main(["sweep", str(bad), "-o", str(tmp_path / "o"), "-q"]) == 2
