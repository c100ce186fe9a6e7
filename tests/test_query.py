"""`tracelab query`: SQL (DuckDB) over a profile, a directory of profiles and
a hive-partitioned dataset, checked against the same figures computed with
pyarrow from the Parquet files."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import run_tracelab as tracelab

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"


def query(dataset: Path, sql: str, *extra: str) -> subprocess.CompletedProcess:
    return tracelab("query", str(dataset), sql, *extra, cwd=dataset.parent)


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("q")
    r = tracelab("profile", str(TRACE), "--local", "10.0.0.0/8", "-o", "p", "--quiet", "--no-progress", cwd=out)
    assert r.returncode == 0, r.stderr
    return out / "p"


def rows_of_csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_aggregates_equal_pyarrow(profile):
    r = query(profile, "SELECT proto, count(*) AS n, sum(orig_bytes) AS ob FROM connections GROUP BY proto", "--format",
              "csv")  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = {row["proto"]: (int(row["n"]), int(row["ob"])) for row in rows_of_csv(r.stdout)}
    t = pq.read_table(profile / "connections.parquet")
    want: dict[str, list[int]] = {}
    for proto, ob in zip(t.column("proto").to_pylist(), t.column("orig_bytes").to_pylist(), strict=True):
        n, total = want.get(proto, [0, 0])
        want[proto] = [n + 1, total + (ob or 0)]
    assert got == {k: tuple(v) for k, v in want.items()}


def test_every_profile_table_is_a_view(profile):
    r = tracelab("query", str(profile), "--tables", cwd=profile.parent)
    assert r.returncode == 0, r.stderr
    names = [line.split(":")[0] for line in r.stdout.splitlines()]
    assert names == ["connections", "hosts", "load", "rtt", "trains", "warmups", "packet_sizes"]
    r = query(profile, "SELECT count(*) AS n FROM rtt", "--format", "json")
    assert json.loads(r.stdout) == [{"n": pq.read_table(profile / "samples" / "rtt.parquet").num_rows}]


def test_a_directory_of_profiles_names_each_rows_profile(profile, tmp_path):
    many = tmp_path / "many"
    for name in ("day1", "day2"):
        shutil.copytree(profile, many / name)
    r = query(many, "SELECT profile, count(*) AS n FROM connections GROUP BY profile ORDER BY profile", "--format",
              "csv")  # fmt: skip
    n = pq.read_table(profile / "connections.parquet").num_rows
    assert rows_of_csv(r.stdout) == [{"profile": "day1", "n": str(n)}, {"profile": "day2", "n": str(n)}]
    r = query(many, "SELECT count(*) AS n FROM rtt WHERE profile = 'day2'", "--format", "json")
    assert json.loads(r.stdout) == [{"n": pq.read_table(profile / "samples" / "rtt.parquet").num_rows}]


def test_a_hive_partitioned_dataset_has_its_partition_columns(profile, tmp_path):
    t = pq.read_table(profile / "connections.parquet")
    ds = tmp_path / "ds"
    halves = {"2013-05-02": t.slice(0, 50), "2013-05-03": t.slice(50)}
    for date, part in halves.items():
        (ds / "connections" / f"date={date}").mkdir(parents=True)
        pq.write_table(part, ds / "connections" / f"date={date}" / "part-0.parquet")
    r = query(ds, "SELECT date, count(*) AS n FROM connections GROUP BY date ORDER BY date", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert [(row["date"], int(row["n"])) for row in rows_of_csv(r.stdout)] == [
        ("2013-05-02", 50),
        ("2013-05-03", t.num_rows - 50),
    ]


def test_parquet_output_round_trips(profile, tmp_path):
    out = tmp_path / "tcp.parquet"
    r = query(profile, "SELECT uid, orig_bytes FROM connections WHERE proto = 'tcp' ORDER BY uid", "--format",
              "parquet", "-o", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = pq.read_table(out)
    t = pq.read_table(profile / "connections.parquet").filter(pa.compute.equal(pa.compute.field("proto"), "tcp"))
    assert got.column("uid").to_pylist() == sorted(t.column("uid").to_pylist())
    assert pq.ParquetFile(out).metadata.row_group(0).column(0).compression == "ZSTD"
    assert [p.name for p in tmp_path.iterdir()] == ["tcp.parquet"]


def test_table_output_shows_rows_and_counts(profile):
    r = query(profile, "SELECT host FROM hosts ORDER BY host", "--max-rows", "3")
    lines = r.stdout.splitlines()
    n = pq.read_table(profile / "hosts.parquet").num_rows
    assert lines[0] == "host" and set(lines[1]) == {"-"} and len(lines) == 2 + 3 + 1
    assert lines[-1] == f"({n} rows, the first 3 shown: --max-rows N, or --format csv for all)"
    assert Counter(query(profile, "SELECT 1 AS x").stdout.splitlines()[-1:]) == Counter(["(1 row)"])


@pytest.mark.parametrize(
    ("args", "status", "says"),
    [
        (["SELEC x"], 2, "SQL: Parser Error"),
        (["SELECT * FROM nosuchtable"], 2, "SQL: Catalog Error"),
        (["SELECT 1", "--format", "parquet"], 2, "--format parquet needs -o FILE"),
    ],
)
def test_errors_are_one_line(profile, args, status, says):
    r = tracelab("query", str(profile), *args, cwd=profile.parent)
    assert r.returncode == status and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"tracelab: error: {r.stderr.strip().split('error: ', 1)[1]}"]
    assert says in r.stderr


def test_not_a_dataset_is_an_input_error(tmp_path):
    r = tracelab("query", str(tmp_path / "nope"), "SELECT 1", cwd=tmp_path)
    assert r.returncode == 3 and "not a directory" in r.stderr
    r = tracelab("query", str(tmp_path), "SELECT 1", cwd=tmp_path)
    assert r.returncode == 3 and "no table of a profile" in r.stderr


def test_every_table_carries_its_schema_version_and_described_arrow_schema(profile):
    for path in sorted(profile.rglob("*.parquet")):
        meta = pq.read_metadata(path).metadata
        assert meta[b"tracelab.schema_version"] == b"2.0", path
        assert set(meta) == {b"tracelab.schema_version", b"ARROW:schema"}, path
        for field in pq.read_schema(path):
            assert field.metadata and field.metadata[b"description"], (path, field.name)


def test_times_are_utc_microsecond_timestamps_equal_to_conn_log(profile):
    """`ts` and `bin_start` are timestamp[us, UTC]; `ts` equals conn.log's (Zeek's
    six decimals, written apart from the Parquet writer)."""
    conns = pq.read_table(profile / "connections.parquet")
    assert conns.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert pq.read_schema(profile / "load.parquet").field("bin_start").type == pa.timestamp("us", tz="UTC")
    lines = [line.split("\t") for line in (profile / "conn.log").read_text().splitlines() if not line.startswith("#")]
    from_log = {uid: int(ts.replace(".", "")) for ts, uid, *_ in lines}
    micros = conns.column("ts").cast(pa.int64()).to_pylist()
    assert dict(zip(conns.column("uid").to_pylist(), micros, strict=True)) == from_log
    # DuckDB sees a TIMESTAMP WITH TIME ZONE with the same instants.
    import duckdb

    got = duckdb.sql(
        f"SELECT uid, epoch_us(ts) AS us, typeof(ts) AS t FROM read_parquet('{profile / 'connections.parquet'}')"
    ).fetchall()
    assert {t for _, _, t in got} == {"TIMESTAMP WITH TIME ZONE"}
    assert {uid: us for uid, us, _ in got} == from_log
    # `tracelab query` prints times as UTC wall time, in every format.
    first = datetime.fromtimestamp(min(micros) // 10**6, UTC).replace(microsecond=min(micros) % 10**6, tzinfo=None)
    for fmt, parse in (("json", lambda out: json.loads(out)[0]["t"]), ("csv", lambda out: rows_of_csv(out)[0]["t"])):
        r = query(profile, "SELECT min(ts) AS t FROM connections", "--format", fmt)
        assert r.returncode == 0, r.stderr
        assert parse(r.stdout) == str(first), fmt
    assert str(first) in query(profile, "SELECT min(ts) AS t FROM connections").stdout


def test_every_sample_joins_its_connection_by_uid(profile):
    conns = pq.read_table(profile / "connections.parquet")
    uids = conns.column("uid").to_pylist()
    for name in ("rtt", "trains", "warmups"):
        samples = pq.read_table(profile / "samples" / f"{name}.parquet")
        assert samples.num_rows > 0, name
        rows = samples.column("conn").to_pylist()
        assert samples.column("uid").to_pylist() == [uids[r] for r in rows], name
        r = query(profile, f"SELECT count(*) AS n FROM {name} JOIN connections USING (uid)", "--format", "json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == [{"n": samples.num_rows}], name


def test_an_unknown_schema_major_is_refused_in_one_line(profile, tmp_path):
    from tracelab_models.profile import ProfileError, read_table

    future = tmp_path / "future"
    shutil.copytree(profile, future)
    hosts = pq.read_table(future / "hosts.parquet")
    pq.write_table(hosts.replace_schema_metadata({b"tracelab.schema_version": b"9.0"}), future / "hosts.parquet")
    r = query(future, "SELECT count(*) AS n FROM connections")
    assert r.returncode != 0
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "hosts.parquet: schema version 9.0 is not supported (this tracelab reads 1.x" in r.stderr
    with pytest.raises(ProfileError, match=r"hosts.parquet: schema version 9.0 is not supported"):
        read_table(future, "hosts.parquet")
    # A minor version ahead adds columns only: read.
    pq.write_table(hosts.replace_schema_metadata({b"tracelab.schema_version": b"1.7"}), future / "hosts.parquet")
    assert read_table(future, "hosts.parquet").num_rows == hosts.num_rows
    assert query(future, "SELECT count(*) AS n FROM hosts").returncode == 0


def test_a_schema_1_profile_reads_as_schema_2(profile, tmp_path):
    """Major 1 had `ts` as float seconds: `read_table` gives both majors alike."""
    from tracelab_models.profile import read_table

    old = tmp_path / "old"
    shutil.copytree(profile, old)
    conns = pq.read_table(old / "connections.parquet")
    seconds = pa.compute.divide(conns.column("ts").cast(pa.int64()).cast(pa.float64()), 1e6)
    v1 = conns.set_column(0, pa.field("ts", pa.float64()), seconds)
    pq.write_table(v1.replace_schema_metadata({b"tracelab.schema_version": b"1.0"}), old / "connections.parquet")
    new = read_table(profile, "connections.parquet")
    assert new.schema.field("ts").type == pa.float64()
    assert read_table(old, "connections.parquet").equals(new)
    assert new.column("ts").to_pylist() == seconds.to_pylist()


def test_zstd_profile_reads_the_same_in_pyarrow_and_duckdb(profile, tmp_path):
    """ZSTD is the default; `--compression none` and `snappy` give the same values."""
    import duckdb

    for codec, written in (("none", "UNCOMPRESSED"), ("snappy", "SNAPPY")):
        r = tracelab("profile", str(TRACE), "--local", "10.0.0.0/8", "-o", codec, "--compression", codec, "--quiet",
                     "--no-progress", cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr
        for path in sorted(profile.rglob("*.parquet")):
            other = tmp_path / codec / path.relative_to(profile)
            for file, want in ((path, "ZSTD"), (other, written)):
                meta = pq.read_metadata(file)
                codecs = {meta.row_group(g).column(c).compression for g in range(meta.num_row_groups)
                          for c in range(meta.num_columns)}  # fmt: skip
                assert codecs <= {want}, file
            zstd = pq.read_table(path)
            assert pq.read_table(other).equals(zstd), other
            read = duckdb.sql(f"SELECT * FROM read_parquet('{path}')").arrow()
            read = read.read_all() if hasattr(read, "read_all") else read
            assert read.cast(zstd.schema).equals(zstd), path
