"""`tracelab fidelity` end to end on the bundled demo trace: the chain runs,
fidelity.json carries every marginal with a verdict, the exit status says
whether any failed, and a failing stage leaves the previous output whole."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"


def fidelity(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracelab.cli", "fidelity", *args], cwd=cwd, capture_output=True,
                          text=True)  # fmt: skip


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
