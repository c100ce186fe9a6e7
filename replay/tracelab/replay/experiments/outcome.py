"""What one experiment run returns: a table of measured vs published values
and the spec's checks (name, published value, measured value, tolerance,
verdict), plus the run's context (seed, work directory, parallel jobs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Check:
    name: str
    held: bool
    measured: str = ""
    published: str | None = None
    tolerance: str | None = None
    # Why a failed check's published value is not reached (shown only when it fails):
    # the cause as far as it was traced, so a failure in the report is explained, not bare.
    why: str | None = None

    @property
    def verdict(self) -> str:
        return "held" if self.held else "failed"

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "published": self.published,
            "measured": self.measured,
            "tolerance": self.tolerance,
            "verdict": self.verdict,
            "why": None if self.held else self.why,
        }


@dataclass
class Outcome:
    name: str
    title: str
    header: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # What the run was configured with, beyond the scale and seed (recorded in result.json).
    config: dict[str, Any] = field(default_factory=dict)
    # Tool versions the run used beyond tracelab's own (e.g. {"ns3": "3.44.post0"}).
    tools: dict[str, str] = field(default_factory=dict)

    def check(
        self,
        what: str,
        held: bool,
        detail: str = "",
        *,
        published: Any = None,
        tolerance: str | None = None,
        why: str | None = None,
    ) -> None:
        """Record a check; `why` explains the gap if it fails (the report prints it then)."""
        self.checks.append(
            Check(what, bool(held), detail, None if published is None else str(published), tolerance, why)
        )

    @property
    def passed(self) -> bool:
        return all(c.held for c in self.checks)


class TraceError(ValueError):
    """The trace given to an experiment that replays one cannot be read (one line: the file and why)."""


@dataclass(frozen=True)
class Context:
    """Where and how an experiment runs: `seed` shifts every random source of
    the experiment (1 = the seeds of the checked-in report), `workdir` keeps
    the raw outputs of the external simulators, `jobs` bounds how many of
    them run at once, `trace` is the recorded trace an experiment that
    replays one reads (None: it is SKIPPED)."""

    seed: int = 1
    workdir: Path | None = None
    jobs: int = 1
    trace: Path | None = None
