"""UDP servers in hosts.parquet (docs/analyzer.md, "hosts.parquet"): a host that
answered UDP on one port to two or more distinct (address, port) peers is a
server, as a host that accepted TCP with a SYN/ACK is. Checked against the
truth of a generated trace (datasets/generate: 48 local TCP servers in
10.2.1.0/24, the site resolver 10.2.0.53, public resolvers 8.8.{0,4}.{4,8},
clients in 10.1.0.0/20 that never answer) and a bundled real trace."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from support import tcpmix, tracelab_ok

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ipaddress.ip_network("10.1.0.0/20")
LOCAL_SERVERS = ipaddress.ip_network("10.2.1.0/24")
RESOLVER = "10.2.0.53"
PUBLIC_RESOLVERS = {"8.8.0.4", "8.8.0.8", "8.8.4.4", "8.8.4.8"}


def _profile(trace: Path, out: Path, *local: str) -> dict[str, dict]:
    tracelab_ok("profile", str(trace), *local, "-o", str(out))
    return {r["host"]: r for r in pq.read_table(out / "hosts.parquet").to_pylist()}


@pytest.fixture(scope="module")
def tcpmix_profile(tmp_path_factory):
    d = tmp_path_factory.mktemp("udp-servers")
    hosts = _profile(tcpmix(d / "t.pcap", packets=60_000, seed=3), d / "p", "--local", "10.0.0.0/8")
    return hosts, d / "p"


def test_resolvers_are_servers_and_clients_are_not(tcpmix_profile):
    hosts, _ = tcpmix_profile
    servers = {h for h, r in hosts.items() if r["server"]}
    assert hosts[RESOLVER]["server"]
    seen_public = PUBLIC_RESOLVERS & hosts.keys()
    assert seen_public and seen_public <= servers
    # The local servers are exactly the generator's: its TCP servers that
    # accepted a connection here, and the resolver.
    local = {h for h in servers if hosts[h]["local"]}
    tcp_servers = {h for h in local if ipaddress.ip_address(h) in LOCAL_SERVERS}
    assert local == tcp_servers | {RESOLVER}
    assert 40 <= len(tcp_servers) <= 48
    assert not any(ipaddress.ip_address(h) in CLIENTS for h in servers)
    # Every UDP host keeps its features: the resolver's connections count in.
    assert hosts[RESOLVER]["incnx"] > 100 and hosts[RESOLVER]["dportin"] == 1


def test_dns_lookups_are_client_to_server(tcpmix_profile):
    """With the resolver a server, a lookup from a local client to it is
    client -> local server (`lc-ls`), its originator the client."""
    _, profile = tcpmix_profile
    conns = pq.read_table(profile / "connections.parquet", columns=["id.resp_h", "proto", "category", "orig_is_client"])
    rows = [r for r in conns.to_pylist() if r["proto"] == "udp" and r["id.resp_h"] == RESOLVER]
    assert rows
    assert {r["category"] for r in rows} == {"lc-ls"}
    assert all(r["orig_is_client"] for r in rows)


def test_real_trace_resolver_is_a_server(tmp_path):
    """zeek-wikipedia.pcap: 141.142.2.2 answers one client's lookups on port 53
    from many source ports; the client answers nothing over UDP."""
    hosts = _profile(ROOT / "datasets" / "real" / "zeek-wikipedia.pcap", tmp_path / "p")
    assert hosts["141.142.2.2"]["server"]
    assert not hosts["141.142.220.118"]["server"]


def test_conn_log_reader_finds_the_same_servers(tcpmix_profile):
    """tracelab_models.profile.host_features, the same rule over Zeek conn.log
    rows (for `fidelity`/`roles` given a conn.log), marks the servers
    hosts.parquet marks."""
    from tracelab_models.profile import host_features
    from tracelab_models.zeeklog import read_conn_logs

    hosts, profile = tcpmix_profile
    conns, _ = read_conn_logs(profile / "conn.log")
    from_log = {r["host"]: r["server"] for r in host_features(conns).to_pylist()}
    assert from_log == {h: r["server"] for h, r in hosts.items()}
