"""`tracelab fidelity` end to end on the bundled demo trace: the chain runs,
fidelity.json carries every marginal with a verdict, the exit status says
whether any failed, and a failing stage leaves the previous output whole."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import run_tracelab, tcpmix

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"


def fidelity(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_tracelab("fidelity", *args, cwd=cwd)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fidelity")
    return out, fidelity(str(TRACE), "--local", "10.0.0.0/8", "--seed", "3", "-o", "fid", cwd=out)


def test_writes_every_marginal_with_a_verdict(run):
    out, proc = run
    res = json.loads((out / "fid" / "fidelity.json").read_text())
    assert res["config"]["seed"] == 3 and res["config"]["local"] == ["10.0.0.0/8"]
    verdicts = [m["verdict"] for m in res["marginals"]]
    assert len(verdicts) == 21 and set(verdicts) <= {"pass", "fail", "n/a"}
    assert (res["passed"], res["failed"]) == (verdicts.count("pass"), verdicts.count("fail"))
    assert proc.returncode == (1 if res["failed"] else 0), proc.stderr
    assert {d["name"] for d in res["distributions"]} >= {"connection bytes", "connection duration (s)"}
    for name in ("original/conn.log", "synthetic/conn.log", "model.json", "synthetic.pcap"):
        assert (out / "fid" / name).is_file(), name
    # The table on stdout: a header, a rule, one line per marginal, the tally.
    assert proc.stdout.splitlines()[0].split()[:3] == ["marginal", "original", "synthetic"]
    assert f"{res['passed']} passed, {res['failed']} failed" in proc.stdout


def test_the_original_side_is_the_traces_profile(run):
    out, _ = run
    res = json.loads((out / "fid" / "fidelity.json").read_text())
    m = {r["name"]: r for r in res["marginals"]}
    summary = json.loads((out / "fid" / "original" / "summary.json").read_text())
    by_proto = summary["connections"]["by_proto"]
    assert m["UDP share of connections"]["original"] == pytest.approx(by_proto["udp"] / summary["connections"]["total"])
    rate = summary["connections"]["total"] / summary["trace"]["duration_s"]
    assert m["connections per second"]["original"] == pytest.approx(rate)


def test_a_failing_stage_leaves_the_previous_output_whole(run, tmp_path):
    out, _ = run
    before = sorted(p.relative_to(out) for p in (out / "fid").rglob("*"))
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture file at all")
    proc = fidelity(str(bad), "-o", "fid", cwd=out)
    assert proc.returncode not in (0, 1), proc.stdout
    assert proc.stderr.startswith("tracelab: error: fidelity") and len(proc.stderr.strip().splitlines()) == 1
    assert sorted(p.relative_to(out) for p in (out / "fid").rglob("*")) == before
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


def test_missing_trace_is_a_usage_error(tmp_path):
    proc = fidelity(str(tmp_path / "nope.pcap"), "-o", "x", cwd=tmp_path)
    assert proc.returncode == 2 and "no such file" in proc.stderr
    assert not (tmp_path / "x").exists()


# --- the chain on a generated enterprise trace: every marginal passes --------------------


def test_every_marginal_passes_on_a_small_generated_trace(tmp_path):
    """tcpmix (datasets/generate), 80,000 packets: the faithful chain keeps all 21
    marginals within their tolerances (docs/fidelity.md)."""
    trace = tcpmix(tmp_path / "tcpmix.pcap", packets=80000, seed=9)
    proc = fidelity(str(trace), "--local", "10.0.0.0/8", "--seed", "2", "-o", "fid", cwd=tmp_path)
    res = json.loads((tmp_path / "fid" / "fidelity.json").read_text())
    failed = [m for m in res["marginals"] if m["verdict"] != "pass"]
    assert failed == [] and proc.returncode == 0, proc.stdout
    assert res["config"]["synthetic_local"] == ["10.0.0.0/8"]
