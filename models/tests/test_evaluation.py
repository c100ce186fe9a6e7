"""The CI formula against every interval of thesis Tables 8.3 and 8.4, and the hold-out split."""

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from tracelab_models.evaluation import (
    Z80,
    Z90,
    HoldoutReport,
    Trial,
    evaluate_holdout,
    holdout_quarters,
    wilson_interval,
)

N = [113, 113, 113, 112]
# (successes, published 80 % CI, published 90 % CI), thesis Table 8.3 (Naive Bayes) ...
TABLE_8_3 = [
    (83, (67.83, 78.41), (66.10, 79.70)),
    (84, (68.76, 79.22), (67.04, 80.49)),
    (86, (70.62, 80.84), (68.92, 82.06)),
    (79, (64.76, 75.72), (63.01, 77.09)),
]
# ... and Table 8.4 (C4.5/J48).
TABLE_8_4 = [
    (110, (94.63, 98.71), (93.53, 98.94)),
    (108, (92.38, 97.47), (91.17, 97.83)),
    (107, (91.30, 96.81), (90.04, 97.24)),
    (106, (91.22, 96.78), (89.96, 97.21)),
]


@pytest.mark.parametrize(
    "table,rates,mean,std",
    [(TABLE_8_3, [73.45, 74.34, 76.11, 70.54], 73.61, 0.02), (TABLE_8_4, [97.35, 95.58, 94.69, 94.64], 95.56, 0.01)],
    ids=["table8.3", "table8.4"],
)
def test_reproduces_thesis_tables(table, rates, mean, std):
    report = HoldoutReport("x", [Trial(n, s) for n, (s, _, _) in zip(N, table, strict=True)])
    for t, (s, ci80, ci90), rate in zip(report.trials, table, rates, strict=True):
        assert round(100 * t.rate, 2) == rate
        assert [round(100 * v, 2) for v in wilson_interval(s, t.n, Z80)] == list(ci80)
        assert [round(100 * v, 2) for v in wilson_interval(s, t.n, Z90)] == list(ci90)
    assert round(100 * report.mean, 2) == mean
    assert round(report.std, 2) == std
    text = report.table()
    assert "testset size" in text and _fmt(table[0][1]) in text and _fmt(table[3][2]) in text


def _fmt(ci):
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def test_wilson_rejects_bad_counts():
    with pytest.raises(ValueError):
        wilson_interval(5, 0, Z80)
    with pytest.raises(ValueError):
        wilson_interval(7, 5, Z80)


def test_quarters_like_the_thesis():
    parts = holdout_quarters(451, seed=1)
    assert [len(p) for p in parts] == [113, 113, 113, 112]
    assert sorted(np.concatenate(parts).tolist()) == list(range(451))
    assert all((a == b).all() for a, b in zip(parts, holdout_quarters(451, seed=1), strict=True))


def test_evaluate_holdout_counts_successes():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(8, 1, (40, 2))])
    y = np.array(["client"] * 40 + ["server"] * 40)
    report = evaluate_holdout(GaussianNB(), X, y, "Naive Bayes")
    assert [t.n for t in report.trials] == [20, 20, 20, 20]
    assert all(t.successes == 20 for t in report.trials)  # separable by 8 sigma
