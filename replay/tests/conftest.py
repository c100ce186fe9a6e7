"""Paths for the replay tests: the repository and its public test traces."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The public test traces and Zeek baselines committed with the repository
# (datasets/public/MANIFEST.md gives source and licence of each file).
DATASETS = REPO / "datasets" / "public"
GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(scope="session")
def datasets() -> Path:
    if not (DATASETS / "MANIFEST.md").is_file():
        pytest.fail(f"datasets not found at {DATASETS} (they belong to the repository: datasets/public)")
    return DATASETS
