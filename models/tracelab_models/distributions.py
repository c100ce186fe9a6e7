"""Maximum-likelihood fits of Exponential, LogNormal, Weibull and Pareto (thesis §8.3.2).

Fits use positive, finite samples only (the others are counted, not silently lost).
Goodness of fit: the Kolmogorov-Smirnov distance D and a QQ discrepancy, the RMS of
log10(model quantile / empirical quantile) over the 1st..99th percentiles (log scale
because the variables are heavy-tailed). The best family is the lowest D; the reason
is recorded with the runner-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .columns import as_column

FAMILIES = ("exponential", "lognormal", "weibull", "pareto")
_PROBS = np.arange(1, 100) / 100


def frozen(family: str, params: dict):
    """The scipy distribution for a family and our parameter names."""
    if family == "exponential":
        return stats.expon(scale=params["scale"])
    if family == "lognormal":
        return stats.lognorm(s=params["sigma"], scale=math.exp(params["mu"]))
    if family == "weibull":
        return stats.weibull_min(c=params["shape"], scale=params["scale"])
    if family == "pareto":
        return stats.pareto(b=params["alpha"], scale=params["xm"])
    raise ValueError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}")


def mle(family: str, x: np.ndarray) -> dict:
    """Maximum-likelihood parameters (location fixed at 0; Pareto's xm = min(x))."""
    if family == "exponential":
        return {"scale": float(x.mean())}
    if family == "lognormal":
        lx = np.log(x)
        return {"mu": float(lx.mean()), "sigma": float(lx.std())}
    if family == "weibull":
        c, _, scale = stats.weibull_min.fit(x, floc=0)
        return {"shape": float(c), "scale": float(scale)}
    if family == "pareto":
        xm = float(x.min())
        s = float(np.log(x / xm).sum())
        return {"alpha": len(x) / s if s > 0 else math.inf, "xm": xm}
    raise ValueError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}")


@dataclass
class Fit:
    family: str
    params: dict
    log_likelihood: float
    ks_d: float
    ks_p: float
    qq_log10_rms: float

    def to_dict(self) -> dict:
        return {
            "family": self.family,
            "params": self.params,
            "log_likelihood": self.log_likelihood,
            "ks_d": self.ks_d,
            "ks_p": self.ks_p,
            "qq_log10_rms": self.qq_log10_rms,
        }


@dataclass
class FitReport:
    variable: str
    n: int  # samples used
    dropped_non_positive: int  # zero, negative or non-finite samples left out
    fits: list[Fit] = field(default_factory=list)
    best: str | None = None
    reason: str = ""

    def to_dict(self) -> dict:
        return {
            "variable": self.variable,
            "n": self.n,
            "dropped_non_positive": self.dropped_non_positive,
            "fits": [f.to_dict() for f in self.fits],
            "best": self.best,
            "reason": self.reason,
        }


def fit_one(family: str, x: np.ndarray) -> Fit:
    params = mle(family, x)
    if not all(math.isfinite(v) and v > 0 for k, v in params.items() if k != "mu"):
        return Fit(family, params, -math.inf, 1.0, 0.0, math.inf)
    dist = frozen(family, params)
    ks = stats.kstest(x, dist.cdf)
    with np.errstate(divide="ignore"):
        ratio = dist.ppf(_PROBS) / np.quantile(x, _PROBS)
        qq = float(np.sqrt(np.mean(np.log10(ratio) ** 2)))
    return Fit(family, params, float(dist.logpdf(x).sum()), float(ks.statistic), float(ks.pvalue), qq)


def fit_all(samples, variable: str, max_samples: int = 100_000, seed: int = 0) -> FitReport:
    """Fit every family; above ``max_samples`` a seeded uniform subsample is fitted.
    ``samples``: an array, or a column (columns.py) that need not fit in memory."""
    column = as_column(samples)
    kept = column.finite().positive()
    report = FitReport(variable, len(kept), len(column) - len(kept))
    if len(kept) < 2 or kept.all_equal():
        report.reason = f"not fitted: {len(kept)} positive sample(s){' all equal' if len(kept) >= 2 else ''}"
        return report
    if len(kept) > max_samples:
        x = kept.subsample(max_samples, seed)
        report.n = max_samples
    else:
        x = kept.values()
    report.fits = [fit_one(f, x) for f in FAMILIES]
    ranked = sorted(report.fits, key=lambda f: (f.ks_d, f.qq_log10_rms))
    report.best = ranked[0].family
    report.reason = (
        f"lowest KS distance D={ranked[0].ks_d:.4f} (QQ log10-RMS {ranked[0].qq_log10_rms:.3f}); "
        f"runner-up {ranked[1].family} D={ranked[1].ks_d:.4f}"
    )
    return report


def qq_plot(report: FitReport, samples, path) -> None:
    """QQ plots (empirical vs each fitted family, log-log) as one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    emp = np.quantile(x, _PROBS)
    fig, axes = plt.subplots(1, len(report.fits), figsize=(4 * len(report.fits), 4), squeeze=False)
    for ax, f in zip(axes[0], report.fits, strict=True):
        model = frozen(f.family, f.params).ppf(_PROBS)
        ax.loglog(model, emp, ".", ms=4)
        lo, hi = min(emp.min(), model.min()), max(emp.max(), model.max())
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        ax.set_title(f"{f.family}{' (best)' if f.family == report.best else ''}\nKS D={f.ks_d:.3f}")
        ax.set_xlabel("model quantile")
        ax.set_ylabel(f"{report.variable} quantile")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


# --- model selection for the workload model's `traffic` section ----------------------
#
# Each variable: candidate families fitted by maximum likelihood to the positive part
# (a point mass at 0 is kept apart as `zero_fraction`), ranked by AIC; the chosen
# family is the lowest-AIC candidate that passes a Kolmogorov-Smirnov test at GOF_ALPHA
# and an Anderson-Darling test at GOF_ALPHA (parameters estimated from the same sample,
# so both tests are conservative; AD weighs the tails, which carry the mean of a
# heavy-tailed variable). When no candidate passes, an empirical quantile table is
# used instead and the report says so.

CANDIDATES = ("exponential", "lognormal", "weibull", "pareto", "gamma", "lognormal_mix2", "lognormal_mix3")
GOF_ALPHA = 0.01
AD_CRITICAL = 3.857  # Anderson-Darling A^2 at 1 % for a fully specified distribution (Stephens 1974)
MIN_FIT_SAMPLES = 100  # fewer positive samples: the KS test cannot tell families apart; empirical table
TABLE_QUANTILES = 256  # body of an empirical table
TABLE_TAIL = 32  # exact top values kept beside it
MAX_FIT_SAMPLES = 10_000
_N_PARAMS = {"exponential": 1, "lognormal": 2, "weibull": 2, "pareto": 2, "gamma": 2}


def _mixture_em(lx: np.ndarray, k: int, iters: int = 200) -> dict:
    """A k-component Gaussian mixture on log x by EM (on the distinct values, weighted
    by their counts) from a deterministic start (components at the (i + 0.5)/k
    quantiles). Sigmas are floored so that ties cannot collapse a component."""
    floor = max(1e-3, 1e-3 * float(lx.std()))
    vals, cnt = np.unique(np.round(lx, 3), return_counts=True)  # 0.1 % bins: fast on large samples
    n = float(cnt.sum())
    mu = np.quantile(lx, (np.arange(k) + 0.5) / k)
    sigma = np.full(k, max(float(lx.std()) / k, floor))
    w = np.full(k, 1.0 / k)
    prev = -math.inf
    x = vals[:, None]
    c = cnt[:, None].astype(float)
    for _ in range(iters):
        dens = w / (sigma * math.sqrt(2 * math.pi)) * np.exp(-0.5 * ((x - mu) / sigma) ** 2) + 1e-300
        tot = dens.sum(axis=1, keepdims=True)
        ll = float((np.log(tot) * c).sum())
        r = dens / tot * c
        nk = r.sum(axis=0) + 1e-12
        w = nk / n
        mu = (r * x).sum(axis=0) / nk
        sigma = np.maximum(np.sqrt((r * (x - mu) ** 2).sum(axis=0) / nk), floor)
        if ll - prev < 1e-7 * n:
            break
        prev = ll
    order = np.argsort(mu)
    return {"weights": w[order].tolist(), "mu": mu[order].tolist(), "sigma": sigma[order].tolist()}


class LognormalMixture:
    """cdf/ppf/logpdf of a mixture of log-normals (params as `_mixture_em` gives)."""

    def __init__(self, params: dict):
        self.w = np.asarray(params["weights"], dtype=float)
        self.mu = np.asarray(params["mu"], dtype=float)
        self.sigma = np.asarray(params["sigma"], dtype=float)

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        with np.errstate(divide="ignore"):
            lx = np.log(np.maximum(x, 0.0))
        return (self.w * stats.norm.cdf(lx[..., None], self.mu, self.sigma)).sum(axis=-1)

    def logpdf(self, x):
        x = np.asarray(x, dtype=float)
        lx = np.log(x)
        d = (self.w * stats.norm.pdf(lx[..., None], self.mu, self.sigma)).sum(axis=-1)
        return np.log(d + 1e-300) - lx

    def ppf(self, u):
        lo, hi = float((self.mu - 9 * self.sigma).min()), float((self.mu + 9 * self.sigma).max())
        grid = np.linspace(lo, hi, 8192)
        cdf = (self.w * stats.norm.cdf(grid[:, None], self.mu, self.sigma)).sum(axis=1)
        cdf, idx = np.unique(cdf, return_index=True)
        return np.exp(np.interp(u, cdf, grid[idx]))


def dist_of(family: str, params: dict):
    """A distribution object with cdf/ppf/logpdf for any candidate family."""
    if family.startswith("lognormal_mix"):
        return LognormalMixture(params)
    if family == "gamma":
        return stats.gamma(a=params["shape"], scale=params["scale"])
    return frozen(family, params)


def _mle_any(family: str, x: np.ndarray) -> dict:
    if family == "gamma":
        a, _, scale = stats.gamma.fit(x, floc=0)
        return {"shape": float(a), "scale": float(scale)}
    if family.startswith("lognormal_mix"):
        return _mixture_em(np.log(x), int(family[-1]))
    return mle(family, x)


def _n_params(family: str) -> int:
    return 3 * int(family[-1]) - 1 if family.startswith("lognormal_mix") else _N_PARAMS[family]


def empirical_table(x, integer: bool = False) -> dict:
    """256 quantiles of the body plus the exact top TABLE_TAIL values (all values when
    the sample is small), so the mean and the top percentiles of a heavy tail come back.
    ``x``: an array or a column (columns.py)."""
    column = as_column(x)
    n = len(column)
    if n <= TABLE_QUANTILES + TABLE_TAIL:
        return {"n": n, "p": [], "v": [], "tail": column.sorted().tolist(), "integer": integer}
    top = 1.0 - TABLE_TAIL / n
    p = np.linspace(0.0, top, TABLE_QUANTILES)
    return {
        "n": n,
        "p": p.tolist(),
        "v": column.quantiles(p, method="inverted_cdf" if integer else "linear").tolist(),
        "tail": column.largest(TABLE_TAIL).tolist(),
        "integer": integer,
    }


def table_ppf(table: dict, u: np.ndarray) -> np.ndarray:
    """The quantile function of an empirical table: linear between the body's quantiles
    (for integer variables a step function, the nearest quantile), the exact top values above (each with
    probability 1/n)."""
    u = np.asarray(u, dtype=float)
    n, tail = table["n"], np.asarray(table["tail"], dtype=float)
    top = 1.0 - len(tail) / n
    rank = np.clip(np.floor((u - top) * n).astype(np.int64), 0, len(tail) - 1)
    out = tail[rank]
    if table["p"]:
        body = u < top
        if table.get("integer"):  # a step function: only values that occur (spikes stay spikes)
            at = np.clip(np.round(u / top * (len(table["v"]) - 1)).astype(np.int64), 0, len(table["v"]) - 1)
            inner = np.asarray(table["v"], dtype=float)[at]
        else:
            inner = np.interp(u, table["p"], table["v"])
        out = np.where(body, inner, out)
    return np.round(out) if table.get("integer") else out


def anderson_darling(x: np.ndarray, cdf) -> float:
    """A^2 of the sample against a fully specified continuous CDF."""
    x = np.sort(x)
    n = len(x)
    f = np.clip(np.asarray(cdf(x), dtype=float), 1e-300, 1 - 1e-16)
    i = np.arange(1, n + 1)
    return float(-n - np.sum((2 * i - 1) * (np.log(f) + np.log1p(-f[::-1]))) / n)


def fit_model(
    samples,
    variable: str,
    *,
    integer: bool = False,
    families: bool = True,
    max_samples: int = MAX_FIT_SAMPLES,
    seed: int = 0,
):
    """Model selection for one variable (see above). Returns the JSON report:
    `n`, `zero_fraction`, `mean`, `candidates` (family, params, log_likelihood, aic,
    ks_d, ks_p, gof_passed), `aic_best`, `chosen` (a family or "empirical"), `gof`
    (the chosen fit's test), `reason`, and `table` when the empirical table is used.
    ``samples``: an array, or a column (columns.py) that need not fit in memory."""
    x = as_column(samples).finite()
    n = len(x)
    rep = {
        "variable": variable,
        "n": n,
        "integer": integer,
        "zero_fraction": 0.0,
        "mean": float(x.mean()) if n else None,
        "candidates": [],
        "aic_best": None,
        "chosen": "empirical",
        "gof": {"test": "ks+ad", "alpha": GOF_ALPHA, "statistic": None, "p_value": None, "ad": None, "passed": False},
        "reason": "",
        "table": None,
    }
    if n == 0:
        rep["reason"] = "no samples"
        rep["table"] = empirical_table(x, integer)
        return rep
    if not families or x.any_negative():
        rep["reason"] = ("negative values: no family has this support" if families else "no family fitted") + (
            "; empirical table"
        )
        rep["table"] = empirical_table(x, integer)
        return rep
    pos = x.positive()
    rep["zero_fraction"] = float(1 - len(pos) / n)
    if len(pos) < MIN_FIT_SAMPLES or pos.all_equal():
        rep["reason"] = f"{len(pos)} positive sample(s){' all equal' if len(pos) and pos.all_equal() else ''}: "
        rep["reason"] += "empirical table"
        rep["table"] = empirical_table(pos, integer)
        return rep
    fx = pos.subsample(max_samples, seed) if len(pos) > max_samples else pos.values()
    for family in CANDIDATES:
        try:
            with np.errstate(all="ignore"):
                params = _mle_any(family, fx)
                d = dist_of(family, params)
                ll = float(np.sum(d.logpdf(fx)))
                ks = stats.kstest(fx, d.cdf)
                ad = anderson_darling(fx, d.cdf)
        except (ValueError, FloatingPointError, RuntimeError):
            continue
        if not math.isfinite(ll):
            continue
        aic = 2 * _n_params(family) - 2 * ll
        rep["candidates"].append(
            {
                "family": family,
                "params": params,
                "log_likelihood": ll,
                "aic": aic,
                "ks_d": float(ks.statistic),
                "ks_p": float(ks.pvalue),
                "ad": ad,
                "gof_passed": bool(ks.pvalue >= GOF_ALPHA and ad <= AD_CRITICAL),
            }
        )
    ranked = sorted(rep["candidates"], key=lambda c: c["aic"])
    if ranked:
        rep["aic_best"] = ranked[0]["family"]
    passing = [c for c in ranked if c["gof_passed"]]
    if passing:
        c = passing[0]
        rep["chosen"] = c["family"]
        rep["gof"].update(statistic=c["ks_d"], p_value=c["ks_p"], ad=c["ad"], passed=True)
        rep["reason"] = (
            f"lowest AIC among the families passing KS and AD at {GOF_ALPHA} "
            f"(D={c['ks_d']:.4f}, p={c['ks_p']:.3g}, A2={c['ad']:.3g})"
        )
        if c["family"] != rep["aic_best"]:
            rep["reason"] += f"; the AIC best {rep['aic_best']} fails them"
    else:
        best = ranked[0] if ranked else None
        if best:
            rep["gof"].update(statistic=best["ks_d"], p_value=best["ks_p"], ad=best["ad"])
        rep["reason"] = (
            f"no family passes KS and AD at {GOF_ALPHA}"
            + (
                f" (AIC best {best['family']}: D={best['ks_d']:.4f}, p={best['ks_p']:.3g}, A2={best['ad']:.3g})"
                if best
                else ""
            )
            + "; empirical table"
        )
        rep["table"] = empirical_table(pos, integer)
    return rep


def model_ppf(rep: dict, u) -> np.ndarray:
    """Inverse transform of a `fit_model` report at probabilities u in [0, 1):
    0 below the zero mass, the chosen family or the table above it."""
    u = np.asarray(u, dtype=float)
    z = rep["zero_fraction"]
    v = np.clip((u - z) / (1.0 - z), 0.0, 1.0 - 1e-12) if z < 1 else np.zeros_like(u)
    if rep["chosen"] == "empirical":
        if not rep["table"]["n"]:
            return np.zeros_like(u)
        out = table_ppf(rep["table"], v)
    else:
        c = next(c for c in rep["candidates"] if c["family"] == rep["chosen"])
        out = np.asarray(dist_of(c["family"], c["params"]).ppf(v), dtype=float)
        if rep.get("integer"):
            out = np.maximum(np.round(out), 1.0)
    return np.where(u < z, 0.0, out)
