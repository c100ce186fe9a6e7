"""The synthetic pcap writer (tracelab.synth) against independent oracles:

* frames against bytes packed by hand with `struct` and checksums recomputed by a
  plain RFC 1071 loop;
* every connection the writer planned (its ground truth) against what the Rust
  analyzer measures in the pcap: bytes, trains, DATA-ACK RTT, pacing, states;
* tshark (no malformed packet, no expert error; its `tcp.analysis.ack_rtt` equals
  the planned round trips), tcpcapinfo and tcpreplay (tcpreplay's tools);
* the round trip model -> pcap -> profile -> model on the bundled real trace's model,
  with the tolerances stated in ROUND_TRIP below.
"""

from __future__ import annotations

import copy
import json
import shutil
import struct
import subprocess

import numpy as np
import pyarrow.parquet as pq
import pytest
from tracelab.parts import REPO_ROOT, analyzer_binary
from tracelab.synth import Options, SynthError, synthesize, write_pcap
from tracelab.synth import pcap as W
from tracelab.synth.cli import main as synth_main
from tracelab.synth.trace import flight, flights_rounds

BUNDLED = REPO_ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"
N_ROUND_TRIP = 2000


def _analyzer():
    binary = analyzer_binary()
    if binary is None:
        pytest.fail("the analyzer is not built (make build)")
    return binary


def profile(pcap, out):
    subprocess.run(
        [str(_analyzer()), str(pcap), "--local", "10.0.0.0/8", "-o", str(out), "--quiet", "--no-progress"], check=True
    )
    return out


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from tracelab_models.workload import derive

    return derive(profile(BUNDLED, tmp_path_factory.mktemp("bundled") / "p"))


@pytest.fixture(scope="module")
def synth(model, tmp_path_factory):
    """The round-trip trace: N_ROUND_TRIP connections of the bundled trace's model, with
    some UDP, profiled."""
    d = tmp_path_factory.mktemp("synth")
    trace = synthesize(model, Options(connections=N_ROUND_TRIP, seed=1, udp_share=0.1))
    write_pcap(trace, d / "s.pcap")
    return trace, d / "s.pcap", profile(d / "s.pcap", d / "p")


# ------------------------------------------------------------------ frames by hand


def rfc1071(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum((data[i] << 8) | data[i + 1] for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def render(cols: dict, snaplen: int, tmp_path) -> bytes:
    """The pcap records of `cols` as synth writes them (without the file header)."""
    W.write(tmp_path / "r.pcap", cols, snaplen)
    return (tmp_path / "r.pcap").read_bytes()[24:]


def test_tcp_frame_bytes_by_hand(tmp_path):
    cols = {
        "time_us": np.array([1_700_000_000_250_001]),
        "proto": np.array([W.TCP]),
        "src": np.array([0x0A030001]),
        "dst": np.array([0x30000002]),
        "sport": np.array([1024]),
        "dport": np.array([443]),
        "ip_len": np.array([40 + 10]),
        "ip_id": np.array([7]),
        "seq": np.array([0xFFFFFFF0]),
        "ack": np.array([5]),
        "flags": np.array([W.PSH | W.ACK]),
    }
    rec = render(cols, 65535, tmp_path)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 50, 7, 0x4000, 64, 6, 0, bytes([10, 3, 0, 1]), bytes([48, 0, 0, 2]))
    ip = ip[:10] + struct.pack(">H", rfc1071(ip)) + ip[12:]
    tcp = struct.pack(">HHIIBBHHH", 1024, 443, 0xFFFFFFF0, 5, 0x50, 0x18, 65535, 0, 0)
    pseudo = bytes([10, 3, 0, 1, 48, 0, 0, 2, 0, 6]) + struct.pack(">H", 30)
    tcp = tcp[:16] + struct.pack(">H", rfc1071(pseudo + tcp + bytes(10))) + tcp[18:]
    eth = bytes([2, 0, 48, 0, 0, 2, 2, 0, 10, 3, 0, 1, 8, 0])
    frame = eth + ip + tcp + bytes(10)
    assert rec == struct.pack("<IIII", 1_700_000_000, 250_001, 64, 64) + frame
    # Checksums verify: the one's-complement sum over header and checksum is 0xFFFF.
    assert rfc1071(ip) == 0 and rfc1071(pseudo + frame[34:]) == 0


def test_short_frames_padded_and_snaplen(tmp_path):
    cols = {
        "time_us": np.array([0, 1]),
        "proto": np.array([W.UDP, W.TCP]),
        "src": np.array([1, 2]),
        "dst": np.array([3, 4]),
        "sport": np.array([9, 10]),
        "dport": np.array([11, 12]),
        "ip_len": np.array([28, 1500]),
        "ip_id": np.array([0, 1]),
        "seq": np.array([0, 0]),
        "ack": np.array([0, 0]),
        "flags": np.array([0, W.ACK]),
    }
    rec = render(cols, 96, tmp_path)
    incl0, orig0 = struct.unpack_from("<II", rec, 8)
    assert (incl0, orig0) == (60, 60)  # 42-byte frame padded to Ethernet's 60
    udp = rec[16 + 34 : 16 + 42]
    assert struct.unpack(">HHHH", udp)[:3] == (9, 11, 8)
    incl1, orig1 = struct.unpack_from("<II", rec, 16 + 60 + 8)
    assert (incl1, orig1) == (96, 1514) and len(rec) == 16 + 60 + 16 + 96


def test_flights_match_eq_5_10():
    # Eq. 5.10 by floating point (exact for these small n) vs the integer form.
    for k in range(1, 30):
        assert flight(k) == int(2 ** ((k - 1) / 2) + 2 ** ((k - 2) / 2) + 1e-9)
    assert flights_rounds(np.array([0, 1, 2, 3, 4, 6, 7, 10, 11])).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4]


@pytest.mark.parametrize(
    "family,params",
    [
        ("pareto", {"alpha": 0.4171898528816121, "xm": 74.0}),
        ("lognormal", {"mu": -4.95, "sigma": 2.62}),
        ("weibull", {"shape": 0.34, "scale": 3292.6}),
    ],
)
def test_mean_preserving_cap_against_scipy_quadrature(family, params):
    from tracelab.synth.sampling import mean_preserving_cap
    from tracelab_models.distributions import frozen

    d = frozen(family, params)
    target = float(d.ppf(0.7))  # a mean every family here reaches below its tail
    cap = mean_preserving_cap(d, target, 1e12)
    # E[min(X, C)] = E[X; X < C] + C P(X >= C), by scipy's own quadrature.
    assert d.expect(lambda x: x, lb=0, ub=cap) + cap * d.sf(cap) == pytest.approx(target, rel=1e-4)
    # Draws: the sample mean of capped draws is the target.
    from tracelab.synth.sampling import draw_capped

    x = draw_capped(d, cap, 400_000, np.random.default_rng(5))
    assert x.max() == pytest.approx(cap) and x.mean() == pytest.approx(target, rel=0.03)


# ------------------------------------------------------------ ground truth vs analyzer


def _rows(profile_dir):
    t = pq.read_table(profile_dir / "connections.parquet").to_pydict()
    return {
        (t["proto"][i], t["id.orig_h"][i], t["id.orig_p"][i], t["id.resp_h"][i], t["id.resp_p"][i]): {
            k: v[i] for k, v in t.items()
        }
        for i in range(len(t["uid"]))
    }


def _ip(x):
    return ".".join(str((int(x) >> s) & 255) for s in (24, 16, 8, 0))


def test_analyzer_finds_every_planned_connection(synth):
    trace, _, pdir = synth
    truth = trace.connections
    rows = _rows(pdir)
    summary = json.loads((pdir / "summary.json").read_text())
    assert summary["packets"]["read"] == trace.summary["packets"] == summary["packets"]["decoded"]
    assert summary["packets"]["skipped_total"] == 0
    assert len(rows) == N_ROUND_TRIP
    checked_pacing = 0
    for i in range(N_ROUND_TRIP):
        key = (
            truth["proto"][i],
            _ip(truth["orig_h"][i]),
            int(truth["orig_p"][i]),
            _ip(truth["resp_h"][i]),
            int(truth["resp_p"][i]),
        )
        r = rows[key]
        assert (r["orig_bytes"], r["resp_bytes"]) == (truth["orig_bytes"][i], truth["resp_bytes"][i]), key
        assert r["scope"] == truth["scope"][i]
        if truth["proto"][i] == "udp":
            assert r["conn_state"] == "SF"  # Zeek: both directions seen
            continue
        # Handshake, data both ways (d and a in either order), FIN both ways.
        assert r["conn_state"] == "SF" and r["history"][:3] == "ShA" and r["history"][-2:] in ("Ff", "fF")
        assert sorted(r["history"]) == sorted("ShADadFf") and r["well_behaved"], (key, r["history"])
        assert (r["orig_trains"], r["resp_trains"]) == (truth["orig_trains"][i], truth["resp_trains"][i])
        # DATA-ACK: orig's data are acknowledged 2 d_resp later, resp's 2 d_orig later.
        assert (
            r["rtt_data_ack_orig_min_s"]
            == r["rtt_data_ack_orig_max_s"]
            == pytest.approx(2 * truth["d_resp_us"][i] / 1e6, abs=1e-9)
        )
        assert r["rtt_data_ack_resp_max_s"] == pytest.approx(2 * truth["d_orig_us"][i] / 1e6, abs=1e-9)
        assert r["rtt_handshake_s"] == pytest.approx(truth["rtt_us"][i] / 1e6, abs=1e-9)
        rtt = truth["rtt_us"][i] / 1e6
        for side in ("orig", "resp"):
            n, m = r[f"{side}_data_pkts"], r[f"{side}_trains"]
            # Eq. 5.10 here and in the analyzer (Rust) agree.
            assert r[f"{side}_theory_s"] == pytest.approx(flights_rounds(np.array([n]))[0] * rtt, abs=1e-9)
            gap = truth[f"gap_{side}_us"][i] / 1e6
            if n > m and gap > 0:
                # Trains spaced by the planned gap: pacing = gap (n - m) - T_theory.
                expect = (gap * (n - m) - r[f"{side}_theory_s"]) / n
                assert r[f"{side}_pacing_per_pkt_s"] == pytest.approx(expect, abs=1e-9)
                checked_pacing += 1
    assert checked_pacing > 100


# ------------------------------------------------------------------- other readers


def _need(tool):
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"SKIPPED ({tool} not installed: apt-get install {'tshark' if tool == 'tshark' else 'tcpreplay'})")
    return path


def _tshark_fields(tshark: str, pcap_path, display_filter: str, *fields: str) -> str:
    """tshark's tab-separated `fields` of the packets matching `display_filter`."""
    cmd = [tshark, "-r", str(pcap_path), "-n", "-Y", display_filter, "-T", "fields"]
    for field in fields:
        cmd += ["-e", field]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


def test_tshark_reads_it_clean_and_measures_the_same_rtts(synth):
    trace, pcap_path, _ = synth
    tshark = _need("tshark")
    assert _tshark_fields(tshark, pcap_path, "_ws.malformed || _ws.expert.severity >= error", "frame.number") == ""
    rtts = _tshark_fields(tshark, pcap_path, "tcp.analysis.ack_rtt", "ip.src", "tcp.srcport", "tcp.analysis.ack_rtt")
    truth = trace.connections
    # An ACK sent by a party at monitor-distance d acknowledges data seen 2 d earlier.
    half = {}
    for i in range(len(truth["conn"])):
        half[_ip(truth["orig_h"][i]), int(truth["orig_p"][i])] = 2 * int(truth["d_orig_us"][i])
        half[_ip(truth["resp_h"][i]), int(truth["resp_p"][i]), _ip(truth["orig_h"][i]), int(truth["orig_p"][i])] = (
            2 * int(truth["d_resp_us"][i])
        )
    lines = rtts.split("\n")
    assert len(lines) > 1000
    client_side = 0
    for line in filter(None, lines):
        src, port, rtt = line.split("\t")
        if (src, int(port)) in half:  # an ACK from the client
            assert round(float(rtt) * 1e6) == half[src, int(port)], line
            client_side += 1
    assert client_side > 1000


def test_tcpreplay_tools_read_it(synth, tmp_path):
    _, pcap_path, _ = synth
    info = subprocess.run([_need("tcpcapinfo"), str(pcap_path)], capture_output=True, text=True, check=True).stdout
    records = [ln.split() for ln in info.splitlines() if ln[:1].isdigit()]
    assert len(records) > 10_000 and all(r[-1] == "OK" for r in records)
    # Replaying onto loopback needs raw sockets: a skip says so when they are not allowed.
    run = subprocess.run([_need("tcpreplay"), "-i", "lo", "-t", str(pcap_path)], capture_output=True, text=True)
    if run.returncode != 0 and "ermission" in run.stderr + run.stdout:
        pytest.skip(f"SKIPPED (tcpreplay cannot open lo here: {run.stderr.strip()[:120]})")
    assert run.returncode == 0, run.stderr
    assert f"Successful packets:        {len(records)}" in run.stdout
    assert "Failed packets:            0" in run.stdout


# ----------------------------------------------------------------------- round trip

# (what, tolerance, why). Shares are absolute differences; the others relative.
ROUND_TRIP = {
    "share": 0.015,  # 2000 heavy-tailed connections: the download/upload split per scope is emergent
    "rtt_median": 0.01,  # per-connection RTTs are drawn around the median: exact but for us rounding
    "mean_size": 0.10,  # mean-preserving cap; sample mean of 2000 capped heavy-tailed draws
    "mean_interarrival": 0.10,
    "warmup_median": 0.10,  # only where the model has >= 30 warm-ups
    "train_mean": 0.25,  # a connection's last train is cut at its size: trains come out shorter
}


def _med(e):
    return float(np.interp(0.5, e["p"], e["v"]))


def _hmean(h):
    v, c = np.asarray(h["values"]), np.asarray(h["counts"])
    return float((v * c).sum() / c.sum())


def _exp_scale(report):
    return next(f for f in report["fits"] if f["family"] == "exponential")["params"]["scale"]


def test_round_trip_model_pcap_profile_model(model, synth):
    from tracelab_models.workload import derive

    _, _, pdir = synth
    again = derive(pdir)
    tol = ROUND_TRIP
    for scope in ("intranet", "internet"):
        for d in ("download", "upload"):
            a, b = model["topological"]["shares"][scope][d], again["topological"]["shares"][scope][d]
            assert abs(a - b) <= tol["share"], (scope, d, a, b)
        a, b = model["topological"]["rtt_s"][scope]["median"], again["topological"]["rtt_s"][scope]["median"]
        assert b == pytest.approx(a, rel=tol["rtt_median"]), scope
    for var, key in (("size_bytes", "mean_size"), ("interarrival_s", "mean_interarrival")):
        a, b = _exp_scale(model["flows"][var]), _exp_scale(again["flows"][var])
        assert b == pytest.approx(a, rel=tol[key]), var
    compared = 0
    for scope in ("intranet", "internet"):
        for side in ("orig", "resp"):
            A, B = model["apps"][scope][side], again["apps"][scope][side]
            assert _hmean(B["train_size_pkts"]) == pytest.approx(_hmean(A["train_size_pkts"]), rel=tol["train_mean"])
            if A["warmup_s"]["n"] >= 30:
                assert _med(B["warmup_s"]) == pytest.approx(_med(A["warmup_s"]), rel=tol["warmup_median"])
                compared += 1
    assert compared == 2  # the bundled trace's Internet sides


# ------------------------------------------------------------- determinism, errors


def test_same_seed_same_bytes_other_seed_other_trace(model, tmp_path):
    paths = []
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        write_pcap(synthesize(model, Options(connections=50, seed=seed, udp_share=0.3)), tmp_path / name)
        paths.append((tmp_path / name).read_bytes())
    assert paths[0] == paths[1] and paths[0] != paths[2]


def test_scope_without_tcp_apps_is_udp(model, tmp_path):
    m = copy.deepcopy(model)
    for side in ("orig", "resp"):
        m["apps"]["intranet"][side]["train_size_pkts"] = {"values": [], "counts": []}
    trace = synthesize(m, Options(connections=300, seed=2))
    t = trace.connections
    assert set(t["proto"][t["scope"] == "intranet"]) == {"udp"}
    assert set(t["proto"][t["scope"] == "internet"]) == {"tcp"}


def test_errors_name_the_fix(model, tmp_path):
    m = copy.deepcopy(model)
    m["topological"]["rtt_s"]["intranet"] = {"n": 0, "mean": None, "median": None}
    with pytest.raises(SynthError, match="--rtt intranet=1ms"):
        synthesize(m)
    assert synthesize(m, Options(rtt_s={"intranet": 0.001}, connections=20)).summary["packets"] > 0
    with pytest.raises(SynthError, match="max_packets"):
        synthesize(model, Options(connections=500, max_packets=1000))
    with pytest.raises(SynthError, match="udp_share"):
        synthesize(model, Options(udp_share=1.5))
    with pytest.raises(SynthError, match="snaplen"):
        write_pcap(synthesize(model, Options(connections=5)), tmp_path / "x.pcap", snaplen=40)


def test_cli(model, tmp_path, capsys):
    from tracelab_models.workload import save

    save(model, tmp_path / "m.model.json")
    assert (
        synth_main(
            [
                str(tmp_path / "m.model.json"),
                "-o",
                str(tmp_path / "s.pcap"),
                "--connections",
                "40",
                "--truth",
                str(tmp_path / "t.parquet"),
                "--snaplen",
                "96",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["connections"]["total"] == 40 == pq.read_table(tmp_path / "t.parquet").num_rows
    assert (tmp_path / "s.pcap").read_bytes()[:4] == struct.pack("<I", W.PCAP_MAGIC_US)
    assert synth_main([str(tmp_path / "m.model.json"), "-o", str(tmp_path / "s.pcap"), "--rtt", "lan=1ms"]) == 2
    assert "expected intranet=T or internet=T" in capsys.readouterr().err
    assert synth_main([str(tmp_path / "missing.json"), "-o", str(tmp_path / "s.pcap")]) == 3  # an input it cannot read
    assert "missing.json" in capsys.readouterr().err
