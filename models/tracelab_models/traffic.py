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

import numpy as np
from scipy import stats

from . import schema as S
from .columns import pairwise_sum
from .distributions import fit_model

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

EMPIRICAL_COPULA_MAX = 256  # groups up to this size keep their rows' ranks (the empirical copula)
TAIL_ROWS = 32  # larger groups keep their largest connections' rows whole


def _strings(values) -> str:
    return ", ".join("'" + v + "'" for v in values)


def _rows_view(db) -> None:
    """`traffic_rows`: each connection's variables as the model reads them (a column
    an older or partial profile lacks is unknown: null, then its fill)."""

    def num(name, fill="'NaN'::DOUBLE"):
        return (
            f'coalesce(CAST("{name}" AS DOUBLE), {fill})' if db.has("connections", name) else f"CAST({fill} AS DOUBLE)"
        )

    def text(name):
        return f"coalesce(\"{name}\", '')" if db.has("connections", name) else "''"

    def flag(name, otherwise):
        # Without local_orig/local_resp: intranet = both local, internet = a local originator.
        return f'coalesce("{name}", {otherwise})' if db.has("connections", name) else otherwise

    mapped = "CASE state " + " ".join(f"WHEN '{a}' THEN '{b}'" for a, b in TCP_STATE_MAP.items()) + " ELSE state END"
    db.execute(f"""
        CREATE OR REPLACE TEMP VIEW traffic_base AS SELECT
            conn, {text(S.PROTO)} AS proto, {text(S.SCOPE)} AS scope, {text(S.CONN_STATE)} AS state,
            {num(S.ORIG_BYTES, "0.0")} AS ob, {num(S.RESP_BYTES, "0.0")} AS rb,
            {num(S.DURATION, "0.0")} AS duration_s,
            {num("orig_trains", "0.0")} + {num("resp_trains", "0.0")} AS trains,
            {num("rtt_syn_synack_s")} AS rtt_syn_synack_s, {num("rtt_synack_ack_s")} AS rtt_synack_ack_s,
            {num(S.ORIG_PKTS, "0.0")} AS orig_pkts, {num(S.RESP_PKTS, "0.0")} AS resp_pkts,
            {text(S.ORIG_H)} AS orig_h, {text(S.RESP_H)} AS resp_h,
            CAST(trunc({num(S.RESP_P, "0.0")}) AS BIGINT) AS port, {text("service")} AS service,
            {flag(S.LOCAL_ORIG, f"coalesce({text(S.SCOPE)} IN ({_strings(SCOPES)}), false)")} AS local_o,
            {flag(S.LOCAL_RESP, f"{text(S.SCOPE)} = '{S.SCOPE_INTRANET}'")} AS local_r,
            {num(S.TS)} AS ts,
            {num("orig_distinct_data_pkts", "0.0")} AS orig_data_pkts,
            {num("resp_distinct_data_pkts", "0.0")} AS resp_data_pkts,
            {num("orig_pacing_per_pkt_s")} AS orig_pacing, {num("resp_pacing_per_pkt_s")} AS resp_pacing,
            {num("rtt_data_ack_orig_median_s")} AS orig_rtt_data_ack,
            {num("rtt_data_ack_resp_median_s")} AS resp_rtt_data_ack
        FROM connections""")  # fmt: skip
    db.execute(f"""
        CREATE OR REPLACE TEMP TABLE traffic_rows AS SELECT *,
            ob + rb AS total_bytes,
            CASE WHEN ob + rb > 0 THEN ob / (ob + rb) ELSE 'NaN'::DOUBLE END AS orig_fraction,
            -- The detected service first; the port stand-in only where nothing was detected.
            CASE WHEN service IN ('', '-') THEN proto || '/' || CAST(port AS VARCHAR) ELSE service END AS svc,
            CASE WHEN proto = 'tcp' THEN
                (CASE WHEN ({mapped}) IN ({_strings(TCP_STATES)}) THEN ({mapped}) ELSE 'SF' END)
                ELSE (CASE WHEN resp_pkts > 0 THEN 'SF' ELSE 'S0' END) END AS grp,
            state IN ('SF', 'S1', 'RSTO', 'RSTR', 'S2', 'S3') AS answered
        FROM traffic_base""")  # fmt: skip


def _column(db, expr: str, where: str):
    return db.column(f"SELECT {expr} AS v, conn FROM traffic_rows WHERE {where}", "conn")


def _count_by(db, key: str, where: str) -> dict:
    return dict(sorted(db.rows(f"SELECT {key}, count(*) FROM traffic_rows WHERE {where} GROUP BY ALL")))


def normal_score_correlation(db, names: list[str], where: str, rows: int) -> np.ndarray:
    """The correlation of the variables' normal scores, norm.ppf(rank / (rows + 1))
    with ties at their average rank, over the group's rows where all are known:
    the covariance is the pairwise (numpy) sum of the products of the centred
    scores in row order over rows - 1, streamed twice (means, then products)."""
    known = " AND ".join(f"isfinite({v})" for v in names)
    ranks = ", ".join(
        f"rank() OVER (ORDER BY {v}) + (count(*) OVER (PARTITION BY {v}) - 1) / 2.0 AS r{j}"
        for j, v in enumerate(names)
    )
    query = f"SELECT {ranks}, conn FROM traffic_rows WHERE {where} AND {known} ORDER BY conn"
    k = len(names)

    def scores(centre=None):
        for batch in db.record_batches(query):
            r = np.vstack([batch.column(j).to_numpy().astype(np.float64) for j in range(k)])
            z = stats.norm.ppf(r / (rows + 1))
            if centre is None:
                yield z
            else:
                z = z - centre[:, None]
                yield np.vstack([z[j] * z[i] for j in range(k) for i in range(j, k)])

    means = pairwise_sum(rows, scores(), k) / rows
    products = pairwise_sum(rows, scores(means), k * (k + 1) // 2)
    cov = np.zeros((k, k))
    cov[np.triu_indices(k)] = products
    cov = np.triu(cov) + np.triu(cov, 1).T
    cov *= np.true_divide(1, rows - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.diag(cov))
        c = cov / sd[:, None]
        c /= sd[None, :]
    return np.clip(c, -1, 1)


def copula(db, names: list[str], where: str, n: int) -> dict:
    """How a group's variables go together. Up to EMPIRICAL_COPULA_MAX rows: the
    empirical copula, each row's pseudo-observations (rank - 1/2) / n per variable
    (null where unknown), which with the margins' tables gives back the rows. Above:
    a Gaussian copula, the correlation of the variables' normal scores over the rows
    where all are known (identity with fewer than 3), made positive definite, and
    the TAIL_ROWS largest connections' rows whole."""
    k = len(names)
    if 0 < n <= EMPIRICAL_COPULA_MAX:
        x = np.array(db.rows(f"SELECT {', '.join(names)} FROM traffic_rows WHERE {where} ORDER BY conn"), dtype=float)
        x = x.reshape(n, k)
        u = np.full((n, k), np.nan)
        for j in range(k):
            ok = np.isfinite(x[:, j])
            if ok.any():
                u[ok, j] = (stats.rankdata(x[ok, j]) - 0.5) / ok.sum()
        rows = [[None if not np.isfinite(v) else round(float(v), 6) for v in row] for row in u]
        return {"kind": "empirical", "variables": names, "correlation": np.eye(k).tolist(), "rows": n, "u": rows}
    known = " AND ".join(f"isfinite({v})" for v in names) or "false"
    m = int(db.scalar(f"SELECT count(*) FROM traffic_rows WHERE {where} AND {known}"))
    corr = np.eye(k)
    if m >= 3 and k > 1:
        c = normal_score_correlation(db, names, where, m)
        c = np.where(np.isfinite(c), c, 0.0)
        np.fill_diagonal(c, 1.0)
        w, v = np.linalg.eigh(c)
        c = (v * np.maximum(w, 1e-6)) @ v.T
        d = np.sqrt(np.diag(c))
        corr = c / np.outer(d, d)
    out = {"kind": "gaussian", "variables": names, "correlation": np.round(corr, 6).tolist(), "rows": m}
    if "total_bytes" in names:
        # The largest connections whole: which way their bytes go decides the byte shares.
        top = db.rows(
            f"SELECT {', '.join(names)} FROM traffic_rows WHERE {where} "
            f"ORDER BY total_bytes DESC, conn DESC LIMIT {TAIL_ROWS}"
        )[::-1]
        out["tail_rows"] = {
            v: [None if x is None or not np.isfinite(x) else float(x) for x in (row[j] for row in top)]
            for j, v in enumerate(names)
        }
    return out


def _group_entry(db, proto, group, where, seed):
    names = list(GROUP_VARIABLES[proto, group])
    variables = {
        k: fit_model(
            _column(db, k, where),
            k,
            integer=k in INTEGER,
            seed=seed,
            families=k not in TABLE_ONLY,
        )
        for k in names
    }
    for k in TABLE_ONLY & set(names):
        variables[k]["reason"] = "a fraction in [0, 1] (masses at 0 and 1): " + variables[k]["reason"]
    n = int(db.scalar(f"SELECT count(*) FROM traffic_rows WHERE {where}"))
    return {"connections": n, "variables": variables, "copula": copula(db, names, where, n)}


def _mss(db, side: str, where: str) -> int:
    per_packet = _column(db, f"ceil({side[0]}b / {side}_data_pkts)",
                         f"{where} AND {side}_data_pkts >= 3 AND isfinite({side[0]}b)")  # fmt: skip
    if not len(per_packet):
        return DEFAULT_MSS
    return int(max(1, round(float(per_packet.quantiles(0.95)))))


def _samples(db, table: str, value: str, where: str, side: str):
    """The `value` of the samples of one side of the selected connections, in the table's order."""
    if not db.has(table) or not db.scalar(f"SELECT count(*) > 0 FROM {table}"):
        return np.zeros(0)
    return db.column(
        f"SELECT coalesce(CAST(s.\"{value}\" AS DOUBLE), 'NaN'::DOUBLE) AS v, s.conn, s._file, s._row "
        f"FROM {table} s JOIN traffic_rows USING (conn) WHERE s.side = '{side}' AND {where}",
        db.order(table),
    )


def _host_rows(db, keys: list[str], edges: str) -> dict:
    """Unique count vectors (connections per key) of the hosts, with multiplicities;
    `edges` gives (h, key) per connection end."""
    if not keys:
        return {"keys": keys, "rows": [], "multiplicity": [], "hosts": 0}
    counts = ", ".join(f"count(*) FILTER (WHERE key = '{k}') AS c{i}" for i, k in enumerate(keys))
    per_host = f"SELECT {counts} FROM ({edges}) GROUP BY h"
    hosts = int(db.scalar(f"SELECT count(DISTINCT h) FROM ({edges})"))
    if hosts == 0:
        return {"keys": keys, "rows": [], "multiplicity": [], "hosts": 0}
    unique = f"SELECT *, count(*) AS multiplicity FROM ({per_host}) GROUP BY ALL"
    distinct = int(db.scalar(f"SELECT count(*) FROM ({unique})"))
    rows: dict[tuple, int] = {}
    for batch in db.record_batches(unique):
        counts_ = np.column_stack([batch.column(i).to_numpy().astype(np.int64) for i in range(len(keys))])
        mult = batch.column(len(keys)).to_numpy().astype(np.int64)
        if distinct > MAX_HOST_ROWS:  # coarsen to 2 significant digits (keeps 0 and 1..99 exact)
            mag = np.where(counts_ >= 100, 10 ** (np.floor(np.log10(np.maximum(counts_, 1))) - 1), 1)
            counts_ = (np.round(counts_ / mag) * mag).astype(np.int64)
        for row, m in zip(map(tuple, counts_.tolist()), mult.tolist(), strict=True):
            rows[row] = rows.get(row, 0) + m
    order = sorted(rows, reverse=True)
    return {"keys": keys, "rows": [list(r) for r in order], "multiplicity": [rows[r] for r in order], "hosts": hosts}


def derive_traffic(db, summary: dict, seed: int = 0) -> dict:
    """The traffic section of the profile `db` (sqlprofile.ProfileDB)."""
    db.require("connections", REQUIRED)
    _rows_view(db)
    n = int(db.scalar("SELECT count(*) FROM connections"))
    times, first, last = db.row("SELECT count(*), min(ts), max(ts) FROM traffic_rows WHERE isfinite(ts)")
    span = float(last - first) if times > 1 else 0.0
    duration = float((summary.get("trace") or {}).get("duration_s") or span)
    db.check_sample_conns("warmups", (S.CONN, S.SIDE, S.WARMUP_S), n)
    db.check_sample_conns("trains", (S.CONN, S.SIDE, S.SIZE_PKTS), n)

    classes = {}
    for sc in SCOPES:
        for pr in PROTOS:
            sel = f"scope = '{sc}' AND proto = '{pr}'"
            count = int(db.scalar(f"SELECT count(*) FROM traffic_rows WHERE {sel}"))
            if not count:
                continue
            top = sorted(_count_by(db, "svc", sel).items(), key=lambda kv: (-kv[1], kv[0]))
            ports = {}
            if top:
                names = _strings(name.replace("'", "''") for name, _ in top[:TOP_SERVICES])
                for name, port, c in db.rows(
                    f"SELECT svc, port, count(*) FROM traffic_rows WHERE {sel} AND svc IN ({names}) GROUP BY ALL"
                ):
                    best = ports.get(name)
                    if best is None or (c, -port) > (best[1], -best[0]):
                        ports[name] = (port, c)
            services = [
                {"service": name, "port": int(ports[name][0]), "connections": c} for name, c in top[:TOP_SERVICES]
            ]
            groups = sorted(_count_by(db, "grp", sel))
            entry = {
                "scope": sc,
                "proto": pr,
                "connections": count,
                "orig_local": int(db.scalar(f"SELECT count(*) FROM traffic_rows WHERE {sel} AND local_o")),
                "bytes": {"orig": _column(db, "ob", sel).total(), "resp": _column(db, "rb", sel).total()},
                "services": services,
                "other_services": {
                    "connections": int(sum(c for _, c in top[TOP_SERVICES:])),
                    "services": len(top) - min(len(top), TOP_SERVICES),
                },
                "states": _count_by(db, "state", sel),
                "synth_states": _count_by(db, "grp", sel),
                "groups": {g: _group_entry(db, pr, g, f"{sel} AND grp = '{g}'", seed) for g in groups},
            }
            if pr == "tcp":
                est = f"{sel} AND grp IN ('SF', 'S1', 'RSTO', 'RSTR', 'OTH')"
                entry["mss"] = {side: _mss(db, side, est) for side in S.SIDES}
                entry["sides"] = {
                    side: {
                        "warmup_s": fit_model(_samples(db, "warmups", S.WARMUP_S, sel, side), "warmup_s", seed=seed),
                        "train_size_pkts": fit_model(
                            _samples(db, "trains", S.SIZE_PKTS, sel, side),
                            "train_size_pkts",
                            integer=True,
                            seed=seed,
                        ),
                        "pacing_per_pkt_s": fit_model(
                            _column(db, f"{side}_pacing", sel), "pacing_per_pkt_s", seed=seed
                        ),
                        "rtt_data_ack_s": fit_model(
                            _column(db, f"{side}_rtt_data_ack", sel), "rtt_data_ack_s", seed=seed
                        ),
                    }
                    for side in S.SIDES
                }
            classes[f"{sc}/{pr}"] = entry

    # Hosts: connection counts per (class, role), local and remote apart.
    cls_sel = f"scope IN ({_strings(SCOPES)}) AND proto IN ({_strings(PROTOS)})"
    role_r = "CASE WHEN proto = 'udp' THEN 'resp' WHEN answered THEN 'resp_answered' ELSE 'resp_unanswered' END"
    o_key = "scope || '/' || proto || '/orig'"
    r_key = f"scope || '/' || proto || '/' || ({role_r})"
    # Servers as hosts.parquet marks them (accepted TCP, or answered UDP on one
    # port to several peers: docs/analyzer.md), so the model's count is the one
    # a profile of the synthetic trace reports; without the table, accepted TCP.
    if db.has("hosts"):
        db.require("hosts", (S.HOST, S.SERVER))
        is_server = f'resp_h IN (SELECT "{S.HOST}" FROM hosts WHERE "{S.SERVER}")'
    else:
        is_server = "proto = 'tcp' AND answered"
    hosts = {}
    for where, lo, lr in (("local", "local_o", "local_r"), ("remote", "NOT local_o", "NOT local_r")):
        mo, mr = f"{cls_sel} AND {lo}", f"{cls_sel} AND {lr}"
        edges = (f"SELECT orig_h AS h, {o_key} AS key FROM traffic_rows WHERE {mo} "
                 f"UNION ALL SELECT resp_h AS h, {r_key} AS key FROM traffic_rows WHERE {mr}")  # fmt: skip
        keys = sorted(k for (k,) in db.rows(f"SELECT DISTINCT key FROM ({edges})"))
        table = _host_rows(db, keys, edges)
        table["clients"] = int(db.scalar(f"SELECT count(DISTINCT orig_h) FROM traffic_rows WHERE {mo}"))
        table["servers"] = int(db.scalar(f"SELECT count(DISTINCT resp_h) FROM traffic_rows WHERE {mr} AND {is_server}"))
        hosts[where] = table

    by_proto = _count_by(db, "proto", "true")
    by_scope = _count_by(db, "scope", "true")
    return {
        "duration_s": duration,
        "local": list((summary.get("config") or {}).get("local") or []),
        "remote_net": REMOTE_NET,
        "connections": n,
        "by_proto": {
            "tcp": by_proto.get("tcp", 0),
            "udp": by_proto.get("udp", 0),
            "icmp": by_proto.get("icmp", 0),
            "other": int(n - by_proto.get("tcp", 0) - by_proto.get("udp", 0) - by_proto.get("icmp", 0)),
        },
        "by_scope": {s: by_scope.get(s, 0) for s in (*SCOPES, "external")},
        "arrivals": {
            "rate_per_s": float(n / duration) if duration > 0 else None,
            "span_s": span,
            "interarrival_s": fit_model(interarrivals(db, "traffic_rows"), "interarrival_s", seed=seed),
        },
        "classes": classes,
        "hosts": hosts,
    }


def interarrivals(db, table: str):
    """The gaps between consecutive connection start times (`np.diff` of the sorted finite `ts`)."""
    return db.column(
        f"SELECT v, o FROM (SELECT ts - lag(ts) OVER w AS v, row_number() OVER w AS o FROM {table} "
        "WHERE isfinite(ts) WINDOW w AS (ORDER BY ts)) WHERE o > 1",
        "o",
    )
