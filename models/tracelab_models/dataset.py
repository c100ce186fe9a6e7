"""A partitioned profile dataset (`tracelab profile ... --partition date|hour`,
docs/analyzer.md) read back as the plain profile it was made from.

The dataset holds one folder per table, hive-partitioned by UTC date (and
hour): DIR/connections/date=.../hour=.../part-0.parquet, the sample tables
beside it, DIR/hosts/part-0.parquet, DIR/summary.json. Connections carry
`conn`, their row number in the profile; a sample's `conn` is its
connection's. `to_profile` writes the plain layout (connections.parquet,
samples/*.parquet, ...) with the profile's row order: connections sorted by
`conn` (which must then be 0..n-1), every sample table stably sorted by
`conn` (a connection's samples sit in one partition, in their order), load
and the untimed tables in partition order (chronological: the folder names
sort as their times). Models read it as they read a profile.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import schema as S
from .profile import ProfileError

# Each table's folder in the dataset and its file in a plain profile.
TABLES = {
    "connections": S.CONNECTIONS,
    "hosts": S.HOSTS,
    "load": "load.parquet",
    "rtt": S.RTT_SAMPLES,
    "trains": S.TRAINS,
    "warmups": S.WARMUPS,
    "packet_sizes": S.PACKET_SIZES,
}
SAMPLE_TABLES = ("rtt", "trains", "warmups")


def is_dataset(path: str | Path) -> bool:
    """A partitioned profile: a `connections` folder and a summary.json."""
    path = Path(path)
    return (path / "connections").is_dir() and (path / S.SUMMARY).is_file()


def read_folder(folder: Path) -> pa.Table:
    """Every Parquet file under `folder`, in the order of their paths
    (partition folders sort chronologically), as one table without the
    partition keys (each file is read on its own)."""
    files = sorted(folder.rglob("*.parquet"))
    if not files:
        raise ProfileError(f"{folder}: no Parquet file in the table's folder")
    try:
        tables = [pq.read_table(f) for f in files]
        return pa.concat_tables(tables)
    except (OSError, pa.ArrowException) as e:
        raise ProfileError(f"{folder}: not one readable table ({e})") from e


def in_profile_order(name: str, table: pa.Table, folder: Path) -> pa.Table:
    if name == "connections":
        if S.CONN not in table.column_names:
            raise ProfileError(f"{folder}: no `{S.CONN}` column (not written by --partition)")
        table = table.take(pc.sort_indices(table, [(S.CONN, "ascending")]))
        conn = table.column(S.CONN).to_numpy()
        if not np.array_equal(conn, np.arange(len(conn))):
            raise ProfileError(f"{folder}: `{S.CONN}` is not the row numbers 0..{len(conn) - 1}")
        return table.drop_columns([S.CONN])
    if name in SAMPLE_TABLES:
        # Arrow's sort is stable: equal `conn` keep their partition order.
        return table.take(pc.sort_indices(table, [(S.CONN, "ascending")]))
    return table


def to_profile(dataset: str | Path, out_dir: str | Path) -> None:
    """Write the plain profile of `dataset` into `out_dir` (existing, empty)."""
    dataset, out_dir = Path(dataset), Path(out_dir)
    for name, file in TABLES.items():
        folder = dataset / name
        if not folder.is_dir():
            continue
        table = in_profile_order(name, read_folder(folder), folder)
        (out_dir / file).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, out_dir / file)
    for kept in (S.SUMMARY, "conn.log"):
        if (dataset / kept).is_file():
            shutil.copyfile(dataset / kept, out_dir / kept)
