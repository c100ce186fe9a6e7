"""The faithful synthesizer (tracelab.synth.chain) honours its model: what the Rust
analyzer measures in the synthetic pcap against the model the pcap came from, and
against the per-connection plan (ground truth).

Traces: a small generated enterprise trace (datasets/generate's tcpmix, 60,000
packets) and the bundled demo trace.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import subprocess
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
import pytest
from tracelab.parts import REPO_ROOT, analyzer_binary
from tracelab.synth import chain
from tracelab.synth.cli import main as synth_main
from tracelab_models.distributions import model_ppf

TCPMIX = REPO_ROOT / "build" / "generate" / "target" / "release" / "tcpmix"
BUNDLED = REPO_ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"


def _tcpmix(path, packets, seed):
    if not TCPMIX.exists():
        subprocess.run(
            ["cargo", "build", "--release", "--locked", "--quiet", "--manifest-path",
             str(REPO_ROOT / "datasets" / "generate" / "Cargo.toml"), "--target-dir",
             str(REPO_ROOT / "build" / "generate" / "target")],
            check=True,
        )  # fmt: skip
    subprocess.run([str(TCPMIX), "--packets", str(packets), "--seed", str(seed), str(path)], check=True,
                   capture_output=True)  # fmt: skip
    return path


def profile(pcap, out, local=("10.0.0.0/8",)):
    binary = analyzer_binary()
    if binary is None:
        pytest.fail("the analyzer is not built (make build)")
    args = [a for p in local for a in ("--local", p)]
    subprocess.run([str(binary), str(pcap), *args, "-o", str(out), "--quiet", "--no-progress"], check=True)
    return out


@pytest.fixture(scope="module")
def mix(tmp_path_factory):
    """(model, plan, profile of the synthetic trace) of a 60k-packet tcpmix trace."""
    from tracelab_models.workload import derive

    d = tmp_path_factory.mktemp("chain")
    model = derive(profile(_tcpmix(d / "t.pcap", 60_000, 21), d / "p"))
    opts = chain.ChainOptions(seed=5)
    summary = chain.write(model, opts, d / "s.pcap", snaplen=128)
    profile(d / "s.pcap", d / "sp")
    return model, chain.plan(model, opts), d / "sp", summary


def _conns(pdir):
    return pq.read_table(pdir / "connections.parquet").to_pydict()


def test_counts_per_class_and_state_are_the_models(mix):
    model, _, pdir, summary = mix
    t = _conns(pdir)
    got = Counter(zip(t["scope"], t["proto"], strict=True))
    for name, entry in model["traffic"]["classes"].items():
        scope, proto = name.split("/")
        assert got[scope, proto] == entry["connections"], name
    # UDP share exactly; TCP states as planned (the analyzer finds them).
    assert summary["connections"]["udp"] == sum(1 for p in t["proto"] if p == "udp")
    tcp_states = Counter(s for s, p in zip(t["conn_state"], t["proto"], strict=True) if p == "tcp")
    want = Counter()
    for entry in model["traffic"]["classes"].values():
        if entry["proto"] == "tcp":
            want.update(entry["synth_states"])
    assert tcp_states == want


def test_analyzer_finds_every_planned_connection(mix):
    _, plan, pdir, _ = mix
    truth = chain.truth(plan)
    t = _conns(pdir)
    rows = {(t["proto"][i], t["id.orig_h"][i], t["id.orig_p"][i], t["id.resp_h"][i], t["id.resp_p"][i]): i
            for i in range(len(t["uid"]))}  # fmt: skip
    assert len(rows) == plan.n
    hs = 0
    for i in range(plan.n):
        key = (truth["proto"][i], str(ipaddress.ip_address(int(truth["orig_h"][i]))), int(truth["orig_p"][i]),
               str(ipaddress.ip_address(int(truth["resp_h"][i]))), int(truth["resp_p"][i]))  # fmt: skip
        r = rows[key]
        if t["orig_bytes"][r] is None:  # a single packet: Zeek (and the analyzer) leave bytes unset
            assert t["orig_pkts"][r] + t["resp_pkts"][r] == 1 and truth["state"][i] in ("S0", "REJ"), key
            continue
        assert (t["orig_bytes"][r], t["resp_bytes"][r]) == (truth["orig_bytes"][i], truth["resp_bytes"][i]), key
        assert t["conn_state"][r] == truth["state"][i], key
        assert t["scope"][r] == truth["scope"][i]
        established = truth["proto"][i] == "tcp" and truth["state"][i] in ("SF", "RSTO", "RSTR", "S1")
        if established:
            # The handshake is the plan's RTT split, to the microsecond (a short connection's
            # RTT may have been shrunk to fit its duration: never lengthened).
            assert round(t["rtt_syn_synack_s"][r] * 1e6) <= truth["rtt_syn_synack_us"][i]
            hs += round(t["rtt_syn_synack_s"][r] * 1e6) == truth["rtt_syn_synack_us"][i]
        if t["well_behaved"][r]:
            assert t["orig_trains"][r] + t["resp_trains"][r] == truth["trains"][i], key
    tcp = truth["proto"] == "tcp"
    assert hs > 0.9 * np.isin(truth["state"][tcp], ["SF", "RSTO", "RSTR", "S1"]).sum()


def _median_ci(x, q=0.5, z=3.0):
    """A distribution-free confidence interval of a quantile (order statistics)."""
    x = np.sort(x)
    n = len(x)
    half = z * np.sqrt(n * q * (1 - q))
    return x[max(int(n * q - half), 0)], x[min(int(n * q + half), n - 1)]


@pytest.mark.parametrize("scope", ["intranet", "internet"])
def test_handshake_rtt_median_is_the_models_within_sampling_error(mix, scope):
    model, _, pdir, _ = mix
    t = _conns(pdir)
    rtt = np.array([np.nan if v is None else v for v in t["rtt_handshake_s"]], dtype=float)
    sel = (np.array(t["scope"]) == scope) & np.isfinite(rtt)
    # The model's median of the handshake RTT: the sum of its split, per connection, over
    # the model's established groups, drawn as the synthesizer does (many draws).
    rng = np.random.default_rng(0)
    sums = []
    for name, entry in model["traffic"]["classes"].items():
        if not name.startswith(scope + "/tcp"):
            continue
        for g in ("SF", "S1", "RSTO", "RSTR"):
            group = entry["groups"].get(g)
            if group:
                draws = chain._draw_group(group, 20 * group["connections"], rng)
                sums.append(draws["rtt_syn_synack_s"] + draws["rtt_synack_ack_s"])
    want = float(np.median(np.concatenate(sums)))
    lo, hi = _median_ci(rtt[sel])
    assert lo <= want <= hi, (scope, lo, want, hi)


def test_host_counts_and_fan_in_are_the_models(mix):
    model, _, pdir, _ = mix
    h = pq.read_table(pdir / "hosts.parquet").to_pydict()
    local = np.array(h["local"], dtype=bool)
    clients = int((local & (np.array(h["outcnx"]) > 0)).sum())
    servers = int((local & np.array(h["server"], dtype=bool)).sum())
    table = model["traffic"]["hosts"]["local"]
    assert clients == table["clients"] and servers == table["servers"]
    # Fan-in: the busiest local hosts accept as many connections as in the original.
    o = pq.read_table(pdir.parent / "p" / "hosts.parquet").to_pydict()
    top = [np.sort(np.array(x["incnx"])[np.array(x["local"], dtype=bool)])[::-1][:5] for x in (h, o)]
    assert top[0].tolist() == pytest.approx(top[1].tolist(), rel=0.03)
    # Addresses: local ones in --local, remote ones in 198.18.0.0/15.
    nets = [ipaddress.ip_network(p) for p in model["traffic"]["local"]]
    for host, is_local in zip(h["host"], h["local"], strict=True):
        ip = ipaddress.ip_address(host)
        assert any(ip in n for n in nets) if is_local else ip in ipaddress.ip_network("198.18.0.0/15")


def test_draws_follow_the_fitted_margins(mix):
    """Stratified draws: the quantiles of a drawn variable are the model's."""
    model, _, _, _ = mix
    entry = model["traffic"]["classes"]["internet/tcp"]
    group = entry["groups"]["SF"]
    draws = chain._draw_group(group, 4000, np.random.default_rng(3))
    for var in ("total_bytes", "duration_s"):
        rep = group["variables"][var]
        for q in (0.25, 0.5, 0.9):
            want = float(model_ppf(rep, np.array([q]))[0])
            assert np.quantile(draws[var], q) == pytest.approx(want, rel=0.05, abs=1e-6), (var, q)


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_same_bytes_duration_and_local(tmp_path):
    from tracelab_models.workload import derive, save

    model = derive(profile(BUNDLED, tmp_path / "p"))
    save(model, tmp_path / "m.json")
    m = str(tmp_path / "m.json")
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        assert synth_main([m, "-o", str(tmp_path / f"{name}.pcap"), "--seed", str(seed), "-q"]) == 0
    assert _sha(tmp_path / "a.pcap") == _sha(tmp_path / "b.pcap") != _sha(tmp_path / "c.pcap")
    # --duration scales the counts; --local moves the local hosts.
    assert synth_main([m, "-o", str(tmp_path / "d.pcap"), "--duration", "31.3s", "--local", "172.16.0.0/12",
                       "--truth", str(tmp_path / "t.parquet"), "-q"]) == 0  # fmt: skip
    t = pq.read_table(tmp_path / "t.parquet").to_pydict()
    assert len(t["proto"]) == pytest.approx(2 * model["traffic"]["connections"], abs=2)
    assert all(
        ipaddress.ip_address(int(h)) in ipaddress.ip_network("172.16.0.0/12")
        for h, s in zip(t["orig_h"], t["scope"], strict=True)
        if s == "intranet"
    )
    summary = json.loads((tmp_path / "p" / "summary.json").read_text())
    assert model["traffic"]["duration_s"] == summary["trace"]["duration_s"]
    assert model["traffic"]["local"] == ["10.0.0.0/8"]


def test_streaming_is_time_ordered_and_bounded(mix, monkeypatch):
    model, plan, _, _ = mix
    monkeypatch.setattr(chain, "CHUNK", 100)
    chunks = list(chain.packets(model, plan, 5))
    assert len(chunks) >= plan.n // chain.CHUNK
    times = np.concatenate([c["time_us"] for c in chunks])
    assert (np.diff(times) >= 0).all()
    # Nothing is held back beyond the connections still open at a chunk's end.
    assert max(len(c["time_us"]) for c in chunks) < 0.5 * len(times)


def test_models_without_traffic_fall_back_to_the_legacy_writer(tmp_path, capsys):
    from tracelab_models.workload import derive, save

    model = derive(profile(BUNDLED, tmp_path / "p"))
    del model["traffic"]
    save(model, tmp_path / "m.json")
    assert synth_main([str(tmp_path / "m.json"), "-o", str(tmp_path / "s.pcap"), "--connections", "30"]) == 0
    assert json.loads(capsys.readouterr().out)["connections"]["total"] == 30
    with pytest.raises(chain.SynthError, match="model derive"):
        chain.plan(model, chain.ChainOptions())
    assert synth_main([str(tmp_path / "m.json"), "-o", str(tmp_path / "s.pcap"), "--duration", "1s"]) == 2


def _checksum_ok(frame: bytes) -> bool:
    """The TCP/UDP checksum of an Ethernet/IPv4 frame, verified from scratch (RFC 1071)."""
    ip = frame[14:]
    ihl = (ip[0] & 0xF) * 4
    total = int.from_bytes(ip[2:4], "big")
    seg = ip[ihl:total]
    data = ip[12:20] + bytes([0, ip[9]]) + len(seg).to_bytes(2, "big") + seg
    if len(data) % 2:
        data += b"\0"
    s = sum(int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def test_detected_services_come_back_with_valid_checksums(tmp_path):
    """The bundled trace's detected services (http, ssl, dns) are the model's; the
    synthetic trace carries their first bytes (payloads.py), the analyzer detects them
    there, only on connections the plan gave that service, and every packet's checksum
    verifies with those bytes in it."""
    from tracelab.synth import payloads
    from tracelab_models.workload import derive

    orig = _conns(profile(BUNDLED, tmp_path / "p"))
    detected = {s for s in orig["service"] if s}
    assert {"http", "ssl", "dns"} <= detected
    model = derive(tmp_path / "p")
    opts = chain.ChainOptions(seed=7)
    chain.write(model, opts, tmp_path / "s.pcap")
    plan = chain.plan(model, opts)
    t = _conns(profile(tmp_path / "s.pcap", tmp_path / "sp"))
    by_key = {(int(ipaddress.ip_address(t["id.orig_h"][i])), t["id.orig_p"][i], t["id.resp_p"][i]): t["service"][i]
              for i in range(len(t["uid"]))}  # fmt: skip
    synth_services = Counter()
    for i in range(plan.n):
        got = by_key[int(plan.src[i]), int(plan.sport[i]), int(plan.dport[i])]
        if got is not None:
            assert tuple(plan.signature[i]) == (payloads.index(got, 0), payloads.index(got, 1)), i
            synth_services[got] += 1
    assert set(synth_services) == detected & set(payloads.SIGNATURES)
    raw = (tmp_path / "s.pcap").read_bytes()
    at, n = 24, 0
    while at < len(raw):
        incl = int.from_bytes(raw[at + 8 : at + 12], "little")
        frame = raw[at + 16 : at + 16 + incl]
        assert _checksum_ok(frame), n
        at += 16 + incl
        n += 1
    assert n > 100


def test_signatures_are_what_the_analyzer_detects():
    """Each service's first bytes fit the analyzer's 32-byte head (so the detection
    sees them whole) and the packet lengths they need; port stand-ins get none."""
    from tracelab.synth import payloads

    for name, sides in payloads.SIGNATURES.items():
        for body, min_len in sides:
            assert 0 < len(body) <= 32 and min_len >= len(body), name
    assert payloads.index("tcp/8080", 0) == 0 and payloads.index("http", 1) > 0
