"""JumboGen in closed loop (E-JG-0..5, tracelab.replay.experiments.jumbogen_closed): the ns-3 edges
(click-elements/ns3/model/tl-jumbogen-edge.hh) end to end in tl-ns3-jumbogen, and the quick experiments.
The ns-3 parts run only when `make ns3` has built tl-ns3-jumbogen. E-JG-6 (jumbogen_trace) on a
hand-written pcap, by hand."""

from __future__ import annotations

import csv
import json
import struct
import subprocess

import pytest
from tracelab.replay.experiments import jumbogen_closed as jc
from tracelab.replay.experiments import jumbogen_trace as jt
from tracelab.replay.experiments.cli import main as experiments_main
from tracelab.replay.experiments.outcome import Context
from tracelab.replay.experiments.registry import EXPERIMENTS

NS3_SKIP = pytest.mark.skipif(jc.jumbogen_binary() is None, reason=f"ns-3 not built: {jc.JG_MISSING}")
JG = ["E-JG-0", "E-JG-1", "E-JG-2", "E-JG-3", "E-JG-4", "E-JG-5"]


def test_quick_variants_fit_the_ci_budget():
    # ≤ 40 s of CPU each on 2 jobs: the estimate is CPU / 2.
    for i in JG:
        assert EXPERIMENTS[i].est_quick_s <= 20, i


def test_the_trace_study_without_a_trace_is_skipped_with_a_reason():
    assert EXPERIMENTS["E-JG-6"].run is jt.e_jg_6
    o = jt.e_jg_6((8,), Context())
    assert o.title.startswith("SKIPPED") and not o.checks
    assert o.notes and o.notes[0].startswith("SKIPPED: ") and "--trace" in o.notes[0]


def ipv4_frame(dst: tuple[int, int, int, int], ip_length: int, sport: int) -> bytes:
    """Ethernet + IPv4 + UDP headers of an `ip_length`-byte packet from 10.0.0.1, cut after the UDP header."""
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_length, 0, 0, 64, 17, 0, bytes([10, 0, 0, 1]), bytes(dst))
    udp = struct.pack("!HHHH", sport, 53, ip_length - 20, 0)
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + udp


def write_pcap(path, frames):
    """Classic pcap, nanosecond timestamps: frames = [(t_ns, frame bytes, wire length)]."""
    out = [struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)]
    for t, frame, wire in frames:
        out.append(struct.pack("<IIII", t // 10**9, t % 10**9, len(frame), wire) + frame)
    path.write_bytes(b"".join(out))


def test_trace_study_by_hand(tmp_path):
    # 2 s of trace: to 20.x.x.x three packets within 1 ms, then one alone at 1.5 s; to 30.1.1.1 one packet.
    # JFET 5 ms: grams {3 packets} and {1} to 20/8, {1} to 30/8 -> 3 JumboGrams for 5 packets.
    ms = 10**6
    frames = [
        (0, ipv4_frame((20, 1, 1, 1), 1000, 1), 1014),
        (1 * ms // 2, ipv4_frame((20, 2, 2, 2), 500, 2), 514),
        (1 * ms, ipv4_frame((20, 1, 1, 1), 1500, 1), 1514),
        (1500 * ms, ipv4_frame((20, 1, 1, 1), 100, 1), 114),
        (2000 * ms, ipv4_frame((30, 1, 1, 1), 200, 3), 214),
    ]
    pcap = tmp_path / "t.pcap"
    write_pcap(pcap, frames)
    o = jt.e_jg_6((8,), Context(trace=pcap))
    rows = {r[0]: r for r in o.rows}
    assert rows["No JumboGen"][1].startswith("0.002 ")  # 5 frames over 2 whole seconds
    jfet5 = rows["JFET 5 ms, /8"]
    assert jfet5[1].startswith("0.001 ")  # 3 JumboGrams over 2 s (1.5)
    # Waits: 5, 4.5, 4 ms in the first gram, 5 and 5 ms alone: mean 4.7 ms.
    assert jfet5[3].startswith("4.70 ")
    # Saved = -(cost(3) + 2 cost(1)) = -((20 + 6 + 12 - 76) + 2 (20 + 6 + 4)) = 38 - 60 = -22 B over 2 s.
    assert jfet5[4].startswith(f"{-22 * 8 / 2.0 / 1e6:.3f} ")
    checks = {c.name: c for c in o.checks}
    assert checks["JFET 5 ms, /8: the bytes saved are the physical headers the cost formula counts"].held
    assert checks["JFET 5 ms, /8: QTime ≤ JFET"].held
    delay = checks["JFET 5 ms, /8: added delay ≈ JFET/2 (early release when full)"]
    assert not delay.held and "one packet" in delay.why


def test_trace_study_refuses_a_bad_trace_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a pcap at all, not even close")
    assert experiments_main(["run", "E-JG-6", "--trace", str(bad), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a classic pcap" in err
    assert experiments_main(["run", "E-JG-6", "--trace", str(tmp_path / "none.pcap"), "-o", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err


def run_binary(tmp_path, name, *args):
    out = tmp_path / name
    subprocess.run([str(jc.jumbogen_binary()), *args, "--duration=3", f"--out={out}"], check=True, capture_output=True)
    with open(out / "flows.csv", newline="") as f:
        flows = list(csv.DictReader(f))
    return json.loads((out / "summary.json").read_text()), flows


@pytest.fixture(scope="module")
def edge_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jumbogen")
    return {
        "standard": run_binary(tmp, "standard", "--variant=standard"),
        "pd": run_binary(tmp, "pd", "--variant=pd"),
        "pd-no-es": run_binary(tmp, "pd-no-es", "--variant=pd", "--es=0"),
        "pd-early": run_binary(tmp, "pd-early", "--variant=pd", "--early=1"),
    }


@NS3_SKIP
def test_jumbograms_cross_the_core_and_are_split_at_the_far_edge(edge_runs):
    s, _ = edge_runs["pd"]
    for e in s["egress"]:
        assert e["jumbograms"] > 0 and e["malformed"] == 0 and e["unroutable"] == 0 and e["dropped"] == 0
    for i in s["ingress"]:
        assert i["jumbograms"] > 0 and i["oversize"] == 0 and i["no_queue"] == 0
    # What C1's RED cut from carried JumboGrams the right egresses find missing: not more (C1 is the only
    # router cutting on that path), and less only by the cut JumboGrams dropped whole later or in flight.
    cut = s["core"]["partial_dropped"]
    missing = sum(e["missing"] for e in s["egress"] if e["edge"].startswith("R"))
    assert 0 < cut and 0.95 * cut <= missing <= cut
    encapsulated = sum(i["encapsulated"] for i in s["ingress"])
    split = sum(e["packets"] + e["missing"] for e in s["egress"])
    assert 0 <= encapsulated - split <= 0.02 * encapsulated
    # Fewer, larger packets on the core link than without JumboGen.
    std, _ = edge_runs["standard"]
    assert s["core"]["packets_per_s"] * 4 <= std["core"]["packets_per_s"]
    assert std["core"].get("jumbograms", 0) == 0


@NS3_SKIP
def test_qtime_and_the_added_delay_respect_the_jfet(edge_runs):
    jfet = 1e-3
    held, _ = edge_runs["pd"]
    # Full JumboGrams held until the JFET (⚠AMB-14 default): every QTime is the JFET.
    for i in held["ingress"]:
        assert i["qtime_max_s"] == pytest.approx(jfet) and i["qtime_mean_s"] == pytest.approx(jfet)
        assert 0 < i["wait_mean_s"] <= jfet
    # Shaping holds a packet at the egress for at most QTime; without it nothing waits.
    for e in held["egress"]:
        assert 0 < e["hold_mean_s"] <= jfet
    no_es, _ = edge_runs["pd-no-es"]
    assert all(e["hold_mean_s"] == 0 for e in no_es["egress"])
    # Early release when full: QTime never above the JFET, below it on average where grams fill up.
    early, _ = edge_runs["pd-early"]
    filled = [i for i in early["ingress"] if i["full_closes"]]
    assert filled and all(i["qtime_max_s"] <= jfet + 1e-12 for i in early["ingress"])
    assert all(i["qtime_mean_s"] < jfet for i in filled)


@NS3_SKIP
def test_udp_sources_offer_the_same_traffic_whatever_the_variant(edge_runs):
    def sent(flows):
        return [(f["flow"], f["sent"]) for f in flows if f["class"] in ("cbr", "vbr")]

    ref = sent(edge_runs["standard"][1])
    assert ref and all(int(n) > 0 for _, n in ref)
    for name in ("pd", "pd-no-es", "pd-early"):
        assert sent(edge_runs[name][1]) == ref, name


@NS3_SKIP
def test_bad_arguments_are_one_line_and_exit_2(tmp_path):
    proc = subprocess.run(
        [str(jc.jumbogen_binary()), "--variant=bogus", f"--out={tmp_path}"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("tl-ns3-jumbogen: ")


@pytest.fixture(scope="module")
def jg_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("jg")
    assert experiments_main(["run", *JG, "--quick", "-o", str(out)]) in (0, 1)
    return {i: json.loads((out / i / "result.json").read_text()) for i in JG}


def verdicts(result, prefix):
    matching = [c["verdict"] for c in result["checks"] if c["name"].startswith(prefix)]
    assert matching, f"no check {prefix!r}"
    return matching


@NS3_SKIP
def test_frame_size_run_follows_its_router_model(jg_results):
    # E-JG-1: every check held, the 128-B loss at the published 25 % the cost was chosen for.
    r = jg_results["E-JG-1"]
    assert all(c["verdict"] == "held" for c in r["checks"])
    assert r["table"]["rows"][0][3].startswith("25.0 ")


@NS3_SKIP
def test_setup_and_shaping_checks_hold_at_the_quick_scale(jg_results):
    assert all(c["verdict"] == "held" for c in jg_results["E-JG-0"]["checks"])
    assert verdicts(jg_results["E-JG-3"], "ES gives the lowest jitter") == ["held"]
    assert verdicts(jg_results["E-JG-3"], "ES costs delay") == ["held"]
    assert verdicts(jg_results["E-JG-4"], "core packet count decreases") == ["held"]
    assert verdicts(jg_results["E-JG-5"], "utilisation falls monotonically") == ["held"]
    for i in JG:
        assert jg_results[i]["tools"]["ns3"].startswith("3.44"), i
