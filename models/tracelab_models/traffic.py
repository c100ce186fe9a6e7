"""The `traffic` section of a workload model: what `tracelab synth` needs to write a
trace that profiles like the original (docs/fidelity.md; issue 16, "Faithful chain").

Per class = scope (intranet, internet) x protocol (TCP, UDP); ICMP and other
protocols are counted only:

* counts: connections, connections with a local originator, payload bytes per
  direction, the service mix and the connection states. A connection's service is
  the profile's `service` column (detected by the analyzer from the payload, Zeek's
  names: http, ssl, dns, ...) when it has one; only when it is `-` (nothing
  detected, or a profile without the column) the responder's `proto/port` stands
  in. `tracelab synth` writes each detected service's first bytes
  (replay/tracelab/synth/payloads.py), so the synthetic profile detects it too;
* per state (TCP: SF, S1, RSTO, RSTR, OTH, S0, REJ, the others mapped to the nearest
  of these; UDP: SF = answered, S0 = not), the per-connection variables (total bytes, originator's
  fraction of them, duration, data trains or datagrams per side, the handshake RTT
  split) each fitted by `distributions.fit_model`, tied together by a Gaussian copula
  (the correlation of their normal scores), so that e.g. large connections keep
  their long durations and many trains;
* per TCP class: warm-ups, pacing per packet, train sizes and DATA-ACK RTT per side
  (each connection's median of the samples the analyzer did not flag `delayed_ack`:
  the path's round trip, not the receiver's delayed-ACK timer; docs/analyzer.md),
  the full-segment payload (MSS) per side;
* arrivals: the rate, the span from the first to the last connection and the
  inter-arrival distribution of all connections;
* hosts: the local and remote hosts as rows of connection counts per (class, role),
  with multiplicities: host counts, fan-in and fan-out and which hosts are both
  clients and servers come back as they were;
* the trace's duration and the profile's `--local` prefixes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import stats

from . import schema as S
from .distributions import fit_model
from .profile import column, read_table, sample_connections

SCOPES = (S.SCOPE_INTRANET, S.SCOPE_INTERNET)
PROTOS = ("tcp", "udp")
# The TCP states the synthesizer writes (its state groups): the others map to the nearest one.
TCP_STATES = ("SF", "S1", "RSTO", "RSTR", "OTH", "S0", "REJ")
TCP_STATE_MAP = {"S2": "SF", "S3": "SF", "SH": "S0", "SHR": "S0", "RSTOS0": "REJ", "RSTRH": "REJ"}
ESTABLISHED_VARIABLES = ("total_bytes", "orig_fraction", "duration_s", "trains", "rtt_syn_synack_s",
                         "rtt_synack_ack_s")  # fmt: skip
GROUP_VARIABLES = {
    **{("tcp", st): ESTABLISHED_VARIABLES for st in ("SF", "S1", "RSTO", "RSTR", "OTH")},
    ("tcp", "S0"): ("duration_s",),
    ("tcp", "REJ"): ("duration_s",),
    ("udp", "SF"): ("total_bytes", "orig_fraction", "duration_s", "orig_pkts", "resp_pkts"),
    ("udp", "S0"): ("total_bytes", "duration_s", "orig_pkts"),
}  # fmt: skip
INTEGER = {"total_bytes", "trains", "orig_pkts", "resp_pkts"}
TABLE_ONLY = {"orig_fraction"}  # a fraction with masses at 0 and 1: no family has that support
TOP_SERVICES = 64
MAX_HOST_ROWS = 4096
DEFAULT_MSS = 1460
REMOTE_NET = "198.18.0.0/15"  # where the synthesizer puts remote hosts (RFC 2544 benchmarking)

REQUIRED = (S.TS, S.PROTO, S.SCOPE, S.ORIG_BYTES, S.RESP_BYTES, S.ORIG_H, S.RESP_H, S.RESP_P)
COLUMNS = (S.TS, S.PROTO, S.SCOPE, S.ORIG_BYTES, S.RESP_BYTES, S.DURATION, S.CONN_STATE, S.ORIG_PKTS, S.RESP_PKTS,
           S.ORIG_H, S.RESP_H, S.RESP_P, S.LOCAL_ORIG, S.LOCAL_RESP, "orig_trains", "resp_trains",
           "rtt_syn_synack_s", "rtt_synack_ack_s", "rtt_data_ack_orig_median_s", "rtt_data_ack_resp_median_s",
           "orig_distinct_data_pkts", "resp_distinct_data_pkts", "orig_pacing_per_pkt_s",
           "resp_pacing_per_pkt_s")  # fmt: skip


def _strings(table, name):
    return np.array(table.column(name).fill_null("").to_pylist(), dtype=object)


def _bools(table, name):
    return np.array(table.column(name).fill_null(False).to_pylist(), dtype=bool)


EMPIRICAL_COPULA_MAX = 256  # groups up to this size keep their rows' ranks (the empirical copula)
TAIL_ROWS = 32  # larger groups keep their largest connections' rows whole


def copula(data: dict[str, np.ndarray]) -> dict:
    """How a group's variables go together. Up to EMPIRICAL_COPULA_MAX rows: the
    empirical copula, each row's pseudo-observations (rank - 1/2) / n per variable
    (null where unknown), which with the margins' tables gives back the rows. Above:
    a Gaussian copula, the correlation of the variables' normal scores over the rows
    where all are known (identity with fewer than 3), made positive definite, and
    the TAIL_ROWS largest connections' rows whole."""
    names = list(data)
    k = len(names)
    x = np.column_stack([data[v] for v in names]) if names else np.zeros((0, 0))
    n = len(x)
    if 0 < n <= EMPIRICAL_COPULA_MAX:
        u = np.full((n, k), np.nan)
        for j in range(k):
            ok = np.isfinite(x[:, j])
            if ok.any():
                u[ok, j] = (stats.rankdata(x[ok, j]) - 0.5) / ok.sum()
        rows = [[None if not np.isfinite(v) else round(float(v), 6) for v in row] for row in u]
        return {"kind": "empirical", "variables": names, "correlation": np.eye(k).tolist(), "rows": n, "u": rows}
    ok = np.isfinite(x).all(axis=1) if names else np.zeros(0, dtype=bool)
    corr = np.eye(k)
    if ok.sum() >= 3 and k > 1:
        z = np.column_stack([stats.norm.ppf(stats.rankdata(x[ok, j]) / (ok.sum() + 1)) for j in range(k)])
        with np.errstate(invalid="ignore", divide="ignore"):
            c = np.corrcoef(z, rowvar=False)
        c = np.where(np.isfinite(c), c, 0.0)
        np.fill_diagonal(c, 1.0)
        w, v = np.linalg.eigh(c)
        c = (v * np.maximum(w, 1e-6)) @ v.T
        d = np.sqrt(np.diag(c))
        corr = c / np.outer(d, d)
    out = {"kind": "gaussian", "variables": names, "correlation": np.round(corr, 6).tolist(), "rows": int(ok.sum())}
    if "total_bytes" in data:
        # The largest connections whole: which way their bytes go decides the byte shares.
        top = np.argsort(data["total_bytes"], kind="stable")[-TAIL_ROWS:]
        out["tail_rows"] = {v: [None if not np.isfinite(x) else float(x) for x in data[v][top]] for v in names}
    return out


def _group_entry(proto, group, cols, sel, seed):
    names = GROUP_VARIABLES[proto, group]
    data = {k: cols[k][sel] for k in names}
    variables = {
        k: fit_model(
            data[k],
            k,
            integer=k in INTEGER,
            seed=seed,
            families=k not in TABLE_ONLY,
        )
        for k in names
    }
    for k in TABLE_ONLY & set(names):
        variables[k]["reason"] = "a fraction in [0, 1] (masses at 0 and 1): " + variables[k]["reason"]
    return {"connections": int(sel.sum()), "variables": variables, "copula": copula(data)}


def _mss(bytes_, pkts) -> int:
    ok = (pkts >= 3) & np.isfinite(bytes_)
    if not ok.any():
        return DEFAULT_MSS
    return int(max(1, round(float(np.quantile(np.ceil(bytes_[ok] / pkts[ok]), 0.95)))))


def _host_rows(ids, keys, key_of_conn, host_of_conn, mask):
    """Unique count vectors (connections per key) of the hosts, with multiplicities."""
    uniq, inv = np.unique(host_of_conn[mask], return_inverse=True)
    counts = np.zeros((len(uniq), len(keys)), dtype=np.int64)
    np.add.at(counts, (inv, key_of_conn[mask]), 1)
    if len(uniq) == 0:
        return {"keys": keys, "rows": [], "multiplicity": [], "hosts": 0}
    rows, mult = np.unique(counts, axis=0, return_counts=True)
    if len(rows) > MAX_HOST_ROWS:  # coarsen to 2 significant digits (keeps 0 and 1..99 exact)
        mag = np.where(counts >= 100, 10 ** (np.floor(np.log10(np.maximum(counts, 1))) - 1), 1)
        coarse = (np.round(counts / mag) * mag).astype(np.int64)
        rows, mult = np.unique(coarse, axis=0, return_counts=True)
    order = np.lexsort(rows.T[::-1])[::-1]
    return {"keys": keys, "rows": rows[order].tolist(), "multiplicity": mult[order].tolist(), "hosts": len(uniq)}


def derive_traffic(profile_dir, summary: dict, seed: int = 0) -> dict:
    read_table(profile_dir, S.CONNECTIONS, REQUIRED)  # names the missing required columns
    conns = read_table(profile_dir, S.CONNECTIONS)
    have = set(conns.column_names)
    n = conns.num_rows
    # Columns an older or partial profile lacks are unknown (null) here.
    conns = conns.select([c for c in COLUMNS if c in have])
    for c in COLUMNS:
        if c not in have:
            kind = {S.LOCAL_ORIG: pa.bool_(), S.LOCAL_RESP: pa.bool_(), S.CONN_STATE: pa.string()}.get(c, pa.float64())
            conns = conns.append_column(c, pa.nulls(n, kind))
    if "service" in have:
        conns = conns.append_column("service", read_table(profile_dir, S.CONNECTIONS, ["service"]).column("service"))
    proto = _strings(conns, S.PROTO)
    scope = _strings(conns, S.SCOPE)
    state = _strings(conns, S.CONN_STATE)
    ob = column(conns, S.ORIG_BYTES, 0.0)
    rb = column(conns, S.RESP_BYTES, 0.0)
    tot = ob + rb
    dur = column(conns, S.DURATION, 0.0)
    cols = {
        "total_bytes": tot,
        "orig_fraction": np.where(tot > 0, ob / np.where(tot > 0, tot, 1), np.nan),
        "duration_s": dur,
        "trains": column(conns, "orig_trains", 0.0) + column(conns, "resp_trains", 0.0),
        "rtt_syn_synack_s": column(conns, "rtt_syn_synack_s"),
        "rtt_synack_ack_s": column(conns, "rtt_synack_ack_s"),
        "orig_pkts": column(conns, S.ORIG_PKTS, 0.0),
        "resp_pkts": column(conns, S.RESP_PKTS, 0.0),
    }
    # Without local_orig/local_resp: intranet = both local, internet = a local originator.
    local_o = np.where(pc.is_null(conns.column(S.LOCAL_ORIG)).to_numpy(zero_copy_only=False),
                       np.isin(scope, SCOPES), _bools(conns, S.LOCAL_ORIG))  # fmt: skip
    local_r = np.where(pc.is_null(conns.column(S.LOCAL_RESP)).to_numpy(zero_copy_only=False),
                       scope == S.SCOPE_INTRANET, _bools(conns, S.LOCAL_RESP))  # fmt: skip
    if "service" in have:
        svc = _strings(conns, "service")
    else:
        svc = np.full(n, "", dtype=object)
    port = column(conns, S.RESP_P, 0.0).astype(np.int64)
    # Detected service first; the port stand-in only where nothing was detected.
    svc = np.where(np.isin(svc, ["", "-"]), np.char.add(np.char.add(proto.astype(str), "/"), port.astype(str)), svc)
    ts = np.sort(column(conns, S.TS))
    ts = ts[np.isfinite(ts)]
    duration = float((summary.get("trace") or {}).get("duration_s") or (ts[-1] - ts[0] if len(ts) > 1 else 0.0))

    # Per-side samples (warm-ups, train sizes) by connection row.
    warm = read_table(profile_dir, S.WARMUPS, [S.CONN, S.SIDE, S.WARMUP_S], required=False)
    trains = read_table(profile_dir, S.TRAINS, [S.CONN, S.SIDE, S.SIZE_PKTS], required=False)

    def samples(table, name, value, sel_conn, side):
        if table is None or table.num_rows == 0:
            return np.zeros(0)
        c = sample_connections(table, n, f"{profile_dir}/{name}")
        sides = np.array(table.column(S.SIDE).to_pylist(), dtype=object)
        return column(table, value)[sel_conn[c] & (sides == side)]

    classes = {}
    for sc in SCOPES:
        for pr in PROTOS:
            sel = (scope == sc) & (proto == pr)
            if not sel.any():
                continue
            st = state[sel]
            if pr == "tcp":
                group = np.array([TCP_STATE_MAP.get(s, s) for s in state], dtype=object)
                group = np.where(np.isin(group, TCP_STATES), group, "SF")
                synth_state = group[sel]
            else:
                group = np.where(cols["resp_pkts"] > 0, "SF", "S0").astype(object)
                synth_state = group[sel]
            sv = Counter(svc[sel].tolist())
            top = sorted(sv.items(), key=lambda kv: (-kv[1], kv[0]))
            services = []
            for name, count in top[:TOP_SERVICES]:
                ports = port[sel & (svc == name)]
                services.append({"service": name, "port": int(np.bincount(ports).argmax()), "connections": count})
            entry = {
                "scope": sc,
                "proto": pr,
                "connections": int(sel.sum()),
                "orig_local": int((sel & local_o).sum()),
                "bytes": {"orig": float(ob[sel].sum()), "resp": float(rb[sel].sum())},
                "services": services,
                "other_services": {
                    "connections": int(sum(c for _, c in top[TOP_SERVICES:])),
                    "services": len(top) - min(len(top), TOP_SERVICES),
                },
                "states": dict(sorted(Counter(st.tolist()).items())),
                "synth_states": dict(sorted(Counter(synth_state.tolist()).items())),
                "groups": {
                    g: _group_entry(pr, g, cols, sel & (group == g), seed) for g in sorted(set(group[sel].tolist()))
                },
            }
            if pr == "tcp":
                est = sel & np.isin(group, ["SF", "S1", "RSTO", "RSTR", "OTH"])
                entry["mss"] = {
                    side: _mss(
                        (ob if side == "orig" else rb)[est], column(conns, f"{side}_distinct_data_pkts", 0.0)[est]
                    )
                    for side in S.SIDES
                }
                entry["sides"] = {
                    side: {
                        "warmup_s": fit_model(samples(warm, S.WARMUPS, S.WARMUP_S, sel, side), "warmup_s", seed=seed),
                        "train_size_pkts": fit_model(
                            samples(trains, S.TRAINS, S.SIZE_PKTS, sel, side),
                            "train_size_pkts",
                            integer=True,
                            seed=seed,
                        ),
                        "pacing_per_pkt_s": fit_model(
                            column(conns, f"{side}_pacing_per_pkt_s")[sel], "pacing_per_pkt_s", seed=seed
                        ),
                        "rtt_data_ack_s": fit_model(
                            column(conns, f"rtt_data_ack_{side}_median_s")[sel], "rtt_data_ack_s", seed=seed
                        ),
                    }
                    for side in S.SIDES
                }
            classes[f"{sc}/{pr}"] = entry

    # Hosts: connection counts per (class, role), local and remote apart.
    cls_sel = np.isin(scope, SCOPES) & np.isin(proto, PROTOS)
    answered = np.isin(state, ["SF", "S1", "RSTO", "RSTR", "S2", "S3"])
    role_r = np.where(proto == "udp", "resp", np.where(answered, "resp_answered", "resp_unanswered"))
    o_key = np.char.add(np.char.add(scope.astype(str), "/"), np.char.add(proto.astype(str), "/orig"))
    r_key = np.char.add(np.char.add(scope.astype(str), "/"), np.char.add(proto.astype(str), "/"))
    r_key = np.char.add(r_key, role_r.astype(str))
    orig_h = _strings(conns, S.ORIG_H)
    resp_h = _strings(conns, S.RESP_H)
    # Servers as hosts.parquet marks them (accepted TCP, or answered UDP on one
    # port to several peers: docs/analyzer.md), so the model's count is the one
    # a profile of the synthetic trace reports; without the table, accepted TCP.
    host_table = read_table(profile_dir, S.HOSTS, [S.HOST, S.SERVER], required=False)
    if host_table is not None:
        t = host_table.to_pydict()
        marked = {h for h, srv in zip(t[S.HOST], t[S.SERVER], strict=True) if srv}
        is_server = np.isin(resp_h, sorted(marked))
    else:
        is_server = (proto == "tcp") & answered
    hosts = {}
    for where, lo, lr in (("local", local_o, local_r), ("remote", ~local_o, ~local_r)):
        keys = sorted(set(o_key[cls_sel & lo].tolist()) | set(r_key[cls_sel & lr].tolist()))
        index = {k: i for i, k in enumerate(keys)}
        mo, mr = cls_sel & lo, cls_sel & lr
        key_all = np.concatenate([[index[k] for k in o_key[mo]], [index[k] for k in r_key[mr]]]).astype(np.int64)
        host_all = np.concatenate([orig_h[mo], resp_h[mr]])
        table = _host_rows(None, keys, key_all, host_all, np.ones(len(host_all), dtype=bool))
        clients = {h for h in orig_h[mo]}
        servers = {h for h in resp_h[mr & is_server]}
        table["clients"] = len(clients)
        table["servers"] = len(servers)
        hosts[where] = table

    by_proto = Counter(proto.tolist())
    return {
        "duration_s": duration,
        "local": list((summary.get("config") or {}).get("local") or []),
        "remote_net": REMOTE_NET,
        "connections": int(n),
        "by_proto": {
            "tcp": by_proto.get("tcp", 0),
            "udp": by_proto.get("udp", 0),
            "icmp": by_proto.get("icmp", 0),
            "other": int(n - by_proto.get("tcp", 0) - by_proto.get("udp", 0) - by_proto.get("icmp", 0)),
        },
        "by_scope": {s: int((scope == s).sum()) for s in (*SCOPES, "external")},
        "arrivals": {
            "rate_per_s": float(n / duration) if duration > 0 else None,
            "span_s": float(ts[-1] - ts[0]) if len(ts) > 1 else 0.0,
            "interarrival_s": fit_model(np.diff(ts), "interarrival_s", seed=seed),
        },
        "classes": classes,
        "hosts": hosts,
    }
