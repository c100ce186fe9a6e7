"""Where tracelab's parts are, and how to call them.

The front door (tracelab.cli) and the demo (tracelab.demo) both run the
parts: the Rust analyzer as a program, the Python packages through their
entry points. Both import this module; it imports neither.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import sysconfig
from collections.abc import Callable
from pathlib import Path

# replay/tracelab/parts.py -> the repository root (for an in-tree checkout).
REPO_ROOT = Path(__file__).resolve().parents[2]


def analyzer_binary() -> Path | None:
    """Where the Rust analyzer is: $TRACELAB_ANALYZER, beside this Python's
    scripts, PATH, or the repo's build."""
    explicit = os.environ.get("TRACELAB_ANALYZER")
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    # The wheel (`pip install .`, pipx) installs the analyzer among the scripts
    # of the environment it installs `tracelab` into, which need not be on PATH
    # (a venv run without activating it, pipx's own venv).
    beside = Path(sysconfig.get_path("scripts")) / "tracelab-analyzer"
    if beside.is_file():
        return beside
    on_path = shutil.which("tracelab-analyzer")
    if on_path:
        return Path(on_path)
    built = REPO_ROOT / "analyzer" / "target" / "release" / "tracelab-analyzer"
    return built if built.is_file() else None


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
