"""`tracelab query`: SQL over profiles, with embedded DuckDB.

A dataset is a profile directory (`tracelab profile -o DIR`), a directory of
many profiles, or a partitioned Parquet dataset (`connections/date=…/*.parquet`).
Each table of the profile format is a view named after it — `connections`,
`hosts`, `load`, and each sample table (`rtt`, `trains`, `warmups`,
`packet_sizes`) — read by DuckDB straight from the Parquet files, out of core:
nothing is loaded whole into memory.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

from .errors import INPUT, USAGE, CommandError

TABLES = ("connections", "hosts", "load", "rtt", "trains", "warmups", "packet_sizes")

EXAMPLES = """examples:
  tracelab query out/example "SELECT proto, count(*) AS n, sum(orig_bytes + resp_bytes) AS bytes
                              FROM connections GROUP BY proto ORDER BY n DESC"
  tracelab query out/example "SELECT host, fan_in FROM hosts WHERE server ORDER BY fan_in DESC LIMIT 5"
  tracelab query out/week "SELECT * FROM connections WHERE duration > 3600" --format parquet -o long.parquet
  tracelab query out/example --tables

A profile directory has connections.parquet, hosts.parquet, load.parquet and
samples/*.parquet; a directory of profiles gives each table over all of them
(with a `profile` column naming the directory a row came from); a partitioned
dataset has one folder per table (connections/, hosts/, ...) with hive-style
partitions (key=value/ folders become columns).
"""


def table_sources(dataset: Path) -> dict[str, str]:
    """The SQL that reads each table present in `dataset`."""
    sources: dict[str, str] = {}
    for name in TABLES:
        for single in (dataset / f"{name}.parquet", dataset / "samples" / f"{name}.parquet"):
            if single.is_file():
                sources[name] = f"SELECT * FROM read_parquet({_literal(single)})"
                break
        else:
            folder = dataset / name
            if folder.is_dir() and any(folder.rglob("*.parquet")):
                pattern = _literal(folder / "**" / "*.parquet")
                sources[name] = f"SELECT * FROM read_parquet({pattern}, hive_partitioning = true, union_by_name = true)"
                continue
            files = sorted(dataset.glob(f"*/{name}.parquet")) + sorted(dataset.glob(f"*/samples/{name}.parquet"))
            if files:
                listed = "[" + ", ".join(_literal(f) for f in files) + "]"
                profile = f"regexp_extract(filename, '([^/]+)/(samples/)?{name}\\.parquet$', 1)"
                sources[name] = (
                    f"SELECT * EXCLUDE (filename), {profile} AS profile "
                    f"FROM read_parquet({listed}, filename = true, union_by_name = true)"
                )
    return sources


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def connect(dataset: Path):
    import duckdb

    if not dataset.is_dir():
        raise CommandError(INPUT, f"{dataset}: not a directory (a profile or a dataset of profiles)")
    sources = table_sources(dataset)
    if not sources:
        raise CommandError(INPUT, f"{dataset}: no table of a profile found ({', '.join(TABLES)} as Parquet)")
    con = duckdb.connect()
    # Times (`ts`, `bin_start`: TIMESTAMP WITH TIME ZONE) are shown in UTC,
    # whatever the machine's zone, so results are the same everywhere.
    con.execute("SET TimeZone = 'UTC'")
    _check_schema_versions(con, dataset)
    for name, sql in sources.items():
        con.execute(f"CREATE VIEW {name} AS {sql}")
    return con, sources


def _check_schema_versions(con, dataset: Path) -> None:
    """Refuse, in one line, a dataset with a file of a schema major version this
    tracelab does not read (`tracelab.schema_version` in the files' metadata)."""
    from tracelab_models.profile import SCHEMA_VERSION_KEY, ProfileError, check_schema_version

    files = sorted(str(f) for f in dataset.rglob("*.parquet"))
    rows = con.execute(
        "SELECT file_name, value FROM parquet_kv_metadata(?) WHERE key = ?", [files, SCHEMA_VERSION_KEY]
    ).fetchall()
    try:
        for file_name, value in rows:
            check_schema_version(file_name, {SCHEMA_VERSION_KEY: bytes(value)})
    except ProfileError as e:
        raise CommandError(INPUT, str(e)) from e


def run_sql(con, sql: str):
    import duckdb

    try:
        return con.sql(sql)
    except duckdb.Error as e:
        raise CommandError(USAGE, f"SQL: {_first_line(str(e))}") from e


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _cell(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else str(v)
    return str(v)


def format_table(columns: list[str], rows: list[tuple], max_rows: int) -> str:
    shown = rows[:max_rows]
    cells = [columns] + [[_cell(v) for v in r] for r in shown]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if len(rows) > max_rows:
        lines.append(f"({len(rows)} rows, the first {max_rows} shown: --max-rows N, or --format csv for all)")
    else:
        lines.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    return "\n".join(lines)


def write_output(rel, fmt: str, output: Path | None, max_rows: int) -> None:
    if fmt == "parquet":
        if output is None:
            raise CommandError(USAGE, "--format parquet needs -o FILE")
        _atomic(output, lambda tmp: rel.write_parquet(str(tmp), compression="zstd"))
        return
    rel = _utc_wall_times(rel)
    if fmt == "table":
        text = format_table(rel.columns, rel.fetchall(), max_rows) + "\n"
    elif fmt == "csv":
        text = _csv(rel)
    else:  # json: one array of records, as pandas' to_json(orient="records")
        rows = [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]
        text = json.dumps(rows, default=str, allow_nan=False) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        _atomic(output, lambda tmp: tmp.write_text(text))


def _utc_wall_times(rel):
    """``rel`` with its TIMESTAMP WITH TIME ZONE columns as plain TIMESTAMPs of the
    UTC wall time (the session's zone): Python rows of zoned times would need pytz,
    and the text (table, CSV, JSON) is the same."""
    zoned = [str(t) == "TIMESTAMP WITH TIME ZONE" for t in rel.types]
    if not any(zoned):
        return rel
    quoted = ['"' + c.replace('"', '""') + '"' for c in rel.columns]
    columns = (f"CAST({q} AS TIMESTAMP) AS {q}" if z else q for q, z in zip(quoted, zoned, strict=True))
    return rel.project(", ".join(columns))


def _csv(rel) -> str:
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(rel.columns)
    w.writerows(["" if v is None else v for v in r] for r in rel.fetchall())
    return buf.getvalue()


def _atomic(output: Path, write) -> None:
    """Writes through a temporary sibling renamed into place: the file is
    whole or absent, and a previous one stays until the new one is done."""
    from tracelab_models.outputs import atomic_file

    with atomic_file(output, "query result") as tmp:
        write(tmp)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="tracelab query",
        description="Run SQL (DuckDB) over a profile or a dataset of profiles; each table is a view "
        f"({', '.join(TABLES)}).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("dataset", type=Path, help="profile directory, directory of profiles, or partitioned dataset")
    ap.add_argument("sql", nargs="?", help="the query")
    ap.add_argument("--tables", action="store_true", help="list the tables and their columns, and exit")
    ap.add_argument("--format", choices=("table", "csv", "json", "parquet"), default="table", help="default table")
    ap.add_argument("-o", "--output", type=Path, help="write the result here instead of stdout")
    ap.add_argument("--max-rows", type=int, default=40, metavar="N", help="rows shown by --format table (40)")
    args = ap.parse_args(argv)
    if not args.tables and not args.sql:
        ap.error("give a query, or --tables")
    con, sources = connect(args.dataset)
    if args.tables:
        for name in sources:
            cols = con.sql(f"DESCRIBE {name}").fetchall()
            print(f"{name}: " + ", ".join(f"{c[0]} {c[1]}" for c in cols))
        return 0
    write_output(run_sql(con, args.sql), args.format, args.output, args.max_rows)
    return 0
