"""`tracelab replay ns3`: a workload model's connections as real ns-3 TCP/UDP.

Oracles, none of them the code under test:
* conservation: every scheduled connection is in the simulator's output,
  completed with exactly its bytes or reported unfinished; the bottleneck's
  per-packet rows add up to ns-3's own queue-disc counters (checked by the
  reader, which exits 5 otherwise) and to the classes' totals;
* the slow-start closed form: one connection, a 100-byte request, a
  15-segment response over an RTT of 100 ms, every segment ACKed (no delayed
  ACK), initial window w: flights w, 2w, 4w, ... ([003 §5.2] Eq. 5.10 without
  delayed ACKs). The response is complete after the handshake (1 RTT), the
  request (1/2), r - 1 round trips and the last flight's one-way trip (1/2),
  plus the serialization that each round adds to the path (a segment at the
  bottleneck, t_b, and one on each access link, 2 t_a) and the last flight's
  w_r segments at the bottleneck: T = (r + 1) RTT + (r - 1 + w_r) t_b + 2 r t_a,
  to within one segment time t_b (the small packets' serialization);
* the schedule's byte shares per scope against the model's (Table 9.1).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_model_source import make_model
from tracelab.replay import ns3
from tracelab.replay.cli import main

pytestmark = pytest.mark.skipif(ns3.binary() is None, reason="ns-3 adapters not built (make ns3)")

SEG = 1448
T_B = 1502 * 8 / 10e6  # a full segment on the 10 Mb/s bottleneck (IP + 2-byte PPP header)
T_A = 1502 * 8 / 100e6  # ... on a 100 Mb/s access link


def tiny_model():
    m = make_model()
    m["flows"]["interarrival_s"]["fits"] = [
        {
            "family": "exponential",
            "params": {"scale": 0.02},
            "log_likelihood": 0.0,
            "ks_d": 0.01,
            "ks_p": 0.5,
            "qq_log10_rms": 0.1,
        }
    ]
    m["flows"]["interarrival_s"]["best"] = "exponential"
    m["topological"]["rtt_s"]["internet"] = {"n": 5, "mean": 0.02, "median": 0.02}
    m["topological"]["link_delays_s"]["12-v"] = 0.01
    return m


@pytest.fixture
def model_path(tmp_path):
    p = tmp_path / "tiny.model.json"
    p.write_text(json.dumps(tiny_model()))
    return p


@pytest.mark.parametrize(
    ("element", "transfer"),
    [("fifo(capacity=30)", "apps"), ("efd(capacity=30, th=3000)", "apps"), ("fifo(capacity=30)", "udp")],
)
def test_tiny_replay_conserves_connections_and_packets(model_path, tmp_path, element, transfer):
    out = tmp_path / "out"
    rc = main(
        [
            "ns3",
            str(model_path),
            "--element",
            element,
            "--rate",
            "10M",
            "--load",
            "1.2",
            "--duration",
            "2s",
            "--drain",
            "20s",
            "--seed",
            "3",
            "--transfer",
            transfer,
            "-o",
            str(out),
            "-q",
        ]
    )
    assert rc == 0
    m = json.loads((out / "metrics.json").read_text())
    assert m["schema"] == "tracelab.replay.metrics"
    assert m["simulator"]["ns3_version"] and m["config"]["seed"] == 3
    c = m["connections"]
    sched = ns3._read_csv(out / "schedule.csv")
    assert c["scheduled"] == len(set(sched["conn"])) > 20
    assert c["completed"] + c["unfinished"] == c["scheduled"]
    conns = ns3._read_csv(out / "ns3" / "connections.csv")
    sizes = {}
    for conn, side, nbytes in zip(sched["conn"], sched["side"], sched["bytes"], strict=True):
        sizes.setdefault(int(conn), [0, 0])[int(side)] += int(nbytes)
    for i, done in enumerate(conns["completion_s"]):
        got = [int(conns["delivered_orig"][i]), int(conns["delivered_resp"][i])]
        assert [int(conns["bytes_orig"][i]), int(conns["bytes_resp"][i])] == sizes[i]
        if done:
            assert got == sizes[i]
        else:
            assert got[0] <= sizes[i][0] and got[1] <= sizes[i][1] and got != sizes[i]
    # Overloaded (load 1.2 on a 30-packet buffer): the element dropped packets.
    o = m["overall"]
    assert o["dropped_total"] > 0 and o["queued_end"] == 0
    if transfer == "udp":
        # Nothing is resent: the payload missing at the receivers is the dropped
        # datagrams' (IP bytes - 28), the only place a datagram is lost.
        missing = sum(sum(sizes[i]) for i in sizes) - c["bytes_delivered"]
        assert missing == o["offered_bytes"] - o["delivered_bytes"] - 28 * o["dropped_total"] > 0
        assert c["udp"] == c["scheduled"] and c["unfinished"] > 0
    else:  # TCP recovered
        assert c["tcp"] == c["scheduled"] and c["completed"] > 0.9 * c["scheduled"]
    # EFD pushes queued packets out: ns-3 reports those as dequeued, then dropped.
    assert (o["dropped"]["pushed_out"] > 0) == element.startswith("efd")
    assert o["offered"] == sum(k["offered"] for k in m["classes"]) == sum(n["offered"] for n in m["nodes"])
    assert o["offered"] == o["delivered"] + o["dropped_total"] + o["queued_end"]
    assert sum(k["response_time"]["connections"] for k in m["classes"]) == c["scheduled"]
    assert sum(k["connections"] for k in m["size_classes"]) == c["scheduled"]


def test_same_seed_same_schedule_and_shares():
    model = tiny_model()
    a = ns3.draw_schedule(model, duration=20.0, seed=5, rate_bps=10e6, load=0.5)
    b = ns3.draw_schedule(model, duration=20.0, seed=5, rate_bps=10e6, load=0.5)
    assert a.trains == b.trains and (a.start == b.start).all()
    sizes = np.array([sum(x for _, x, _ in t) for t in a.trains])
    up = np.array([sum(x for s, x, _ in t if s == 0) for t in a.trains])
    shares = model["topological"]["shares"]
    total = sum(v for sh in shares.values() for v in sh.values())
    for k, scope in enumerate(ns3.SCOPES):
        sel = a.scope == k
        # Scopes are drawn per connection with the byte shares as probabilities.
        p = (shares[scope]["download"] + shares[scope]["upload"]) / total
        assert abs(sel.mean() - p) <= 4 * (p * (1 - p) / len(sel)) ** 0.5
        want_up = shares[scope]["upload"] / (shares[scope]["download"] + shares[scope]["upload"])
        assert up[sel].sum() / sizes[sel].sum() == pytest.approx(want_up, abs=0.01)
    legacy = ns3.draw_schedule(model, duration=20.0, seed=5, rate_bps=10e6, load=0.5, view="legacy")
    assert (legacy.start == a.start).all() and (legacy.client == a.client).all()
    # intranet connections go to servers 0-4, Internet ones to 5-9
    assert ((a.server < 5) == (a.scope == 0)).all()


@pytest.mark.parametrize("iw", [1, 10])
def test_one_connection_completes_as_slow_start_says(tmp_path, iw):
    rtt = 0.1
    n = 15
    sched = ns3.Schedule(
        start=np.array([0.1]),
        scope=np.array([1]),
        client=np.array([0]),
        server=np.array([7]),
        udp=np.array([False]),
        trains=[[(0, 100, 0.0), (1, n * SEG, 0.0)]],
        delays={"x-11": 0.0, "11-12": 0.0, "12-w": 0.0005, "12-v": rtt / 2},
    )
    setup = ns3.Setup(
        "fifo",
        10_000_000,
        5.0,
        1,
        "topological",
        "apps",
        {n: None for n in ns3.class_names("topological")},
        ("--ns3::TcpSocket::DelAckCount=1", f"--ns3::TcpSocket::InitialCwnd={iw}"),
    )
    wall = ns3.simulate(sched, setup, tmp_path)
    m = ns3.metrics(sched, setup, tmp_path / "ns3", wall)
    assert m["simulator"]["initial_cwnd_segments"] == iw and m["simulator"]["delayed_ack_count"] == 1
    flights, left, w = [], n, iw
    while left > 0:
        flights.append(min(w, left))
        left -= w
        w *= 2
    r = len(flights)
    closed = (r + 1) * rtt + (r - 1 + flights[-1]) * T_B + 2 * r * T_A
    got = m["overall"]["response_time"]["mean_s"]
    assert m["connections"]["completed"] == 1 and m["overall"]["dropped_total"] == 0
    assert abs(got - closed) < T_B, (got, closed, flights)


def test_bad_element_and_missing_model_are_one_line_errors(model_path, tmp_path, capsys):
    assert main(["ns3", str(model_path), "--element", "efd(th=", "-o", str(tmp_path / "x"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tracelab: error:")
    assert main(["ns3", str(tmp_path / "none.json"), "-o", str(tmp_path / "y"), "-q"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none.json" in err[0]
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_unbuilt_simulator_is_a_usage_error(model_path, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRACELAB_NS3_MODEL_REPLAY", str(tmp_path / "absent"))
    assert main(["ns3", str(model_path), "-o", str(tmp_path / "z"), "-q"]) == 2
    assert "make ns3" in capsys.readouterr().err


def test_e_ths_16_table_model_is_a_valid_model_with_the_tables():
    from tracelab.replay.experiments.workload_models import table_model
    from tracelab_models.workload import validate

    m = table_model()
    validate(m, "E-THS-16 table model")
    sh = m["topological"]["shares"]
    assert sh["intranet"] == {"download": 0.45, "upload": 0.45}
    assert sh["internet"] == {"download": 0.09, "upload": 0.01}
    assert m["legacy"]["shares"] == {"download": 0.54, "upload": 0.46}
    d = m["topological"]["link_delays_s"]
    assert (d["12-w"], d["12-v"], m["legacy"]["link_delays_s"]["12-y"]) == (0.0005, 0.05, 0.00545)
    # The same seed gives the legacy and topological variants the same connections.
    a = ns3.draw_schedule(m, duration=5.0, seed=2, rate_bps=10e6, load=0.8, view="legacy", transfer="bulk")
    b = ns3.draw_schedule(m, duration=5.0, seed=2, rate_bps=10e6, load=0.8, view="topological", transfer="bulk")
    assert [sum(x for _, x, _ in t) for t in a.trains] == [sum(x for _, x, _ in t) for t in b.trains]
    assert a.delays["12-w"] == a.delays["12-v"] == 0.00545


def test_e_ths_16_quick_records_ns3_and_holds_the_tables(tmp_path):
    # The quick variant as CI runs it (about 55 s of CPU): every check has its
    # published value and tolerance; the tables' arithmetic and the drawn
    # shares hold (the S-checks are reported, not asserted here).
    from tracelab.replay.experiments.cli import main as experiments_main

    assert experiments_main(["run", "E-THS-16", "--quick", "-o", str(tmp_path)]) in (0, 1)
    r = json.loads((tmp_path / "E-THS-16" / "result.json").read_text())
    assert r["engine"] == "ns-3" and r["tools"]["ns3"].startswith("3.44")
    assert r["config"]["loads"] == {"underload": 0.8, "overload": 2.4}
    assert all(c["published"] is not None and c["tolerance"] for c in r["checks"])
    exact = [c for c in r["checks"] if c["name"].startswith(("Table 9.", "drawn "))]
    assert len(exact) == 10 and all(c["verdict"] == "held" for c in exact)
    rows = r["table"]["rows"]
    # Every bulk TCP connection completes within the drain (rows: model, load,
    # scheduler, connections, unfinished, ...; cells as written in the report).
    assert len(rows) == 25 and all(int(row[4]) == 0 for row in rows if row[0] != "apps/udp")


def test_packets_queued_at_the_end_are_counted_not_lost(model_path, tmp_path):
    # No drain after an overload: the bottleneck still holds packets when the run stops. ns-3
    # counts them (queued_at_end); they have no packet row, so no class, but the overall and
    # per-node figures include them and the conservation check holds instead of refusing the run.
    out = tmp_path / "out"
    args = ["ns3", str(model_path), "--element", "fifo(capacity=30)", "--rate", "10M", "--load", "1.2"]
    args += ["--duration", "2s", "--drain", "0s", "--seed", "3", "--transfer", "udp", "-o", str(out), "-q"]
    assert main(args) == 0
    m = json.loads((out / "metrics.json").read_text())
    o = m["overall"]
    summary = json.loads((out / "ns3" / "summary.json").read_text())
    queued = sum(summary["bottleneck"][d]["queued_at_end"] for d in ("upload", "download"))
    assert o["queued_end"] == queued > 0
    assert o["offered"] == o["delivered"] + o["dropped_total"] + o["queued_end"]
    assert o["offered"] == sum(k["offered"] for k in m["classes"]) + queued == sum(n["offered"] for n in m["nodes"])
    assert sum(n["queued_end"] for n in m["nodes"]) == queued


@pytest.mark.parametrize(
    ("element", "transfer", "load", "duration", "end"),
    [("las", "bulk", 2.4, 10.0, 30.0), ("fifo", "udp", 0.8, 5.0, 10.0)],
)
def test_freeing_finished_connections_endpoints_changes_no_output(tmp_path, element, transfer, load, duration, end):
    # The simulator frees a finished connection's endpoints (listener, sockets) once nothing
    # of it can arrive any more; --keepEndpoints keeps them all, as ns-3 alone would. A
    # release too early lets a late packet meet no endpoint (a RST, an ICMP error, a lost
    # datagram): the outputs would differ. LAS in overload starves connections for seconds.
    from tracelab.replay.experiments import workload_models as wm

    schedule = ns3.draw_schedule(
        wm.table_model(), duration=duration, seed=1, rate_bps=wm.RATE, load=load, view="topological", transfer=transfer
    )
    for keep in (False, True):
        extra = ("--keepEndpoints=true",) if keep else ()
        setup = ns3.Setup(element, wm.RATE, end, 1, "topological", transfer, {}, (*wm.THESIS_TCP, *extra))
        ns3.simulate(schedule, setup, tmp_path / str(keep))
    for name in ("connections.csv", "packets.csv", "summary.json"):
        assert (tmp_path / "False" / "ns3" / name).read_bytes() == (tmp_path / "True" / "ns3" / name).read_bytes()
