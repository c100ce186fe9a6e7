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


# --- model selection (fit_model): seven families by AIC, KS + AD, empirical fallback ------

from scipy import stats  # noqa: E402
from tracelab_models.distributions import (  # noqa: E402
    AD_CRITICAL,
    CANDIDATES,
    anderson_darling,
    dist_of,
    empirical_table,
    fit_model,
    model_ppf,
    table_ppf,
)

SCIPY = {
    "exponential": (stats.expon(scale=0.05), {"scale": 0.05}),
    "lognormal": (stats.lognorm(s=1.2, scale=math.exp(6.0)), {"mu": 6.0, "sigma": 1.2}),
    "weibull": (stats.weibull_min(c=0.7, scale=3.0), {"shape": 0.7, "scale": 3.0}),
    "pareto": (stats.pareto(b=1.8, scale=500.0), {"alpha": 1.8, "xm": 500.0}),
    "gamma": (stats.gamma(a=2.5, scale=0.4), {"shape": 2.5, "scale": 0.4}),
}


@pytest.mark.parametrize("family", sorted(SCIPY))
def test_fit_model_recovers_each_family_and_aic_picks_it(family):
    dist, params = SCIPY[family]
    x = dist.rvs(8000, random_state=np.random.default_rng(5))
    rep = fit_model(x, family)
    fit = next(c for c in rep["candidates"] if c["family"] == family)
    for k, v in params.items():
        assert fit["params"][k] == pytest.approx(v, rel=0.05), k
    # The scipy log-likelihood at our parameters is what the report says.
    assert fit["log_likelihood"] == pytest.approx(float(dist_of(family, fit["params"]).logpdf(x).sum()), rel=1e-9)
    assert fit["aic"] == pytest.approx(2 * 2 - 2 * fit["log_likelihood"] if family != "exponential" else
                                       2 - 2 * fit["log_likelihood"])  # fmt: skip
    assert fit["gof_passed"], fit
    # The generating family is chosen, or one nesting it (gamma and Weibull nest the
    # exponential, mixtures the lognormal) that AIC prefers by a noise-level margin.
    chosen = next(c for c in rep["candidates"] if c["family"] == rep["chosen"])
    assert rep["chosen"] == family or fit["aic"] - chosen["aic"] < 4, rep["reason"]
    assert rep["table"] is None


def test_fit_model_recovers_a_lognormal_mixture():
    rng = np.random.default_rng(2)
    lx = np.r_[rng.normal(2.0, 0.3, 6000), rng.normal(6.0, 0.5, 4000)]
    rep = fit_model(np.exp(lx), "mix")
    assert rep["chosen"] in ("lognormal_mix2", "lognormal_mix3") and rep["aic_best"] == rep["chosen"]
    two = next(c for c in rep["candidates"] if c["family"] == "lognormal_mix2")["params"]
    assert two["weights"] == pytest.approx([0.6, 0.4], abs=0.02)
    assert two["mu"] == pytest.approx([2.0, 6.0], abs=0.03) and two["sigma"] == pytest.approx([0.3, 0.5], abs=0.03)
    # Its quantile function inverts its CDF.
    d = dist_of("lognormal_mix2", two)
    u = np.array([0.01, 0.3, 0.6, 0.99])
    assert d.cdf(d.ppf(u)) == pytest.approx(u, abs=1e-4)


def test_aic_is_the_criterion_among_passing_families():
    x = stats.lognorm(s=0.4, scale=20.0).rvs(3000, random_state=np.random.default_rng(8))
    rep = fit_model(x, "v")
    passing = [c for c in rep["candidates"] if c["gof_passed"]]
    assert rep["chosen"] == min(passing, key=lambda c: c["aic"])["family"]
    assert [c["family"] for c in rep["candidates"]] == list(CANDIDATES)


def test_empirical_fallback_when_no_family_passes():
    # Three spikes: no continuous family passes KS, so the table is used, with exact top values.
    rng = np.random.default_rng(4)
    x = rng.choice([40.0, 1500.0, 9.0e6], size=5000, p=[0.6, 0.35, 0.05])
    rep = fit_model(x, "bytes", integer=True)
    assert rep["chosen"] == "empirical" and not rep["gof"]["passed"]
    assert "no family passes" in rep["reason"] and rep["aic_best"] in CANDIDATES
    assert rep["table"]["tail"][-1] == 9.0e6 and len(rep["table"]["v"]) == 256
    u = (np.arange(5000) + 0.5) / 5000
    y = model_ppf(rep, u)
    # The mean within the table's resolution (half a 1/256 quantile step of the spike).
    assert np.median(y) == np.median(x) and y.mean() == pytest.approx(x.mean(), rel=0.03)


def test_small_samples_and_zeros():
    rep = fit_model([0, 0, 3, 5, 8], "few")
    assert rep["chosen"] == "empirical" and rep["zero_fraction"] == 0.4 and rep["candidates"] == []
    assert model_ppf(rep, np.array([0.1, 0.5, 0.99])).tolist() == [0.0, 3.0, 8.0]
    assert fit_model([-1.0, 2.0, 3.0], "neg")["reason"].startswith("negative values")
    t = empirical_table(np.arange(1000.0))
    assert table_ppf(t, np.array([0.9999]))[0] == 999.0 and len(t["tail"]) == 32


def test_anderson_darling_against_scipy():
    x = stats.norm(loc=3, scale=2).rvs(500, random_state=np.random.default_rng(1))
    ours = anderson_darling(x, stats.norm(loc=x.mean(), scale=x.std(ddof=1)).cdf)
    assert ours == pytest.approx(stats.anderson(x, "norm", method="interpolate").statistic, rel=1e-9)
    # A wrong distribution is far beyond the 1 % critical value.
    assert anderson_darling(x, stats.norm(loc=4, scale=2).cdf) > AD_CRITICAL
