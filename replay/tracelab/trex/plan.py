"""From a workload model to TRex plans: plain data that the profile templates turn into
TRex objects.

All arithmetic happens here, in tracelab's own process, so it can be tested without
TRex; the generated profile files only map a plan onto the TRex API.

**STL** (stateless, open loop). One class per scope x direction of the topological
model (thesis Table 9.1): `intranet-download`, `intranet-upload`, `internet-download`,
`internet-upload`. A class gets `share x rate x load` of the port's L1 rate; its
packet sizes are the apps model's packet-size histogram of the sending side (upload =
initiator = `orig`, download = responder = `resp`), reduced to at most `max_sizes`
streams of equal packet mass (one stream per size when there are few). The field engine
walks the client (ip, port) tuples and the server addresses, so the DUT sees many
flows. Each class also has a low-rate latency stream with its own packet-group id, so
TRex reports delay per class; its bandwidth is taken out of the class's data streams.

**ASTF** (stateful TCP, closed loop: thesis §9.3.3's future-work source). Per scope,
`templates` connection templates. A template alternates trains as the thesis decomposes
a transfer (§9.2): the initiator sends a train, the responder receives it, waits its
warm-up, sends its train, and so on, until the connection carries its size (a
quantile of the fitted flow-size distribution, stratified over the templates). Train
sizes are drawn from the side's train-size histogram; warm-ups and pacing are
`delay_rand` over one decile interval of the side's empirical distribution (the decile
drawn per train), so over many trains TRex samples the model's distribution with linear
interpolation between deciles. Connection rates are split between scopes so that the
bytes per second follow the model's intranet/internet shares.
"""

from __future__ import annotations

import ipaddress
import math

import numpy as np
import tracelab_engine as engine

SCOPES = ("intranet", "internet")
DIRECTIONS = (("download", "resp"), ("upload", "orig"))  # direction -> sending side

# Ethernet framing around an IP packet: 14 B header, 4 B FCS, frames padded to 64 B
# with FCS; on the wire (L1) 8 B preamble + 12 B inter-frame gap more.
ETH_HEADER, ETH_FCS, ETH_MIN_FRAME, L1_EXTRA = 14, 4, 64, 20
IPV4_TCP_HEADERS = 40
# TRex puts a 16 B signature in latency packets and needs room for it after the headers.
LATENCY_MIN_IP_LEN = IPV4_TCP_HEADERS + 16
# A TCP header is at most 60 B: packets longer than 20 + 60 B surely carry payload.
PURE_ACK_MAX_IP_LEN = 80

# Address plan (TRex examples use 16.0.0.0/8 clients and 48.0.0.0/8 servers; here the
# local networks are private and the Internet servers are 48.0.0.0/16).
DEFAULT_NETS = {
    "intranet": {"client": "10.1.0.0/16", "server": "10.2.0.0/16"},
    "internet": {"client": "10.3.0.0/16", "server": "48.0.0.0/16"},
}

PS_PER_SECOND = 10**12  # the engine counts time in picoseconds


class PlanError(ValueError):
    """The model cannot give the requested profile (the message says why)."""


def parse_rate(text: str) -> float:
    """'10G', '2.5Gbps', '100M' -> bits per second, by the engine's parser (the one every
    spec and ``--rate`` option of tracelab goes through)."""
    try:
        return float(engine.parse_rate(str(text)))
    except engine.SpecError as e:
        raise PlanError(str(e)) from None


def parse_time(text: str) -> float:
    """'1ms', '500us', '0.1s' -> seconds, by the engine's parser (a unit is required)."""
    try:
        return engine.parse_time(str(text)) / PS_PER_SECOND
    except engine.SpecError as e:
        raise PlanError(str(e)) from None


def frame_bytes(ip_len: int) -> int:
    """Ethernet frame length with FCS for an IP packet of ``ip_len`` bytes."""
    return max(ip_len + ETH_HEADER + ETH_FCS, ETH_MIN_FRAME)


def l1_bits(ip_len: int) -> int:
    return 8 * (frame_bytes(ip_len) + L1_EXTRA)


def size_groups(values, counts, max_sizes: int) -> list[tuple[int, float]]:
    """(ip_len, packet fraction) of at most ``max_sizes`` streams.

    Few sizes: one stream each, exact. Many: contiguous sizes are grouped into strata of
    about equal packet count and each group is sent at its packet-weighted mean size,
    so the mean packet size (hence pps for a given bps) is kept to rounding.
    """
    v = np.asarray(values, dtype=float)
    c = np.asarray(counts, dtype=float)
    total = c.sum()
    if total <= 0:
        return []
    if len(v) <= max_sizes:
        return [(round(float(x)), float(n / total)) for x, n in zip(v, c, strict=True) if n > 0]
    # Stratum of each size = which 1/max_sizes slice of the packet mass its midpoint is in.
    mid = (np.cumsum(c) - c / 2) / total
    stratum = np.minimum((mid * max_sizes).astype(int), max_sizes - 1)
    out = []
    for k in np.unique(stratum):
        sel = stratum == k
        mass = c[sel].sum()
        out.append((round(float((v[sel] * c[sel]).sum() / mass)), float(mass / total)))
    return out


def _hosts(net: str, count: int) -> tuple[str, str]:
    """First and last of ``count`` host addresses of ``net`` (skips the network address)."""
    n = ipaddress.ip_network(net)
    if n.version != 4:
        raise PlanError(f"network {net}: TRex profiles here are IPv4")
    usable = n.num_addresses - 2 if n.num_addresses > 2 else n.num_addresses
    if count < 1 or count > usable:
        raise PlanError(f"network {net}: {count} hosts asked, {usable} available")
    first = n.network_address + (1 if n.num_addresses > 2 else 0)
    return str(first), str(first + count - 1)


def _nets(nets: dict | None) -> dict:
    out = {s: dict(DEFAULT_NETS[s]) for s in SCOPES}
    for s, sides in (nets or {}).items():
        out[s].update(sides)
    return out


def stl_plan(
    model: dict,
    rate: str = "10G",
    load: float = 0.9,
    max_sizes: int = 8,
    latency_pps: int = 1000,
    clients: int = 254,
    servers: int = 16,
    budgets: dict | None = None,
    nets: dict | None = None,
) -> dict:
    """Per-class STL streams for one TRex port (see the module docstring)."""
    if not 0 < load <= 1:
        raise PlanError(f"load {load}: expected 0 < load <= 1 (a share of the port rate)")
    port_bps = parse_rate(rate)
    budgets = budgets or {}
    unknown = set(budgets) - {s for s in SCOPES} - {f"{s}-{d}" for s in SCOPES for d, _ in DIRECTIONS}
    if unknown:
        raise PlanError(
            f"budget for unknown class {sorted(unknown)}: use a scope (intranet, internet) "
            "or a class such as internet-download"
        )
    nets = _nets(nets)
    classes, skipped = [], []
    for scope in SCOPES:
        for direction, side in DIRECTIONS:
            name = f"{scope}-{direction}"
            share = model["topological"]["shares"][scope][direction]
            hist = model["apps"][scope][side]["packet_size_bytes"]
            groups = size_groups(hist["values"], hist["counts"], max_sizes)
            if share <= 0:
                skipped.append({"class": name, "reason": "share 0 in the model"})
                continue
            if not groups:
                skipped.append({"class": name, "reason": f"no packet sizes for {scope}/{side} in the model"})
                continue
            class_bps = share * load * port_bps
            # Latency probes: the class's median packet size, raised to fit TRex's signature.
            cum = np.cumsum(hist["counts"]) / np.sum(hist["counts"])
            median = int(hist["values"][int(np.searchsorted(cum, 0.5))])
            lat_len = max(median, LATENCY_MIN_IP_LEN)
            lat_pps = float(latency_pps)
            data_bps = class_bps - lat_pps * l1_bits(lat_len)
            if data_bps <= 0:
                skipped.append(
                    {
                        "class": name,
                        "reason": f"class rate {class_bps:.0f} b/s is below its "
                        f"latency stream ({latency_pps} pps); lower --latency-pps",
                    }
                )
                continue
            bits_per_pkt = sum(f * l1_bits(s) for s, f in groups)
            pps = data_bps / bits_per_pkt
            budget = budgets.get(name, budgets.get(scope))
            cli, srv = _hosts(nets[scope]["client"], clients), _hosts(nets[scope]["server"], servers)
            classes.append(
                {
                    "name": name,
                    "scope": scope,
                    "direction": direction,
                    "side": side,
                    "pg_id": len(classes) + 1,
                    "share": share,
                    "rate_bps_l1": class_bps,
                    # The data packets flow server -> client for downloads.
                    "src": "server" if direction == "download" else "client",
                    "client": {"ip_min": cli[0], "ip_max": cli[1], "port_min": 1025, "port_max": 65535},
                    "server": {"ip_min": srv[0], "ip_max": srv[1], "port": 80},
                    "streams": [{"ip_len": s, "fraction": f, "pps": f * pps} for s, f in groups],
                    "latency": {"pg_id": len(classes) + 1, "ip_len": lat_len, "pps": lat_pps},
                    "budget_s": parse_time(budget) if isinstance(budget, str) else budget,
                }
            )
    if not classes:
        raise PlanError("the model gives no STL class: " + "; ".join(f"{s['class']}: {s['reason']}" for s in skipped))
    return {
        "kind": "stl",
        "port_rate_bps": port_bps,
        "load": load,
        "classes": classes,
        "skipped": skipped,
        "source": _source(model),
    }


def _source(model: dict) -> dict:
    p = model["provenance"]
    return {"trace": p["source_trace"], "model_tool_version": p["tool_version"]}


def _decile_interval(emp: dict, rng) -> tuple[float, float] | None:
    """A uniformly drawn decile interval [q_j, q_{j+1}] of an empirical distribution
    (negative values, e.g. pacing shorter than the ideal TCP, become 0: a program
    cannot wait less than nothing)."""
    if not emp["n"]:
        return None
    p, v = np.asarray(emp["p"]), np.asarray(emp["v"])
    j = int(rng.integers(10))
    lo, hi = np.interp([j / 10, (j + 1) / 10], p, v)
    return max(float(lo), 0.0), max(float(hi), 0.0)


def _draw_hist(hist: dict, rng) -> int:
    c = np.asarray(hist["counts"], dtype=float)
    return int(hist["values"][int(rng.choice(len(c), p=c / c.sum()))])


def payload_per_packet(hist: dict) -> int:
    """Mean TCP payload of the side's data packets: packets longer than a bare header with
    full options (IP 20 + TCP 60 B); if none, every packet longer than 40 B."""
    v = np.asarray(hist["values"], dtype=float)
    c = np.asarray(hist["counts"], dtype=float)
    for floor in (PURE_ACK_MAX_IP_LEN, IPV4_TCP_HEADERS):
        sel = (v > floor) & (c > 0)
        if sel.any():
            return round(float(((v[sel] - IPV4_TCP_HEADERS) * c[sel]).sum() / c[sel].sum()))
    return 0


def _usec(seconds: float) -> float:
    return round(seconds * 1e6, 3)


def _flow_size_quantile(model: dict, q: float) -> float:
    from tracelab_models.distributions import frozen

    rep = model["flows"]["size_bytes"]
    if rep["best"] is None:
        raise PlanError(f"flow sizes are not fitted in the model ({rep['reason']}); ASTF needs them")
    fit = next(f for f in rep["fits"] if f["family"] == rep["best"])
    return float(frozen(fit["family"], fit["params"]).ppf(q))


def astf_plan(
    model: dict,
    templates: int = 8,
    seed: int = 1,
    max_conn_bytes: int = 10_000_000,
    max_trains: int = 200,
    cps: float | None = None,
    clients: int = 254,
    servers: int = 16,
    nets: dict | None = None,
) -> dict:
    """ASTF templates per scope (see the module docstring)."""
    if templates < 1:
        raise PlanError("templates: at least 1 per scope")
    rng = np.random.default_rng(seed)
    nets = _nets(nets)
    out, skipped = [], []
    scope_bytes = {}
    for scope in SCOPES:
        apps = model["apps"][scope]
        share = sum(model["topological"]["shares"][scope].values())
        pay = {side: payload_per_packet(apps[side]["packet_size_bytes"]) for side in ("orig", "resp")}
        missing = [side for side in ("orig", "resp") if not sum(apps[side]["train_size_pkts"]["counts"])]
        if share <= 0:
            skipped.append({"scope": scope, "reason": "share 0 in the model"})
            continue
        if missing or not all(pay.values()):
            skipped.append(
                {
                    "scope": scope,
                    "reason": f"no trains or data packet sizes for {', '.join(missing) or 'a side'} in the model",
                }
            )
            continue
        built = []
        for i in range(templates):
            # Stratified: template i stands for the flow sizes around quantile (i + 0.5) / templates.
            size = min(_flow_size_quantile(model, (i + 0.5) / templates), max_conn_bytes)
            built.append(_template(scope, i, size, apps, pay, rng, max_trains))
        scope_bytes[scope] = float(np.mean([t["bytes"]["orig"] + t["bytes"]["resp"] for t in built]))
        out.append(
            {
                "scope": scope,
                "share": share,
                "payload_per_pkt": pay,
                "templates": built,
                "client": dict(zip(("ip_min", "ip_max"), _hosts(nets[scope]["client"], clients), strict=True)),
                "server": dict(zip(("ip_min", "ip_max"), _hosts(nets[scope]["server"], servers), strict=True)),
            }
        )
    if not out:
        raise PlanError("the model gives no ASTF scope: " + "; ".join(f"{s['scope']}: {s['reason']}" for s in skipped))
    # Connections per second: the model's mean inter-arrival unless given. Split so that
    # scope bytes/s = cps_scope * mean template bytes follow the scope shares.
    if cps is None:
        cps = 1.0 / _mean_interarrival(model)
    weight = {g["scope"]: g["share"] / scope_bytes[g["scope"]] for g in out}
    total_w = sum(weight.values())
    port = 8000
    for g in out:
        g["cps"] = cps * weight[g["scope"]] / total_w
        for t in g["templates"]:
            t["cps"] = g["cps"] / len(g["templates"])
            t["port"] = port  # one server port per template: the server side tells templates apart by port
            port += 1
    return {
        "kind": "astf",
        "seed": seed,
        "cps": cps,
        "max_conn_bytes": max_conn_bytes,
        "max_trains": max_trains,
        "scopes": out,
        "skipped": skipped,
        "source": _source(model),
    }


def _mean_interarrival(model: dict) -> float:
    from tracelab_models.distributions import frozen

    rep = model["flows"]["interarrival_s"]
    if rep["best"] is None:
        raise PlanError(f"flow inter-arrivals are not fitted in the model ({rep['reason']}); give --cps")
    fit = next(f for f in rep["fits"] if f["family"] == rep["best"])
    mean = float(frozen(fit["family"], fit["params"]).mean())
    if not math.isfinite(mean) or mean <= 0:
        raise PlanError(f"the fitted inter-arrival ({rep['best']}) has no finite mean; give --cps")
    return mean


def _template(scope, index, size, apps, pay, rng, max_trains) -> dict:
    """Client and server command lists of one connection of about ``size`` bytes.

    Commands: ["send", bytes], ["recv", bytes], ["delay", usec], ["delay_rand", lo, hi].
    The first train is the initiator's with no warm-up (thesis §9.2: warm-up of train 1
    is 0); each later train starts with the sender's warm-up; a train is followed by its
    pacing (per-packet pacing x packets in the train). The peer's recv waits for the
    whole train before its warm-up starts, which is how the warm-up is defined.
    """
    prog = {"orig": [], "resp": []}
    sent = {"orig": 0, "resp": 0}
    trains = 0
    side = "orig"
    while trains < max_trains and (trains == 0 or sent["orig"] + sent["resp"] < size):
        other = "resp" if side == "orig" else "orig"
        pkts = _draw_hist(apps[side]["train_size_pkts"], rng)
        nbytes = pkts * pay[side]
        if trains > 0:
            prog[side].append(_delay(_decile_interval(apps[side]["warmup_s"], rng), 1))
        prog[side].append(["send", nbytes])
        pacing = _decile_interval(apps[side]["pacing_per_pkt_s"], rng)
        prog[side].append(_delay(pacing, pkts))
        prog[other].append(["recv", nbytes])
        sent[side] += nbytes
        trains += 1
        side = other
    for s in prog:
        prog[s] = [c for c in prog[s] if c is not None]
    return {
        "name": f"{scope}-{index}",
        "target_bytes": size,
        "trains": trains,
        "bytes": sent,
        "client": prog["orig"],
        "server": prog["resp"],
    }


def _delay(interval, scale):
    if interval is None:
        return None
    lo, hi = (_usec(x * scale) for x in interval)
    if hi <= 0:
        return None
    return ["delay", lo] if lo == hi else ["delay_rand", lo, hi]
