"""Workload-model derivation: Tables 9.1/9.2 arithmetic, apps distributions, schema checks."""

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from fixtures import public_dataset, write_profile
from tracelab_models import workload
from tracelab_models.profile import ProfileError

ANALYZER = Path(__file__).resolve().parents[2] / "analyzer" / "target" / "release" / "tracelab-analyzer"


def _conn(scope, up, down, rtt, uid, well=True, **kw):
    return {
        "uid": uid,
        "scope": scope,
        "orig_bytes": up,
        "resp_bytes": down,
        "well_behaved": well,
        "rtt_data_ack_s": rtt,
        "rtt_handshake_s": rtt,
        "proto": "tcp",
        **kw,
    }


def _thesis_profile(tmp_path):
    """Byte volumes and RTTs chosen so the shares are Table 9.1 and the RTTs 1 ms / 100 ms."""
    conns = [
        _conn("intranet", 450_000, 450_000, 0.0008, "A", orig_pacing_per_pkt_s=0.002, resp_pacing_per_pkt_s=0.0),
        _conn("intranet", 0, 0, None, "B"),  # immature: no payload
        _conn("intranet", 0, 0, 0.0012, "C"),
        _conn("internet", 10_000, 90_000, 0.100, "D", orig_pacing_per_pkt_s=0.0, resp_pacing_per_pkt_s=0.01),
        _conn("internet", 0, 0, 0.300, "E", well=False),  # not well-behaved: no RTT
        _conn("external", 5_000_000, 0, 0.5, "F"),  # neither end local
    ]
    for i, c in enumerate(conns):
        c["ts"] = [0.0, 0.5, 1.5, 3.5, 7.5, 15.5][i]
    # Samples name their connection by row in connections.parquet: A = 0, D = 3.
    warm = [
        {"conn": 0, "side": "orig", "train": 1, "warmup_s": 0.0},
        {"conn": 0, "side": "resp", "train": 2, "warmup_s": 0.004},
        {"conn": 3, "side": "resp", "train": 2, "warmup_s": 0.02},
    ]
    trains = [
        {"conn": 0, "side": "orig", "train": 1, "size_pkts": 1},
        {"conn": 0, "side": "orig", "train": 3, "size_pkts": 1},
        {"conn": 3, "side": "resp", "train": 2, "size_pkts": 40},
    ]
    sizes = [
        {"side": "orig", "scope": "intranet", "ip_len": 52, "count": 10},
        {"side": "orig", "scope": "intranet", "ip_len": 1500, "count": 3},
        {"side": "resp", "scope": "internet", "ip_len": 1500, "count": 70},
    ]
    return write_profile(
        tmp_path / "p",
        conns,
        warmups=warm,
        trains=trains,
        packet_sizes=sizes,
        summary={"trace": {"path": "thesis.pcap"}, "tool": {"version": "0.1.0"}},
    )


def test_tables_9_1_and_9_2(tmp_path):
    m = workload.derive(_thesis_profile(tmp_path))
    topo, legacy = m["topological"], m["legacy"]
    assert topo["shares"] == {
        "intranet": {"download": pytest.approx(0.45), "upload": pytest.approx(0.45)},
        "internet": {"download": pytest.approx(0.09), "upload": pytest.approx(0.01)},
    }
    assert legacy["shares"] == {"download": pytest.approx(0.54), "upload": pytest.approx(0.46)}
    assert topo["rtt_s"]["intranet"] == {"n": 2, "mean": pytest.approx(0.001), "median": pytest.approx(0.001)}
    assert topo["rtt_s"]["internet"]["mean"] == pytest.approx(0.100) and topo["rtt_method"] == "data-ack"
    # Table 9.2: 12-w = 0.5 ms, 12-v = 50 ms, legacy 12-y = (0.9 x 1 + 0.1 x 100) / 2 = 5.45 ms.
    assert topo["link_delays_s"] == {
        "x-11": 0.0,
        "11-12": 0.0,
        "12-w": pytest.approx(0.0005),
        "12-v": pytest.approx(0.050),
    }
    assert legacy["rtt_s"] == pytest.approx(0.0109)
    assert legacy["link_delays_s"]["12-y"] == pytest.approx(0.00545)


def test_apps_flows_and_provenance(tmp_path):
    m = workload.derive(_thesis_profile(tmp_path))
    intra, inter = m["apps"]["intranet"], m["apps"]["internet"]
    assert intra["orig"]["train_size_pkts"] == {"values": [1.0], "counts": [2]}
    assert inter["resp"]["train_size_pkts"] == {"values": [40.0], "counts": [1]}
    assert intra["resp"]["warmup_s"]["n"] == 1 and intra["resp"]["warmup_s"]["mean"] == pytest.approx(0.004)
    assert intra["orig"]["pacing_per_pkt_s"]["mean"] == pytest.approx(0.002)
    assert intra["orig"]["packet_size_bytes"] == {"values": [52.0, 1500.0], "counts": [10, 3]}
    assert inter["orig"]["packet_size_bytes"] == {"values": [], "counts": []}
    # inter-arrivals 0.5, 1, 2, 4, 8 s; flow sizes of the 3 connections with payload
    assert m["flows"]["interarrival_s"]["n"] == 5
    assert m["flows"]["size_bytes"]["n"] == 3 and m["flows"]["size_bytes"]["best"] is not None
    assert m["provenance"]["source_trace"] == "thesis.pcap"
    assert m["provenance"]["parameters"]["rtt_method"] == "data-ack"


def test_save_load_validates(tmp_path):
    m = workload.derive(_thesis_profile(tmp_path))
    path = tmp_path / "trace.model.json"
    workload.save(m, path)
    assert workload.load(path) == json.loads(path.read_text())
    bad = dict(m, version=2)
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"trace\.model\.json: invalid workload model at version"):
        workload.load(path)
    m["topological"]["shares"]["intranet"]["download"] = 1.5
    with pytest.raises(ValueError, match="topological/shares/intranet/download"):
        workload.save(m, path)


def test_sample_naming_no_connection_is_a_clear_error(tmp_path):
    conns = [_conn("intranet", 10, 10, 0.001, "A")]
    p = write_profile(tmp_path / "p", conns, trains=[{"conn": 1, "side": "orig", "train": 1, "size_pkts": 2}])
    with pytest.raises(ProfileError, match=r"trains.parquet: conn 1 is not a row of connections.parquet \(1 rows"):
        workload.derive(p)


def test_no_local_traffic_is_a_clear_error(tmp_path):
    p = write_profile(tmp_path / "p", [_conn("external", 100, 100, 0.01, "X")])
    with pytest.raises(ProfileError, match="--local"):
        workload.derive(p)


@pytest.mark.parametrize("trace", ["zeek-baselines/wikipedia/wikipedia.pcap", "real/tcpreplay/test.pcap"])
def test_derive_on_public_real_trace(tmp_path, trace):
    if not ANALYZER.exists():
        pytest.skip(f"SKIPPED (analyzer not built: {ANALYZER}; cargo build --release in analyzer/)")
    path = public_dataset(trace)
    out = tmp_path / "profile"
    # Private (RFC 1918) and link-local space is the enterprise in these public traces.
    subprocess.run(
        [
            str(ANALYZER),
            str(path),
            "-o",
            str(out),
            "-q",
            "--local",
            "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fe80::/10",
        ],
        check=True,
    )
    m = workload.derive(out)
    workload.save(m, tmp_path / "trace.model.json")
    shares = m["topological"]["shares"]
    total = sum(v for s in shares.values() for v in s.values())
    assert total == pytest.approx(1.0)
    assert m["flows"]["connections"] > 0


def test_traffic_section_counts_what_the_profile_holds(tmp_path):
    """The `traffic` section against the profile it came from: connections per class
    and state, bytes per direction, services, hosts, duration and --local."""
    import json

    import pyarrow.parquet as pq

    if not ANALYZER.exists():
        pytest.skip(f"SKIPPED (analyzer not built: {ANALYZER}; cargo build --release in analyzer/)")
    trace = Path(__file__).resolve().parents[2] / "datasets" / "real" / "pcapplusplus-example.pcap"
    out = tmp_path / "p"
    subprocess.run([str(ANALYZER), str(trace), "-o", str(out), "-q", "--local", "10.0.0.0/8"], check=True)
    tr = workload.derive(out)["traffic"]
    c = pq.read_table(out / "connections.parquet").to_pydict()
    summary = json.loads((out / "summary.json").read_text())
    assert tr["duration_s"] == summary["trace"]["duration_s"] and tr["local"] == ["10.0.0.0/8"]
    assert tr["connections"] == len(c["ts"]) == sum(tr["by_proto"].values())
    for name, entry in tr["classes"].items():
        scope, proto = name.split("/")
        rows = [i for i in range(len(c["ts"])) if c["scope"][i] == scope and c["proto"][i] == proto]
        assert entry["connections"] == len(rows) == sum(entry["synth_states"].values())
        assert sum(entry["states"].values()) == len(rows)
        assert entry["bytes"]["orig"] == sum(c["orig_bytes"][i] or 0 for i in rows)
        assert sum(s["connections"] for s in entry["services"]) + entry["other_services"]["connections"] == len(rows)
        # The detected service, or the responder's proto/port where none was (`-`).
        svc = Counter(c["service"][i] or f"{proto}/{c['id.resp_p'][i]}" for i in rows)
        assert {s["service"]: s["connections"] for s in entry["services"]} == dict(svc.most_common(len(svc)))
        for group in entry["groups"].values():
            for rep in group["variables"].values():
                assert rep["chosen"] == "empirical" or rep["gof"]["passed"]
                assert (rep["table"] is not None) == (rep["chosen"] == "empirical")
    # The bundled trace's DNS and HTTP are named as detected, not by port.
    names = {s["service"] for entry in tr["classes"].values() for s in entry["services"]}
    assert {"dns", "http"} <= names
    h = pq.read_table(out / "hosts.parquet").to_pydict()
    local = [i for i in range(len(h["host"])) if h["local"][i]]
    assert tr["hosts"]["local"]["clients"] == sum(1 for i in local if h["outcnx"][i] > 0)
    assert tr["hosts"]["local"]["servers"] == sum(1 for i in local if h["server"][i])
    assert sum(tr["hosts"]["local"]["multiplicity"]) == tr["hosts"]["local"]["hosts"] == len(local)
