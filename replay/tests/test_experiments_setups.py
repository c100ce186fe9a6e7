"""The spec's common setups (E-CHK-0, E-MTQ-0, E-THS-2) and the enterprise-trace
studies (E-THS-13..15): every check holds on what the experiments run, and a
perturbed input — a runner configured away from the seed's setup, a published
count changed, a decomposition that is not the timeline's — fails a check."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from tracelab.parts import REPO_ROOT, analyzer_binary
from tracelab.replay.experiments import chunk_analytic, enterprise, mtq_chain, runs, setups
from tracelab.replay.experiments import closed_loop as cl
from tracelab.replay.experiments.cli import main as experiments_main
from tracelab.replay.experiments.outcome import Context, Outcome
from tracelab.replay.experiments.registry import EXPERIMENTS


def failed(o: Outcome) -> list[str]:
    return [c.name for c in o.checks if not c.held]


def test_the_registry_has_every_experiment_of_the_spec():
    spec = (REPO_ROOT / "docs" / "reference" / "experiments.md").read_text()
    ids = re.findall(r"^### (E-[A-Z]+-\d+) ", spec, re.MULTILINE)
    assert len(ids) == 45
    assert sorted(ids) == sorted(EXPERIMENTS)


# ------------------------------------------------------------------ E-CHK-0


def test_chk0_holds_on_the_runners_setup():
    o = setups.e_chk_0(0.01, Context())
    assert o.passed, failed(o)


def test_chk0_fails_when_a_class_budget_leaves_table_ii(monkeypatch):
    classes = [dict(c) for c in runs.CHK_CLASSES]
    classes[1]["budget"] = "120us"
    monkeypatch.setattr(runs, "CHK_CLASSES", classes)
    assert failed(setups.e_chk_0(0.01, Context())) == ["Table II realtime: 200 B, W_max = T_i = 100 µs"]


def test_chk0_fails_when_the_chunk_mtu_changes(monkeypatch):
    monkeypatch.setattr(chunk_analytic, "CHUNK_TIME", 8000 * 8 / 10e9)
    assert "chunk transmission 9000 B at 10 Gb/s = 7.2 µs (model and engine)" in failed(setups.e_chk_0(0.01, Context()))


# ------------------------------------------------------------------ E-MTQ-0


def test_mtq0_holds_on_the_chains_setup():
    o = setups.e_mtq_0(20.0, Context())
    assert o.passed, failed(o)
    # Table 1: three scenarios × three links, flows and rate each.
    assert sum(1 for c in o.checks if "as Table 1" in c.name) == 9


def test_mtq0_fails_when_the_flows_rate_changes(monkeypatch):
    monkeypatch.setattr(mtq_chain, "FLOW_KBPS", 70)
    bad = failed(setups.e_mtq_0(20.0, Context()))
    assert "mean rate 80 kb/s = 228.57 kb/s peak × 350/1000" in bad
    assert any("19.2 Mb/s" in name for name in bad)


def test_mtq0_fails_when_a_group_takes_another_path(monkeypatch):
    hops = dict(mtq_chain.MODEL2_HOPS)
    hops[2] = "1"  # group 2 would leave before node 3
    scenarios = dict(mtq_chain.SCENARIOS)
    scenarios["model 2, D=10"] = (hops, 80, 10.0)
    monkeypatch.setattr(mtq_chain, "SCENARIOS", scenarios)
    assert "(b) model 2, util 96 % link 3→4: flows per group as Table 1" in failed(setups.e_mtq_0(20.0, Context()))


def test_onoff_burst_packets_by_simulation():
    # ns-2's burst rule, max(1, round(D/gap)) packets for an exponential D: its mean over many draws, at the MTQ
    # flows' 50 gaps (+0.009 packets) and at 1 gap, where the rounding and the burst of at least one add 35 %.
    import numpy as np

    rng = np.random.default_rng(11)
    for on_gaps in (50.0, 1.0):
        d = rng.exponential(on_gaps, 2_000_000)
        bursts = np.maximum(1, np.floor(d + 0.5))
        sem = bursts.std() / np.sqrt(bursts.size)
        assert setups.onoff_burst_packets(on_gaps) == pytest.approx(bursts.mean(), abs=4 * sem)
    assert setups.onoff_burst_packets(50.0) == pytest.approx(50.009, abs=0.001)
    assert setups.onoff_burst_packets(1.0) == pytest.approx(1.353, abs=0.001)


def test_mtq0_fails_for_a_source_with_a_packet_per_gap_begun(monkeypatch):
    # The engine's earlier onoff rule, floor(D/gap) + 1 packets per ON period, offers more than the nominal 80 kb/s.
    monkeypatch.setattr(setups, "onoff_burst_packets", lambda m: 1 / (1 - math.exp(-1 / m)))
    bad = failed(setups.e_mtq_0(20.0, Context()))
    assert bad == ["the source's burst rounding stays within 0.1 % of the nominal 80 kb/s"]


def test_onoff_time_fraction_sd_by_simulation():
    # The ON fraction over T of an exponential ON/OFF flow: its spread over many independent flows.
    import numpy as np

    rng = np.random.default_rng(7)
    on, off, t = 0.35, 0.65, 50.0
    fractions = []
    for _ in range(400):
        clock, busy, state = 0.0, 0.0, rng.random() < on / (on + off)
        while clock < t:
            d = rng.exponential(on if state else off)
            busy += min(d, t - clock) if state else 0.0
            clock += d
            state = not state
        fractions.append(busy / t)
    assert np.std(fractions) == pytest.approx(setups.onoff_time_fraction_sd(on, off, t), rel=0.15)


# ------------------------------------------------------------------ E-THS-2


def test_bzipf_moments_by_hand():
    # P(k) ∝ k^-2 on {1, 2}: weights 1, 1/4 -> mean 1.2, variance 0.16.
    mean, cov = setups.bzipf_moments(1.0, 1, 2)
    assert mean == pytest.approx(1.2) and cov == pytest.approx(0.4 / 1.2)
    assert setups.bzipf_moments(setups.alpha_for_mean(40, 6, 6906), 6, 6906)[0] == pytest.approx(40, rel=1e-9)


def test_dumbbell_rates_are_read_from_the_program():
    assert setups.dumbbell_rates() == {"access": 100e6, "bottleneck": 10e6}


NS3_SKIP = pytest.mark.skipif(cl.dumbbell_binary() is None, reason=f"ns-3 not built: {cl.NS3_MISSING}")


@NS3_SKIP
def test_ths2_holds_on_the_dumbbell_and_fails_on_another_threshold(tmp_path, monkeypatch):
    ctx = Context(workdir=tmp_path)
    o = setups.e_ths_2(20.0, ctx)
    assert o.passed, failed(o)
    assert o.tools["ns3"].startswith("3.44")
    schedulers = dict(cl.THS4_SCHEDULERS, EFD="efd(th=45000)")
    monkeypatch.setattr(cl, "THS4_SCHEDULERS", schedulers)
    assert failed(setups.e_ths_2(20.0, ctx)) == ["th = 20 packets / 30 KB"]


# ------------------------------------------------------------------ E-THS-13 / E-THS-14


def test_ths13_holds_and_reports_the_documented_discrepancy():
    o = enterprise.e_ths_13(None, Context())
    assert o.passed, failed(o)
    discrepancy = [c for c in o.checks if "seed's inconsistency" in c.name]
    assert [c.measured for c in discrepancy] == ["62.47 %", "37.53 %"]
    if analyzer_binary() is not None:
        # The bundled trace's split by the analyzer: 65 Internet client connections, 71 intranet ones.
        bundled = {r[0].rpartition(": ")[2]: r[2] for r in o.rows if r[0].startswith("pcapplusplus")}
        assert bundled["External lc-rp"].startswith("65 / ") and bundled["Internal lc-ls"].startswith("71 / ")


def test_ths13_fails_on_a_changed_count(monkeypatch):
    table = dict(enterprise.TABLE_8_2)
    cnx, b, p = table["Internal ls-ls"]
    table["Internal ls-ls"] = (cnx, b, p + 5_000_000)
    monkeypatch.setattr(enterprise, "TABLE_8_2", table)
    bad = failed(enterprise.e_ths_13(None, Context()))
    assert "Internal lc-ls packets: 80.25 %" in bad and "Internal ls-ls packets: 19.74 %" in bad


def test_ths13_fails_if_the_published_connection_shares_were_consistent(monkeypatch):
    # The check verifies the documented discrepancy: with the counts' own shares printed, it no longer holds.
    pct = dict(enterprise.TABLE_8_2_PCT)
    pct["Internal lc-ls"] = ("62.47", *pct["Internal lc-ls"][1:])
    monkeypatch.setattr(enterprise, "TABLE_8_2_PCT", pct)
    assert failed(enterprise.e_ths_13(None, Context())) == [
        "Internal lc-ls connections: the counts give 62.47 % (published 62.47: the seed's inconsistency)"
    ]


def test_ths14_reproduces_every_interval_with_the_models_wilson():
    o = enterprise.e_ths_14(None, Context())
    assert o.passed, failed(o)
    assert sum(1 for c in o.checks if "%-CI" in c.name) == 16


def test_ths14_fails_on_a_changed_success_count(monkeypatch):
    tables = {k: dict(v) for k, v in enterprise.ROLE_TABLES.items()}
    tables["C4.5/J48 (Table 8.4)"]["successes"] = (110, 108, 106, 106)
    monkeypatch.setattr(enterprise, "ROLE_TABLES", tables)
    bad = failed(enterprise.e_ths_14(None, Context()))
    assert "C4.5/J48 (Table 8.4) trial 3: 80 %-CI [91.30, 96.81]" in bad
    assert "C4.5/J48 (Table 8.4): mean 95.56 %" in bad


# ------------------------------------------------------------------ E-THS-15


def test_theory_rounds_follow_eq_5_10():
    # Flights 1, 2, 3, 4, 6: 1 packet -> 0 rounds, 3 -> 1, 4 -> 2, 10 -> 3, 11 -> 4.
    assert [enterprise.theory_rounds(n) for n in (0, 1, 3, 4, 10, 11, 16, 17)] == [0, 0, 1, 2, 3, 4, 4, 5]


def test_truth_adds_up_to_the_data_transfer_time():
    for tl in enterprise.TIMELINES:
        t = enterprise.truth(tl)
        span = sum(tr.warmup_us + (tr.packets - 1) * tr.gap_us for tr in tl.trains) * 1e-6
        assert sum(s["warmup_s"] + s["theory_s"] + s["pacing_s"] for s in t.values()) == pytest.approx(span)


ANALYZER_SKIP = pytest.mark.skipif(analyzer_binary() is None, reason="tracelab-analyzer not built")


@ANALYZER_SKIP
def test_ths15_analyzer_decomposes_the_timelines_and_a_wrong_oracle_fails(tmp_path):
    out = enterprise.profile(enterprise.TIMELINES, tmp_path)
    o = Outcome("E-THS-15", "", [])
    enterprise.check_decomposition(o, enterprise.TIMELINES, [enterprise.truth(t) for t in enterprise.TIMELINES], out)
    assert o.passed, failed(o)
    # The same trace against a timeline whose responder waited 1 ms longer before its second train.
    tl = enterprise.TIMELINES[1]
    trains = list(tl.trains)
    trains[3] = dataclasses.replace(trains[3], warmup_us=trains[3].warmup_us + 1000)
    wrong = [enterprise.truth(t) for t in enterprise.TIMELINES]
    wrong[1] = enterprise.truth(dataclasses.replace(tl, trains=tuple(trains)))
    o = Outcome("E-THS-15", "", [])
    enterprise.check_decomposition(o, enterprise.TIMELINES, wrong, out)
    assert failed(o) == [
        "Internet download resp: warm-ups [40.0, 36.0] ms",
        "Internet download resp: actual 80.100 ms",
        "Internet download: Σ parties (WarmUp + T_theory + Pacing) = data-transfer time 81.100 ms",
    ]


@ANALYZER_SKIP
def test_run_writes_the_new_experiments_results(tmp_path):
    ids = ["E-CHK-0", "E-MTQ-0", "E-THS-13", "E-THS-14", "E-THS-15"]
    assert experiments_main(["run", *ids, "--quick", "-o", str(tmp_path)]) == 0
    report = (tmp_path / "REPORT.md").read_text()
    for i in ids:
        assert (tmp_path / i / "result.json").is_file() and f"## {i}:" in report


def test_a_missing_analyzer_is_one_line_and_status_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRACELAB_ANALYZER", str(tmp_path / "no-such-analyzer"))
    assert experiments_main(["run", "E-THS-15", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "need tracelab-analyzer" in err and len(err.strip().splitlines()) == 1
