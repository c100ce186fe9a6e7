"""The analytic ChuMQ model of [000 §6] (docs/reference/algorithms.md §6.7), with the
spec's corrections: the Poisson pmf with e^{-λT} (⚠AMB-24) and the mean
chunk population M̄_c(T) = 1 + λT (⚠AMB-25, the form the published numbers
use), M̄_c(7.2 µs) = λ·7.2 µs for the "extra packets" term.

Loads are shares of the 10 Gb/s output; λ (packets/s) = share·C/(8h).
"""

from __future__ import annotations

import math

LINK_BPS = 10e9
MTU = 9000
SIZES = (40, 200, 1500)  # Table II
TIMERS = (50e-6, 100e-6, 200e-6)  # T_1..T_3 = W_max
CHUNK_TIME = MTU * 8 / LINK_BPS  # 7.2 µs


def rate_pps(share: float, size: int) -> float:
    return share * LINK_BPS / (8 * size)


def pmf(k: int, mean: float) -> float:
    """Poisson P(X = k), in logs so that large means do not overflow."""
    if mean == 0:
        return 1.0 if k == 0 else 0.0
    return math.exp(k * math.log(mean) - mean - math.lgamma(k + 1))


def k_max(size: int) -> int:
    return MTU // size  # K = 225 / 45 / 6


def p_timer(share: float, size: int, timer: float) -> float:
    """Eq. 2: the chunk is formed by the timer (fewer than K arrivals in T)."""
    m = rate_pps(share, size) * timer
    return sum(pmf(k, m) for k in range(k_max(size)))


def mean_chunk_population(share: float, size: int, window: float) -> float:
    return 1 + rate_pps(share, size) * window  # ⚠AMB-25


def rv_bounds(shares: tuple[float, ...], i: int) -> tuple[float, float, float]:
    """Eq. 4 for class i: (lower, approximation with 3.6 µs, upper)."""
    rho = sum(s for j, s in enumerate(shares) if j != i)
    pt = p_timer(shares[i], SIZES[i], TIMERS[i])
    m_t = mean_chunk_population(shares[i], SIZES[i], TIMERS[i])
    lam = rate_pps(shares[i], SIZES[i])
    lower = rho * pt / m_t
    approx = (1 + lam * CHUNK_TIME / 2) / m_t * rho * pt
    upper = (1 + lam * CHUNK_TIME) / m_t * rho * pt
    return lower, approx, upper


def mean_chunk_bytes_class(share: float, size: int, timer: float) -> float:
    """Eq. 5: L̄_ci (k arrivals, literally, without the +1 of AMB-25)."""
    m = rate_pps(share, size) * timer
    kk = k_max(size)
    below = sum(pmf(k, m) * k * size for k in range(kk))
    p_below = sum(pmf(k, m) for k in range(kk))
    return below + (1 - p_below) * MTU


def mean_chunk_bytes(shares: tuple[float, ...]) -> float:
    """Eq. 6: the packet-rate-weighted mean chunk size over the classes."""
    num = den = 0.0
    for share, size, timer in zip(shares, SIZES, TIMERS, strict=True):
        if share <= 0:
            continue
        lc = mean_chunk_bytes_class(share, size, timer)
        if lc <= 0:
            continue
        lam = rate_pps(share, size)
        chunks = lam / (lc / size)  # λ_i / M_ci
        num += lc * chunks
        den += chunks
    return num / den if den else 0.0
