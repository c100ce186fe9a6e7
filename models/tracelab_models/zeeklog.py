"""Zeek conn.log files as a profile: what `model derive` and `fidelity` read.

Zeek writes conn.log as TSV typed by its ``#types`` header (``-`` unset,
``(empty)`` an empty set), as JSON lines (``LogAscii::use_json=T``), either one
gzip-compressed once rotated (``conn.2026-11-25-10-00-00.log.gz``). The records
are read by parsezeeklogs (PyPI), which handles all three; this module picks
the files, turns the records into the connections table of an analyzer profile
(same column names and types), merges rotated logs in time order and writes
the profile's connections.parquet, hosts.parquet and summary.json, so that
everything that reads a profile reads a conn.log unchanged.

Limits:
* a directory is read as its rotated conn logs: files named ``conn.log``,
  ``conn.<anything>.log``, each optionally ``.gz``; other logs are ignored;
* a record must have ``ts`` (or be a btest baseline's canonical
  ``XXXXXXXXXX.XXXXXX``, read as unset), ``id.orig_h``, ``id.resp_h``,
  ``id.resp_p`` and ``proto``; a malformed line stops the read with
  ``file:line: reason``;
* JSON ``ts`` is epoch seconds, integer milliseconds or ISO 8601, as
  ``LogAscii::json_timestamps`` (TS_EPOCH, TS_MILLIS, TS_ISO8601) writes it;
* records are held in memory, and parsezeeklogs converts them in Python:
  1,045,000 connections (tcpmix's conn.log repeated) took 1.06 GB peak RSS
  and 17 s of CPU;
* a conn.log has no packets: the columns the analyzer measures from them
  (RTTs, trains, warm-ups, pacing, well-behaved) are present and null, and
  ``ABSENT`` names what a model or a fidelity check cannot have from it.
"""

from __future__ import annotations

import gzip
import ipaddress
import json
import logging
import re
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from parsezeeklogs import ZeekLog

from . import schema as S
from .profile import SCHEMA_VERSION, SCHEMA_VERSION_KEY, ProfileError, host_features

# Zeek's conn.log columns a profile's connections.parquet has, with its types
# (`service` with Zeek's names, as the analyzer detects them).
CONN_COLUMNS = {
    S.TS: pa.float64(),
    S.UID: pa.string(),
    S.ORIG_H: pa.string(),
    S.ORIG_P: pa.int32(),
    S.RESP_H: pa.string(),
    S.RESP_P: pa.int32(),
    S.PROTO: pa.string(),
    "service": pa.string(),
    S.DURATION: pa.float64(),
    S.ORIG_BYTES: pa.int64(),
    S.RESP_BYTES: pa.int64(),
    S.CONN_STATE: pa.string(),
    S.LOCAL_ORIG: pa.bool_(),
    S.LOCAL_RESP: pa.bool_(),
    "missed_bytes": pa.int64(),
    S.HISTORY: pa.string(),
    S.ORIG_PKTS: pa.int64(),
    S.ORIG_IP_BYTES: pa.int64(),
    S.RESP_PKTS: pa.int64(),
    S.RESP_IP_BYTES: pa.int64(),
}
REQUIRED = (S.TS, S.ORIG_H, S.RESP_H, S.RESP_P, S.PROTO)
# Columns the analyzer measures from packets, null here (the readers of a
# profile need them present).
PACKET_COLUMNS = {
    S.WELL_BEHAVED: pa.bool_(),
    S.RTT_HANDSHAKE: pa.float64(),
    S.RTT_DATA_ACK: pa.float64(),
    "rtt_syn_synack_s": pa.float64(),
    "rtt_synack_ack_s": pa.float64(),
    **{
        S.side_col(side, m): t
        for side in S.SIDES
        for m, t in (("trains", pa.int64()), (S.PACING_PER_PKT, pa.float64()))
    },
}
# What a model derived from a conn.log lacks, and the fidelity marginals that are n/a.
ABSENT = {
    "model": [
        "legacy.rtt_s and topological.rtt_s, and the link delays from them (no RTT in a conn.log)",
        "apps: train sizes, warm-ups, pacing per packet, packet sizes (no packets)",
        "traffic: trains, handshake RTT split, warm-ups, pacing, MSS (no packets)",
    ],
    "fidelity": ["handshake RTT medians", "trains per well-behaved connection"],
}
KIND = "zeek-conn-log"
# parsezeeklogs logs a warning for a bad line before the on_error hook that stops
# the read with file:line; that one error line is all the user should see.
logging.getLogger("parsezeeklogs").addHandler(logging.NullHandler())
logging.getLogger("parsezeeklogs").propagate = False
_ROTATED = re.compile(r"^conn(\..+)?\.log(\.gz)?$")
_BTEST_TIME = "XXXXXXXXXX.XXXXXX"  # btest's canonical form of a time


def is_profile(path: str | Path) -> bool:
    """An analyzer profile directory (anything else is read as Zeek logs)."""
    return (Path(path) / S.CONNECTIONS).is_file()


def log_files(source: str | Path) -> list[Path]:
    """The conn logs of ``source``: the file itself, or a directory's rotated ones."""
    source = Path(source)
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise ProfileError(f"{source}: not found")
    files = sorted(p for p in source.iterdir() if p.is_file() and _ROTATED.match(p.name))
    if not files:
        raise ProfileError(f"{source}: no conn.log or conn.*.log(.gz) in the directory (not a Zeek log directory)")
    return files


class _Lines:
    """A text handle whose lines have btest's canonical times as Zeek's unset
    marker, so that Zeek's own test baselines read as logs without times."""

    def __init__(self, fh):
        self._fh = fh

    def _fix(self, line: str) -> str:
        return line.replace(_BTEST_TIME, "-") if line.startswith(_BTEST_TIME) else line

    def readline(self) -> str:
        return self._fix(self._fh.readline())

    def __iter__(self):
        return (self._fix(line) for line in self._fh)

    def close(self) -> None:
        self._fh.close()


def _open(path: Path):
    with path.open("rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    if gz:
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    return path.open(encoding="utf-8", errors="replace", newline="")


def _fail(path: Path):
    def on_error(lineno: int, _line: str, exc: Exception):
        raise ProfileError(f"{path}:{lineno}: {exc}")

    return on_error


# JSON::TS_MILLIS writes integer milliseconds: above this, an integer ts is
# milliseconds (as seconds it would be after the year 5000).
_MILLIS_ABOVE = 10**11


def _ts(value, path: Path, lineno: int) -> float | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > _MILLIS_ABOVE:
        return value / 1000
    if value is None or isinstance(value, (int, float)):
        return value
    if value == _BTEST_TIME:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (AttributeError, ValueError):
        raise ProfileError(f"{path}:{lineno}: ts {value!r} is neither epoch (milli)seconds nor ISO 8601") from None


def read_file(path: Path) -> pa.Table:
    """One conn log (TSV, JSON lines, either gzipped) as connection rows."""
    cols = {name: [] for name in CONN_COLUMNS}
    try:
        fh = _open(path)
    except OSError as e:
        raise ProfileError(f"{path}: cannot read ({e.strerror or e})") from e
    try:
        try:
            log = ZeekLog(_Lines(fh), on_error=_fail(path))
        except ValueError as e:  # no #fields header, or #fields and #types disagree
            raise ProfileError(f"{path}: {str(e).removeprefix('stream: ')}") from None
        if log.header is not None:
            missing = [f for f in REQUIRED if f not in log.header.fields]
            if missing:
                raise ProfileError(f"{path}: no {', '.join(missing)} field (not a conn.log?)")
        for rec in log:
            for name in REQUIRED:
                if name not in rec or (rec[name] is None and name != S.TS):
                    raise ProfileError(f"{path}:{log.line_number}: no {name} (not a conn.log record?)")
            rec[S.TS] = _ts(rec[S.TS], path, log.line_number)
            for name, values in cols.items():
                values.append(rec.get(name))
    except (OSError, EOFError) as e:  # truncated or corrupt gzip
        raise ProfileError(f"{path}: cannot read ({e})") from None
    finally:
        fh.close()
    try:
        return pa.table({name: pa.array(v, type=CONN_COLUMNS[name]) for name, v in cols.items()})
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        raise ProfileError(f"{path}: a field has a value of the wrong type ({e})") from None


def read_conn_logs(source: str | Path) -> tuple[pa.Table, list[Path]]:
    """All conn logs of ``source`` as one table in time order (stable; unset
    times last) and the files read."""
    files = log_files(source)
    table = pa.concat_tables([read_file(p) for p in files])
    order = pc.sort_indices(table, sort_keys=[(S.TS, "ascending", "at_end")])
    return table.take(order), files


def _locality(hosts: list[str], nets, flagged: set[str]) -> dict[str, bool]:
    if not nets:
        return {h: h in flagged for h in hosts}
    out = {}
    for h in hosts:
        try:
            addr = ipaddress.ip_address(h)
        except ValueError:
            out[h] = False
            continue
        out[h] = any(addr in n for n in nets if n.version == addr.version)
    return out


def parse_local(local: list[str]) -> list:
    nets = []
    for prefix in local:
        try:
            nets.append(ipaddress.ip_network(prefix, strict=False))
        except ValueError:
            raise ProfileError(f"--local {prefix}: not an IP prefix (e.g. 10.0.0.0/8)") from None
    return nets


def _as_profile_table(table: pa.Table) -> pa.Table:
    """``table`` as the analyzer writes it (schema ``SCHEMA_VERSION``): `ts` as
    timestamp[us, UTC] (Zeek's six decimals, rounded to the microsecond), the
    version in the metadata."""
    if S.TS in table.column_names:
        micros = pc.cast(pc.round(pc.multiply(table.column(S.TS), 1e6)), pa.int64())
        stamp = pa.timestamp("us", tz="UTC")
        table = table.set_column(table.column_names.index(S.TS), pa.field(S.TS, stamp), micros.cast(stamp))
    return table.replace_schema_metadata({SCHEMA_VERSION_KEY: SCHEMA_VERSION})


def to_profile(source: str | Path, local: list[str], out_dir: str | Path) -> dict:
    """Write the profile of the conn logs of ``source`` into ``out_dir``.

    Locality comes from ``local`` (prefixes, as the analyzer's --local) or, without
    them, from the log's own ``local_orig``/``local_resp`` (Zeek's Site::local_nets).
    Scope as the analyzer's: intranet = both ends local, internet = one, external = none.
    Returns the summary written.
    """
    nets = parse_local(local)
    conns, files = read_conn_logs(source)
    orig, resp = conns.column(S.ORIG_H).to_pylist(), conns.column(S.RESP_H).to_pylist()
    flagged = set()
    for hosts, flags in ((orig, conns.column(S.LOCAL_ORIG)), (resp, conns.column(S.LOCAL_RESP))):
        flagged.update(h for h, f in zip(hosts, flags.to_pylist(), strict=True) if f)
    is_local = _locality(sorted(set(orig) | set(resp)), nets, flagged)
    lo = [is_local[h] for h in orig]
    lr = [is_local[h] for h in resp]
    scope = [
        S.SCOPE_INTRANET if a and b else S.SCOPE_INTERNET if a or b else "external" for a, b in zip(lo, lr, strict=True)
    ]
    if nets:
        conns = conns.set_column(conns.column_names.index(S.LOCAL_ORIG), S.LOCAL_ORIG, pa.array(lo))
        conns = conns.set_column(conns.column_names.index(S.LOCAL_RESP), S.LOCAL_RESP, pa.array(lr))
    conns = conns.append_column(S.SCOPE, pa.array(scope, pa.string()))
    for name, kind in PACKET_COLUMNS.items():
        conns = conns.append_column(name, pa.nulls(conns.num_rows, kind))
    hosts = host_features(conns)
    hosts = hosts.add_column(1, S.LOCAL, pa.array([is_local[h] for h in hosts.column(S.HOST).to_pylist()]))
    # The trace's span as the analyzer's (first to last packet): first start to last end.
    first = pc.min(conns.column(S.TS)).as_py()
    last = pc.max(pc.add(conns.column(S.TS), pc.fill_null(conns.column(S.DURATION), 0.0))).as_py()
    summary = {
        "trace": {"path": str(source), "duration_s": (last - first) if first is not None else None},
        "config": {"local": [str(n) for n in nets]},
        "input": {"kind": KIND, "files": [str(p) for p in files], "connections": conns.num_rows, "absent": ABSENT},
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(_as_profile_table(conns), out / S.CONNECTIONS)
    pq.write_table(_as_profile_table(hosts), out / S.HOSTS)
    (out / S.SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")
    return summary
