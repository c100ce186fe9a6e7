"""`tracelab fidelity` end to end on the bundled demo trace: the chain runs,
fidelity.json carries every marginal with a verdict, the exit status says
whether any failed, and a failing stage leaves the previous output whole."""

from __future__ import annotations

import gzip
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


# --- Zeek conn logs in place of the trace ----------------------------------------------


def test_zeek_conn_log_stands_in_for_the_trace(tmp_path):
    """The analyzer's conn.log of a trace (Zeek's format, tests in
    models/tests/test_zeeklog.py), gzipped and rotated into a directory, gives
    the pcap's original-side marginals; those from RTTs and trains are n/a and named."""
    trace = tcpmix(tmp_path / "tcpmix.pcap", packets=20000, seed=4)
    pcap = fidelity(str(trace), "--local", "10.0.0.0/8", "-o", "fid", cwd=tmp_path)
    assert pcap.returncode in (0, 1), pcap.stderr
    lines = (tmp_path / "fid/original/conn.log").read_text().splitlines(keepends=True)
    head, body = [x for x in lines if x.startswith("#")], [x for x in lines if not x.startswith("#")]
    logs = tmp_path / "logs"
    logs.mkdir()
    half = len(body) // 2
    (logs / "conn.2026-11-25-10-00-00.log.gz").write_bytes(gzip.compress("".join(head + body[:half]).encode()))
    (logs / "conn.log").write_text("".join(head + body[half:]))
    zeek = fidelity(str(logs), "--local", "10.0.0.0/8", "-o", "fid-zeek", cwd=tmp_path)
    assert zeek.returncode in (0, 1), zeek.stderr
    by_pcap = {m["name"]: m for m in json.loads((tmp_path / "fid/fidelity.json").read_text())["marginals"]}
    res = json.loads((tmp_path / "fid-zeek/fidelity.json").read_text())
    assert res["config"]["input"] == "zeek-conn-log"
    na = [m["name"] for m in res["marginals"] if m["verdict"] == "n/a"]
    assert na == [
        "intranet handshake RTT, median",
        "internet handshake RTT, median",
        "trains per well-behaved connection, mean",
    ]
    assert res["absent_from_input"] and "; ".join(na) in zeek.stdout
    for m in res["marginals"]:
        # The span of a conn.log ends at its last connection's end, the trace's at its last packet.
        rel = 1e-3 if m["name"] == "connections per second" else 1e-9
        expect = by_pcap[m["name"]]["original"]
        # Services: a profile may name them (its service column), a conn.log profile by proto/port.
        if m["name"] not in na and m["unit"] != "set":
            assert m["original"] == pytest.approx(expect, rel=rel), m["name"]


def test_unreadable_zeek_log_is_an_input_error(tmp_path):
    log = tmp_path / "conn.log"
    fields = "ts\tid.orig_h\tid.resp_h\tid.resp_p\tproto"
    log.write_text(f"#fields\t{fields}\n#types\ttime\taddr\taddr\tport\tenum\nnot-a-time\t1\t2\t3\ttcp\n")
    proc = fidelity(str(log), "-o", "x", cwd=tmp_path)
    assert proc.returncode == 3 and proc.stderr.startswith(f"tracelab: error: fidelity: {log}:3: ")
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def test_captures_go_to_the_analyzer_and_the_rest_to_the_zeek_reader(tmp_path):
    from tracelab.fidelity import is_pcap

    pcap = TRACE.read_bytes()
    log = (ROOT / "tests/baselines/tcpmix/profile/conn.log").read_bytes()
    files = {
        "trace.pcap": pcap,
        "trace.pcap.gz": gzip.compress(pcap),
        "capture": pcap,  # by its magic number
        "capture.gz": gzip.compress(pcap),
        "conn.log": log,
        "conn.2026-11-25-10-00-00.log.gz": gzip.compress(log),
        "conn.json": b'{"ts": 1.0}\n',
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        assert is_pcap(tmp_path / name) == (b"pcap" in name.encode() or name.startswith("capture")), name
    assert not is_pcap(tmp_path)  # a directory of rotated logs
