"""Shared paths: the repository and the datasets beside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATASETS = REPO.parent / "shared" / "datasets"  # beside the checkout, in CI too
GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(scope="session")
def datasets() -> Path:
    if not (DATASETS / "MANIFEST.md").is_file():
        pytest.fail(f"datasets not found at {DATASETS} (expected ../shared/datasets beside the checkout)")
    return DATASETS
