"""`tracelab model derive DATASET` on a partitioned profile (`--partition
hour`): DuckDB reads the dataset as the plain profile it was made from
(tracelab_models.sqlprofile), table for table and row for row, and derives
the plain profile's model. Before, a dataset has no connections.parquet, so derive read its
conn.log as a Zeek log and left out everything conn.log lacks (RTTs,
trains, warm-ups, pacing, packet sizes)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from support import run_tracelab, tcpmix
from test_rotated_captures import pcap_bytes, read_pcap
from tracelab_models import dataset
from tracelab_models.sqlprofile import ProfileDB

OPTIONS = ("--local", "10.0.0.0/8", "--quiet", "--no-progress")
# 2023-11-14 23:00:00 UTC (tcpmix starts at 22:13:20 that day).
ELEVEN_PM = 1_700_002_800


@pytest.fixture(scope="module")
def profiles(tmp_path_factory) -> tuple[Path, Path]:
    """A tcpmix trace moved so that 23:00 UTC falls half a second in (its
    connections open over its first second or so), profiled
    plainly and partitioned by hour: connections that start before 23:00
    and end after some that start later are written after them, so the
    partitions' rows interleave in the profile's order."""
    base = tmp_path_factory.mktemp("derive-dataset")
    link_type, records = read_pcap(tcpmix(base / "t.pcap", 12_000, seed=5))
    shift_us = ELEVEN_PM * 1_000_000 - (records[0][0] * 1_000_000 + records[0][1] + 500_000)
    moved = [(*divmod(sec * 1_000_000 + usec + shift_us, 1_000_000), wire, data) for sec, usec, wire, data in records]
    trace = base / "eleven.pcap"
    trace.write_bytes(pcap_bytes(link_type, moved))
    for name, extra in (("plain", ()), ("hourly", ("--partition", "hour"))):
        run = run_tracelab("profile", str(trace), *OPTIONS, "-o", name, *extra, cwd=base)
        assert run.returncode == 0, run.stderr
    assert len(list((base / "hourly" / "connections").rglob("*.parquet"))) == 2
    return base / "plain", base / "hourly"


def test_the_dataset_reads_as_the_plain_profile_table_for_table(profiles):
    plain, hourly = profiles
    # The partitions, read in order, interleave: the sort by `conn` matters.
    for name in ("connections", "rtt"):
        files = sorted((hourly / name).rglob("*.parquet"))
        conn = np.concatenate([pq.read_table(f, columns=["conn"]).column("conn").to_numpy() for f in files])
        assert (np.diff(conn) < 0).any(), name
    with ProfileDB(plain) as original, ProfileDB(hourly) as rebuilt:
        assert set(rebuilt.tables) == set(original.tables) == set(dataset.TABLES)
        for name in dataset.TABLES:
            query = f"SELECT * EXCLUDE (_file, _row) FROM {name} ORDER BY {original.order(name)}"
            if name == "connections":
                query = f"SELECT * FROM {name} ORDER BY conn"
            want = original.con.sql(query).to_arrow_table()
            got = rebuilt.con.sql(query).to_arrow_table()
            assert got.num_rows == want.num_rows, name
            assert got.equals(want), name
        assert original.scalar("SELECT count(*) FROM rtt") > 100


def derive(profile: Path, out: Path) -> dict:
    run = run_tracelab("model", "derive", str(profile), "-o", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    model = json.loads(out.read_text())
    assert model["provenance"].pop("profile_dir") == str(profile)
    return model


def test_derive_on_the_dataset_gives_the_plain_profiles_model(profiles, tmp_path):
    plain, hourly = profiles
    model = derive(hourly, tmp_path / "hourly.json")
    assert model == derive(plain, tmp_path / "plain.json")
    assert "input" not in model["provenance"]  # not read as a Zeek log
    assert model["topological"]["rtt_s"]["internet"]["mean"] is not None


def test_local_is_refused_for_a_dataset(profiles, tmp_path):
    _, hourly = profiles
    run = run_tracelab("model", "derive", str(hourly), "--local", "10.0.0.0/8", "-o", str(tmp_path / "m.json"))
    assert run.returncode == 2 and "--local is for Zeek logs" in run.stderr
