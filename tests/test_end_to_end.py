"""The whole path on public real traces, through the front door as a user types it:

    pcap -> tracelab profile -> tracelab roles train + apply -> tracelab model derive
         -> tracelab replay run --pcap -> tracelab report

and the numbers that must flow through unchanged from one stage to the next:
packets read = packets in connections = packets the engine offered (= delivered +
dropped + still queued); IP bytes of the connections = bytes the engine offered;
hosts classified = rows of hosts.parquet, with the same predictions as the analyzer
applying the same role model; connections in summary.json = rows of
connections.parquet = conn.log lines = the model's count = the report's composition.

The traces are in the repository (datasets/public).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from public_datasets import public_dataset
from support import LINK_10G_LOAD_90
from support import tracelab_ok as tracelab

REPO = Path(__file__).resolve().parents[1]
TRACES = ["real/pcapplusplus/example.pcap", "real/ndpi/netflix.pcap"]


@pytest.fixture(scope="module", params=TRACES)
def path(request, tmp_path_factory):
    trace = public_dataset(request.param)
    from tracelab.parts import analyzer_binary

    if analyzer_binary() is None:
        pytest.fail("the analyzer is not built (make build)")
    out = tmp_path_factory.mktemp(Path(request.param).stem)
    tracelab(
        "profile", str(trace), "--local", "10.0.0.0/8,192.168.0.0/16", "-o", "p", "--quiet", "--no-progress", cwd=out
    )
    # Remote hosts are instances too: a trace seen from a client has its servers outside.
    tracelab("roles", "train", "p", "--all-hosts", "-o", "roles.json", cwd=out)
    tracelab("roles", "apply", "roles.json", "p", "--all-hosts", "--min-connections", "0", "-o", "roles.csv", cwd=out)
    tracelab(
        "profile",
        str(trace),
        "--local",
        "10.0.0.0/8,192.168.0.0/16",
        "--roles",
        "roles.json",
        "-o",
        "pr",
        "--quiet",
        "--no-progress",
        cwd=out,
    )
    tracelab("model", "derive", "p", "-o", "m.model.json", cwd=out)
    efd = "efd(capacity=300,th=30000)"
    tracelab("replay", "run", "--pcap", str(trace), "--element", efd, *LINK_10G_LOAD_90, "-o", "r", "-q", cwd=out)
    tracelab("report", "p", "r", "-o", "rep", cwd=out)
    return trace, out


def _summary(out):
    return json.loads((out / "p" / "summary.json").read_text())


def test_packets_and_bytes_flow_from_profile_to_replay(path):
    _, out = path
    s = _summary(out)
    conns = pq.read_table(out / "p" / "connections.parquet").to_pydict()
    pk = s["packets"]
    assert pk["read"] == pk["decoded"] + pk["skipped_total"] and pk["read"] > 1000
    assert sum(conns["orig_pkts"]) + sum(conns["resp_pkts"]) == pk["decoded"]
    metrics = json.loads((out / "r" / "metrics.json").read_text())
    o = metrics["overall"]
    # Every frame of these traces is IPv4 over Ethernet: the engine offers what the analyzer read.
    assert pk["skipped_total"] == 0
    assert o["offered"] == pk["read"]
    assert o["offered_bytes"] == sum(conns["orig_ip_bytes"]) + sum(conns["resp_ip_bytes"])
    assert o["offered"] == o["delivered"] + o["dropped_total"] + o["queued_end"]


def test_connections_flow_from_profile_to_model_and_report(path):
    trace, out = path
    s = _summary(out)
    n = s["connections"]["total"]
    assert n == pq.read_table(out / "p" / "connections.parquet").num_rows
    log = (out / "p" / "conn.log").read_text().splitlines()
    assert n == sum(1 for line in log if line and not line.startswith("#"))
    model = json.loads((out / "m.model.json").read_text())
    assert model["flows"]["connections"] == n
    assert model["provenance"]["source_trace"] == str(trace)
    assert model["provenance"]["profile_dir"] == "p"
    # Packet-size histograms of the model: every packet of intranet/internet connections.
    scoped = sum(c["packets"] for scope in ("intranet", "internet") for c in s["composition"].get(scope, {}).values())
    hist = sum(
        sum(model["apps"][sc][side]["packet_size_bytes"]["counts"])
        for sc in ("intranet", "internet")
        for side in ("orig", "resp")
    )
    assert hist == scoped > 0
    # The report shows the profile's packet counts and composition rows.
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (out / "rep" / "index.html").read_text()))
    assert f"read {s['packets']['read']} decoded {s['packets']['decoded']}" in text
    for scope, cats in s["composition"].items():
        for cat, c in cats.items():
            assert f"{scope} {cat} {c['cnxs']} {c['packets']} {c['bytes']} " in text, (scope, cat)
    assert sum(c["cnxs"] for cats in s["composition"].values() for c in cats.values()) <= n
    # The replay section names the run and its offered packets.
    offered = json.loads((out / "r" / "metrics.json").read_text())["overall"]["offered"]
    assert "Replay run: r" in text and str(offered) in text


def test_roles_cover_every_host_and_agree_with_the_analyzer(path):
    _, out = path
    hosts = pq.read_table(out / "p" / "hosts.parquet").to_pydict()
    rows = list(csv.DictReader((out / "roles.csv").open()))
    assert sorted(r["host"] for r in rows) == sorted(hosts["host"])
    # The analyzer applying the same model predicts the same role for every host.
    applied = pq.read_table(out / "pr" / "hosts.parquet").to_pydict()
    predicted = dict(zip(applied["host"], applied["role"], strict=True))
    assert len(predicted) == len(rows)
    for r in rows:
        assert predicted[r["host"]] == ("server" if r["server"] == "1" else "client"), r
    assert sum(1 for r in rows if r["server"] == "1") + sum(1 for r in rows if r["client"] == "1") == len(rows)


# ------------------------------------------------- the lab compose file (no Docker here)


def test_lab_compose_file_is_valid_and_wired():
    """docker-compose.lab.yml is not run here (no Docker engine): its YAML, its wiring
    and its pins are what can be checked."""
    import yaml

    lab = yaml.safe_load((REPO / "docker-compose.lab.yml").read_text())
    services = lab["services"]
    assert set(services) == {"trex", "dut", "controller"}
    for name, svc in services.items():
        image = svc["image"]
        assert re.fullmatch(r"[\w./-]+:[\w.-]+", image) and not image.endswith(":latest"), image
        froms = re.findall(r"^FROM (\S+)", svc["build"]["dockerfile_inline"], re.M)
        assert froms and all(":" in f and not f.endswith(":latest") for f in froms), (name, froms)
        for cfg in svc.get("configs", []):
            assert cfg["source"] in lab["configs"]
    assert services["dut"]["depends_on"] == ["trex"] and set(services["controller"]["depends_on"]) == {"trex", "dut"}
    # The DUT and the controller start from the image of the top-level Dockerfile.
    for name in ("dut", "controller"):
        assert services[name]["build"]["dockerfile_inline"].startswith("FROM tracelab:0.1.0")
    assert re.search(r"git checkout -q [0-9a-f]{40}", services["dut"]["build"]["dockerfile_inline"])
    assert services["dut"]["command"] == ["click", "/lab/dut.click"]
    assert 'require(package "tracelab")' in lab["configs"]["dut_click"]["content"]
    assert "TLExactUnqueue(RATE 10000000000)" in lab["configs"]["dut_click"]["content"]
    script = services["controller"]["command"][-1]
    for step in ("tracelab profile", "tracelab model derive", "tracelab replay trex stl", "tracelab replay trex run"):
        assert step in script
    # The TRex config it mounts is itself YAML (TRex's list of one platform entry).
    trex_cfg = yaml.safe_load(re.sub(r"\$\{(\w+):[?-][^}]*\}", r"\1", lab["configs"]["trex_cfg"]["content"]))
    assert trex_cfg[0]["version"] == 2 and len(trex_cfg[0]["interfaces"]) == 2
    # The options the controller passes are the front door's.
    for sub, options in (
        ("stl", ("--rate", "--load", "--budget", "-o")),
        ("run", ("--server", "--ports", "--duration", "-o")),
    ):
        helptext = tracelab("replay", "trex", sub, "--help", cwd=REPO)
        for opt in options:
            assert opt in script and re.search(rf"(^|\s|,){re.escape(opt)}[ ,=\n]", helptext), (sub, opt)
