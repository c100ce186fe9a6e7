"""TRex profiles from workload models: plans checked against hand-computed cases, and the
generated profiles loaded and serialised by the real TRex client (lbr-trex-client in
build/trex-venv, its own process). Without that client the TRex tests skip with the
reason; the plan tests never need it."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tracelab_engine as engine
from tracelab.parts import analyzer_binary
from tracelab.trex import plan as P
from tracelab.trex import readback
from tracelab.trex.cli import main as trex_main
from tracelab.trex.profiles import REPO_ROOT, TrexUnavailable, check_profile, trex_python, write_profile

TRACE = "real/pcapplusplus/example.pcap"


# ---------------------------------------------------------------- hand-built model


def _emp(values):
    v = np.asarray(values, dtype=float)
    p = [i / 100 for i in range(101)]
    return {
        "n": len(v),
        "mean": float(v.mean()) if len(v) else None,
        "p": p if len(v) else [],
        "v": [float(x) for x in np.quantile(v, p)] if len(v) else [],
    }


def _side(train_values=(), train_counts=(), warmups=(), pacing=None, sizes=(), size_counts=()):
    return {
        "train_size_pkts": {"values": list(train_values), "counts": list(train_counts)},
        "warmup_s": _emp(warmups),
        "pacing_per_pkt_s": pacing if pacing is not None else _emp([]),
        "packet_size_bytes": {"values": list(sizes), "counts": list(size_counts)},
    }


def hand_model() -> dict:
    """Shares 0.4/0.1 intranet down/up, 0.5/0 Internet; intranet trains of 2 (initiator)
    and 3 (responder) packets; constant warm-ups 2 ms and 10 ms; responder pacing per
    packet uniform on [0, 1 ms] (quantile v = p x 1 ms); flow size median 10000 B."""
    pacing = {"n": 101, "mean": 0.0005, "p": [i / 100 for i in range(101)], "v": [i / 100 * 1e-3 for i in range(101)]}
    fit = {
        "family": "lognormal",
        "params": {"mu": float(np.log(10000.0)), "sigma": 1.0},
        "log_likelihood": 0.0,
        "ks_d": 0.1,
        "ks_p": 0.5,
        "qq_log10_rms": 0.1,
    }
    return {
        "provenance": {"source_trace": "hand", "tool_version": "test"},
        "flows": {
            "connections": 10,
            "size_bytes": {
                "variable": "size",
                "n": 10,
                "dropped_non_positive": 0,
                "fits": [fit],
                "best": "lognormal",
                "reason": "hand",
            },
            "interarrival_s": {
                "variable": "ia",
                "n": 10,
                "dropped_non_positive": 0,
                "best": "exponential",
                "reason": "hand",
                "fits": [{**fit, "family": "exponential", "params": {"scale": 0.25}}],
            },
        },
        "topological": {
            "shares": {"intranet": {"download": 0.4, "upload": 0.1}, "internet": {"download": 0.5, "upload": 0.0}}
        },
        "apps": {
            "intranet": {
                "orig": _side([2], [1], [0.002] * 5, None, [40, 1040], [3, 1]),
                "resp": _side([3], [1], [0.01] * 5, pacing, [1500], [10]),
            },
            "internet": {"orig": _side(), "resp": _side(sizes=[1500], size_counts=[1])},
        },
    }


# ---------------------------------------------------------------- plan arithmetic


def test_frames_and_l1_bits():
    assert P.frame_bytes(1500) == 1518  # + 14 Ethernet + 4 FCS
    assert P.frame_bytes(40) == 64  # padded to the 64 B minimum
    assert P.l1_bits(1500) == 8 * 1538  # + 8 preamble + 12 gap


def test_parse_rate_and_time_read_as_the_engine_reads_them():
    assert P.parse_rate("10G") == 1e10
    assert P.parse_rate("2.5Gbps") == 2.5e9
    assert P.parse_rate("100M") == 1e8
    assert P.parse_time("1ms") == pytest.approx(1e-3)
    assert P.parse_time("250us") == pytest.approx(2.5e-4)
    # The same grammar as `tracelab replay run --rate` and every element spec: a text
    # the engine refuses is refused here too, and one it reads means the same here.
    for text in ("10G", "2.5Gbps", "20M", "1T", "9500kbps"):
        assert P.parse_rate(text) == engine.parse_rate(text)
    for text in ("50us", "1.5ms", "2s", "100ns"):
        assert P.parse_time(text) == engine.parse_time(text) / 1e12
    with pytest.raises(P.PlanError, match="'fast' is not a bit rate"):
        P.parse_rate("fast")
    with pytest.raises(P.PlanError, match="'10g' is not a bit rate"):
        P.parse_rate("10g")  # units are case-sensitive, as in the specs (m would be milli)
    with pytest.raises(P.PlanError, match="unit"):
        P.parse_time("5")


def test_size_groups_exact_when_few_and_mean_kept_when_grouped():
    assert P.size_groups([40, 1500], [3, 1], 8) == [(40, 0.75), (1500, 0.25)]
    rng = np.random.default_rng(3)
    values = np.arange(40, 1501)
    counts = rng.integers(0, 50, len(values))
    groups = P.size_groups(values, counts, 8)
    assert len(groups) == 8
    assert sum(f for _, f in groups) == pytest.approx(1.0)
    mean = (values * counts).sum() / counts.sum()
    assert sum(s * f for s, f in groups) == pytest.approx(mean, abs=0.5)  # rounding to whole bytes only


def test_stl_plan_hand_computed():
    plan = P.stl_plan(hand_model(), rate="10G", load=0.5, latency_pps=1000, budgets={"intranet": "1ms"})
    by = {c["name"]: c for c in plan["classes"]}
    assert list(by) == ["intranet-download", "intranet-upload", "internet-download"]
    assert plan["skipped"] == [{"class": "internet-upload", "reason": "share 0 in the model"}]
    # intranet-download: 0.4 x 0.5 x 10 Gb/s = 2 Gb/s; 1500 B packets = 12304 bits on the wire;
    # 1000 latency probes of 1500 B take 12.304 Mb/s: (2e9 - 12.304e6) / 12304 = 161548.7646 pps.
    d = by["intranet-download"]
    assert d["rate_bps_l1"] == pytest.approx(2e9)
    assert d["streams"] == [{"ip_len": 1500, "fraction": 1.0, "pps": pytest.approx(161548.7646, rel=1e-9)}]
    assert d["latency"] == {"pg_id": 1, "ip_len": 1500, "pps": 1000.0}
    assert d["src"] == "server" and d["budget_s"] == pytest.approx(1e-3)
    # intranet-upload: 0.5 Gb/s; 75 % 40 B (64 B frames, 672 bits), 25 % 1040 B (8624 bits):
    # 2660 bits per packet; latency probes at the median 40 B raised to 56 B (752 bits):
    # (5e8 - 752000) / 2660 = 187687.218 pps.
    u = by["intranet-upload"]
    assert u["latency"]["ip_len"] == 56
    assert sum(s["pps"] for s in u["streams"]) == pytest.approx(187687.218, rel=1e-6)
    assert [s["ip_len"] for s in u["streams"]] == [40, 1040]
    assert u["src"] == "client"
    assert by["internet-download"]["budget_s"] is None
    assert [c["pg_id"] for c in plan["classes"]] == [1, 2, 3]


def test_stl_plan_errors():
    with pytest.raises(P.PlanError, match="unknown class"):
        P.stl_plan(hand_model(), budgets={"dmz": "1ms"})
    with pytest.raises(P.PlanError, match="load"):
        P.stl_plan(hand_model(), load=1.5)
    with pytest.raises(P.PlanError, match="latency stream"):
        P.stl_plan(hand_model(), rate="1M", load=0.01)


def test_astf_plan_hand_computed():
    plan = P.astf_plan(hand_model(), templates=1, seed=5, cps=2.0)
    assert plan["skipped"] == [
        {"scope": "internet", "reason": "no trains or data packet sizes for orig, resp in the model"}
    ]
    (scope,) = plan["scopes"]
    assert scope["payload_per_pkt"] == {"orig": 1000, "resp": 1460}  # 1040 - 40; 1500 - 40 (the 40 B ACKs left out)
    (t,) = scope["templates"]
    assert t["target_bytes"] == pytest.approx(10000.0)  # median of the lognormal = e^mu
    # Trains 2000 (A), 4380 (B), 2000 (A), 4380 (B): 12760 B >= 10000 B after 4 trains.
    assert t["trains"] == 4 and t["bytes"] == {"orig": 4000, "resp": 8760}
    assert t["client"] == [["send", 2000], ["recv", 4380], ["delay", 2000.0], ["send", 2000], ["recv", 4380]]
    server = t["server"]
    assert [c[0] for c in server] == ["recv", "delay", "send", "delay_rand", "recv", "delay", "send", "delay_rand"]
    assert server[1] == ["delay", 10000.0] and server[2] == ["send", 4380]
    # Pacing: 3 packets x one decile of U[0, 1 ms] = [300 j, 300 (j + 1)] usec.
    for lo, hi in (server[3][1:], server[7][1:]):
        j = round(lo / 300)
        assert (lo, hi) == (pytest.approx(300 * j), pytest.approx(300 * (j + 1)))
    assert t["cps"] == pytest.approx(2.0) and t["port"] == 8000


def test_astf_plan_is_deterministic_and_splits_cps_by_shares(real_model):
    a = P.astf_plan(real_model, templates=6, seed=9)
    assert a == P.astf_plan(real_model, templates=6, seed=9)
    assert a != P.astf_plan(real_model, templates=6, seed=10)
    # Without --cps: the mean of the fitted inter-arrival distribution.
    from tracelab_models.distributions import frozen

    ia = real_model["flows"]["interarrival_s"]
    fit = next(f for f in ia["fits"] if f["family"] == ia["best"])
    assert a["cps"] == pytest.approx(1 / frozen(fit["family"], fit["params"]).mean())
    assert sum(g["cps"] for g in a["scopes"]) == pytest.approx(a["cps"])
    # Bytes per second per scope follow the model's scope shares.
    shares = real_model["topological"]["shares"]
    rate = {
        g["scope"]: g["cps"] * np.mean([t["bytes"]["orig"] + t["bytes"]["resp"] for t in g["templates"]])
        for g in a["scopes"]
    }
    want = {s: sum(shares[s].values()) for s in rate}
    assert rate["intranet"] / rate["internet"] == pytest.approx(want["intranet"] / want["internet"])


def test_violation_bounds_hand_computed():
    assert [readback.bucket_upper(k) for k in (10, 20, 90, 100, 300, 2000)] == [20, 30, 100, 200, 400, 3000]
    hist = {"10": 5, "20": 4, "100": 3, "200": 2, "1000": 1}
    # Budget 150 us: buckets >= 150 are [200, 300) and [1000, 2000): 3 packets; [100, 200) straddles.
    assert readback.violations(hist, 150) == (3, 6)
    assert readback.violations(hist, 200) == (3, 3)  # bucket edge: no ambiguity
    plan = {"classes": [{"name": "x", "latency": {"pg_id": 7}, "budget_s": 150e-6}]}
    stats = {
        "latency": {
            "7": {"latency": {"histogram": hist, "average": 40.0, "total_max": 1500}, "err_cntrs": {"dropped": 1}}
        },
        "flow_stats": {"7": {"tx_pkts": {"0": 16, "total": 16}, "rx_pkts": {"1": 15, "total": 15}}},
    }
    (row,) = readback.class_summary(plan, stats)
    assert (row["r_v_low"], row["r_v_high"]) == (pytest.approx(4 / 16), pytest.approx(7 / 16))
    assert (row["tx_pkts"], row["rx_pkts"], row["lost"]) == (16, 15, 1)
    assert readback.mpps({"0": {"opackets": 3_000_000}, "1": {"ipackets": 2_000_000}}, [0, 1], 2.0) == {
        "tx_pkts": 3_000_000,
        "rx_pkts": 2_000_000,
        "tx_mpps": 1.5,
        "rx_mpps": 1.0,
    }


def test_profile_name_must_be_a_module_name(tmp_path):
    with pytest.raises(ValueError, match="Python identifier"):
        write_profile(P.stl_plan(hand_model()), tmp_path / "lab-stl.py")


# ---------------------------------------------------------------- a model of a real trace


@pytest.fixture(scope="module")
def real_model(tmp_path_factory, datasets):
    binary = analyzer_binary()
    if binary is None:
        pytest.skip("SKIPPED (analyzer not built: cargo build --release in analyzer/) — no model of a real trace")
    from tracelab_models.workload import derive

    out = tmp_path_factory.mktemp("profile") / "p"
    subprocess.run(
        [str(binary), str(datasets / TRACE), "--local", "10.0.0.0/8", "-o", str(out)], check=True, capture_output=True
    )
    return derive(out)


@pytest.fixture(scope="module")
def trex():
    """The TRex client interpreter; made by replay/trex-env/setup.sh when missing."""
    try:
        return trex_python()
    except TrexUnavailable:
        done = subprocess.run(
            ["sh", str(REPO_ROOT / "replay" / "trex-env" / "setup.sh")], capture_output=True, text=True
        )
        if done.returncode != 0:
            reason = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["unknown error"]
            print(f"SKIPPED (lbr-trex-client cannot be installed: {reason[0]})")
            pytest.skip(f"lbr-trex-client cannot be installed: {reason[0]}")
        return trex_python()


# ---------------------------------------------------------------- with the real TRex client


def _lengths(stream):
    """(frame length without FCS, IP total length) of a stream's packet."""
    frame = base64.b64decode(stream["packet"]["binary"])
    return len(frame), int.from_bytes(frame[16:18], "big")


def test_stl_profile_loads_round_trips_and_matches_the_model(trex, real_model, tmp_path):
    plan = P.stl_plan(real_model, rate="10G", load=0.9, budgets={"internet": "50ms"})
    profile = write_profile(plan, tmp_path / "lab_stl.py")
    seen = check_profile(profile, "stl")
    assert seen["round_trip_equal"]
    streams = {s["name"]: s for s in seen["streams"]}
    assert seen["stream_count"] == len(streams) == sum(len(c["streams"]) + 1 for c in plan["classes"])
    shares = real_model["topological"]["shares"]
    for cls in plan["classes"]:
        name, scope, direction = cls["name"], cls["scope"], cls["direction"]
        hist = real_model["apps"][scope][cls["side"]]["packet_size_bytes"]
        bits = 0.0
        for i, s in enumerate(cls["streams"]):
            st = streams[f"{name}/{i}"]
            assert st["mode"] == {"type": "continuous", "rate": {"type": "pps", "value": s["pps"]}}
            assert _lengths(st) == (max(s["ip_len"] + 14, 60), s["ip_len"])  # TRex adds the 4 B FCS
            assert min(hist["values"]) <= s["ip_len"] <= max(hist["values"])
            assert st["flow_stats"] == {"enabled": False}
            bits += st["mode"]["rate"]["value"] * 8 * (max(s["ip_len"] + 18, 64) + 20)
        lat = streams[f"{name}/latency"]
        assert lat["flow_stats"]["enabled"] and lat["flow_stats"]["rule_type"] == "latency"
        assert lat["flow_stats"]["stream_id"] == cls["pg_id"]
        bits += lat["mode"]["rate"]["value"] * 8 * (max(cls["latency"]["ip_len"] + 18, 64) + 20)
        # Oracle: the model's traffic share of this class x load x port rate.
        assert bits == pytest.approx(shares[scope][direction] * 0.9 * 1e10, rel=1e-9)
        ops = [i["type"] for i in st["vm"]["instructions"]]
        assert ops == [
            "flow_var",
            "tuple_flow_var",
            "write_flow_var",
            "write_flow_var",
            "write_flow_var",
            "fix_checksum_hw",
        ]
    assert {c["pg_id"] for c in plan["classes"]} == {
        s["flow_stats"]["stream_id"] for s in streams.values() if s["flow_stats"]["enabled"]
    }
    # Tunables select classes.
    first = plan["classes"][0]["name"]
    only = check_profile(profile, "stl", tunables=[f"--classes={first}"])
    assert only["stream_count"] == len(plan["classes"][0]["streams"]) + 1


def test_astf_profile_programs_follow_the_plan_and_the_model(trex, real_model, tmp_path):
    plan = P.astf_plan(real_model, templates=8, seed=1)
    profile = write_profile(plan, tmp_path / "lab_astf.py")
    prof = check_profile(profile, "astf")["profile"]
    templates = [t for g in plan["scopes"] for t in g["templates"]]
    assert len(prof["templates"]) == len(templates) == 8 * len(plan["scopes"])
    assert prof["tg_names"] == [t["name"] for t in templates]
    bufs = prof["buf_list"]
    programs = prof["program_list"]

    def expected(commands):
        out, received = [], 0
        for c in commands:
            if c[0] == "send":
                out.append(("tx", c[1]))
            elif c[0] == "recv":
                received += c[1]  # TRex's rx watermark is cumulative
                out.append(("rx", received))
            elif c[0] == "delay":
                out.append(("delay", c[1]))
            else:
                out.append(("delay_rnd", c[1], c[2]))
        return out

    def actual(program):
        out = []
        for c in program["commands"]:
            if c["name"] == "tx":
                out.append(("tx", bufs[c["buf_index"]]["size"]))
            elif c["name"] == "rx":
                out.append(("rx", c["min_bytes"]))
            elif c["name"] == "delay":
                out.append(("delay", c["usec"]))
            else:
                out.append(("delay_rnd", c["min_usec"], c["max_usec"]))
        return out

    for t, tj in zip(templates, prof["templates"], strict=True):
        c, s = tj["client_template"], tj["server_template"]
        assert c["cps"] == pytest.approx(t["cps"]) and c["port"] == t["port"]
        assert s["assoc"][0]["port"] == t["port"]
        assert actual(programs[c["program_index"]]) == expected(t["client"])
        assert actual(programs[s["program_index"]]) == expected(t["server"])
    # Against the model: sends are whole trains of the side's payload; every delay_rand of
    # a warm-up is a decile interval of the model's warm-up distribution.
    for g in plan["scopes"]:
        apps = real_model["apps"][g["scope"]]
        deciles = {
            side: np.interp(np.arange(11) / 10, apps[side]["warmup_s"]["p"], apps[side]["warmup_s"]["v"])
            for side in ("orig", "resp")
        }
        for t in g["templates"]:
            for side, prog in (("orig", t["client"]), ("resp", t["server"])):
                trains = set(apps[side]["train_size_pkts"]["values"])
                for k, cmd in enumerate(prog):
                    if cmd[0] != "send":
                        continue
                    assert cmd[1] / g["payload_per_pkt"][side] in trains
                    # A delay right before a send is the sender's warm-up (pacing follows sends).
                    prev = prog[k - 1] if k else None
                    if prev and prev[0] in ("delay", "delay_rand"):
                        lo, hi = prev[1] / 1e6, prev[-1] / 1e6
                        j = int(np.argmin(np.abs(np.maximum(deciles[side][:-1], 0) - lo)))
                        assert lo == pytest.approx(max(deciles[side][j], 0), abs=1e-6)
                        assert hi == pytest.approx(max(deciles[side][j + 1], 0), abs=1e-6)
    ranges = {(d["ip_start"], d["ip_end"], d["dir"]) for d in prof["ip_gen_dist_list"]}
    assert ("10.3.0.1", "10.3.0.254", "c") in ranges and ("48.0.0.1", "48.0.0.16", "s") in ranges


def test_cli_writes_checks_and_skips_without_a_server(trex, real_model, tmp_path, capsys):
    model = tmp_path / "m.model.json"
    model.write_text(json.dumps(real_model))
    assert trex_main(["stl", str(model), "--budget", "internet=50ms", "-o", str(tmp_path / "lab_stl.py")]) == 0
    assert trex_main(["astf", str(model), "--templates", "4", "-o", str(tmp_path / "lab_astf.py")]) == 0
    assert (tmp_path / "lab_stl.plan.json").is_file()
    assert trex_main(["check", str(tmp_path / "lab_stl.py")]) == 0
    assert trex_main(["check", str(tmp_path / "lab_astf.py")]) == 0
    out = capsys.readouterr().out
    assert "round trip identical" in out and "TRex loaded 8 templates" in out
    # A loopback port nothing listens on: the run stops where a server is needed.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run_remote(trex, tmp_path / "lab_stl.py", port, timeout=60)
    assert done.returncode == 77, done.stderr
    assert done.stdout.startswith(f"SKIPPED (no TRex server: 127.0.0.1:{port}: ")
    print(done.stdout.strip())


def run_remote(trex, profile: Path, port: int, timeout: int) -> subprocess.CompletedProcess:
    """run_remote.py (in TRex's interpreter) on an STL profile against 127.0.0.1:port."""
    script = Path(P.__file__).with_name("run_remote.py")
    cmd = [str(trex), str(script), str(profile), "--server", "127.0.0.1", "--sync-port", str(port), "--kind", "stl"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def test_cli_errors_name_the_problem(tmp_path, capsys):
    assert trex_main(["stl", str(tmp_path / "missing.model.json"), "-o", str(tmp_path / "x.py")]) == 2
    assert "missing.model.json" in capsys.readouterr().err
    bad = tmp_path / "lab.py"
    bad.write_text("")
    assert trex_main(["check", str(bad)]) == 2
    assert "lab.plan.json" in capsys.readouterr().err


def test_run_remote_fails_loudly_when_the_address_is_not_trex(trex, tmp_path):
    """Something listens but does not speak TRex's RPC: a failure, neither a skip nor a pass."""
    write_profile(P.stl_plan(hand_model()), tmp_path / "lab_stl.py")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        done = run_remote(trex, tmp_path / "lab_stl.py", port, timeout=120)
    assert done.returncode == 1
    assert "SKIPPED" not in done.stdout
    assert done.stderr.startswith("FAILED (TRexError:"), done.stderr
