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
    """Fit every family; above ``max_samples`` a seeded uniform subsample is fitted."""
    x = np.asarray(samples, dtype=float)
    ok = np.isfinite(x) & (x > 0)
    x = x[ok]
    report = FitReport(variable, len(x), int((~ok).sum()))
    if len(x) < 2 or np.all(x == x[0]):
        report.reason = f"not fitted: {len(x)} positive sample(s){' all equal' if len(x) >= 2 else ''}"
        return report
    if len(x) > max_samples:
        x = np.random.default_rng(seed).choice(x, max_samples, replace=False)
        report.n = max_samples
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
