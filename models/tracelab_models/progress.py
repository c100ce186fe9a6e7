"""Progress bars for the long Python jobs, on a terminal only.

A bar is drawn on stderr (rich, pinned in requirements.lock) when stderr is a
terminal and the command was not asked to be quiet; otherwise nothing is
written at all, so captured or piped stderr, logs and CI output are exactly
what they were without it. The bar is transient: it is erased when the job
ends, leaving the command's own output. rich is imported only when a bar is
drawn. The analyzer draws its own with indicatif under the same rule
(analyzer/crates/tracelab-analyzer/src/progress.rs).

This module lives in tracelab_models because both packages' commands use it
and tracelab_models may not import tracelab (.importlinter).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator

Advance = Callable[[str], None]  # called when a step is done, with the next step's name


def wanted(quiet: bool = False) -> bool:
    """Whether to draw: not quiet, stderr a terminal, and not a dumb one."""
    return not quiet and sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


@contextlib.contextmanager
def steps(title: str, total: int, first: str, quiet: bool = False) -> Iterator[Advance]:
    """A bar of `total` steps; the caller calls `advance(next_step_name)` after each.

    Without a terminal (or when quiet) `advance` does nothing."""
    if not wanted(quiet):
        yield lambda _name: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(f"{title}: {{task.description}}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(first, total=total)
        yield lambda name: bar.update(task, advance=1, description=name)
