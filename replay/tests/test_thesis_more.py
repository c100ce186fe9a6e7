"""E-THS-1 (SIFT sampling analytics) at --quick scale, and its equations
against independent oracles."""

from __future__ import annotations

import itertools

import pytest
from tracelab.replay.experiments import thesis_more as tm
from tracelab.replay.experiments.outcome import Context
from tracelab.replay.experiments.registry import EXPERIMENTS


def test_ths1_quick_holds_every_check():
    e = EXPERIMENTS["E-THS-1"]
    o = e.run(e.quick, Context())
    assert o.passed, [c for c in o.checks if not c.held]
    names = {c.name: c for c in o.checks}
    assert names["misclassified flows (T = 100, p = 0.01, Ts = 1)"].measured == "2.617 %"


@pytest.mark.parametrize(("x", "p", "ts"), [(6, 0.3, 2), (7, 0.1, 1), (5, 0.5, 5), (4, 0.2, 6), (0, 0.2, 1)])
def test_eq31_is_the_share_of_bernoulli_sequences_with_ts_samples(x, p, ts):
    # Enumerate every sequence of x sampling tests: an oracle that shares no formula with Eq. 3.1.
    enumerated = sum(
        p ** sum(seq) * (1 - p) ** (x - sum(seq)) for seq in itertools.product((0, 1), repeat=x) if sum(seq) >= ts
    )
    assert tm.sampled_probability(x, p, ts) == pytest.approx(enumerated, abs=1e-12)


def test_misclassified_small_zipf_by_hand():
    # Sizes 1..3 with weights 1, 1/2, 1/4; threshold 2, p = 0.5: FP = size 1 sampled (0.5),
    # FN = sizes 2, 3 unsampled (0.25, 0.125).
    fp, fn = tm.misclassified([1.0, 0.5, 0.25], 2, 0.5)
    total = 1.75
    assert fp == pytest.approx(0.5 / total)
    assert fn == pytest.approx((0.5 * 0.25 + 0.25 * 0.125) / total)


def test_measured_share_detects_a_wrong_probability():
    # The SIFT core run with p = 0.04 is not Eq. 3.2 at p = 0.02: the check must be able to fail.
    flows, sampled = tm.measure_sampled("50", 0.04, 200, 10, seed=3)
    ok, _ = tm.within(sampled / flows, tm.sampled_probability_ts1(50, 0.02), flows)
    assert not ok
    ok, _ = tm.within(sampled / flows, tm.sampled_probability_ts1(50, 0.04), flows)
    assert ok


def test_ths12_analytic_check_holds_and_says_what_is_not_run():
    o = tm.e_ths_12(None, Context())
    assert o.passed and len(o.checks) == 1
    assert o.checks[0].measured.startswith("4300 B = 9.6%")
    assert any("WLAN setup of E-THS-9" in n for n in o.notes)
