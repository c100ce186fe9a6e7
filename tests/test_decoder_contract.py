"""The analyzer's decoder and flow key and the replay engine's agree on real traces.

Two decoders read captures: the analyzer's (`tracelab-decode`, grouped into
connections by `tracelab-flow`'s key) and the engine's (`replay/engine/src/decode.cc`,
whose `conn_hash` groups a connection's packets for the per-flow cores). The contract,
checked here on every trace of `AGREE`:

* direction by direction, each TCP/UDP 5-tuple has the same number of packets and the
  same sum of IP lengths in the analyzer's conn.log (orig/resp packets and IP bytes,
  summed over the connections of that 5-tuple) as among the frames the engine
  decodes with ports (`tracelab_engine.decode_pcap`): same packets, same IP length,
  protocol, addresses and ports. The analyzer writes no per-packet output, so a
  packet's length is checked through these sums;
* the engine's `conn_hash` is the same in both directions of a 5-tuple and differs
  between 5-tuples (one hash per connection key, one key per hash), while its
  `flow_hash` tells the two directions apart.

On a synthetic trace (`tracelab synth` of the example trace's model, with `--truth`)
the synthesizer's connections, one truth row each, are also the analyzer's
connections (same 5-tuples, same originator) and the engine's conn_hash groups.

`KNOWN_DIFFERENCES` lists traces on which the two disagree today, each with the
reason; the test requires that they still differ, so a fix moves a trace into `AGREE`.
"""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import tracelab_engine
from public_datasets import public_dataset
from support import ROOT, tracelab_ok
from tracelab_models.zeeklog import read_conn_logs

AGREE = [
    *sorted(f"real/{p.name}" for p in (ROOT / "datasets" / "real").glob("*.pcap")),
    "public/real/arkime/bigendian.pcap",
    "public/real/arkime/dot1ad.pcap",
    "public/real/arkime/v6.pcap",
    "public/real/arkime/wireshark-retrans.pcap",
    "public/real/chrissanders-packets/http_espn.pcapng",
    "public/real/chrissanders-packets/http_ip4and6.pcapng",
    "public/real/chrissanders-packets/ipv6_fragments.pcapng",
    "public/real/libtrace/100_packetsns.pcap",
    "public/real/libtrace/vlan.pcap",
    "public/real/markofu-pcaps/TCP_SYN_SCAN.pcap",
    "public/real/ndpi/6in4tunnel.pcap",
    "public/real/ndpi/gnutella.pcap",
    "public/real/ndpi/netflix.pcap",
    "public/real/pcapplusplus/four_ipv6_http_streams.pcap",
    "public/real/pcapplusplus/linktype_ipv6.pcap",
    "public/real/pcapplusplus/raw_ip.pcap",
    "public/real/pcapplusplus/sll.pcap",
    "public/real/tcpdump/bigtcp-ipv4.pcap",
    "public/real/tcpdump/bigtcp-ipv6.pcap",
    "public/real/tcpdump/mptcp-v1.pcap",
    "public/real/tcpreplay/test.pcap",
    "public/real/zeek/modbusBig.pcap",
    "public/real/zeek/truncated-header.pcap",
]
KNOWN_DIFFERENCES = {
    "public/real/arkime/mpls-basic.pcap": "the engine does not decode MPLS (decode.hh): it skips 11 labelled packets",
    "public/real/ndpi/badpackets.pcap": "IPv4 total length 1500 in 271-byte frames: the analyzer skips them as "
    "bad_ip_header, the engine replays them at 1500 bytes",
    "public/real/tcpdump/udp-length-heapoverflow.pcap": "IPv4 total length beyond the frame: the analyzer skips it as "
    "truncated, the engine takes the header's length",
    "public/real/ndpi/ip_fragmented_garbage.pcap": "IP fragments: the analyzer skips every fragment (ip_fragment), the "
    "engine replays them and reads ports from first fragments",
    "public/real/pcapplusplus/null_loopback.pcap": "a BSD loopback frame the analyzer counts as not_ip and the engine "
    "and tshark decode as IPv4",
    "public/real/zeek/nflog-http.pcap": "NFLOG link type: the analyzer decodes it, the engine does not support it",
}
PROTO_NAMES = {6: "tcp", 17: "udp"}


def engine_directions(trace: Path) -> tuple[Counter, Counter, dict, dict]:
    """Per directed 5-tuple, packets and IP bytes of the frames the engine decodes with
    ports; and the conn_hash and flow_hash values seen for each."""
    d = tracelab_engine.decode_pcap(str(trace))
    ok = tracelab_engine.decode_results().index("ok")
    keep = np.flatnonzero((d["result"] == ok) & (d["has_ports"] == 1) & np.isin(d["proto"], list(PROTO_NAMES)))
    packets, ip_bytes = Counter(), Counter()
    conn_hashes, flow_hashes = defaultdict(set), defaultdict(set)
    for i in keep.tolist():
        width = 4 if d["ip_version"][i] == 4 else 16
        src = str(ipaddress.ip_address(bytes(d["src"][i][:width])))
        dst = str(ipaddress.ip_address(bytes(d["dst"][i][:width])))
        key = (PROTO_NAMES[int(d["proto"][i])], src, int(d["sport"][i]), dst, int(d["dport"][i]))
        packets[key] += 1
        ip_bytes[key] += int(d["ip_length"][i])
        conn_hashes[key].add(int(d["conn_hash"][i]))
        flow_hashes[key].add(int(d["flow_hash"][i]))
    return packets, ip_bytes, conn_hashes, flow_hashes


def analyzer_directions(trace: Path, out: Path) -> tuple[Counter, Counter]:
    """Per directed 5-tuple, packets and IP bytes of the analyzer's TCP and UDP
    connections (a 5-tuple's connections summed)."""
    tracelab_ok("profile", str(trace), "-o", str(out), "--quiet", "--no-progress")
    packets, ip_bytes = Counter(), Counter()
    for c in read_conn_logs(out / "conn.log")[0].to_pylist():
        if c["proto"] not in PROTO_NAMES.values():
            continue
        orig, resp = (c["id.orig_h"], c["id.orig_p"]), (c["id.resp_h"], c["id.resp_p"])
        for (src, sport), (dst, dport), side in ((orig, resp, "orig"), (resp, orig, "resp")):
            if c[f"{side}_pkts"]:
                key = (c["proto"], src, sport, dst, dport)
                packets[key] += c[f"{side}_pkts"]
                ip_bytes[key] += c[f"{side}_ip_bytes"]
    return packets, ip_bytes


def differences(trace: Path, out: Path) -> list[str]:
    """Where the two decoders disagree on `trace`, one line per directed 5-tuple."""
    a_packets, a_bytes = analyzer_directions(trace, out)
    e_packets, e_bytes, _, _ = engine_directions(trace)
    return [
        f"{k}: analyzer {a_packets[k]} packets / {a_bytes[k]} IP bytes, engine {e_packets[k]} / {e_bytes[k]}"
        for k in sorted(set(a_packets) | set(e_packets), key=str)
        if (a_packets[k], a_bytes[k]) != (e_packets[k], e_bytes[k])
    ]


def dataset(rel: str) -> Path:
    """datasets/REL: datasets/real (the bundled traces) or datasets/public."""
    return public_dataset(rel.removeprefix("public/")) if rel.startswith("public/") else ROOT / "datasets" / rel


@pytest.mark.parametrize("rel", AGREE)
def test_analyzer_and_engine_decode_alike(rel, tmp_path):
    trace = dataset(rel)
    diff = differences(trace, tmp_path / "profile")
    assert not diff, f"{rel}: the decoders disagree on {len(diff)} directions:\n" + "\n".join(diff[:20])


@pytest.mark.parametrize("rel", AGREE)
def test_engine_conn_hash_is_one_per_connection_both_ways(rel):
    _, _, conn_hashes, flow_hashes = engine_directions(dataset(rel))
    by_connection = defaultdict(set)
    for (proto, src, sport, dst, dport), hashes in conn_hashes.items():
        assert len(hashes) == 1, f"{rel}: {src}:{sport} -> {dst}:{dport} has conn_hash values {hashes}"
        by_connection[(proto, *sorted([(src, sport), (dst, dport)]))] |= hashes
    both_ways = [h for h in by_connection.values() if len(h) != 1]
    assert not both_ways, f"{rel}: a connection's two directions hash apart: {both_ways[:5]}"
    owners = Counter(next(iter(h)) for h in by_connection.values())
    assert all(n == 1 for n in owners.values()), f"{rel}: two connections share a conn_hash"
    for (proto, src, sport, dst, dport), hashes in flow_hashes.items():
        back = flow_hashes.get((proto, dst, dport, src, sport))
        if back is not None and (src, sport) != (dst, dport):
            assert hashes != back, f"{rel}: flow_hash does not tell {src}:{sport} <-> {dst}:{dport} apart"


@pytest.mark.parametrize("rel", sorted(KNOWN_DIFFERENCES))
def test_known_differences_still_differ(rel, tmp_path):
    diff = differences(dataset(rel), tmp_path / "profile")
    assert diff, f"{rel} now decodes alike ({KNOWN_DIFFERENCES[rel]} no longer holds): move it to AGREE"


def test_synth_connections_are_the_decoders_connections(tmp_path):
    """The synthesizer's flow identity (its truth table) against both decoders."""
    example = ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"
    tracelab_ok("profile", str(example), "--local", "10.0.0.0/8", "-o", str(tmp_path / "p"), "--quiet")
    tracelab_ok("model", "derive", str(tmp_path / "p"), "-o", str(tmp_path / "m.model.json"))
    trace, truth_file = tmp_path / "s.pcap", tmp_path / "truth.parquet"
    tracelab_ok(
        "synth", str(tmp_path / "m.model.json"), "-o", str(trace), "--duration", "60s", "--truth", str(truth_file)
    )
    truth = {
        (
            c["proto"],
            str(ipaddress.ip_address(c["orig_h"])),
            c["orig_p"],
            str(ipaddress.ip_address(c["resp_h"])),
            c["resp_p"],
        )
        for c in pq.read_table(truth_file).to_pylist()
    }
    assert len(truth) > 100
    diff = differences(trace, tmp_path / "sp")
    assert not diff, "the decoders disagree on the synthetic trace:\n" + "\n".join(diff[:20])
    originators = {
        (c["proto"], c["id.orig_h"], c["id.orig_p"], c["id.resp_h"], c["id.resp_p"])
        for c in read_conn_logs(tmp_path / "sp" / "conn.log")[0].to_pylist()
    }
    assert originators == truth, (
        f"analyzer only: {sorted(originators - truth)[:5]}; synth only: {sorted(truth - originators)[:5]}"
    )
    _, _, conn_hashes, _ = engine_directions(trace)
    groups = defaultdict(set)
    for (proto, src, sport, dst, dport), hashes in conn_hashes.items():
        groups[next(iter(hashes))].add((proto, *sorted([(src, sport), (dst, dport)])))
    canonical = {(p, *sorted([(a, ap), (b, bp)])) for p, a, ap, b, bp in truth}
    assert all(len(g) == 1 for g in groups.values())
    assert {next(iter(g)) for g in groups.values()} == canonical
