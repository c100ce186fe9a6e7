"""A profile as tables of an embedded DuckDB, for `model derive`: DuckDB reads
the Parquet files itself, column by column, and sorts, groups and windows out
of core under a memory limit, spilling to a temporary directory; what derive
keeps in Python is bounded (aggregates, order statistics, seeded subsamples
of at most the fits' sample size), not a copy of the columns.

The source is a profile directory (connections.parquet, samples/*.parquet,
...) or a partitioned dataset (`tracelab profile --partition`: one folder per
table, hive-partitioned; dataset.py). Either way each table is a view in the
profile's row order: connections by `conn` (a plain profile's row number,
a dataset's `conn` column), each samples table by (`conn`, file, row in the
file), which is the plain profile's order (dataset.py). Times are float64
seconds since the epoch, computed as profile.times_as_seconds does. A
statistic of a column (columns.SqlColumn) is the number numpy gives on the
array the in-memory reader would have built.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import dataset
from . import schema as S
from .columns import STREAM_BLOCK, ArrayColumn, lerp, pairwise_sum, quantile_ranks
from .profile import _UNIT_PER_SECOND, ProfileError, check_schema_version

# DuckDB's memory for one derive; beyond it, sorts and joins spill to disk.
MEMORY_LIMIT = "512MB"
# Columns of up to this many values are fetched and computed on in memory (numpy).
IN_MEMORY = 1 << 16
# A timestamp column's ticks in its own unit.
_TICKS = {"s": "(epoch_ms({}) // 1000)", "ms": "epoch_ms({})", "us": "epoch_us({})", "ns": "epoch_ns({})"}
# The order of each table's rows: the plain profile's.
_ROW_ORDER = {"connections": "conn", "sample": "conn, _file, _row", "other": "_file, _row"}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class ProfileDB:
    """The tables of one profile or dataset as DuckDB views (see the module doc)."""

    def __init__(self, source: str | Path, memory_limit: str = MEMORY_LIMIT):
        self.source = Path(source)
        self._spill = tempfile.TemporaryDirectory(prefix="tracelab-derive-")
        self.con = duckdb.connect(":memory:")
        self.con.execute(f"SET memory_limit = {_literal(memory_limit)}")
        self.con.execute(f"SET temp_directory = {_literal(self._spill.name)}")
        self.tables: dict[str, list[str]] = {}
        self.small = True  # the connections fit in memory (IN_MEMORY rows)
        self.paths: dict[str, str] = {}
        is_dataset = dataset.is_dataset(self.source)
        try:
            for name, file in dataset.TABLES.items():
                if is_dataset:
                    files = sorted((self.source / name).rglob("*.parquet"))
                else:
                    files = [self.source / file]
                files = [f for f in files if f.is_file()]
                if files:
                    self._view(name, files, is_dataset)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.con.close()
        self._spill.cleanup()

    def __enter__(self) -> ProfileDB:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def _view(self, name: str, files: list[Path], is_dataset: bool) -> None:
        where = self.source / name if is_dataset else files[0]
        try:
            schemas = [pq.read_schema(f) for f in files]
        except (OSError, pa.ArrowException) as e:
            raise ProfileError(f"{where}: not a readable Parquet file ({e})") from e
        for f, schema in zip(files, schemas, strict=True):
            check_schema_version(f, schema.metadata)
        schema = schemas[0]
        columns = []
        for field in schema:
            if field.name == S.CONN and name == "connections":
                continue
            if pa.types.is_timestamp(field.type):
                # The file's ticks as float64 over the ticks per second: profile.seconds.
                ticks = _TICKS[field.type.unit].format(_quote(field.name))
                columns.append(
                    f"{ticks}::DOUBLE / {float(_UNIT_PER_SECOND[field.type.unit])!r} AS {_quote(field.name)}"
                )
            else:
                columns.append(_quote(field.name))
        listing = "[" + ", ".join(_literal(str(f)) for f in files) + "]"
        scan = f"read_parquet({listing}, filename = '_file', file_row_number = true, hive_partitioning = false)"
        if name == "connections":
            if is_dataset:
                if S.CONN not in schema.names:
                    raise ProfileError(f"{where}: no `{S.CONN}` column (not written by --partition)")
                key = S.CONN
            else:
                key = "file_row_number"
            select = f"SELECT {key} AS conn, {', '.join(columns)} FROM {scan}"
        else:
            select = f"SELECT {', '.join(columns)}, _file, file_row_number AS _row FROM {scan}"
        try:
            self.con.execute(f"CREATE VIEW {name} AS {select}")
        except duckdb.Error as e:
            raise ProfileError(f"{where}: not one readable table ({e})") from e
        self.tables[name] = list(schema.names)
        self.paths[name] = str(where)
        if name == "connections" and is_dataset:
            n, low, high, distinct = self.row(
                "SELECT count(*), min(conn), max(conn), count(DISTINCT conn) FROM connections"
            )
            if n and (low != 0 or high != n - 1 or distinct != n):
                raise ProfileError(f"{where}: `{S.CONN}` is not the row numbers 0..{n - 1}")
        if name == "connections":
            self.small = self.scalar("SELECT count(*) FROM connections") <= IN_MEMORY

    def require(self, table: str, columns) -> None:
        """Refuse, in one line, a missing table or one without these columns."""
        path = self.paths.get(table) or str(self.source / dataset.TABLES[table])
        if table not in self.tables:
            raise ProfileError(f"{path}: not found (run `tracelab profile TRACE` to produce it)")
        missing = [c for c in columns if c not in self.tables[table]]
        if missing:
            raise ProfileError(f"{path}: missing column(s) {', '.join(missing)}")

    def check_sample_conns(self, table: str, columns, connections: int) -> None:
        """A samples table's `conn` must be a row of connections (profile.sample_connections)."""
        if table not in self.tables:
            return
        self.require(table, columns)
        outside = f"conn IS NULL OR conn < 0 OR conn >= {int(connections)}"
        bad = self.scalar(f"SELECT count(*) FROM {table} WHERE {outside}")
        if bad:
            order = f"ORDER BY {self.order(table)} NULLS LAST"
            first = self.scalar(f"SELECT coalesce(conn, -1) FROM {table} WHERE {outside} {order} LIMIT 1")
            raise ProfileError(
                f"{self.paths[table]}: conn {first} is not a row of {S.CONNECTIONS} "
                f"({connections} rows; {bad} such sample(s))"
            )

    # ----------------------------------------------------------------- queries
    def has(self, table: str, column: str | None = None) -> bool:
        return table in self.tables and (column is None or column in self.tables[table])

    def order(self, table: str) -> str:
        return _ROW_ORDER["connections" if table == "connections" else "sample" if table in dataset.SAMPLE_TABLES
                          else "other"]  # fmt: skip

    def rows(self, sql: str, params=None) -> list[tuple]:
        try:
            return self.con.execute(sql, params or []).fetchall()
        except duckdb.Error as e:
            raise self._error(e) from e

    def _error(self, e: Exception) -> ProfileError:
        """A query that fails on the data (out of memory, a file that turns out
        unreadable, tables whose files disagree) in one line."""
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, duckdb.OutOfMemoryException):
            return ProfileError(f"{self.source}: DuckDB ran out of memory; give --memory-limit more ({first})")
        return ProfileError(f"{self.source}: cannot read the profile ({first})")

    def row(self, sql: str, params=None) -> tuple:
        return self.rows(sql, params)[0]

    def scalar(self, sql: str, params=None):
        return self.row(sql, params)[0]

    def execute(self, sql: str) -> None:
        """A statement without a result (a view or a table of the derive's own)."""
        try:
            self.con.execute(sql)
        except duckdb.Error as e:
            raise self._error(e) from e

    def record_batches(self, sql: str):
        """The query's result as Arrow record batches of up to STREAM_BLOCK rows."""
        try:
            for batch in self.con.sql(sql).to_arrow_reader(STREAM_BLOCK):
                if batch.num_rows:
                    yield batch
        except (duckdb.Error, pa.ArrowException) as e:
            raise self._error(e) from e

    def batches(self, sql: str):
        """The query's first column, as float64 arrays of up to STREAM_BLOCK values."""
        for batch in self.record_batches(sql):
            yield batch.column(0).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)

    def column(self, select: str, order: str) -> SqlColumn:
        """The column `v` of `select` (a query giving `v` and the keys `order` sorts on)."""
        return SqlColumn(self, select, order)


class SqlColumn:
    """A float64 column `v` of a query, in the order `order`, with columns.ArrayColumn's
    interface. A column of at most IN_MEMORY values is fetched once and is then an
    ArrayColumn (numpy itself); a longer one is fetched whole only by `values()` and
    `sorted()`, which the fits call on at most their sample size (distributions.py)."""

    # What `finite()` and `positive()` keep, by level.
    _KEEP = ("true", "isfinite(v)", "isfinite(v) AND v > 0")

    def __init__(self, db: ProfileDB, select: str, order: str, level: int = 0, shared: dict | None = None):
        self.db, self.base, self.order, self.level = db, select, order, level
        self.shared = {} if shared is None else shared
        self.select = f"SELECT * FROM ({select}) WHERE {self._KEEP[level]}" if level else select

    def _derived(self, level: int) -> SqlColumn:
        return SqlColumn(self.db, self.base, self.order, level, self.shared)

    def _summary(self) -> tuple:
        """(count per level, any negative finite value, min and max per level 1 and 2)."""
        if "summary" not in self.shared:
            if "array" not in self.shared and self.db.small:
                self._memory()
            if self.shared.get("array") is not None:
                x = self.shared["array"].x
                fin = x[np.isfinite(x)]
                pos = fin[fin > 0]
                bounds = [(float(v.min()), float(v.max())) if len(v) else (None, None) for v in (fin, pos)]
                self.shared["summary"] = (len(x), len(fin), len(pos), bool((fin < 0).any()), *bounds[0], *bounds[1])
            else:
                fin, pos = self._KEEP[1], self._KEEP[2]
                self.shared["summary"] = self.db.row(
                    f"SELECT count(*), count(*) FILTER ({fin}), count(*) FILTER ({pos}), "
                    f"coalesce(bool_or(v < 0) FILTER ({fin}), false), min(v) FILTER ({fin}), max(v) FILTER ({fin}), "
                    f"min(v) FILTER ({pos}), max(v) FILTER ({pos}) FROM ({self.base})"
                )
        return self.shared["summary"]

    def _memory(self) -> ArrayColumn | None:
        """The column in memory when it has at most IN_MEMORY values, else None."""
        if "array" not in self.shared:
            if self.db.small:  # one query: the first IN_MEMORY + 1 values
                head = self._ordered(f"SELECT * FROM ({self.base}) ORDER BY {self.order} LIMIT {IN_MEMORY + 1}")
                self.shared["array"] = ArrayColumn(head) if len(head) <= IN_MEMORY else None
            else:  # a top-N of a long column costs a sort: count first
                self.shared["array"] = None
                if self._summary()[0] <= IN_MEMORY:
                    self.shared["array"] = ArrayColumn(self._ordered(self.base))
        column = self.shared["array"]
        if column is None or self.level == 0:
            return column
        return column.finite() if self.level == 1 else column.finite().positive()

    def _ordered(self, select: str) -> np.ndarray:
        parts = list(self.db.batches(f"SELECT v FROM ({select}) ORDER BY {self.order}"))
        return np.concatenate(parts) if parts else np.zeros(0)

    def __len__(self) -> int:
        return int(self._summary()[self.level])

    def finite(self) -> SqlColumn:
        return self._derived(max(self.level, 1))

    def positive(self) -> SqlColumn:
        return self._derived(2)

    def total(self) -> float:
        if (m := self._memory()) is not None:
            return m.total()
        n = len(self)  # before the stream: one query at a time
        return float(pairwise_sum(n, self.db.batches(f"SELECT v FROM ({self.select}) ORDER BY {self.order}")))

    def mean(self) -> float:
        if (m := self._memory()) is not None:
            return m.mean()
        n = len(self)
        return float(pairwise_sum(n, self.db.batches(f"SELECT v FROM ({self.select}) ORDER BY {self.order}")) / n)

    def any_negative(self) -> bool:
        if self.level == 0:
            raise ValueError("any_negative of a column with non-finite values")
        return bool(self._summary()[3]) if self.level == 1 else False

    def all_equal(self) -> bool:
        if self.level == 0:
            raise ValueError("all_equal of a column with non-finite values")
        low, high = self._summary()[4:6] if self.level == 1 else self._summary()[6:8]
        return low == high

    def _ranks(self, ranks) -> np.ndarray:
        """The values at these 0-based ranks of the sorted column."""
        wanted = sorted({int(r) for r in ranks})
        if not wanted:
            return np.zeros(0)
        got = dict(
            self.db.rows(
                f"SELECT r, v FROM (SELECT v, row_number() OVER (ORDER BY v) - 1 AS r FROM ({self.select})) "
                f"WHERE r IN ({', '.join(map(str, wanted))})"
            )
        )
        return np.array([got[int(r)] for r in ranks], dtype=np.float64)

    def quantiles(self, p, method: str = "linear") -> np.ndarray:
        if (m := self._memory()) is not None:
            return m.quantiles(p, method)
        scalar = np.ndim(p) == 0
        lower, upper, gamma = quantile_ranks(len(self), np.atleast_1d(p), method)
        values = self._ranks(np.concatenate([lower, upper]))
        a, b = values[: len(lower)], values[len(lower) :]
        out = a if gamma is None else lerp(a, b, gamma)
        return out[0] if scalar else out

    def median(self) -> float:
        if (m := self._memory()) is not None:
            return m.median()
        n = len(self)
        return float(np.mean(self._ranks([n // 2 - 1, n // 2] if n % 2 == 0 else [(n - 1) // 2])))

    def largest(self, k: int) -> np.ndarray:
        if (m := self._memory()) is not None:
            return m.largest(k)
        top = self.db.rows(f"SELECT v FROM ({self.select}) ORDER BY v DESC LIMIT {int(k)}") if k else []
        return np.array([v for (v,) in reversed(top)], dtype=np.float64)

    def sorted(self) -> np.ndarray:
        if (m := self._memory()) is not None:
            return m.sorted()
        return np.array([v for (v,) in self.db.rows(f"SELECT v FROM ({self.select}) ORDER BY v")], dtype=np.float64)

    def values(self) -> np.ndarray:
        if (m := self._memory()) is not None:
            return m.values()
        return self._ordered(self.select)

    def subsample(self, size: int, seed: int) -> np.ndarray:
        if (m := self._memory()) is not None:
            return m.subsample(size, seed)
        positions = np.random.default_rng(seed).choice(len(self), size, replace=False)
        picks = pa.table({"pos": positions.astype(np.int64), "k": np.arange(size, dtype=np.int64)})
        self.db.con.register("_picks", picks)
        try:
            values = self.db.batches(
                f"SELECT s.v FROM (SELECT v, row_number() OVER (ORDER BY {self.order}) - 1 AS pos "
                f"FROM ({self.select})) s JOIN _picks USING (pos) ORDER BY _picks.k"
            )
            return np.concatenate(list(values))
        finally:
            self.db.con.unregister("_picks")
