"""The `tracelab profile` front: expands capture globs the shell left
quoted, then runs the analyzer on them as one capture."""

from __future__ import annotations

import glob
from pathlib import Path

from ..parts import run_analyzer

GLOB_CHARACTERS = ("*", "?")


def expand_globs(argv: list[str]) -> list[str]:
    """Each argument holding `*` or `?` that names no file and matches some
    is replaced by its matches, sorted (the analyzer orders capture files by
    their first timestamp anyway). Options and their values hold neither."""
    expanded: list[str] = []
    for arg in argv:
        if any(c in arg for c in GLOB_CHARACTERS) and not arg.startswith("-") and not Path(arg).exists():
            matches = sorted(glob.glob(arg))
            if matches:
                expanded.extend(matches)
                continue
        expanded.append(arg)
    return expanded


def main(argv: list[str]) -> int:
    return run_analyzer(expand_globs(argv))
