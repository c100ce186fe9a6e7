"""From a workload model to the packets of a synthetic trace, as a capture point at the
enterprise edge would see them (times are the monitor's, in integer microseconds, so
what the writer plans is exactly what the pcap holds).

Connections (see also the package docstring):

1. **Arrivals and sizes**: connection inter-arrivals and sizes (payload bytes, both
   directions) are drawn from the model's best-fitting families, each capped so that
   its mean stays the model's observed mean (`sampling.mean_preserving_cap`).
2. **Scope**: connections are given to intranet/internet largest first, each to the
   scope furthest below its byte share (topological model, Table 9.1), so the byte
   shares hold however heavy the size tail is.
3. **Transfer**: trains alternate between the initiator (first) and the responder;
   train sizes and packet sizes are drawn from the side's histograms (data packets =
   the histogram's IP lengths above a bare header with options, 80 B). A connection
   stops at its size: the last train is cut to it. Both parties send at least one
   train, so every TCP connection is well-behaved and has RTT samples on both sides.
4. **Timing**: the train of party X starts a warm-up after the other party's last
   data packet (the first train: right after the handshake, warm-up 0). The
   initiator's warm-ups in the model include that 0 of every connection's first
   train; the others are drawn from the rest of the distribution so the mixture is
   the model's. Packets of a train are spaced by a gap chosen per connection side so
   that the analyzer's pacing per packet (Actual - WarmUp - T_theory, docs/reference/algorithms.md
   §9.2) equals a draw of the model's pacing, when a gap >= 0 can (a negative gap
   cannot: single-packet trains or pacing below -T_theory/n give gap 0).
5. **RTT**: per connection a log-normal RTT with the scope's median (and its mean,
   if above the median); it is split into one-way delays monitor-initiator d_o and
   monitor-responder d_r (Internet: `local_rtt_fraction` on the local initiator's
   side; intranet: halves). Every packet that takes sequence space (SYN, data, FIN)
   seen at t is acknowledged by the peer at t + 2 d_peer (a pure ACK per data
   segment, no delayed ACK), and every packet's ACK field covers exactly what its
   sender has acknowledged by then. So the DATA-ACK samples are 2 d_r and 2 d_o and
   RTT_A-B = 2 (d_o + d_r) exactly.
6. **TCP**: SYN, SYN/ACK, ACK (no options, window 65535); data with PSH on a
   train's last packet; teardown: the initiator's FIN/ACK 1 us after the
   connection's last packet, the responder's FIN/ACK, the last ACK.
7. **UDP** (flows of a scope whose apps model has no TCP trains, and a share
   `udp_share` of the others): the same trains of datagrams, without handshake,
   acknowledgements or teardown.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, field

import numpy as np

from . import pcap
from .sampling import (
    SynthError,
    best_fit,
    cdf_at,
    draw_capped,
    draw_hist,
    draw_quantiles,
    mean_preserving_cap,
    observed_mean,
    rtt_sampler,
)

SCOPES = ("intranet", "internet")
SIDES = ("orig", "resp")
PURE_ACK_MAX_IP_LEN = 80  # IP 20 + TCP 60: longer packets surely carry payload
# Address plan (as tracelab's TRex profiles): `--local 10.0.0.0/8` makes 10/8 the enterprise.
NETS = {"intranet": ("10.1.0.0/16", "10.2.0.0/16"), "internet": ("10.3.0.0/16", "48.0.0.0/16")}
# Payloads are zeros: only ports whose protocols tshark reads zeros of without calling
# the packet malformed (SSH, MySQL and LDAP do; checked by the tests).
SERVER_PORTS = (443, 80, 445, 8080)
UDP_PORT = 9  # discard: tshark reads zero payloads there as data (DNS on 53 would not)
EPHEMERAL = 1024
TIME_BITS = 40  # microseconds since the first arrival in search keys: 12.7 days
START = 1_700_000_000  # 2023-11-14 22:13:20 UTC, as datasets/generate's tcpmix


@dataclass
class Options:
    connections: int | None = None  # default: the model's connection count
    seed: int = 1
    udp_share: float = 0.0  # share of connections sent as UDP where TCP is possible
    local_rtt_fraction: float = 0.1  # Internet: part of the RTT on the local initiator's side
    clients: int = 200  # hosts per scope
    servers: int = 16
    max_flow_bytes: float = 1e8  # hard cap on a connection's size
    max_interarrival_s: float = 3600.0  # hard cap on an inter-arrival
    max_packets: int = 20_000_000  # refuse to plan a larger trace
    start_s: int = START
    rtt_s: dict = field(default_factory=dict)  # scope -> RTT overriding the model's median


@dataclass
class Trace:
    packets: dict  # columns, time ordered (see pcap.records)
    connections: dict  # ground truth per connection (what the analyzer must find)
    summary: dict


def _hosts(net: str, count: int, idx: np.ndarray) -> np.ndarray:
    base = int(ipaddress.ip_network(net).network_address) + 1
    return (base + idx % count).astype(np.uint32)


def _segment_cumsum(x: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum of x restarting at each segment (seg sorted)."""
    c = np.cumsum(x)
    first = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
    base = np.repeat(c[first] - x[first], np.diff(np.r_[first, len(x)]))
    return c - base


def flight(k: int) -> int:
    """Eq. 5.10 (slow start, delayed ACKs): w_k = floor(2^((k-1)/2) + 2^((k-2)/2)) in
    integers: 1, 2, 3, 4, 6, 9, 13, 19, 27, ... (the analyzer's `flight`)."""
    j = k // 2
    if k % 2:  # k = 2j + 1
        return 2**j + (math.isqrt(2 ** (2 * j - 1)) if j else 0)
    return math.isqrt(2 ** (2 * j - 1)) + 2 ** (j - 1)


def flights_rounds(n: np.ndarray) -> np.ndarray:
    """r - 1 for n packets, r = the smallest number of flights carrying n (0 for n = 0):
    T_theory = (r - 1) RTT_A-B (docs/reference/algorithms.md §9.2, ⚠AMB-30)."""
    cum = [flight(1)]
    while cum[-1] < int(n.max(initial=0)):
        cum.append(cum[-1] + flight(len(cum) + 1))
    return np.where(n > 0, np.searchsorted(np.asarray(cum), n), 0)


class _Model:
    """The parts of a workload model the writer uses, checked once."""

    def __init__(self, model: dict, opts: Options):
        self.m = model
        shares = model["topological"]["shares"]
        self.scope_share = np.array([shares[s]["download"] + shares[s]["upload"] for s in SCOPES])
        if self.scope_share.sum() <= 0:
            raise SynthError("the model's intranet and internet shares are all 0")
        self.apps = model["apps"]
        self.tcp_ok = np.array([self._tcp_ok(s) for s in SCOPES])
        self.rtt = {}
        for s in SCOPES:
            if s in opts.rtt_s:
                self.rtt[s] = (float(opts.rtt_s[s]), 0.0)
            elif self.scope_share[SCOPES.index(s)] > 0 and self.tcp_ok[SCOPES.index(s)]:
                try:
                    self.rtt[s] = rtt_sampler(model["topological"]["rtt_s"][s])
                except SynthError:
                    raise SynthError(
                        f"the model has no {s} RTT; give one (rtt_s={{'{s}': 0.001}}, --rtt {s}=1ms)"
                    ) from None

    def _tcp_ok(self, scope: str) -> bool:
        a = self.apps[scope]
        return all(
            sum(a[side]["train_size_pkts"]["counts"]) > 0 and self.data_sizes(scope, side) is not None for side in SIDES
        )

    def data_sizes(self, scope: str, side: str):
        """(keep-mask function) of the side's data packet IP lengths, or None."""
        v = np.asarray(self.apps[scope][side]["packet_size_bytes"]["values"], dtype=float)
        c = np.asarray(self.apps[scope][side]["packet_size_bytes"]["counts"], dtype=float)
        for floor in (PURE_ACK_MAX_IP_LEN, pcap.IP_LEN + pcap.TCP_LEN):
            if ((v > floor) & (c > 0)).any():
                return lambda x, f=floor: (x > f) & (x <= 1500)
        return None


def _draw_pools(mdl: _Model, need: int, rng) -> dict:
    """Per (scope, side): pools of train sizes and data IP lengths drawn in bulk."""
    pools = {}
    for s in SCOPES:
        for side in SIDES:
            keep = mdl.data_sizes(s, side)
            trains = mdl.apps[s][side]["train_size_pkts"]
            pools[s, side] = {
                "trains": draw_hist(trains, need, rng).astype(np.int64) if sum(trains["counts"]) else None,
                "sizes": draw_hist(mdl.apps[s][side]["packet_size_bytes"], need, rng, keep).astype(np.int64)
                if keep
                else None,
                "t": 0,
                "p": 0,
            }
    return pools


def _take(pool: dict, key: str, k: int, rng) -> np.ndarray:
    """The next k values of a pool, refilled (by resampling the pool) when used up."""
    at = pool["p" if key == "sizes" else "t"]
    arr = pool[key]
    if at + k > len(arr):
        pool[key] = arr = rng.choice(arr, size=max(2 * len(arr), k))
        at = 0
    pool["p" if key == "sizes" else "t"] = at + k
    return arr[at : at + k]


def synthesize(model: dict, opts: Options | None = None) -> Trace:
    opts = opts or Options()
    if not 0 <= opts.udp_share <= 1:
        raise SynthError(f"udp_share {opts.udp_share}: expected a fraction in [0, 1]")
    mdl = _Model(model, opts)
    n = int(opts.connections if opts.connections is not None else model["flows"]["connections"])
    if n < 1:
        raise SynthError("no connections to write (the model has 0; give --connections N)")
    if n > (2**16 - EPHEMERAL) * opts.clients:
        raise SynthError(
            f"{n} connections: at most {(2**16 - EPHEMERAL) * opts.clients} distinct 5-tuples "
            f"with {opts.clients} clients per scope; raise --clients"
        )
    rng = np.random.default_rng(opts.seed)

    # 1. Arrivals and sizes.
    flows = model["flows"]
    ia_dist = best_fit(flows["interarrival_s"], "flow inter-arrivals")
    ia_cap = mean_preserving_cap(ia_dist, observed_mean(flows["interarrival_s"]), opts.max_interarrival_s)
    size_dist = best_fit(flows["size_bytes"], "flow sizes")
    size_cap = mean_preserving_cap(size_dist, observed_mean(flows["size_bytes"]), opts.max_flow_bytes)
    gaps = np.round(draw_capped(ia_dist, ia_cap, n, rng) * 1e6).astype(np.int64)
    arrival = opts.start_s * 1_000_000 + np.concatenate(([0], np.cumsum(gaps[1:])))
    size = np.maximum(np.round(draw_capped(size_dist, size_cap, n, rng)), 2).astype(np.int64)

    # 2. Scope by byte share, largest connection first.
    scope = np.zeros(n, dtype=np.int64)
    target = mdl.scope_share / mdl.scope_share.sum() * size.sum()
    got = np.zeros(2)
    for i in np.argsort(-size, kind="stable"):
        s = int(np.argmax(np.where(mdl.scope_share > 0, target - got, -np.inf)))
        scope[i] = s
        got[s] += size[i]

    # Protocol: UDP where the scope has no TCP apps model, else with probability udp_share.
    udp = ~mdl.tcp_ok[scope] | (rng.random(n) < opts.udp_share)
    for s in set(scope[udp].tolist()):
        if any(mdl.data_sizes(SCOPES[s], side) is None for side in SIDES):
            raise SynthError(
                f"{SCOPES[s]}: the model has no data packet sizes for both sides; "
                "no TCP or UDP flow can be written for this scope"
            )

    # 3. Trains (a Python loop per train; packets are arrays from here on).
    pools = _draw_pools(mdl, max(4 * n, 1024), rng)
    shares = model["topological"]["shares"]
    up_frac = [shares[sc]["upload"] / max(shares[sc]["upload"] + shares[sc]["download"], 1e-300) for sc in SCOPES]
    t_conn, t_side, t_npk, pay = [], [], [], []
    for i in range(n):
        sc = SCOPES[scope[i]]
        left, side, k = int(size[i]), 0, 0
        while left > 0:
            pool = pools[sc, SIDES[side]]
            npk = int(_take(pool, "trains", 1, rng)[0]) if pool["trains"] is not None else 1
            ip = _take(pool, "sizes", npk, rng)
            b = ip - (28 if udp[i] else 40)  # payload of a full packet
            limit = left
            if k == 0:
                # The responder gets at least one byte; a connection smaller than twice
                # the initiator's first train (no room for a full exchange) is split by
                # the scope's upload share, as the model's small transfers are.
                small = left < 2 * int(b.sum())
                limit = min(max(int(left * up_frac[scope[i]]), 1), left - 1) if small else left - 1
            cum = np.cumsum(b)
            if cum[-1] >= limit:
                npk = int(np.searchsorted(cum, limit)) + 1
                b = b[:npk].copy()
                b[-1] = limit - (cum[npk - 2] if npk > 1 else 0)
            t_conn.append(i)
            t_side.append(side)
            t_npk.append(npk)
            pay.append(b)
            left -= int(b.sum())
            side ^= 1
            k += 1
    t_conn = np.asarray(t_conn, dtype=np.int64)
    t_side = np.asarray(t_side, dtype=np.int64)
    t_npk = np.asarray(t_npk, dtype=np.int64)
    pay = np.concatenate(pay)
    n_data = len(pay)
    tcp_data = int(t_npk[~udp[t_conn]].sum())
    est = n_data + tcp_data + 7 * int((~udp).sum())
    if est > opts.max_packets:
        raise SynthError(
            f"the trace would hold {est} packets, above max_packets={opts.max_packets}; write fewer connections"
        )

    # 5. RTTs and one-way delays (us, >= 1).
    rtt = np.zeros(n)
    for s, sc in enumerate(SCOPES):
        sel = (scope == s) & ~udp
        if sel.any():
            med, sigma = mdl.rtt[sc]
            rtt[sel] = med * np.exp(sigma * rng.standard_normal(int(sel.sum())))
    frac = np.where(scope == 1, opts.local_rtt_fraction, 0.5)
    d_o = np.maximum(np.round(rtt * frac / 2 * 1e6), 1).astype(np.int64)
    d_r = np.maximum(np.round(rtt * (1 - frac) / 2 * 1e6), 1).astype(np.int64)
    d_o[udp] = d_r[udp] = 0

    # 4. Timing: warm-ups, per-side gaps, train starts.
    first = np.r_[True, t_conn[1:] != t_conn[:-1]]
    warm = np.zeros(len(t_conn), dtype=np.int64)
    for s, sc in enumerate(SCOPES):
        for side, name in enumerate(SIDES):
            sel = ~first & (t_side == side) & (scope[t_conn] == s)
            if not sel.any():
                continue
            emp = mdl.apps[sc][name]["warmup_s"]
            if not emp["n"]:
                continue  # no warm-ups in the model: back to back
            u0 = 0.0
            if name == "orig":
                tcp_trains = (t_side == 0) & (scope[t_conn] == s) & ~udp[t_conn]
                z = first[tcp_trains].sum() / max(tcp_trains.sum(), 1)
                u0 = min(z, cdf_at(emp, 0.0))
            warm[sel] = np.round(np.maximum(draw_quantiles(emp, int(sel.sum()), rng, u0), 0) * 1e6)
    side_key = t_conn * 2 + t_side
    n_side = np.bincount(side_key, weights=t_npk, minlength=2 * n).astype(np.int64)
    m_side = np.bincount(side_key, minlength=2 * n)
    theory = flights_rounds(n_side) * np.repeat(2 * (d_o + d_r), 2)
    gap = np.zeros(2 * n, dtype=np.int64)
    for s, sc in enumerate(SCOPES):
        for side, name in enumerate(SIDES):
            emp = mdl.apps[sc][name]["pacing_per_pkt_s"]
            keys = np.flatnonzero(
                (np.arange(2 * n) % 2 == side) & (scope[np.arange(2 * n) // 2] == s) & (n_side > m_side)
            )
            if emp["n"] and len(keys):
                p = draw_quantiles(emp, len(keys), rng) * 1e6
                g = (p * n_side[keys] + theory[keys]) / (n_side[keys] - m_side[keys])
                gap[keys] = np.maximum(np.round(g), 0)
    dur = (t_npk - 1) * gap[side_key]
    prev_dur = np.r_[0, dur[:-1]]
    prev_dur[first] = 0
    t0 = arrival + 2 * (d_o + d_r)  # after the handshake (UDP: d = 0)
    start = t0[t_conn] + _segment_cumsum(warm + prev_dur, t_conn)

    # Data packets.
    tr = np.repeat(np.arange(len(t_conn)), t_npk)
    j = np.arange(n_data) - np.repeat(np.cumsum(t_npk) - t_npk, t_npk)
    data = {
        "conn": t_conn[tr],
        "dir": t_side[tr],
        "time": start[tr] + j * gap[side_key[tr]],
        "len": pay,
        "flags": np.where(j == t_npk[tr] - 1, pcap.PSH | pcap.ACK, pcap.ACK),
    }
    return _assemble(
        n,
        data,
        arrival,
        udp,
        scope,
        size,
        d_o,
        d_r,
        t_conn,
        t_side,
        warm,
        gap,
        opts,
        rng,
        {"flow_size_bytes": size_cap, "interarrival_s": ia_cap},
        mdl,
    )


def _assemble(n, data, arrival, udp, scope, size, d_o, d_r, t_conn, t_side, warm, gap, opts, rng, caps, mdl) -> Trace:
    """Handshakes, acknowledgements and teardowns around the data packets; sequence and
    acknowledgement numbers; addresses; time order."""
    tcp = ~udp
    dmine = np.stack([d_o, d_r], axis=1)  # one-way delay monitor -> party
    cols = {k: [] for k in ("conn", "dir", "time", "len", "flags", "space")}

    def add(conn, dir_, time, length, flags, space):
        for k, v in zip(cols, (conn, dir_, time, length, flags, space), strict=True):
            cols[k].append(np.broadcast_to(v, np.shape(conn)).astype(np.int64))

    c = np.flatnonzero(tcp)
    a = arrival[c]
    add(c, 0, a, 0, pcap.SYN, 1)
    add(c, 1, a + 2 * d_r[c], 0, pcap.SYN | pcap.ACK, 1)
    add(c, 0, a + 2 * d_r[c] + 2 * d_o[c], 0, pcap.ACK, 0)
    add(data["conn"], data["dir"], data["time"], data["len"], data["flags"], data["len"])
    # One pure ACK per TCP data segment, 2 d_peer after it.
    dt = tcp[data["conn"]]
    dc, dd = data["conn"][dt], data["dir"][dt]
    add(dc, 1 - dd, data["time"][dt] + 2 * dmine[dc, 1 - dd], 0, pcap.ACK, 0)
    # Teardown after the connection's last packet so far.
    last = np.full(n, -1, dtype=np.int64)
    for t, cc in zip(cols["time"], cols["conn"], strict=True):
        np.maximum.at(last, cc, t)
    fin = last[c] + 1
    add(c, 0, fin, 0, pcap.FIN | pcap.ACK, 1)
    add(c, 1, fin + 2 * d_r[c], 0, pcap.FIN | pcap.ACK, 1)
    add(c, 0, fin + 2 * d_r[c] + 2 * d_o[c], 0, pcap.ACK, 0)
    P = {k: np.concatenate(v) for k, v in cols.items()}
    order = np.arange(len(P["conn"]))  # generation order breaks ties within a connection

    # Sequence numbers: per (connection, direction) in time order, ISN + space sent before.
    isn = rng.integers(0, 2**32, size=(n, 2), dtype=np.int64)
    key = P["conn"] * 2 + P["dir"]
    o = np.lexsort((order, P["time"], key))
    sent = np.empty_like(P["space"])
    sent[o] = _segment_cumsum(P["space"][o], key[o]) - P["space"][o]
    seq = (isn[P["conn"], P["dir"]] + sent) % 2**32
    # Acknowledgements: a packet from party D at T covers the peer's space acknowledged
    # by T, i.e. peer packets seen at t with t + 2 d_D <= T.
    # Searched in one sorted array of keys (connection, sender) x 2^SHIFT + time since
    # the first arrival.
    rel = P["time"] - arrival[0]
    if rel.max() >= 2**TIME_BITS or 2 * n >= 2 ** (62 - TIME_BITS):
        raise SynthError(
            f"{n} connections over {rel.max() / 864e8:.1f} days: beyond what one trace "
            f"holds here ({2 ** (61 - TIME_BITS)} connections, {2**TIME_BITS / 864e8:.0f} days)"
        )
    ack_at = rel + 2 * dmine[P["conn"], 1 - P["dir"]]
    ev = np.flatnonzero(P["space"] > 0)
    ev_key = (P["conn"][ev] * 2 + P["dir"][ev]) * 2**TIME_BITS + ack_at[ev]
    eo = np.argsort(ev_key, kind="stable")
    ev_sorted = ev_key[eo]
    cum = np.r_[0, np.cumsum(P["space"][ev][eo])]
    peer = (P["conn"] * 2 + 1 - P["dir"]) * 2**TIME_BITS
    acked = cum[np.searchsorted(ev_sorted, peer + rel, "right")] - cum[np.searchsorted(ev_sorted, peer, "left")]
    ack = np.where(P["flags"] & pcap.ACK, (isn[P["conn"], 1 - P["dir"]] + acked) % 2**32, 0)

    # Addresses and ports.
    conn_idx = np.arange(n)
    client = np.zeros(n, dtype=np.uint32)
    server = np.zeros(n, dtype=np.uint32)
    cl_i = rng.integers(0, opts.clients, n)
    sv_i = rng.integers(0, opts.servers, n)
    for s, sc in enumerate(SCOPES):
        sel = scope == s
        client[sel] = _hosts(NETS[sc][0], opts.clients, cl_i[sel])
        server[sel] = _hosts(NETS[sc][1], opts.servers, sv_i[sel])
    # Ephemeral ports: the k-th connection of a client uses port 1024 + k (mod the range),
    # so 5-tuples repeat only after a client's 64512 connections.
    host_key = scope * opts.clients + cl_i
    ho = np.argsort(host_key, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[ho] = _segment_cumsum(np.ones(n, dtype=np.int64), host_key[ho]) - 1
    sport = EPHEMERAL + rank % (2**16 - EPHEMERAL)
    dport = np.where(udp, UDP_PORT, np.asarray(SERVER_PORTS)[sv_i % len(SERVER_PORTS)])

    fwd = P["dir"] == 0
    cc = P["conn"]
    out = {
        "time_us": P["time"],
        "proto": np.where(udp[cc], pcap.UDP, pcap.TCP),
        "src": np.where(fwd, client[cc], server[cc]),
        "dst": np.where(fwd, server[cc], client[cc]),
        "sport": np.where(fwd, sport[cc], dport[cc]),
        "dport": np.where(fwd, dport[cc], sport[cc]),
        "ip_len": P["len"] + np.where(udp[cc], pcap.IP_LEN + pcap.UDP_LEN, pcap.IP_LEN + pcap.TCP_LEN),
        "seq": seq,
        "ack": ack,
        "flags": P["flags"],
    }
    final = np.lexsort((order, cc, P["time"]))
    out = {k: v[final] for k, v in out.items()}
    out["ip_id"] = np.arange(len(final)) % 2**16

    side_bytes = np.zeros((n, 2), dtype=np.int64)
    np.add.at(side_bytes, (data["conn"], data["dir"]), data["len"])
    truth = {
        "conn": conn_idx,
        "ts_us": arrival,
        "proto": np.where(udp, "udp", "tcp"),
        "scope": np.asarray(SCOPES)[scope],
        "orig_h": client,
        "orig_p": sport,
        "resp_h": server,
        "resp_p": dport,
        "orig_bytes": side_bytes[:, 0],
        "resp_bytes": side_bytes[:, 1],
        "orig_trains": np.bincount(t_conn[t_side == 0], minlength=n),
        "resp_trains": np.bincount(t_conn[t_side == 1], minlength=n),
        "rtt_us": 2 * (d_o + d_r),
        "d_orig_us": d_o,
        "d_resp_us": d_r,
        "gap_orig_us": gap[0::2],
        "gap_resp_us": gap[1::2],
    }
    summary = {
        "packets": len(final),
        "connections": {
            "total": n,
            "tcp": int(tcp.sum()),
            "udp": int(udp.sum()),
            "by_scope": {sc: int((scope == s).sum()) for s, sc in enumerate(SCOPES)},
        },
        "payload_bytes": int(size.sum()),
        "duration_s": float((out["time_us"][-1] - out["time_us"][0]) / 1e6) if len(final) else 0.0,
        "caps": caps,
        "trains": {"total": len(t_conn), "warmups_us_sum": int(warm.sum())},
        "seed": opts.seed,
        "source_trace": mdl.m["provenance"].get("source_trace"),
    }
    return Trace(out, truth, summary)


def write_pcap(trace: Trace, path, snaplen: int = 65535) -> None:
    pcap.write(path, trace.packets, snaplen)
