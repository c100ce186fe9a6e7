"""Where tracelab's parts are, and how to call them.

The front door (tracelab.cli) and the demo (tracelab.demo) both run the
parts: the Rust analyzer as a program, the Python packages through their
entry points. Both import this module; it imports neither.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
from collections.abc import Callable

from tracelab_models.analyzer import REPO_ROOT, analyzer_binary

__all__ = ["REPO_ROOT", "analyzer_binary", "python_entry", "run_analyzer"]


def run_analyzer(argv: list[str]) -> int:
    """Runs the analyzer with ``argv``; the caller has checked that it exists."""
    binary = analyzer_binary()
    assert binary is not None  # the caller checked analyzer_binary()
    return subprocess.call([str(binary), *argv])


def python_entry(module: str, function: str) -> Callable[[list[str]], int] | None:
    """An entry point `module.function(argv) -> int`, or None if its package is
    not installed. Only looked up here; imported when called, so `tracelab
    --help` stays fast however heavy the parts are."""
    # Only the top-level package is looked up: finding a submodule imports its
    # parent packages, and `tracelab --help` must not pay for their imports.
    if importlib.util.find_spec(module.partition(".")[0]) is None:
        return None

    def call(argv: list[str]) -> int:
        return getattr(importlib.import_module(module), function)(argv)

    return call
