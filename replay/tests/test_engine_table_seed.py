"""`table_seed=` in the element specs (issue 17 item 2): the key of a flow
table's hash, set per element. No decision depends on it (which flows a
table holds does not depend on where it holds them; the cores' own check is
click-elements/tests/table_seed_test.cc): every packet has the same fate at
the same time under the default seed, a decimal and a hex one, on a real
trace with many flows into a link slow enough to drop. A malformed seed is
one configuration error naming the parameter, and the seed given is echoed
in metrics.json's configuration like every other parameter."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
import tracelab_engine as engine
from conftest import REPO

TRACE = "zeek-baselines/wikipedia/wikipedia.pcap"  # 136 packets, many flows
# Every element whose core keeps a flow table, with the parameters that fill
# it: SIFT and X-Protect keep only the flows they sample.
ELEMENTS = {
    "efd": "",
    "pefd": "",
    "efdack": "",
    "run2c": "",
    "run2cack": "",
    "sift": "p=0.5, ",
    "xprotect": "p_ins=0.5, ",
    "las": "",
    "lasack": "",
    "lars": "",
    "scfq": "",
}


def _run(datasets, element: str) -> dict:
    return engine.run(
        {
            "sources": [f"pcap(path='{datasets / TRACE}', filter='ip')"],
            "nodes": [{"element": element, "rate": 20_000}],
            "detail": True,
        }
    )


@pytest.mark.parametrize("name", sorted(ELEMENTS))
def test_the_same_decisions_under_three_seeds(datasets, name):
    base = _run(datasets, f"{name}({ELEMENTS[name]}capacity=10)")
    assert base["overall"]["dropped_total"] > 0  # the buffer fills: drop and push-out paths run
    assert base["nodes"][0]["flow_table"]["max"] > 1  # several flows in the table at once
    for seed in ("42", "0xfedcba9876543210"):
        other = _run(datasets, f"{name}({ELEMENTS[name]}capacity=10, table_seed={seed})")
        for field in ("fate", "node", "end_ps"):
            np.testing.assert_array_equal(other["detail"][field], base["detail"][field])


@pytest.mark.parametrize("value", ["0x1g", "-1", "18446744073709551616", "0x10000000000000000", "1.5", "64k"])
def test_a_malformed_seed_is_refused_by_name(datasets, value):
    with pytest.raises(ValueError, match=rf"parameter 'table_seed' .*'{value}' is not a 64-bit value"):
        _run(datasets, f"las(table_seed={value})")


def test_an_element_without_a_table_has_no_seed(datasets):
    with pytest.raises(ValueError, match=r"unknown parameter 'table_seed'"):
        _run(datasets, "fifo(table_seed=1)")


def test_the_seed_is_recorded_in_metrics_json(datasets, tmp_path):
    out = tmp_path / "r"
    spec = "efd(capacity=10, table_seed=0x2a)"
    run = subprocess.run(
        [
            str(REPO / ".venv" / "bin" / "tracelab"),
            *("replay", "run", "--pcap", str(datasets / TRACE)),
            *("--element", spec, "--rate", "20k", "-o", str(out)),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert spec in json.dumps(json.loads((out / "metrics.json").read_text()))
