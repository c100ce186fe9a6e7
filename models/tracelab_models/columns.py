"""A column of numbers as `model derive` takes its statistics of it: in memory
(`ArrayColumn`, a numpy array) or a query over a profile that DuckDB streams
from its Parquet files (`SqlColumn`, sqlprofile.py), with the same numbers.

A statistic of a SqlColumn is the one numpy computes on the array the query
would give, bit for bit, with memory that does not grow with the column:

* `mean`: numpy sums float64 pairwise (blocks of 8 accumulators, halves split
  at multiples of 8); `pairwise_sum` walks the same tree over the streamed
  values and hands numpy each subtree of at most STREAM_BLOCK values;
* `quantiles`: the order statistics numpy's `linear` and `inverted_cdf`
  methods read, fetched by their ranks, combined with numpy's formulas;
* `subsample`: numpy's `default_rng(seed).choice(x, size, replace=False)`
  picks positions that depend only on the seed, the length and the size
  (`choice(len(x), ...)` gives the same ones); the values at those positions
  are fetched in that order.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

# Values per numpy reduction when summing a stream: a subtree of numpy's pairwise tree.
STREAM_BLOCK = 1 << 16


class _Reader:
    """Consecutive slices of a stream of float64 arrays (1-D, or one row per series)."""

    def __init__(self, batches: Iterator[np.ndarray]):
        self.batches = batches
        self.pending: list[np.ndarray] = []
        self.have = 0

    def take(self, n: int) -> np.ndarray:
        while self.have < n:
            batch = next(self.batches)
            self.pending.append(batch)
            self.have += batch.shape[-1]
        joined = np.concatenate(self.pending, axis=-1) if len(self.pending) > 1 else self.pending[0]
        out, rest = np.ascontiguousarray(joined[..., :n], dtype=np.float64), joined[..., n:]
        self.pending, self.have = ([rest] if rest.shape[-1] else []), rest.shape[-1]
        return out


def pairwise_sum(n: int, batches: Iterator[np.ndarray], series: int | None = None):
    """`np.sum` of the n values the batches hold, in their order, streaming. With
    `series`, each batch is (series, values) and each series is summed so."""
    reader = _Reader(batches)

    def subtree(count: int):
        if count <= STREAM_BLOCK:
            return np.add.reduce(reader.take(count), axis=-1)
        half = count // 2
        half -= half % 8
        return subtree(half) + subtree(count - half)

    total = subtree(n) if n else (np.float64(0.0) if series is None else np.zeros(series))
    for _ in reader.batches:  # to its end, which closes the stream
        pass
    return total


def quantile_ranks(n: int, p, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The 0-based ranks in the sorted column that np.quantile(x, p, method)
    reads for a column of n values: (lower, upper, weight of upper) for
    `linear`, (rank, rank, None) for `inverted_cdf`."""
    q = np.asanyarray(p, dtype=np.float64)
    if method == "linear":
        virtual = (n - 1) * q
        lower = np.floor(virtual)
        upper = lower + 1
        above = virtual >= n - 1
        lower[above] = -1
        upper[above] = -1
        below = virtual < 0
        lower[below] = 0
        upper[below] = 0
        gamma = np.asanyarray(virtual - lower)
        lo, hi = lower.astype(np.intp), upper.astype(np.intp)
        return np.where(lo < 0, n + lo, lo), np.where(hi < 0, n + hi, hi), gamma
    if method == "inverted_cdf":
        index = n * q - 1
        lower = np.floor(index)
        rank = np.where(index - lower == 0, lower, lower + 1).astype(np.intp)
        rank[rank < 0] = 0
        return rank, rank, None
    raise ValueError(f"quantile method {method!r} is not one of linear, inverted_cdf")


def lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """numpy's interpolation between neighbouring order statistics."""
    diff = b - a
    out = np.add(a, diff * t)
    np.subtract(b, diff * (1 - t), out=out, where=t >= 0.5)
    return out


class ArrayColumn:
    """A column held in memory."""

    def __init__(self, values):
        self.x = np.asarray(values, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.x)

    def finite(self) -> ArrayColumn:
        return ArrayColumn(self.x[np.isfinite(self.x)])

    def positive(self) -> ArrayColumn:
        return ArrayColumn(self.x[self.x > 0])

    def total(self) -> float:
        return float(self.x.sum())

    def mean(self) -> float:
        return float(self.x.mean())

    def any_negative(self) -> bool:
        return bool((self.x < 0).any())

    def all_equal(self) -> bool:
        return bool(np.all(self.x == self.x[0]))

    def quantiles(self, p, method: str = "linear") -> np.ndarray:
        return np.quantile(self.x, p, method=method)

    def median(self) -> float:
        return float(np.median(self.x))

    def largest(self, k: int) -> np.ndarray:
        """The k largest values, ascending."""
        return np.sort(self.x)[-k:] if k else np.zeros(0)

    def sorted(self) -> np.ndarray:
        return np.sort(self.x)

    def values(self) -> np.ndarray:
        return self.x

    def subsample(self, size: int, seed: int) -> np.ndarray:
        return np.random.default_rng(seed).choice(self.x, size, replace=False)


def as_column(values) -> ArrayColumn | object:
    """A column as is; anything else (a list, an array) as an ArrayColumn."""
    return values if hasattr(values, "subsample") else ArrayColumn(values)
