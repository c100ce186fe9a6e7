"""Reading the analyzer's profile directory (Parquet) and Zeek conn.log files.

Errors name the file and the reason (``ProfileError``), never a traceback from deep
inside pyarrow.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import schema as S


class ProfileError(Exception):
    """A profile file is missing, unreadable or lacks required columns."""


# The major versions of the tables' schema this code reads: the analyzer writes
# `tracelab.schema_version` ("MAJOR.MINOR") in every Parquet file's key-value
# metadata and changes the major when a column changes type or meaning
# (docs/analyzer.md "Parquet layout"). 2 stores times (`ts`, `bin_start`) as
# timestamp[us, UTC] where 1 had float seconds, and adds `uid` to the samples
# tables; `read_table` gives both as 2 with times in float seconds. Files
# without the key predate it and have the schema of major 1.
SCHEMA_MAJORS = (1, 2)
SCHEMA_VERSION_KEY = b"tracelab.schema_version"
# The version of the tables this package writes (zeeklog.to_profile), the analyzer's.
SCHEMA_VERSION = b"2.0"
_UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def check_schema_version(path, metadata: dict | None) -> None:
    """Refuse a file whose schema major version is not one of ``SCHEMA_MAJORS``, in one line."""
    version = (metadata or {}).get(SCHEMA_VERSION_KEY, b"1.0").decode("utf-8", "replace")
    major = version.split(".", 1)[0]
    if major not in {str(m) for m in SCHEMA_MAJORS}:
        known = " and ".join(f"{m}.x" for m in SCHEMA_MAJORS)
        raise ProfileError(
            f"{path}: schema version {version} is not supported "
            f"(this tracelab reads {known}; profile the trace again with this version)"
        )


def seconds(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Times as float64 seconds since the epoch: timestamps (schema 2) converted,
    numbers (schema 1, Zeek logs) cast."""
    if pa.types.is_timestamp(values.type):
        ticks = pc.cast(pc.cast(values, pa.int64()), pa.float64())
        return pc.divide(ticks, float(_UNIT_PER_SECOND[values.type.unit]))
    return pc.cast(values, pa.float64())


def times_as_seconds(table: pa.Table) -> pa.Table:
    """``table`` with every timestamp column as float64 seconds since the epoch,
    the form every model and report computes with (and Zeek's `ts`)."""
    for i, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type):
            as_seconds = pa.field(field.name, pa.float64(), field.nullable, field.metadata)
            table = table.set_column(i, as_seconds, seconds(table.column(i)))
    return table


def read_table(profile_dir: str | Path, name: str, columns=None, required=True) -> pa.Table | None:
    """Read ``profile_dir/name``; check its schema version and that ``columns`` exist.
    Times come back as float64 seconds (``times_as_seconds``)."""
    path = Path(profile_dir) / name
    if not path.exists():
        if required:
            raise ProfileError(f"{path}: not found (run `tracelab profile TRACE` to produce it)")
        return None
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as e:
        raise ProfileError(f"{path}: not a readable Parquet file ({e})") from e
    check_schema_version(path, table.schema.metadata)
    missing = [c for c in (columns or ()) if c not in table.column_names]
    if missing:
        raise ProfileError(f"{path}: missing column(s) {', '.join(missing)}")
    return times_as_seconds(table.select(list(columns)) if columns else table)


def read_summary(profile_dir: str | Path) -> dict:
    path = Path(profile_dir) / S.SUMMARY
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}: invalid JSON at line {e.lineno} ({e.msg})") from e


def column(table: pa.Table, name: str, fill=np.nan) -> np.ndarray:
    """A numeric column as float64 with nulls replaced by ``fill``."""
    col = pc.fill_null(pc.cast(table.column(name), pa.float64()), fill)
    return col.to_numpy()


def sample_connections(table: pa.Table, n_connections: int, path) -> np.ndarray:
    """The ``conn`` column of a samples table (warm-ups, trains, RTTs) as row numbers
    into connections.parquet, checked to lie in ``0..n_connections``."""
    conn = pc.fill_null(table.column(S.CONN), -1).to_numpy().astype(np.int64, copy=False)
    bad = conn[(conn < 0) | (conn >= n_connections)]
    if len(bad):
        raise ProfileError(
            f"{path}: conn {int(bad[0])} is not a row of {S.CONNECTIONS} "
            f"({n_connections} rows; {len(bad)} such sample(s))"
        )
    return conn


# -------------------------------------------------------------------- host features
# Zeek connection states in which the 3-way handshake completed (Zeek conn.log docs).
ESTABLISHED_STATES = frozenset({"S1", "S2", "S3", "SF", "RSTO", "RSTR"})
# A UDP server answered on one port to at least this many (address, port) peers
# (the analyzer's UDP_SERVER_MIN_PEERS, docs/analyzer.md "hosts.parquet").
UDP_SERVER_MIN_PEERS = 2


def host_features(conns: pa.Table) -> pa.Table:
    """The six role features per host from connection rows (thesis §8.4.1).

    Mirrors hosts.parquet for inputs that are not analyzer profiles (Zeek conn.log):
    ``incnx``/``outcnx`` count connections accepted/initiated, ``dportin``/``dportout``
    distinct destination ports of those, ``fan_in``/``fan_out`` distinct peers.
    ``server`` = accepted at least one TCP connection whose handshake completed, or
    answered UDP on one port to UDP_SERVER_MIN_PEERS distinct (address, port) peers
    (answered: a packet back, or state SF without packet counts).
    """
    orig = conns.column(S.ORIG_H).to_pylist()
    resp = conns.column(S.RESP_H).to_pylist()
    dport = conns.column(S.RESP_P).to_pylist()
    proto = conns.column(S.PROTO).to_pylist()
    state = conns.column(S.CONN_STATE).to_pylist() if S.CONN_STATE in conns.column_names else [None] * len(orig)
    have = set(conns.column_names)
    oport = conns.column(S.ORIG_P).to_pylist() if S.ORIG_P in have else [None] * len(orig)
    rpkts = conns.column(S.RESP_PKTS).to_pylist() if S.RESP_PKTS in have else [None] * len(orig)
    udp_peers = defaultdict(set)  # (host, port) -> answered (peer, peer port)
    inc, out = defaultdict(int), defaultdict(int)
    pin, pout, fin, fout = (defaultdict(set) for _ in range(4))
    server = defaultdict(bool)
    for o, r, p, pr, st, op, rp in zip(orig, resp, dport, proto, state, oport, rpkts, strict=True):
        out[o] += 1
        inc[r] += 1
        pout[o].add(p)
        pin[r].add(p)
        fout[o].add(r)
        fin[r].add(o)
        server[r] |= pr == "tcp" and st in ESTABLISHED_STATES
        if pr == "udp" and op is not None and (rp > 0 if rp is not None else st == "SF"):
            udp_peers[r, p].add((o, op))
            server[r] |= len(udp_peers[r, p]) >= UDP_SERVER_MIN_PEERS
    hosts = sorted(set(orig) | set(resp))
    return pa.table(
        {
            S.HOST: hosts,
            "incnx": [inc[h] for h in hosts],
            "outcnx": [out[h] for h in hosts],
            "dportin": [len(pin[h]) for h in hosts],
            "dportout": [len(pout[h]) for h in hosts],
            "fan_in": [len(fin[h]) for h in hosts],
            "fan_out": [len(fout[h]) for h in hosts],
            S.SERVER: [server[h] for h in hosts],
        }
    )
