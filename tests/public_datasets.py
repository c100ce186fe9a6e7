"""The public test traces and Zeek baselines committed with the repository:
datasets/public, whose MANIFEST.md gives the source and licence of each file."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT / "datasets" / "public"


def public_dataset(rel: str) -> Path:
    """DATASETS / rel; a missing file fails the test (it is part of the repository)."""
    path = DATASETS / rel
    if not path.exists():
        pytest.fail(f"{path} not found: it belongs to the repository (datasets/public/MANIFEST.md)")
    return path
