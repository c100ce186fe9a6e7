"""The Rust analyzer applies a role model (`tracelab profile --roles`) exactly
as `tracelab roles apply` does: host by host, on profiles of the bundled real
traces (datasets/real) and of public ones, with a tree of several levels. Both
go through the one C4.5 predictor (roles.rs; `roles apply` runs it as
`tracelab-analyzer predict-c45`), so this checks the rest of the two paths:
features, normalisation and the model file. The contract is
docs/reference/role-model.md; its adversarial cases (missing values,
thresholds hit exactly, near-ties) are in models/tests/data/c45_contract.json."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from public_datasets import public_dataset
from support import tracelab_ok as tracelab

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = sorted((ROOT / "datasets" / "real").glob("*.pcap"))
TRACES = [
    "real/ndpi/netflix.pcap",
    "real/zeek/bro.org.pcap",
    "real/chrissanders-packets/http_espn.pcapng",
    "real/ndpi/reddit.pcap",
    "real/pcapplusplus/example.pcap",
    "real/ndpi/gnutella.pcap",
]
LOCAL = "10.0.0.0/8,192.168.0.0/16,172.16.0.0/12,fd00::/8,fe80::/10"


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    base = tmp_path_factory.mktemp("profiles")
    dirs = []
    assert len(BUNDLED) >= 3
    for t in [*BUNDLED, *map(public_dataset, TRACES)]:
        d = base / t.name
        tracelab("profile", str(t), "--local", LOCAL, "-o", str(d), "--quiet")
        dirs.append(d)
    return dirs


def test_rust_and_python_apply_the_same_tree(profiles, tmp_path):
    # Labels by a rule no single split captures, so the tree has depth.
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["host", "role"])
        for d in profiles:
            t = pq.read_table(d / "hosts.parquet").to_pylist()
            for h in t:
                w.writerow([h["host"], "server" if h["incnx"] + h["fan_in"] > h["outcnx"] + 1 else "client"])
    model = tmp_path / "roles.json"
    tracelab("roles", "train", *map(str, profiles), "--all-hosts", "--labels", str(labels), "-o", str(model))
    tree = json.loads(model.read_text())["tree"]["tree"]

    def depth(n):
        return 1 + max(depth(n["le"]), depth(n["gt"])) if "le" in n else 0

    assert depth(tree) >= 2, json.dumps(tree)[:500]
    compared = 0
    for d in profiles:
        py_csv = tmp_path / f"{d.name}.roles.csv"
        tracelab("roles", "apply", str(model), str(d), "--all-hosts", "-o", str(py_csv))
        with py_csv.open() as f:
            # One profile: each host was classified once, as server or client.
            python = {row["host"]: "server" if int(row["server"]) else "client" for row in csv.DictReader(f)}
        out = tmp_path / f"{d.name}.rust"
        summary = json.loads((d / "summary.json").read_text())
        tracelab(
            "profile", summary["trace"]["path"], "--local", LOCAL, "--roles", str(model), "-o", str(out), "--quiet"
        )
        rust = {h["host"]: h["role"] for h in pq.read_table(out / "hosts.parquet").to_pylist()}
        assert python, d
        for host, cls in python.items():
            assert rust[host] == cls, (d.name, host)
            compared += 1
    assert compared > 50
