"""Fit recovery on samples drawn from known distributions (seeded), selection, QQ plots."""

import math

import numpy as np
import pytest
from tracelab_models.distributions import fit_all, fit_one, frozen, qq_plot

N = 20_000


def _draw(family, params, seed=11):
    return frozen(family, params).rvs(N, random_state=np.random.default_rng(seed))


@pytest.mark.parametrize(
    "family,params",
    [
        ("exponential", {"scale": 0.05}),
        ("lognormal", {"mu": 8.0, "sigma": 1.7}),
        ("weibull", {"shape": 0.6, "scale": 2.5}),
        ("pareto", {"alpha": 1.3, "xm": 1500.0}),
    ],
)
def test_recovers_parameters_and_picks_the_family(family, params):
    x = _draw(family, params)
    fit = fit_one(family, x)
    for k, v in params.items():
        # MLE standard errors at n = 20000 are < 1 %; 3 % is several sigmas.
        assert fit.params[k] == pytest.approx(v, rel=0.03), k
    report = fit_all(x, "v")
    assert report.best == family, report.reason
    assert fit.ks_d < 0.015


def test_closed_forms_by_hand():
    x = np.array([1.0, 2.0, 4.0])
    assert fit_one("exponential", x).params["scale"] == pytest.approx(7 / 3)
    ln = fit_one("lognormal", x).params
    assert ln["mu"] == pytest.approx(math.log(2)) and ln["sigma"] == pytest.approx(math.log(2) * math.sqrt(2 / 3))
    # Pareto: xm = 1, alpha = n / sum(ln(x/xm)) = 3 / (ln 2 + ln 4) = 1/ln 2
    assert fit_one("pareto", x).params == pytest.approx({"alpha": 1 / math.log(2), "xm": 1.0})


def test_non_positive_samples_are_counted_and_degenerate_input_reported():
    r = fit_all([0.0, -1.0, np.nan, 1.0, 2.0, 3.0], "x")
    assert r.dropped_non_positive == 3 and r.n == 3
    r = fit_all([5.0, 5.0, 5.0], "x")
    assert r.best is None and "all equal" in r.reason


def test_subsample_is_deterministic():
    x = _draw("lognormal", {"mu": 0.0, "sigma": 1.0})
    a = fit_all(x, "x", max_samples=1000, seed=3).to_dict()
    assert a == fit_all(x, "x", max_samples=1000, seed=3).to_dict() and a["n"] == 1000


def test_qq_plot_png(tmp_path):
    x = _draw("weibull", {"shape": 0.8, "scale": 1.0})[:2000]
    report = fit_all(x, "inter-arrival (s)")
    qq_plot(report, x, tmp_path / "qq.png")
    assert (tmp_path / "qq.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
