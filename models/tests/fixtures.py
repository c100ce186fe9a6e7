"""Small analyzer-profile fixtures with the analyzer's schema, built from Python rows.

Until the Rust analyzer writes real profiles everywhere, tests describe a trace as a few
connections and hosts and get a profile directory with the same Parquet files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tracelab_models import schema as S
from tracelab_models.zeeklog import CONN_COLUMNS

# The public test traces and Zeek baselines committed with the repository
# (datasets/public/MANIFEST.md gives source and licence of each file).
DATASETS = Path(__file__).resolve().parents[2] / "datasets" / "public"


def public_dataset(rel: str) -> Path:
    """A file under datasets/public; a missing one fails the test (it is part of the repository)."""
    path = DATASETS / rel
    if not path.exists():
        pytest.fail(f"{path} not found: it belongs to the repository (datasets/public/MANIFEST.md)")
    return path


# The analyzer's connections table: Zeek's conn.log columns (as the Zeek log
# reader types them), then the analyzer's own.
_CONN_TYPES = {
    **CONN_COLUMNS,
    S.SCOPE: pa.string(),
    S.CATEGORY: pa.string(),
    S.WELL_BEHAVED: pa.bool_(),
    S.RTT_HANDSHAKE: pa.float64(),
    "rtt_syn_synack_s": pa.float64(),
    "rtt_synack_ack_s": pa.float64(),
    S.RTT_DATA_ACK: pa.float64(),
    **{
        S.side_col(side, m): t
        for side in S.SIDES
        for m, t in (
            ("data_pkts", pa.int64()),
            ("retransmissions", pa.int64()),
            ("trains", pa.int64()),
            ("warmup_s", pa.float64()),
            ("actual_s", pa.float64()),
            ("theory_s", pa.float64()),
            ("pacing_s", pa.float64()),
            ("pacing_per_pkt_s", pa.float64()),
        )
    },
    "setup_s": pa.float64(),
    "transfer_s": pa.float64(),
    "teardown_s": pa.float64(),
}
_HOST_TYPES = {
    S.HOST: pa.string(),
    S.LOCAL: pa.bool_(),
    **{f: pa.int64() for f in S.ROLE_FEATURES},
    "bytes_in": pa.int64(),
    "bytes_out": pa.int64(),
    "pkts_in": pa.int64(),
    "pkts_out": pa.int64(),
    S.SERVER: pa.bool_(),
}


def _table(rows: list[dict], types: dict) -> pa.Table:
    return pa.table({name: pa.array([r.get(name) for r in rows], type=t) for name, t in types.items()})


def write_profile(
    directory: Path,
    connections: list[dict],
    hosts: list[dict] | None = None,
    warmups=None,
    trains=None,
    rtt=None,
    packet_sizes=None,
    summary=None,
) -> Path:
    """Write a profile directory; missing row fields are null."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "samples").mkdir(exist_ok=True)
    for i, c in enumerate(connections):
        c.setdefault(S.UID, f"C{i}")
        c.setdefault(S.TS, float(i))
    pq.write_table(_table(connections, _CONN_TYPES), directory / S.CONNECTIONS)
    if hosts is not None:
        pq.write_table(_table(hosts, _HOST_TYPES), directory / S.HOSTS)
    samples = {
        S.WARMUPS: (warmups, {S.CONN: pa.int64(), S.SIDE: pa.string(), S.TRAIN: pa.int64(), S.WARMUP_S: pa.float64()}),
        S.TRAINS: (trains, {S.CONN: pa.int64(), S.SIDE: pa.string(), S.TRAIN: pa.int64(), S.SIZE_PKTS: pa.int64()}),
        S.RTT_SAMPLES: (rtt, {S.CONN: pa.int64(), S.SIDE: pa.string(), S.RTT_S: pa.float64()}),
        S.PACKET_SIZES: (
            packet_sizes,
            {S.SIDE: pa.string(), S.SCOPE: pa.string(), S.IP_LEN: pa.int64(), S.COUNT: pa.int64()},
        ),
    }
    for name, (rows, types) in samples.items():
        if rows is not None:
            pq.write_table(_table(rows, types), directory / name)
    (directory / S.SUMMARY).write_text(
        json.dumps(
            summary or {"trace": {"path": "fixture.pcap"}, "tool": {"name": "tracelab-analyzer", "version": "fixture"}}
        )
    )
    return directory


def host_rows(features: dict[str, tuple], servers=(), local=True) -> list[dict]:
    """hosts.parquet rows from {host: (incnx, outcnx, dportin, dportout, fan_in, fan_out)}."""
    return [
        {S.HOST: h, S.LOCAL: local, **dict(zip(S.ROLE_FEATURES, f, strict=True)), S.SERVER: h in servers}
        for h, f in features.items()
    ]
