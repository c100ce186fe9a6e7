"""Draws from the distributions a workload model carries (all vectorised, one seeded
generator).

* Fitted families (`flows.size_bytes`, `flows.interarrival_s`): inverse transform of
  the best family, capped where the capped mean equals the model's observed mean.
  The observed mean is the exponential fit's scale (its MLE is the sample mean). A
  heavy tail such as Pareto with alpha < 1 has no mean at all; uncapped, a few draws
  would dominate the trace and make its size unbounded. The cap keeps the shape below
  it and the mean of the whole.
* Empirical quantiles (warm-ups, pacing): linear interpolation of the model's
  quantile function at uniform probabilities, optionally restricted to [u0, 1].
* Histograms (train sizes, packet sizes): draws proportional to the counts.
"""

from __future__ import annotations

import math

import numpy as np
from tracelab_models.distributions import frozen


class SynthError(ValueError):
    """The model (or an option) cannot give a synthetic trace; the message says why."""


def best_fit(report: dict, what: str):
    if report.get("best") is None:
        raise SynthError(f"{what}: not fitted in the model ({report.get('reason') or 'no samples'})")
    fit = next(f for f in report["fits"] if f["family"] == report["best"])
    return frozen(fit["family"], fit["params"])


def observed_mean(report: dict) -> float | None:
    """The sample mean the model was fitted on: the exponential MLE scale."""
    for f in report["fits"]:
        if f["family"] == "exponential":
            return float(f["params"]["scale"])
    return None


def capped_means(dist, hard_cap: float, points: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    """(C, E[min(X, C)]) on a log grid of caps up to hard_cap, from
    E[min(X, C)] = integral of P(X > x) over [0, C] (trapezoids in log x; below the
    grid's start, P(X > x) = 1)."""
    lo = float(dist.ppf(1e-12))  # P(X > lo) = 1 to 1e-12
    lo = lo if lo > 0 else hard_cap * 1e-30
    x = np.geomspace(lo, hard_cap, points)
    sf = dist.sf(x)
    area = np.concatenate(([0.0], np.cumsum((sf[1:] + sf[:-1]) / 2 * np.diff(x))))
    return x, lo + area


def mean_preserving_cap(dist, target: float | None, hard_cap: float) -> float:
    """The cap C <= hard_cap with E[min(X, C)] = target, or hard_cap when the family's
    own mean (capped at hard_cap) is already at or below the target."""
    caps, means = capped_means(dist, hard_cap)
    if target is None or not math.isfinite(target) or target <= 0 or means[-1] <= target:
        return hard_cap
    if means[0] >= target:
        raise SynthError(f"the fitted family's quantiles are all above the observed mean {target:g}")
    # E[min(X, C)] grows with C: invert by interpolation on the grid.
    return float(np.interp(target, means, caps))


def draw_capped(dist, cap: float, n: int, rng: np.random.Generator) -> np.ndarray:
    # ppf(u) for u < 1 is finite for every family here; the cap bounds it.
    return np.minimum(dist.ppf(rng.random(n)), cap)


def draw_quantiles(emp: dict, n: int, rng: np.random.Generator, u0: float = 0.0) -> np.ndarray:
    """n draws of an empirical distribution ({"p": [...], "v": [...]}) restricted to
    probabilities [u0, 1]."""
    u = u0 + (1.0 - u0) * rng.random(n)
    return np.interp(u, emp["p"], emp["v"])


def cdf_at(emp: dict, x: float) -> float:
    """P(X <= x) of an empirical quantile function (the largest p whose quantile is <= x)."""
    p, v = np.asarray(emp["p"]), np.asarray(emp["v"])
    below = p[v <= x]
    return float(below.max()) if len(below) else 0.0


def draw_hist(hist: dict, n: int, rng: np.random.Generator, keep=None) -> np.ndarray:
    """n draws of a histogram's values, weighted by their counts; `keep(values)` masks
    the values allowed."""
    v = np.asarray(hist["values"], dtype=float)
    c = np.asarray(hist["counts"], dtype=float)
    if keep is not None:
        c = np.where(keep(v), c, 0.0)
    if c.sum() <= 0:
        raise SynthError("empty histogram")
    return v[rng.choice(len(v), size=n, p=c / c.sum())]


def rtt_sampler(summary: dict) -> tuple[float, float]:
    """(median, sigma) of the log-normal RTT of a scope: the model keeps the median and
    the mean of the per-connection RTTs; mean = median * exp(sigma^2 / 2). A mean at or
    below the median (no right skew) gives a constant RTT."""
    med, mean = summary.get("median"), summary.get("mean")
    if not med or med <= 0:
        raise SynthError("no RTT")
    sigma = math.sqrt(2.0 * math.log(mean / med)) if mean and mean > med else 0.0
    return float(med), sigma
