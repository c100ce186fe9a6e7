"""`table_seed=` in the element specs (issue 17 item 2): the key of a flow
table's hash, set per element. No decision depends on it (which flows a
table holds does not depend on where it holds them; the cores' own check is
click-elements/tests/table_seed_test.cc): every packet has the same fate at
the same time under the default seed, a decimal and a hex one, on a real
trace with many flows into a link slow enough to drop. A malformed seed is
one configuration error naming the parameter, and the seed given is echoed
in metrics.json's configuration like every other parameter."""

from __future__ import annotations

import importlib.util
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


def _colliding_flows():
    """click-elements/tests/colliding_flows.py, the flows built backwards
    through the hashes (the adapters' tests share it)."""
    path = REPO / "click-elements" / "tests" / "colliding_flows.py"
    spec = importlib.util.spec_from_file_location("colliding_flows", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CRAFTED_SEED = 0xFEDCBA9876543210


@pytest.mark.parametrize("name", sorted(ELEMENTS))
def test_the_seed_reaches_the_table(name, tmp_path):
    """16 IPv6 flows whose keys share one bucket under CRAFTED_SEED, all
    queued at once (8 kb/s, the clock stopped at 0.5 s): with that
    table_seed a lookup walks every entry (flow_table.longest_probe), with
    the default seed they spread. An element that ignored table_seed would
    read the same under both."""
    flows = _colliding_flows()
    trace = tmp_path / "colliding.pcap"
    flows.write_pcap(str(trace), flows.engine_packets(CRAFTED_SEED, 16))
    sample = ELEMENTS[name].replace("0.5", "1")
    probes = {}
    for seed in (f"{CRAFTED_SEED:#x}", None):
        element = f"{name}({sample}capacity=100{'' if seed is None else f', table_seed={seed}'})"
        run = engine.run(
            {"sources": [f"pcap(path='{trace}')"], "nodes": [{"element": element, "rate": 8000}], "until": "0.5s"}
        )
        table = run["nodes"][0]["flow_table"]
        probes[seed] = (table["max"], table["longest_probe"])
    crafted, default = probes[f"{CRAFTED_SEED:#x}"], probes[None]
    # (SCFQ's packet in transmission has left its flow's entry: 15 flows.)
    assert crafted[0] >= 15 and crafted[1] == crafted[0], probes
    assert default[1] <= 4, probes
