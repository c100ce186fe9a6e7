"""Evaluation of role classifiers as the thesis does it (docs/reference/algorithms.md §9.4, thesis §8.4.2).

Four hold-out trials: the instances are shuffled once (seeded) and cut into four
quarters (451 -> 113, 113, 113, 112); each quarter is tested once by a model trained on
the other three. Reported per trial: test-set size, success rate and its 80 % and 90 %
Wilson score intervals; overall: mean and standard deviation of the success rates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

# The thesis' z values; with them the formula reproduces Tables 8.3/8.4 to 0.01
# (exact normal quantiles 1.2816/1.6449 would be off by up to 0.03).
Z80 = 1.28
Z90 = 1.65


def wilson_interval(successes: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval of a success rate f = S/N (thesis §8.4.2, ref [62])."""
    if n <= 0:
        raise ValueError("the test set is empty")
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside 0..{n}")
    f = successes / n
    centre = f + z * z / (2 * n)
    half = z * math.sqrt(f / n - f * f / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return (centre - half) / denom, (centre + half) / denom


@dataclass
class Trial:
    n: int
    successes: int

    @property
    def rate(self) -> float:
        return self.successes / self.n

    def ci(self, z: float) -> tuple[float, float]:
        return wilson_interval(self.successes, self.n, z)


@dataclass
class HoldoutReport:
    name: str
    trials: list[Trial]

    @property
    def mean(self) -> float:
        return float(np.mean([t.rate for t in self.trials]))

    @property
    def std(self) -> float:
        """Sample standard deviation of the success rates (as a fraction, like the thesis)."""
        return float(np.std([t.rate for t in self.trials], ddof=1))

    def table(self) -> str:
        """The layout of thesis Tables 8.3/8.4 (percentages with two decimals)."""
        ords = ["1st", "2nd", "3rd"] + [f"{i}th" for i in range(4, len(self.trials) + 1)]
        rows = [
            ("", [f"{o} trial" for o in ords[: len(self.trials)]]),
            ("testset size", [str(t.n) for t in self.trials]),
            ("success rate(%)", [f"{100 * t.rate:.2f}" for t in self.trials]),
            ("mean (%)", [f"{100 * self.mean:.2f}"]),
            ("std", [f"{self.std:.2f}"]),
        ]
        for label, z in (("80%-CI (%)", Z80), ("90%-CI (%)", Z90)):
            rows.append((label, [_pct(t.ci(z)) for t in self.trials]))
        width = max(len(c) for _, cells in rows for c in cells)
        lines = [f"Performance estimate of {self.name}"]
        for label, cells in rows:
            lines.append(f"{label:<16}" + "".join(f"  {c:>{width}}" for c in cells))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "classifier": self.name,
            "trials": [
                {
                    "testset_size": t.n,
                    "successes": t.successes,
                    "success_rate": t.rate,
                    "ci80": list(t.ci(Z80)),
                    "ci90": list(t.ci(Z90)),
                }
                for t in self.trials
            ],
            "mean": self.mean,
            "std": self.std,
        }


def _pct(ci) -> str:
    return f"[{100 * ci[0]:.2f}, {100 * ci[1]:.2f}]"


def holdout_quarters(n: int, seed: int, folds: int = 4) -> list[np.ndarray]:
    """Shuffled indices cut into ``folds`` nearly equal parts (the first parts one larger)."""
    if n < folds:
        raise ValueError(f"need at least {folds} instances for {folds} hold-out trials, got {n}")
    order = np.random.default_rng(seed).permutation(n)
    return np.array_split(order, folds)


def evaluate_holdout(estimator, X, y, name: str, seed: int = 1, folds: int = 4) -> HoldoutReport:
    """Train on all quarters but one, test on it, for each quarter in turn."""
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    parts = holdout_quarters(len(y), seed, folds)
    trials = []
    for k, test in enumerate(parts):
        train = np.concatenate([p for j, p in enumerate(parts) if j != k])
        model = clone(estimator).fit(X[train], y[train])
        trials.append(Trial(len(test), int((model.predict(X[test]) == y[test]).sum())))
    return HoldoutReport(name, trials)
