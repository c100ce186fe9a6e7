"""The faithful synthesizer: a pcap from a workload model's `traffic` section
(tracelab_models/traffic.py) that profiles like the trace the model came from.

1. **Counts**: the trace lasts the original's duration (or --duration D, every
   count scaled by D / original); connections per scope x protocol x state as in
   the model (largest remainders), in a random order.
2. **Arrivals**: inter-arrivals drawn from the model (stratified: the i-th of n
   draws falls in the i-th n-quantile, in a random order), scaled so that they
   span the original's first to last arrival: the connection rate comes back.
3. **Per connection** (per state group): total payload bytes, the originator's
   fraction, duration, data trains (TCP) or datagrams per side (UDP), the
   handshake RTT split, each drawn stratified from its fitted family or
   empirical table, and ordered by the ranks of Gaussian-copula draws with the
   model's correlations (Iman-Conover), so e.g. large connections keep their long
   durations and many trains.
4. **Services** per class by the model's counts; **hosts**: local ones in the
   local prefixes (the model's `--local` unless given), remote ones in
   198.18.0.0/15; each (class, role) slot gets a host of the model's host table,
   whose rows give each host its connections per class and role: host counts,
   fan-in and fan-out, and hosts both client and server, come back.
5. **TCP**: SYN, SYN/ACK (rtt_syn_synack after), ACK (rtt_synack_ack after); data
   in alternating trains, the originator's first, packets of at most the side's
   MSS, one pure ACK per second segment and per train end from the peer after its
   part of the RTT (plus the model's extra DATA-ACK delay); warm-ups and in-train
   gaps drawn from the model and scaled so the connection lasts its drawn
   duration; closed by FIN/FIN/ACK (SF), RST of either side (RSTO, RSTR), not at
   all (S1) or seen mid-stream (OTH). S0: SYN and its retransmissions; REJ: SYN,
   RST/ACK. **UDP**: request/response datagrams alternating over the duration.
6. **Streaming**: connections are written in chunks in arrival order; packets of
   a chunk earlier than the next chunk's first arrival are final and written,
   the rest wait: besides the plan (a few arrays of one value per connection),
   memory is bounded by the packets of the connections open at a time. Same
   model, options and seed: the same bytes.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

import numpy as np
from tracelab_models.distributions import model_ppf

from . import payloads, pcap
from .sampling import SynthError

SCOPES = ("intranet", "internet")
CLASSES = ("intranet/tcp", "intranet/udp", "internet/tcp", "internet/udp")
ESTABLISHED = ("SF", "S1", "RSTO", "RSTR", "OTH")
ANSWERED = ("SF", "S1", "RSTO", "RSTR")
STATES = (*ESTABLISHED, "S0", "REJ")
EPHEMERAL = 1024
START = 1_700_000_000  # 2023-11-14 22:13:20 UTC, as datasets/generate's tcpmix
MAX_UDP_PAYLOAD = 1472
CHUNK = 2000  # connections planned into packets at once
TIME_BITS = 40


@dataclass
class ChainOptions:
    seed: int = 1
    duration_s: float | None = None  # default: the original trace's
    local: list[str] = field(default_factory=list)  # default: the model's --local
    start_s: int = START
    max_packets: int = 50_000_000


def _largest_remainder(weights: np.ndarray, total: int) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if total <= 0 or w.sum() <= 0:
        return np.zeros(len(w), dtype=np.int64)
    exact = w / w.sum() * total
    out = np.floor(exact).astype(np.int64)
    rest = total - int(out.sum())
    if rest:
        out[np.argsort(-(exact - out), kind="stable")[:rest]] += 1
    return out


def _stratified(n: int, rng) -> np.ndarray:
    """n uniforms, one in each of the n strata [i/n, (i+1)/n), sorted; the top one at
    most 1 - 1/(2n), so a fitted heavy tail gives no draw beyond what n samples show
    (an empirical table's top stratum is its maximum either way)."""
    u = (np.arange(n) + rng.random(n)) / max(n, 1)
    return np.minimum(u, 1 - 0.5 / max(n, 1))


def _draw_group(group: dict, n: int, rng) -> dict[str, np.ndarray]:
    """n rows of the group's variables. Empirical copula: the model's rows of
    pseudo-observations (each row once per n / rows, the rest a sample without
    replacement) through the margins. Gaussian copula: stratified margins ordered by
    the ranks of correlated normal draws (Iman-Conover)."""
    names = list(group["variables"])
    cop = group["copula"]
    if n == 0:
        return {k: np.zeros(0) for k in names}
    out = {}
    if cop.get("kind") == "empirical" and cop.get("u"):
        u = np.array([[np.nan if v is None else v for v in row] for row in cop["u"]], dtype=float)
        m = len(u)
        pick = np.concatenate([np.tile(np.arange(m), n // m), rng.permutation(m)[: n % m]])
        pick = pick[rng.permutation(n)]
        for j, k in enumerate(cop["variables"]):
            uj = u[pick, j]
            miss = ~np.isfinite(uj)
            uj[miss] = rng.random(int(miss.sum()))
            out[k] = model_ppf(group["variables"][k], np.minimum(uj, 1 - 1e-12))
        return out
    corr = np.asarray(cop["correlation"], dtype=float)
    var = cop["variables"]
    try:
        chol = np.linalg.cholesky(corr) if len(var) else None
    except np.linalg.LinAlgError:
        chol = np.eye(len(var))
    z = rng.standard_normal((n, len(var))) @ chol.T if len(var) else None
    for k in names:
        u = _stratified(n, rng)
        x = model_ppf(group["variables"][k], np.minimum(u, 1 - 1e-12))
        if z is not None and k in var:
            order = np.argsort(np.argsort(z[:, var.index(k)], kind="stable"), kind="stable")
            out[k] = x[order]
        else:
            out[k] = x[rng.permutation(n)]
    tail = cop.get("tail_rows")
    if tail and "total_bytes" in out:
        # The largest connections (their share of this draw) are the model's rows, whole.
        m = len(tail["total_bytes"])
        k = min(n, m, round(m * n / max(group["connections"], 1)))
        if k:
            rows = np.round(np.linspace(m - k, m - 1, k)).astype(np.int64) if k < m else np.arange(m)
            at = np.argsort(out["total_bytes"], kind="stable")[-k:]
            for v, vals in tail.items():
                col = np.array([np.nan if x is None else x for x in vals], dtype=float)[rows[-len(at) :]]
                keep = np.isfinite(col)
                out[v][at[keep]] = col[keep]
    return out


class _Hosts:
    """Addresses for host numbers: local ones in the prefixes, remote in the remote net."""

    def __init__(self, prefixes: list[str], what: str):
        # IPv4 only (the writer's packets are IPv4): IPv6 prefixes are left out.
        self.nets = [n for n in (ipaddress.ip_network(p, strict=False) for p in prefixes) if n.version == 4]
        if not self.nets:
            raise SynthError(f"{what}: an IPv4 prefix is needed (got {', '.join(prefixes) or 'none'}); give --local")
        self.sizes = np.array([max(n.num_addresses - 2, 1) for n in self.nets], dtype=np.int64)
        self.what = what

    def address(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        if len(idx) and idx.max() >= self.sizes.sum():
            raise SynthError(f"{self.what}: {idx.max() + 1} hosts do not fit in {', '.join(map(str, self.nets))}")
        cum = np.r_[0, np.cumsum(self.sizes)]
        which = np.searchsorted(cum, idx, side="right") - 1
        base = np.array([int(n.network_address) + 1 for n in self.nets], dtype=np.int64)
        return (base[which] + idx - cum[which]).astype(np.uint32)


def _assign_hosts(table: dict, key: str, slots: int, rng) -> np.ndarray:
    """Host numbers for `slots` connections of (class, role) `key`: each host of the
    table gets its share of the slots (systematic sampling: exact when the counts
    are the model's), in a random order. Hosts new to the key come after the table's."""
    if slots == 0:
        return np.zeros(0, dtype=np.int64)
    if key not in table["keys"] or not table["rows"]:
        return table_hosts(table) + rng.integers(0, max(1, slots // 4 + 1), slots)
    rows = np.asarray(table["rows"], dtype=np.int64)
    mult = np.asarray(table["multiplicity"], dtype=np.int64)
    per_host = np.repeat(rows[:, table["keys"].index(key)], mult)
    total = per_host.sum()
    if total == 0:
        return table_hosts(table) + rng.integers(0, max(1, slots // 4 + 1), slots)
    cum = np.cumsum(per_host * (slots / total))
    marks = rng.random() + np.arange(slots)
    hosts = np.minimum(np.searchsorted(cum, marks, side="right"), len(per_host) - 1)
    return hosts[rng.permutation(slots)]


def table_hosts(table: dict) -> int:
    return int(np.sum(table["multiplicity"])) if table["rows"] else 0


@dataclass
class Plan:
    """One row per connection, in arrival order."""

    n: int
    arrival: np.ndarray  # us
    cls: np.ndarray  # index into CLASSES
    state: np.ndarray  # index into STATES (UDP: SF or S0)
    udp: np.ndarray
    scope: np.ndarray  # 0 intranet, 1 internet
    orig_bytes: np.ndarray
    resp_bytes: np.ndarray
    duration: np.ndarray  # us
    trains: np.ndarray
    rtt_a: np.ndarray  # SYN -> SYN/ACK, us (2 x monitor-responder delay)
    rtt_b: np.ndarray  # SYN/ACK -> ACK, us
    orig_pkts: np.ndarray  # UDP
    resp_pkts: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    sport: np.ndarray
    dport: np.ndarray
    mss: np.ndarray  # (n, 2)
    ack_extra: np.ndarray  # (n, 2) us: extra DATA-ACK delay of the data sent by orig / resp
    signature: np.ndarray  # (n, 2) payloads.TABLE index of the service's first bytes per side (0: none)
    summary: dict


def _us(x) -> np.ndarray:
    return np.maximum(np.round(np.nan_to_num(np.asarray(x, dtype=float)) * 1e6), 0).astype(np.int64)


def plan(model: dict, opts: ChainOptions) -> Plan:
    tr = model.get("traffic")
    if not tr:
        raise SynthError(
            "the model has no `traffic` section (derived by an older tracelab): run `tracelab model derive` again"
        )
    rng = np.random.default_rng(opts.seed)
    d0 = float(tr["duration_s"])
    dur = float(opts.duration_s) if opts.duration_s is not None else d0
    if dur <= 0:
        raise SynthError(f"duration {dur:g} s: give a positive --duration")
    scale = dur / d0 if d0 > 0 else 1.0
    local = opts.local or tr["local"]
    if not local:
        raise SynthError("the model records no --local prefixes (profiled without --local): give --local PREFIX")
    local_hosts = _Hosts(local, "local hosts")
    remote_hosts = _Hosts([tr["remote_net"]], "remote hosts")

    # 1. Counts per (class, state).
    cells, weights = [], []
    for c, name in enumerate(CLASSES):
        entry = tr["classes"].get(name)
        if not entry:
            continue
        for st, k in entry["synth_states"].items():
            cells.append((c, STATES.index(st)))
            weights.append(k)
    if not cells:
        raise SynthError("the model has no TCP or UDP connection in the intranet or internet scope")
    counts = _largest_remainder(np.array(weights), round(sum(weights) * scale))
    n = int(counts.sum())
    if n == 0:
        raise SynthError(f"{dur:g} s of this model hold no connection: give a longer --duration")
    label = np.repeat(np.arange(len(cells)), counts)[rng.permutation(n)]
    cls = np.array([cells[i][0] for i in range(len(cells))], dtype=np.int64)[label]
    state = np.array([cells[i][1] for i in range(len(cells))], dtype=np.int64)[label]
    udp = np.isin(cls, [1, 3])
    scope = (cls >= 2).astype(np.int64)

    # 2. Arrivals.
    ia = tr["arrivals"]["interarrival_s"]
    gaps = model_ppf(ia, np.minimum(_stratified(max(n - 1, 0), rng), 1 - 1e-12))[rng.permutation(max(n - 1, 0))]
    # Scaled so that the arrivals span the original's first to last connection (times
    # the duration's scale): the rate is the model's whatever the tail draws.
    span = float(tr["arrivals"].get("span_s") or 0.0) * scale
    if span > 0 and gaps.sum() > 0:
        gaps = gaps * (span / gaps.sum())
    arrival = opts.start_s * 1_000_000 + np.r_[0, np.cumsum(_us(gaps))].astype(np.int64)

    # 3. Per-connection variables.
    f = {k: np.zeros(n) for k in ("total_bytes", "orig_fraction", "duration_s", "trains", "rtt_syn_synack_s",
                                  "rtt_synack_ack_s", "orig_pkts", "resp_pkts")}  # fmt: skip
    f["orig_fraction"][:] = 1.0
    mss = np.full((n, 2), 1460, dtype=np.int64)
    ack_extra = np.zeros((n, 2), dtype=np.int64)
    for c, name in enumerate(CLASSES):
        entry = tr["classes"].get(name)
        if not entry:
            continue
        proto = entry["proto"]
        for gname, group in entry["groups"].items():
            sel = np.flatnonzero((cls == c) & (state == STATES.index(gname)))
            for k, v in _draw_group(group, len(sel), rng).items():
                f[k][sel] = v
        sel = cls == c
        if proto == "tcp" and "mss" in entry:
            mss[sel] = [entry["mss"]["orig"], entry["mss"]["resp"]]
            est = max(
                (g for k, g in entry["groups"].items() if k in ESTABLISHED),
                key=lambda g: g["connections"],
                default=None,
            )
            a = _median(est, "rtt_syn_synack_s")
            b = _median(est, "rtt_synack_ack_s")
            for j, side, hs in ((0, "orig", a), (1, "resp", b)):
                da = entry["sides"][side]["rtt_data_ack_s"]
                med = float(model_ppf(da, np.array([0.5]))[0]) if da["n"] else 0.0
                ack_extra[sel, j] = _us(max(0.0, med - hs))
    # The capture ends after `dur`: a connection that would outlast it swaps its arrival
    # with an earlier one's where both then fit (the longest first); the few that fit
    # nowhere are cut at the end.
    arel = arrival - arrival[0]
    end_us = round(dur * 1e6)
    d_all = _us(f["duration_s"])
    perm = np.arange(n)
    for i in np.flatnonzero(arel + d_all > end_us)[::-1]:
        di = d_all[perm[i]]
        if arel[i] + di <= end_us:
            continue
        cand = np.flatnonzero((arel + di <= end_us) & (arel[i] + d_all[perm] <= end_us))
        if len(cand):
            j = cand[rng.integers(len(cand))]
            perm[i], perm[j] = perm[j], perm[i]
    # The original ends with its last packet: the connection that ends last there (the
    # longest that fits) ends last here too, in the slot that ends it nearest the end.
    ends = arel + d_all[perm]
    if n > 1 and ends.max() < end_us:
        longest = np.argsort(-d_all[perm], kind="stable")
        for i in longest[:8]:
            di = d_all[perm[i]]
            gap = end_us - (arel + di)
            ok = (gap >= 0) & (arel[i] + d_all[perm] <= end_us)
            if ok.any():
                j = int(np.flatnonzero(ok)[np.argmin(gap[ok])])
                if arel[j] + di > ends.max():
                    perm[i], perm[j] = perm[j], perm[i]
                break
    cls, state, udp, scope = cls[perm], state[perm], udp[perm], scope[perm]
    f = {k: v[perm] for k, v in f.items()}
    mss, ack_extra = mss[perm], ack_extra[perm]
    f["duration_s"] = np.minimum(f["duration_s"], np.maximum(end_us - arel, 0) / 1e6)
    total = np.maximum(np.round(f["total_bytes"]), 0).astype(np.int64)
    frac = np.clip(np.nan_to_num(f["orig_fraction"], nan=1.0), 0.0, 1.0)
    orig_bytes = np.round(total * frac).astype(np.int64)
    resp_bytes = total - orig_bytes
    st_name = np.asarray(STATES)[state]
    nodata = np.isin(st_name, ["S0", "REJ"]) & ~udp
    orig_bytes[nodata] = resp_bytes[nodata] = 0
    s0udp = udp & (st_name == "S0")
    orig_bytes[s0udp] += resp_bytes[s0udp]
    resp_bytes[s0udp] = 0

    # 4. Services, hosts, ports.
    dport = np.zeros(n, dtype=np.int64)
    signature = np.zeros((n, 2), dtype=np.int64)
    orig_local = np.ones(n, dtype=bool)
    for c, name in enumerate(CLASSES):
        entry = tr["classes"].get(name)
        idx = np.flatnonzero(cls == c)
        if not entry or not len(idx):
            continue
        svc = entry["services"]
        w = np.array([s["connections"] for s in svc] + [entry["other_services"]["connections"]], dtype=float)
        k = _largest_remainder(w, len(idx))
        ports = np.concatenate(
            [np.full(k[i], s["port"]) for i, s in enumerate(svc)] + [rng.integers(20000, 60000, k[-1])]
        ).astype(np.int64)
        # The service's first bytes per side, so that the profile detects it (a port
        # stand-in such as "tcp/8080" has none; nor have the other services).
        sigs = np.concatenate(
            [np.tile([payloads.index(s["service"], 0), payloads.index(s["service"], 1)], (k[i], 1))
             for i, s in enumerate(svc)] + [np.zeros((k[-1], 2), dtype=np.int64)]
        ).astype(np.int64)  # fmt: skip
        # Services whose detection needs both sides to speak (every TCP one) go to
        # connections with data both ways first, as their detected originals had; the
        # rest at random.
        tcp = entry["proto"] == "tcp"
        need = (sigs > 0).all(axis=1) if tcp else (sigs > 0).any(axis=1)
        fit = (orig_bytes[idx] > 0) & (resp_bytes[idx] > 0) if tcp else (orig_bytes[idx] + resp_bytes[idx]) > 0
        slots = np.lexsort((rng.random(len(idx)), ~need))
        conns = idx[np.lexsort((rng.random(len(idx)), ~fit))]
        dport[conns] = ports[slots]
        signature[conns] = sigs[slots]
        if entry["scope"] == "internet":
            m = round(entry["orig_local"] / max(entry["connections"], 1) * len(idx))
            orig_local[idx] = False
            orig_local[idx[rng.permutation(len(idx))[:m]]] = True
    role_r = np.where(udp, "resp", np.where(np.isin(st_name, ANSWERED), "resp_answered", "resp_unanswered"))
    cls_name = np.asarray(CLASSES)[cls]
    o_key = np.char.add(cls_name.astype(str), "/orig")
    r_key = np.char.add(np.char.add(cls_name.astype(str), "/"), role_r.astype(str))
    orig_h = np.zeros(n, dtype=np.int64)
    resp_h = np.zeros(n, dtype=np.int64)
    resp_local = (scope == 0) | ~orig_local
    for where, o_sel, r_sel in (("local", orig_local, resp_local), ("remote", ~orig_local, ~resp_local)):
        table = tr["hosts"][where]
        for keys, sel, out in ((o_key, o_sel, orig_h), (r_key, r_sel, resp_h)):
            for key in sorted(set(keys[sel].tolist())):
                idx = np.flatnonzero(sel & (keys == key))
                out[idx] = _assign_hosts(table, key, len(idx), rng)
    src = np.where(orig_local, local_hosts.address(np.where(orig_local, orig_h, 0)),
                   remote_hosts.address(np.where(orig_local, 0, orig_h)))  # fmt: skip
    dst = np.where(resp_local, local_hosts.address(np.where(resp_local, resp_h, 0)),
                   remote_hosts.address(np.where(resp_local, 0, resp_h)))  # fmt: skip
    # Ephemeral ports: the k-th connection of a source address uses 1024 + k.
    order = np.lexsort((np.arange(n), src))
    rank = np.empty(n, dtype=np.int64)
    s_sorted = src[order]
    first = np.r_[True, s_sorted[1:] != s_sorted[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    rank[order] = np.arange(n) - start
    sport = EPHEMERAL + rank % (2**16 - EPHEMERAL)

    # 5. Consistency of the draws with each protocol.
    trains = np.maximum(np.round(f["trains"]), 0).astype(np.int64)
    both = (orig_bytes > 0) & (resp_bytes > 0)
    one = (orig_bytes > 0) ^ (resp_bytes > 0)
    trains = np.where(both, np.maximum(trains, 2), np.where(one, 1, 0))
    # Never more trains per side than payload bytes.
    t_o = (trains + 1) // 2
    t_r = trains // 2
    t_o = np.where(orig_bytes > 0, np.minimum(np.where(one, 1, t_o), orig_bytes), 0)
    t_r = np.where(resp_bytes > 0, np.minimum(np.where(one, 1, t_r), resp_bytes), 0)
    t_o = np.minimum(t_o, t_r + 1)
    t_r = np.where(orig_bytes > 0, np.minimum(t_r, t_o), t_r)
    trains = t_o + t_r
    orig_pkts = np.maximum(np.round(f["orig_pkts"]), 1).astype(np.int64)
    resp_pkts = np.where(st_name == "SF", np.maximum(np.round(f["resp_pkts"]), 1), 0).astype(np.int64)
    orig_pkts = np.maximum(orig_pkts, -(-orig_bytes // MAX_UDP_PAYLOAD))
    resp_pkts = np.maximum(resp_pkts, -(-resp_bytes // MAX_UDP_PAYLOAD))
    rtt_a = np.maximum(_us(f["rtt_syn_synack_s"]), 1)
    rtt_b = np.maximum(_us(f["rtt_synack_ack_s"]), 1)
    d_us = _us(f["duration_s"])
    rej = (st_name == "REJ") & ~udp
    rtt_a[rej] = np.maximum(d_us[rej], 1)  # the RST answers the SYN: it acknowledges it
    summary = {
        "connections": {
            "total": n,
            "tcp": int((~udp).sum()),
            "udp": int(udp.sum()),
            "by_scope": {s: int((scope == i).sum()) for i, s in enumerate(SCOPES)},
            "by_state": {
                s: int(((state == i) & ~udp).sum()) for i, s in enumerate(STATES) if ((state == i) & ~udp).any()
            },
        },
        "hosts": {
            "local": len(np.unique(np.r_[src[orig_local], dst[resp_local]])),
            "remote": len(np.unique(np.r_[src[~orig_local], dst[~resp_local]])),
        },
        "payload_bytes": int(total.sum()),
        "duration_s": dur,
        "local": list(local),
        "seed": opts.seed,
        "source_trace": model["provenance"].get("source_trace"),
    }
    return Plan(n, arrival, cls, state, udp, scope, orig_bytes, resp_bytes, d_us, trains, rtt_a,
                rtt_b, orig_pkts, resp_pkts, src, dst, sport, dport, mss, ack_extra, signature, summary)  # fmt: skip


def _median(group, var) -> float:
    if not group or var not in group["variables"] or not group["variables"][var]["n"]:
        return 0.0
    return float(model_ppf(group["variables"][var], np.array([0.5]))[0])


def _segment_cumsum(x: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum of x restarting at each segment (seg sorted)."""
    if not len(x):
        return x
    c = np.cumsum(x)
    first = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
    base = np.repeat(c[first] - x[first], np.diff(np.r_[first, len(x)]))
    return c - base


def _split(total: int, parts: int, weights=None) -> np.ndarray:
    """total split in `parts` positive integers (by weights, else evenly)."""
    if parts <= 0:
        return np.zeros(0, dtype=np.int64)
    if weights is None:
        base = np.full(parts, total // parts, dtype=np.int64)
        base[: total % parts] += 1
        return base
    out = 1 + _largest_remainder(weights, total - parts)
    return out


class _Sides:
    """Warm-ups, in-train gaps and train sizes (raw, before scaling) per class and
    side, drawn in bulk (a pool per variable, refilled from the chunk's generator)."""

    POOL = 8192

    def __init__(self, model: dict):
        self.tr = model["traffic"]
        self.pools: dict = {}

    def draw(self, cls: int, side: int, what: str, k: int, rng) -> np.ndarray:
        key = (cls, side, what)
        pool = self.pools.get(key)
        if pool is None or pool[1] + k > len(pool[0]):
            entry = self.tr["classes"].get(CLASSES[cls])
            size = max(self.POOL, k)
            rep = entry["sides"]["orig" if side == 0 else "resp"][what] if entry and "sides" in entry else None
            if rep is None or not rep["n"]:
                vals = np.full(size, 1e-3)
            else:
                vals = model_ppf(rep, np.minimum(rng.random(size), 1 - 1e-12))
            pool = self.pools[key] = [vals, 0]
        out = pool[0][pool[1] : pool[1] + k]
        pool[1] += k
        return out


def _connection_packets(p: Plan, i: int, sides: _Sides, rng, out: list) -> None:
    """Appends (conn, dir, time, len, flags, space) rows of connection i to out."""
    t0 = int(p.arrival[i])
    st = STATES[p.state[i]]
    T = int(p.duration[i])
    rows = []
    if p.udp[i]:
        o, r = int(p.orig_pkts[i]), int(p.resp_pkts[i])
        m = o + r
        pair = min(o, r)
        dirs = [0, 1] * pair + [0] * (o - pair) + [1] * (r - pair)
        times = t0 + np.round(np.linspace(0, T, m)).astype(np.int64) if m > 1 else np.array([t0])
        ob, rb = _split(int(p.orig_bytes[i]), o), _split(int(p.resp_bytes[i]), r)
        oi = ri = 0
        for d, t in zip(dirs, times.tolist(), strict=True):
            if d == 0:
                rows.append((i, 0, t, int(ob[oi]), 0, 0))
                oi += 1
            else:
                rows.append((i, 1, t, int(rb[ri]), 0, 0))
                ri += 1
        out.extend(rows)
        return
    a, b = int(p.rtt_a[i]), int(p.rtt_b[i])
    SYN, ACK, FIN, RST, PSH = pcap.SYN, pcap.ACK, pcap.FIN, pcap.RST, pcap.PSH
    if st == "S0":
        times = [t0] if T <= 0 else [t0, t0 + T // 3, t0 + T] if T >= 3 else [t0, t0 + T]
        out.extend((i, 0, t, 0, SYN, 0) for t in times)  # retransmissions: the same sequence number
        return
    if st == "REJ":
        out.append((i, 0, t0, 0, SYN, 1))
        out.append((i, 1, t0 + max(T, 1), 0, RST | ACK, 0))
        return
    n_tr = int(p.trains[i])
    first_side = 0 if p.orig_bytes[i] > 0 else 1
    tside = (first_side + np.arange(n_tr)) % 2
    extra = [int(p.ack_extra[i, 0]), int(p.ack_extra[i, 1])]
    close = {"SF": 1, "S1": 0, "RSTO": 1, "RSTR": 1, "OTH": 0}[st]
    # A connection cannot be shorter than its handshake and last round trip: where the
    # draws say so, the extra ACK delay goes first, then the RTT shrinks to fit.
    fixed = (0 if st == "OTH" else a + b) + (a + b if st == "SF" else 0) + close + (1 if n_tr else 0)
    last = int(tside[-1]) if n_tr else 0
    ack_last = ((a if last == 0 else b) + extra[last]) if n_tr else 0
    if fixed + ack_last > T:
        extra = [0, 0]
        need = fixed + ((a if last == 0 else b) if n_tr else 0)
        if need > T > 0:
            k = T / need
            a, b = max(int(a * k), 1), max(int(b * k), 1)
    hs = 0 if st == "OTH" else a + b
    if st != "OTH":
        rows += [(i, 0, t0, 0, SYN, 1), (i, 1, t0 + a, 0, SYN | ACK, 1), (i, 0, t0 + a + b, 0, ACK, 0)]
    lat = (a + extra[0], b + extra[1])  # ACK of data sent by orig / resp
    pk = np.zeros(n_tr, dtype=np.int64)
    sizes = []
    for side in (0, 1):
        idx = np.flatnonzero(tside == side)
        if not len(idx):
            continue
        B = int(p.orig_bytes[i] if side == 0 else p.resp_bytes[i])
        P = max(-(-B // int(p.mss[i, side])), len(idx))
        P = min(P, B)
        w = sides.draw(int(p.cls[i]), side, "train_size_pkts", len(idx), rng)
        pk[idx] = _split(P, len(idx), np.maximum(w, 1e-9))
        sizes.append((side, _split(B, P)))
    # Raw timing, then scaled to the duration.
    warm = np.zeros(n_tr)
    gap = np.zeros(n_tr)
    for side in (0, 1):
        idx = np.flatnonzero(tside == side)
        if len(idx):
            warm[idx] = np.maximum(sides.draw(int(p.cls[i]), side, "warmup_s", len(idx), rng), 0)
            gap[idx] = np.maximum(sides.draw(int(p.cls[i]), side, "pacing_per_pkt_s", len(idx), rng), 0) + 1e-5
    if n_tr:
        warm[0] = 0.0
    raw = warm.sum() + ((pk - 1) * gap).sum()
    last_side = int(tside[-1]) if n_tr else 0
    tail = lat[last_side] if n_tr else 0
    tail += (a + b if st == "SF" else 0) + close
    budget = T - hs - tail - (1 if n_tr else 0)
    s = budget / (raw * 1e6) if raw > 0 and budget > 0 else 0.0
    warm_us = np.round(warm * 1e6 * s).astype(np.int64)
    gap_us = np.round(gap * 1e6 * s).astype(np.int64)
    starts = np.zeros(n_tr, dtype=np.int64)
    t = t0 + hs + 1
    for k in range(n_tr):
        if k:
            t = t + (int(pk[k - 1]) - 1) * int(gap_us[k - 1]) + max(int(warm_us[k]), 1)
        starts[k] = t
    sz = {side: list(v) for side, v in sizes}
    at = {0: 0, 1: 0}
    end = t0 + hs
    for k in range(n_tr):
        side = int(tside[k])
        t = int(starts[k])
        # A pure ACK only when the peer's next train (which carries it) comes later.
        nxt = int(starts[k + 1]) if k + 1 < n_tr else None
        for j in range(int(pk[k])):
            tt = t + j * int(gap_us[k])
            length = int(sz[side][at[side]])
            at[side] += 1
            last = j == pk[k] - 1
            rows.append((i, side, tt, length, (PSH | ACK) if last else ACK, length))
            if (last or j % 2 == 1) and (nxt is None or tt + lat[side] < nxt):
                rows.append((i, 1 - side, tt + lat[side], 0, ACK, 0))
            end = tt
    if n_tr:
        c = end + lat[last_side] - 1
    else:
        c = t0 + max(hs, T - (a + b + 1 if st == "SF" else 1)) + 1
    if st == "SF":
        rows += [(i, 0, c + 1, 0, FIN | ACK, 1), (i, 1, c + 1 + a, 0, FIN | ACK, 1), (i, 0, c + 1 + a + b, 0, ACK, 0)]
    elif st == "RSTO":
        rows.append((i, 0, c + 1, 0, RST | ACK, 0))
    elif st == "RSTR":
        rows.append((i, 1, c + 1, 0, RST | ACK, 0))
    out.extend(rows)


def _chunk_packets(p: Plan, lo: int, hi: int, sides: _Sides, rng) -> dict:
    rows: list = []
    for i in range(lo, hi):
        _connection_packets(p, i, sides, rng, rows)
    arr = np.array(rows, dtype=np.int64).reshape(-1, 6)
    P = dict(zip(("conn", "dir", "time", "len", "flags", "space"), arr.T, strict=True))
    n = hi - lo
    local = P["conn"] - lo
    order = np.arange(len(local))
    isn = rng.integers(0, 2**32, size=(n, 2), dtype=np.int64)
    key = local * 2 + P["dir"]
    o = np.lexsort((order, P["time"], key))
    # The first data packet of each side carries the service's first bytes, if it
    # is long enough for them.
    data = o[P["len"][o] > 0]
    firsts = data[np.r_[True, key[data][1:] != key[data][:-1]]] if len(data) else data
    sig = p.signature[P["conn"][firsts], P["dir"][firsts]]
    fits = P["len"][firsts] >= np.asarray(payloads.MIN_LEN)[sig]
    payload = np.zeros(len(order), dtype=np.int64)
    payload[firsts[fits]] = sig[fits]
    sent = np.empty_like(P["space"])
    sent[o] = _segment_cumsum(P["space"][o], key[o]) - P["space"][o]
    seq = (isn[local, P["dir"]] + sent) % 2**32
    # ACK field: a packet of party D at T covers the peer's space seen by T - latency(D).
    lat = np.stack([p.rtt_b[lo:hi], p.rtt_a[lo:hi]], axis=1)  # orig acks after b, resp after a
    base = int(p.arrival[lo])
    rel = P["time"] - base
    ack_at = rel + lat[local, 1 - P["dir"]]
    ev = np.flatnonzero(P["space"] > 0)
    ev_key = (local[ev] * 2 + P["dir"][ev]) * 2**TIME_BITS + ack_at[ev]
    eo = np.argsort(ev_key, kind="stable")
    ev_sorted = ev_key[eo]
    cum = np.r_[0, np.cumsum(P["space"][ev][eo])]
    peer = (local * 2 + 1 - P["dir"]) * 2**TIME_BITS
    acked = cum[np.searchsorted(ev_sorted, peer + rel, "right")] - cum[np.searchsorted(ev_sorted, peer, "left")]
    has_ack = (P["flags"] & pcap.ACK) > 0
    ack = np.where(has_ack, (isn[local, 1 - P["dir"]] + acked) % 2**32, 0)
    fwd = P["dir"] == 0
    c = P["conn"]
    udp = p.udp[c]
    return {
        "time_us": P["time"],
        "conn": c,
        "order": order,
        "proto": np.where(udp, pcap.UDP, pcap.TCP),
        "src": np.where(fwd, p.src[c], p.dst[c]),
        "dst": np.where(fwd, p.dst[c], p.src[c]),
        "sport": np.where(fwd, p.sport[c], p.dport[c]),
        "dport": np.where(fwd, p.dport[c], p.sport[c]),
        "ip_len": P["len"] + np.where(udp, pcap.IP_LEN + pcap.UDP_LEN, pcap.IP_LEN + pcap.TCP_LEN),
        "seq": np.where(udp, 0, seq),
        "ack": np.where(udp, 0, ack),
        "flags": np.where(udp, 0, P["flags"]),
        "payload": payload,
    }


def packets(model: dict, p: Plan, seed: int):
    """Time-ordered packet columns, chunk by chunk (a generator)."""
    sides = _Sides(model)
    pending = None
    written = 0
    for ci, lo in enumerate(range(0, p.n, CHUNK)):
        hi = min(p.n, lo + CHUNK)
        rng = np.random.default_rng([seed, ci])
        new = _chunk_packets(p, lo, hi, sides, rng)
        if pending is not None:
            new = {k: np.concatenate([pending[k], new[k]]) for k in new}
        o = np.lexsort((new["order"], new["conn"], new["time_us"]))
        new = {k: v[o] for k, v in new.items()}
        new["order"] = np.arange(len(o))
        cut = int(np.searchsorted(new["time_us"], p.arrival[hi], "left")) if hi < p.n else len(o)
        emit = {k: v[:cut] for k, v in new.items()}
        pending = {k: v[cut:] for k, v in new.items()}
        emit["ip_id"] = (written + np.arange(cut)) % 2**16
        written += cut
        yield emit


def write(model: dict, opts: ChainOptions, path, snaplen: int = 65535, planned: Plan | None = None) -> dict:
    """Streams the trace to `path` (planning it unless `planned` is given);
    returns the summary."""
    if snaplen < pcap.MIN_SNAPLEN:
        raise SynthError(f"snaplen {snaplen}: at least {pcap.MIN_SNAPLEN} (the headers are always captured)")
    p = plan(model, opts) if planned is None else planned
    total = 0
    first = last = None
    with pcap.open_pcap(path, snaplen) as out:
        for chunk in packets(model, p, opts.seed):
            if not len(chunk["time_us"]):
                continue
            out.write(chunk)
            total += len(chunk["time_us"])
            first = int(chunk["time_us"][0]) if first is None else first
            last = int(chunk["time_us"][-1])
            if total > opts.max_packets:
                raise SynthError(f"more than max_packets={opts.max_packets} packets: give a shorter --duration")
    return {**p.summary, "packets": total, "trace_duration_s": (last - first) / 1e6 if total else 0.0}


def collect(model: dict, opts: ChainOptions) -> tuple[Plan, dict]:
    """The whole trace in memory (tests): the plan and the packet columns."""
    p = plan(model, opts)
    parts = list(packets(model, p, opts.seed))
    cols = {k: np.concatenate([c[k] for c in parts]) for k in parts[0]}
    return p, cols


def truth(p: Plan) -> dict:
    """Per connection what the analyzer should find (the --truth table)."""
    return {
        "ts_us": p.arrival,
        "proto": np.where(p.udp, "udp", "tcp"),
        "scope": np.asarray(SCOPES)[p.scope],
        "state": np.where(p.udp, np.where(p.resp_pkts > 0, "SF", "S0"), np.asarray(STATES)[p.state]),
        "orig_h": p.src,
        "orig_p": p.sport,
        "resp_h": p.dst,
        "resp_p": p.dport,
        "orig_bytes": p.orig_bytes,
        "resp_bytes": p.resp_bytes,
        "trains": p.trains,
        "duration_us": p.duration,
        "rtt_syn_synack_us": np.where(p.udp, 0, p.rtt_a),
        "rtt_synack_ack_us": np.where(p.udp, 0, p.rtt_b),
    }
