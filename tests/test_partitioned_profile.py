"""`tracelab profile --partition date|hour`: the profile's tables as a
hive-partitioned dataset (issue #20, item 3), checked against the plain
profile of the same trace: same rows in each table (read back with pyarrow
and with DuckDB through `tracelab query`), the partition keys equal to the
UTC date and hour of each row's time, samples still joined to their
connection, the Arrow metadata kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from support import run_tracelab, tcpmix
from test_rotated_captures import pcap_bytes, read_pcap

OPTIONS = ("--local", "10.0.0.0/8", "--quiet", "--no-progress")
SAMPLES = ("rtt", "trains", "warmups")


@pytest.fixture(scope="module")
def profiles(tmp_path_factory) -> tuple[Path, Path]:
    """A trace crossing midnight UTC (tcpmix starts at 22:13:20 on
    2023-11-14; its second half is moved two hours later) profiled plainly
    and partitioned by hour."""
    base = tmp_path_factory.mktemp("partition")
    link_type, records = read_pcap(tcpmix(base / "t.pcap", 12_000, seed=3))
    half = len(records) // 2
    moved = records[:half] + [(sec + 7200, usec, wire, data) for sec, usec, wire, data in records[half:]]
    trace = base / "midnight.pcap"
    trace.write_bytes(pcap_bytes(link_type, moved))
    for name, extra in (("plain", ()), ("hourly", ("--partition", "hour"))):
        run = run_tracelab("profile", str(trace), *OPTIONS, "-o", name, *extra, cwd=base)
        assert run.returncode == 0, run.stderr
    return base / "plain", base / "hourly"


def dataset(folder: Path) -> pa.Table:
    return ds.dataset(folder, format="parquet", partitioning="hive").to_table()


def plain(profile: Path, name: str) -> pa.Table:
    path = profile / f"{name}.parquet"
    return pq.read_table(path if path.is_file() else profile / "samples" / f"{name}.parquet")


def hive_key(when: datetime) -> tuple[str, int]:
    """The UTC date and hour of a `ts` (timestamp[us, UTC], schema 2)."""
    t = when.astimezone(UTC)
    return t.strftime("%Y-%m-%d"), t.hour


def test_connections_are_the_plain_rows_under_their_hour(profiles):
    plain_dir, hourly = profiles
    whole = plain(plain_dir, "connections")
    parts = dataset(hourly / "connections").sort_by("conn")
    assert parts.num_rows == whole.num_rows > 500
    assert parts.select(whole.column_names).equals(whole)
    assert parts.column("conn").to_pylist() == list(range(whole.num_rows))
    keys = {(d, int(h)) for d, h in zip(parts["date"].to_pylist(), parts["hour"].to_pylist(), strict=True)}
    assert {("2023-11-14", 22), ("2023-11-15", 0)} <= keys
    for ts, d, h in zip(parts["ts"].to_pylist(), parts["date"].to_pylist(), parts["hour"].to_pylist(), strict=True):
        assert hive_key(ts) == (d, int(h))
    # The analyzer's Arrow metadata is in every file.
    first = next((hourly / "connections").rglob("*.parquet"))
    assert pq.read_schema(first).metadata == pq.read_schema(plain_dir / "connections.parquet").metadata


@pytest.mark.parametrize("name", SAMPLES)
def test_samples_follow_their_connection(profiles, name):
    plain_dir, hourly = profiles
    whole = plain(plain_dir, name)
    parts = dataset(hourly / name)
    columns = whole.column_names
    order = [(c, "ascending") for c in columns]
    assert parts.select(columns).sort_by(order).equals(whole.sort_by(order))
    conns = dataset(hourly / "connections")
    keys = zip(conns["date"].to_pylist(), conns["hour"].to_pylist(), strict=True)
    partition_of = dict(zip(conns["conn"].to_pylist(), keys, strict=True))
    for conn, d, h in zip(parts["conn"].to_pylist(), parts["date"].to_pylist(), parts["hour"].to_pylist(), strict=True):
        assert partition_of[conn] == (d, h)


@pytest.mark.parametrize("name", ["load", "hosts", "packet_sizes"])
def test_other_tables_hold_the_plain_rows(profiles, name):
    plain_dir, hourly = profiles
    whole = plain(plain_dir, name)
    parts = dataset(hourly / name).select(whole.column_names)
    order = [(c, "ascending") for c in whole.column_names if c != "role"]
    assert parts.sort_by(order).equals(whole.sort_by(order))


def test_duckdb_reads_the_dataset(profiles):
    plain_dir, hourly = profiles
    sql = "SELECT count(*) AS n, sum(orig_bytes) AS b FROM connections"
    answers = []
    for profile in (plain_dir, hourly):
        run = run_tracelab("query", str(profile), sql, "--format", "json", cwd=profile.parent)
        assert run.returncode == 0, run.stderr
        answers.append(json.loads(run.stdout))
    assert answers[0] == answers[1]
    by_hour = run_tracelab(
        "query", str(hourly), "SELECT DISTINCT date, hour FROM connections ORDER BY 1, 2", "--format", "json"
    )
    assert by_hour.returncode == 0, by_hour.stderr
    assert len(json.loads(by_hour.stdout)) >= 2


def test_partition_without_out_dir_is_a_usage_error(tmp_path):
    run = run_tracelab("profile", "x.pcap", "--partition", "hour", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == ["tracelab: error: --partition needs -o DIR (the dataset's folder)"]
    bad = run_tracelab("profile", "x.pcap", "--partition", "week", "-o", "d", cwd=tmp_path)
    assert bad.returncode == 2 and "--partition must be one of date, hour" in bad.stderr
