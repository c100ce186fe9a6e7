"""Golden baselines (tests/golden.py): every case is run again and its rendered
outputs are diffed against tests/baselines/<case>/. A failure shows the diff;
if the change is intended, `make baselines` rewrites the files and the diff
goes into the commit for review."""

from __future__ import annotations

import pytest
from golden import BASELINES, CASES, Case, differences, run_case


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_outputs_match_the_baseline(case: Case):
    assert (BASELINES / case.name).is_dir(), f"no baseline for {case.name}: run `make baselines`"
    diff = differences(case.name, run_case(case))
    assert not diff, f"{case.name} differs from tests/baselines/{case.name} (`make baselines` if intended):\n{diff}"


def test_a_changed_output_is_reported(tmp_path):
    """The comparison itself can fail: one changed cell, one missing and one
    new file all show up in the diff."""
    case = next(c for c in CASES if c.name == "wikipedia")
    from golden import read_baseline

    files = read_baseline(case.name)
    rel = "profile/conn.log"
    lines = files[rel].splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    lines[row] = lines[row].replace("\tSF\t", "\tS1\t", 1).replace("\tudp\t", "\ttcp\t", 1)
    changed = {**files, rel: "".join(lines), "extra.txt": "x\n"}
    del changed["profile/summary.json"]
    diff = differences(case.name, changed)
    assert f"+{lines[row].rstrip()}" in diff.splitlines()
    assert "--- missing output file profile/summary.json" in diff
    assert "+++ new output file extra.txt" in diff
