"""The seed experiments at reduced scale: the analytic (A) checks and the
hard invariants (INV) must hold; simulation (S) results are reported in
REPORT.md, where a failed check is visible, and asserted here only where the
engine reproduces them."""

from __future__ import annotations

import json

import pytest
from tracelab.replay.experiments import chunk_analytic as ca
from tracelab.replay.experiments.cli import main as experiments_main
from tracelab.replay.experiments.outcome import Context
from tracelab.replay.experiments.registry import EXPERIMENTS
from tracelab.replay.experiments.runs import insertion_fraction


def quick(name):
    e = EXPERIMENTS[name]
    return e.run(e.quick, Context())


def failed(outcome):
    return [c for c in outcome.checks if not c.held]


def held(outcome, prefix):
    matching = [c for c in outcome.checks if c.name.startswith(prefix) or prefix in c.name]
    assert matching, f"no check matching {prefix!r}"
    return all(c.held for c in matching), matching


def test_chk2_analytic_values():
    o = quick("E-CHK-2")
    assert o.passed, o.checks
    # The derivation of the spec: minor class λ = 0.01 -> λT = 15.625 / 6.25 / 1.667.
    assert ca.rate_pps(0.01, 40) * 50e-6 == pytest.approx(15.625)
    assert ca.rate_pps(0.01, 200) * 100e-6 == pytest.approx(6.25)
    assert ca.rate_pps(0.01, 1500) * 200e-6 == pytest.approx(1.6667, abs=1e-4)


def test_chk2_eq5_limits():
    # A class saturating its timer window fills every chunk: L̄_c -> MTU.
    assert ca.mean_chunk_bytes((0.9, 0, 0)) == pytest.approx(9000, rel=1e-6)
    # One 1500-B packet per 200 µs on average: mostly timer chunks below the MTU.
    assert ca.mean_chunk_bytes((0, 0, 0.001)) < 1500


def test_chk1_chunking_forwards_everything_at_eta_0_025():
    o = quick("E-CHK-1")
    assert o.passed, failed(o)


def test_chk3_basicq_and_chutq_never_violate_below_overload():
    o = quick("E-CHK-3")
    ok, checks = held(o, "BasiCQ and ChuTQ R_v = 0")
    assert ok, checks
    ok, checks = held(o, "dominant class R_v = 0")
    assert ok, checks


def test_chk3_chumq_waits_at_most_the_chunks_ahead_at_the_link_free_instant():
    # [000 §7.2.1]: a minor-class chunk waits for the chunk on the wire and at most one other
    # minor chunk: excess <= 2 x 7.2 us (the seed measured 7.82 and 8.05 us).
    o = quick("E-CHK-3")
    assert all(float(r[-1]) <= 14.4 for r in o.rows), o.rows


def test_chk4_reports_every_scheme_and_class():
    o = quick("E-CHK-4")
    assert [r[0] for r in o.rows] == [
        "BasiCQ",
        "ChuMQ",
        "ChuTQ (DCF)",
        "ChuTQ (TPF)",
        "ChuTQ (DCF), expired=first",
        "ChuTQ (TPF), expired=first",
        "ChuMQ, contention=priority",
        "ChuMQ, contention=fifo",
    ]
    for r in o.rows:
        assert all(0 <= float(r[i]) <= 100 for i in (1, 3, 5))
    rv = {r[0]: [float(r[i]) for i in (1, 3, 5)] for r in o.rows}
    # Overload: BasiCQ cannot protect anyone.
    assert rv["BasiCQ"][0] > 50
    # Table IV's protection (at the quick scale) with expired packets ranked last: DCF keeps the
    # two short-budget classes, TPF the two long-packet ones.
    assert rv["ChuTQ (DCF)"][0] < 5 and rv["ChuTQ (DCF)"][1] < 5 and rv["ChuTQ (DCF)"][2] > 80
    assert rv["ChuTQ (TPF)"][0] > 80 and rv["ChuTQ (TPF)"][1] < 5 and rv["ChuTQ (TPF)"][2] < 5
    # ChuMQ, expired timers first at the link-free instant: sensing and real-time leave at their timer
    # plus the chunk on the wire, about 20 % and 40 % late (Table IV: 20.42, 38.33); the file class
    # loses. The lowest-index ready buffer protects them fully; behind one FIFO of formed chunks
    # every class loses.
    assert 10 < rv["ChuMQ"][0] < rv["ChuMQ"][1] < 50 and rv["ChuMQ"][2] > 80
    assert rv["ChuMQ, contention=priority"][0] < 5 and rv["ChuMQ, contention=priority"][1] < 5
    assert min(rv["ChuMQ, contention=fifo"]) > 50


def test_mtq4_qtl_invariant_and_loss_ratios():
    o = quick("E-MTQ-4")
    assert o.passed, failed(o)


def test_ths3_efd_table_below_queue_and_far_below_las():
    o = quick("E-THS-3")
    for prefix in ("EFD table ≤ queue length", "LAS/EFD ≥ 10", "EFD at most a few tens", "(model)"):
        ok, checks = held(o, prefix)
        assert ok, checks


def test_insertion_fraction_by_hand():
    # bzipf(1, 1, 2): weights 1 and 2^-2, so P(N=1) = 0.8, P(N=2) = 0.2. With p = 0.5 a 1-packet
    # flow is inserted with probability 0.5, a 2-packet one with 1 - 0.5^2 = 0.75:
    # 0.8 * 0.5 + 0.2 * 0.75 = 0.55; mean N = 0.8 + 0.4 = 1.2.
    assert insertion_fraction(0.5, 1.0, 1, 2) == pytest.approx((0.55, 1.2))
    # p = 1 %, the E-THS-3 sizes: below the Jensen bound 1 - 0.99^E[N].
    share, mean_n = insertion_fraction(0.01, 1.0, 6, 6667)
    assert share < 1 - 0.99**mean_n


def test_run_writes_result_and_report(tmp_path):
    assert experiments_main(["run", "E-CHK-2", "--quick", "-o", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "E-CHK-2" / "result.json").read_text())
    assert result["id"] == "E-CHK-2" and result["seed"] == 1 and result["quick"]
    assert result["held"] == result["checks_total"] == len(result["checks"])
    check = result["checks"][0]
    assert set(check) == {"name", "published", "measured", "tolerance", "verdict"}
    assert check["published"] == "16.63" and check["verdict"] == "held"
    # The report is regenerated from every result.json in the directory: a result written by an
    # earlier run (here a copy under another id) appears beside the new one.
    other = dict(result, id="E-CHK-9", title="earlier run")
    (tmp_path / "E-CHK-9").mkdir()
    (tmp_path / "E-CHK-9" / "result.json").write_text(json.dumps(other))
    assert experiments_main(["run", "E-CHK-2", "-o", str(tmp_path)]) == 0
    text = (tmp_path / "REPORT.md").read_text()
    assert "| E-CHK-2 | 7/7 |" in text and "| E-CHK-9 | 7/7 |" in text
    assert "## E-CHK-2" in text and "published 16.63, tolerance ±0.005" in text
    assert not list(tmp_path.glob("*/.result.json.*")), "temporary files left behind"


def test_run_refuses_unknown_ids_and_bad_seed(tmp_path, capsys):
    assert experiments_main(["run", "E-NOPE-1", "-o", str(tmp_path)]) == 2
    assert "unknown experiment E-NOPE-1" in capsys.readouterr().err
    assert experiments_main(["run", "E-CHK-2", "--seed", "0", "-o", str(tmp_path)]) == 2
    assert not (tmp_path / "REPORT.md").exists()


def test_list_names_every_experiment(capsys):
    assert experiments_main(["list"]) == 0
    out = capsys.readouterr().out
    for e in EXPERIMENTS.values():
        assert e.id in out and e.kind in out
