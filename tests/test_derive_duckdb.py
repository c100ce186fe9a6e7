"""`model derive` through DuckDB (tracelab_models.sqlprofile): every statistic
of a column that is not held in memory is the number numpy gives on the
array (the oracle), a derive that streams every column gives the model of
the in-memory one, and a dataset of many connections is derived within a
memory bound that the old whole-table reader exceeded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import ROOT, run_tracelab, tcpmix
from tracelab_models import distributions, sqlprofile, workload
from tracelab_models.columns import ArrayColumn, pairwise_sum

OPTIONS = ("--local", "10.0.0.0/8", "--quiet", "--no-progress")


def _values(rng, n: int) -> np.ndarray:
    """Heavy-tailed values with ties, zeros, negatives, NaN and infinities."""
    x = rng.lognormal(0, 3, n)
    x[rng.random(n) < 0.1] = 0.0
    x[rng.random(n) < 0.05] = -rng.random()
    x[rng.random(n) < 0.1] = 2.5
    x[rng.random(n) < 0.02] = np.nan
    x[rng.random(n) < 0.01] = np.inf
    return x


@pytest.fixture
def streamed(monkeypatch, tmp_path):
    """A SqlColumn never held in memory over the array the test gives, in its order."""
    monkeypatch.setattr(sqlprofile, "IN_MEMORY", 0)
    dbs = []

    def column(x: np.ndarray):
        path = tmp_path / f"c{len(dbs)}"
        path.mkdir()
        # The order key is not the row order of the file: the column sorts on it.
        order = np.random.default_rng(len(x)).permutation(len(x))
        pq.write_table(pa.table({"v": x[order], "k": order}), path / "connections.parquet")
        db = sqlprofile.ProfileDB(path)
        db.small = False
        dbs.append(db)
        return db.column("SELECT v, k FROM connections", "k")

    yield column
    for db in dbs:
        db.close()


@pytest.mark.parametrize("n", [1, 2, 7, 300, 20_001])
def test_each_statistic_of_a_streamed_column_is_numpys(streamed, n):
    x = _values(np.random.default_rng(n), n)
    sql, mem = streamed(x), ArrayColumn(x)
    assert len(sql) == len(mem) == n
    for s, m in ((sql.finite(), mem.finite()), (sql.finite().positive(), mem.finite().positive())):
        assert len(s) == len(m)
        if not len(m):
            continue
        assert s.mean() == m.mean()  # bit for bit: numpy's pairwise sum, streamed
        assert s.total() == m.total()
        assert s.median() == m.median()
        assert s.any_negative() == m.any_negative() and s.all_equal() == m.all_equal()
        p = np.linspace(0.0, 1.0 - 32 / max(len(m), 33), 256)
        for method in ("linear", "inverted_cdf"):
            assert np.array_equal(s.quantiles(p, method), m.quantiles(p, method))
        assert s.quantiles(0.95) == m.quantiles(0.95)
        assert np.array_equal(s.largest(32), m.largest(32))
        assert np.array_equal(s.values(), m.values())
        size = max(1, len(m) // 3)
        assert np.array_equal(s.subsample(size, 7), m.subsample(size, 7))
    # The model's fits and tables, from either column.
    assert distributions.fit_model(sql, "v") == distributions.fit_model(x, "v")
    assert distributions.fit_all(sql, "v", 1000, 3).to_dict() == distributions.fit_all(x, "v", 1000, 3).to_dict()
    assert distributions.empirical_table(sql.finite(), True) == distributions.empirical_table(x[np.isfinite(x)], True)


def test_the_streamed_pairwise_sum_is_numpys_on_any_batches():
    rng = np.random.default_rng(4)
    for n in (0, 9, 65_536, 65_537, 400_003):
        x = rng.lognormal(0, 3, n)
        cuts = np.sort(rng.integers(0, n + 1, 7))
        batches = iter(np.split(x, cuts))
        assert pairwise_sum(n, batches) == x.sum()


@pytest.fixture(scope="module")
def profiles(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("derive-duckdb")
    trace = tcpmix(base / "t.pcap", 30_000, seed=9)
    for name, extra in (("plain", ()), ("daily", ("--partition", "date"))):
        run = run_tracelab("profile", str(trace), *OPTIONS, "-o", name, *extra, cwd=base)
        assert run.returncode == 0, run.stderr
    return base / "plain", base / "daily"


def _model(source: Path) -> dict:
    model = workload.derive(source)
    model["provenance"].pop("profile_dir")
    return model


def test_a_streamed_derive_gives_the_in_memory_model(profiles, monkeypatch):
    """Every column of the profile streamed through DuckDB (none held in memory)
    and the same profile with its columns in numpy: one model, number for number
    (the Gaussian copula's correlations are streamed in both)."""
    plain, daily = profiles
    in_memory = _model(plain)
    assert in_memory["flows"]["connections"] > 1_000
    monkeypatch.setattr(sqlprofile, "IN_MEMORY", 0)
    assert _model(plain) == in_memory
    assert _model(daily) == in_memory


# A dataset of many connections, in parts, as `tracelab profile --partition` lays it out.
ROWS = 300_000
PARTS = 6
# Peak RSS of `tracelab model derive --memory-limit 128MB` of these datasets,
# measured: 333 MB for 400,000 connections (341 MB for 1,000,000 of the
# fuller rows), against 757 MB and 1,597 MB for the whole-table reader this
# replaced, which grows by ~1.5 kB a connection (~600 MB for ROWS).
RSS_BOUND_MB = 450


def _dataset(root: Path) -> None:
    """TCP connections with the columns derive requires (the others are unknown)."""
    rng = np.random.default_rng(1)
    hosts = pa.array([f"10.0.{i // 256}.{i % 256}" for i in range(4096)])
    servers = pa.array([f"198.51.{i // 256}.{i % 256}" for i in range(1024)])
    per = ROWS // PARTS
    for part in range(PARTS):
        conn = np.arange(part * per, (part + 1) * per, dtype=np.int64)
        start = 1_700_000_000_000_000 + conn * 1000 + rng.integers(0, 1000, per)
        table = pa.table(
            {
                "conn": conn,
                "ts": pa.array(start, pa.timestamp("us", "UTC")),
                "id.orig_h": hosts.take(rng.integers(0, len(hosts), per)),
                "id.resp_h": servers.take(rng.integers(0, len(servers), per)),
                "id.resp_p": rng.choice([22, 80, 443], per).astype(np.int32),
                "proto": pa.array(["tcp"] * per),
                "orig_bytes": rng.lognormal(7, 2, per).astype(np.int64),
                "resp_bytes": rng.lognormal(9, 2, per).astype(np.int64),
                "scope": np.where(rng.random(per) < 0.3, "intranet", "internet"),
                "well_behaved": rng.random(per) < 0.5,
                "rtt_data_ack_s": rng.lognormal(-4, 1, per),
                "rtt_handshake_s": rng.lognormal(-4, 1, per),
                "orig_pacing_per_pkt_s": rng.lognormal(-6, 1, per),
                "resp_pacing_per_pkt_s": rng.lognormal(-6, 1, per),
            }
        ).replace_schema_metadata({"tracelab.schema_version": "2.0"})
        folder = root / "connections" / f"date=2023-11-{14 + part:02d}"
        folder.mkdir(parents=True)
        pq.write_table(table, folder / "part-0.parquet")
    (root / "summary.json").write_text(json.dumps({"trace": {"duration_s": ROWS / 1000}}))


def test_a_large_dataset_is_derived_within_a_memory_bound(tmp_path):
    _dataset(tmp_path / "week")
    # ru_maxrss of the children of a fresh process: the derive's own peak.
    measure = (
        "import resource, subprocess, sys; run = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024); sys.exit(run.returncode)"
    )
    derive = [sys.executable, "-m", "tracelab.cli", "model", "derive", str(tmp_path / "week"), "--quiet",
              "--memory-limit", "128MB", "-o", str(tmp_path / "m.json")]  # fmt: skip
    run = subprocess.run([sys.executable, "-c", measure, *derive], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    peak_mb = int(run.stdout.strip().splitlines()[-1])
    model = json.loads((tmp_path / "m.json").read_text())
    assert model["flows"]["connections"] == ROWS
    assert peak_mb < RSS_BOUND_MB, f"peak RSS {peak_mb} MB"


def test_too_little_memory_and_a_bad_size_are_one_line_each(profiles, tmp_path):
    plain, _ = profiles
    run = run_tracelab("model", "derive", str(plain), "--memory-limit", "1MB", "-q", "-o", str(tmp_path / "m.json"))
    assert run.returncode == 3 and run.stderr.count("\n") == 1, run.stderr
    assert "DuckDB ran out of memory; give --memory-limit more" in run.stderr
    run = run_tracelab("model", "derive", str(plain), "--memory-limit", "lots", "-o", str(tmp_path / "m.json"))
    assert run.returncode == 2 and "'lots' is not a size such as 512MB" in run.stderr
    assert not (tmp_path / "m.json").exists()
