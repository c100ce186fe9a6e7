"""Where the Rust analyzer binary is, for the models package's C4.5 predictor (c45.py,
`tracelab-analyzer predict-c45`). The front door finds it the same way in
tracelab.parts.analyzer_binary, its own copy: `tracelab --help` asks for the analyzer
and must import no part, tracelab_models included (tests/test_front_door.py), and
tracelab_models imports nothing of tracelab (.importlinter)."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

# models/tracelab_models/analyzer.py -> the repository root (for an in-tree checkout).
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
