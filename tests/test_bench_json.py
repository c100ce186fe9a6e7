"""The benchmarks' JSON is what `make bench` (scripts/bench.py) reads: each
benchmark binary, run at a tiny size, writes the keys the aggregator uses,
and the aggregator's ratios point the right way (<= 1 meets a target, for
costs and for real-time factors alike). No time is asserted."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import bench


def test_core_bench_json_has_every_core_with_its_budget(tmp_path):
    if not bench.CORE_BENCH.exists():
        pytest.skip("SKIPPED (core_bench not built: scripts/setup.sh)")
    out = tmp_path / "cores.json"
    subprocess.run(
        [str(bench.CORE_BENCH), "--quick", "--once", "--only", "NCQ", "--json", str(out)],
        check=True,
        capture_output=True,
    )
    doc = json.loads(out.read_text())
    names = [c["core"] for c in doc["cores"]]
    assert names == ["FIFO", "NCQ+"]
    for c in doc["cores"]:
        assert c["ns_64B"] > 0 and c["ns_1500B"] > 0
        assert c["budget_ns_64B"] == 20


def test_engine_bench_json_has_a_real_time_factor_per_element(tmp_path):
    if not bench.ENGINE_BENCH.exists():
        pytest.skip("SKIPPED (engine_bench not built: scripts/setup.sh)")
    out = tmp_path / "engine.json"
    subprocess.run(
        [str(bench.ENGINE_BENCH), "--json", str(out), "0.002", "fifo(capacity=300)", "las(capacity=300)"],
        check=True,
        capture_output=True,
    )
    doc = json.loads(out.read_text())
    assert [e["element"] for e in doc["elements"]] == ["fifo(capacity=300)", "las(capacity=300)"]
    for e in doc["elements"]:
        # 2 ms of a full 10 Gb/s link of 64-byte packets, one every 67.2 ns.
        assert e["packets"] == 2_000_000_000 // 67_200 + 1
        assert e["rtf_cpu"] == pytest.approx(0.002 / e["cpu_s"], rel=0.01)


def test_ratios_meet_a_target_at_or_below_one():
    cost = bench.row("core X ns", 30.0, "budget", 40.0, 1.0)
    assert cost["ratio"] == pytest.approx(0.75) and cost["met"] is True
    slow = bench.row("engine X RTF", 1.2, "target", 1.5, 1.0, higher_is_better=True)
    assert slow["ratio"] == pytest.approx(1.25) and slow["met"] is False
    peer = bench.row("vs tshark", 1.0, "tshark", 30.0, None)
    assert peer["met"] is None


def test_replay_startup_times_a_run_that_writes_its_metrics(tmp_path, monkeypatch):
    if not bench.TRACELAB.exists():
        pytest.skip("SKIPPED (.venv not built: scripts/setup.sh)")
    monkeypatch.setattr(bench, "OUT", tmp_path)
    monkeypatch.setattr(bench, "REPLAY_STARTUP_RUNS", 1)
    r = bench.replay_startup()
    assert r["runs"] == 1 and r["cpu_s"] > 0 and r["wall_s"] > 0
    metrics = json.loads((tmp_path / "replay-startup" / "metrics.json").read_text())
    assert metrics


def test_markdown_gives_each_part_its_context_and_rows():
    doc = {
        "machine": {"cpus": 2, "cpu": "AMD EPYC", "loadavg_at_start": [3.0, 2, 1], "loadavg_at_end": [4.5, 3, 2]},
        "provenance": {"commit": "0123456789abcdef", "tree_clean": True, "date_utc": "2026-11-26T08:00:00Z"},
        "options": {"quick": False, "only": ["cores", "click"]},
        "cores": {"rows": [bench.row("core FIFO ns/64B pkt", 11.0, "budget", 20.0, 1.0)]},
        "click": {"rows": [], "source": {"skipped": "SKIPPED (no Click installation)"}},
    }
    text = bench.markdown(doc)
    assert "cores: `make bench`, 2026-11-26, commit 0123456, 2 x AMD EPYC, load average 3.0 at the start" in text
    assert "| core FIFO ns/64B pkt | 11 | budget | 20 | 0.55 | <= 1 | yes |" in text
    assert "click: `make bench`, 2026-11-26, commit 0123456" in text and "SKIPPED (no Click installation)" in text


def test_a_reference_that_is_not_positive_judges_nothing():
    noisy = bench.row("click TLFifoQueue +ns/packet", 0.3, "Queue(300)", -12.0, 1.5)
    assert noisy["ratio"] is None and noisy["met"] is None
    stopped = bench.row("engine X RTF", 0.0, "target", 1.5, 1.0, higher_is_better=True)
    assert stopped["ratio"] is None and stopped["met"] is None
