"""A profile's tables as a hive-partitioned Parquet dataset (issue #20,
item 3): `tracelab profile ... --partition date|hour -o DIR`.

The analyzer writes DIR as usual; this rewrites its tables into one folder
per table, split by the UTC date (and hour) of each row's time:

    DIR/connections/date=2023-11-14/hour=22/part-0.parquet
    DIR/rtt/date=2023-11-14/hour=22/part-0.parquet   (a sample: its connection's)
    DIR/load/date=.../part-0.parquet                  (a bin: its start)
    DIR/hosts/part-0.parquet, DIR/packet_sizes/part-0.parquet (not timed)
    DIR/conn.log, DIR/summary.json                    (as written)

Each file keeps the table's schema and its Arrow metadata; connections gain
`conn`, their row number in the profile, which the sample tables' `conn`
refers to (a partitioned table has no global row order to join on). pandas,
polars, Spark, DuckDB and `tracelab query DIR` read the folders as tables,
the partition keys as columns. Tables are streamed batch by batch: memory
holds one batch and, for the samples, one partition index per connection
(one byte for up to 255 partitions, else wider)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

GRANULARITIES = ("date", "hour")
SAMPLE_TABLES = ("rtt", "trains", "warmups")
TIMED_TABLES = {"connections": "ts", "load": "bin_start"}
UNTIMED_TABLES = ("hosts", "packet_sizes")
BATCH_ROWS = 65_536


class PartitionError(Exception):
    """The profile could not be rewritten (its plain layout is left as it was)."""


def partition_keys(times: pa.Array, by: str) -> list[str]:
    """The partition folder (`date=YYYY-MM-DD[/hour=HH]`, UTC) of each time:
    a timestamp (schema 2) or float seconds (schema 1)."""
    if pa.types.is_timestamp(times.type):
        stamps = times.cast(pa.timestamp("us", tz="UTC"))
    else:
        stamps = pc.cast(pc.multiply(pc.floor(times), 1_000_000), pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    fmt = "date=%Y-%m-%d/hour=%H" if by == "hour" else "date=%Y-%m-%d"
    return pc.strftime(stamps, format=fmt).to_pylist()


class PartitionedWriter:
    """One Parquet writer per partition folder of one table, opened on its
    first row."""

    def __init__(self, root: Path, schema: pa.Schema, compression: str):
        self.root, self.schema, self.compression = root, schema, compression
        self.writers: dict[str, pq.ParquetWriter] = {}

    def write(self, batch: pa.RecordBatch, keys: list[str]) -> None:
        key_array = np.asarray(keys, dtype=object)
        for key in dict.fromkeys(keys):
            rows = batch.filter(pa.array(key_array == key))
            writer = self.writers.get(key)
            if writer is None:
                folder = self.root / key if key else self.root
                folder.mkdir(parents=True, exist_ok=True)
                writer = pq.ParquetWriter(folder / "part-0.parquet", self.schema, compression=self.compression)
                self.writers[key] = writer
            writer.write_batch(rows)

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()


def compression_of(file: pq.ParquetFile) -> str:
    """The codec the analyzer used (`--compression`), to write alike."""
    meta = file.metadata
    if meta.num_row_groups == 0 or meta.num_columns == 0:
        return "none"
    codec = meta.row_group(0).column(0).compression.lower()
    return "none" if codec == "uncompressed" else codec


def table_file(profile: Path, name: str) -> Path:
    single = profile / f"{name}.parquet"
    return single if single.is_file() else profile / "samples" / f"{name}.parquet"


def write_connections(profile: Path, out: Path, by: str) -> tuple[np.ndarray, list[str]]:
    """Partitions connections.parquet, adding `conn`; returns each
    connection's partition (an index into the returned folder names)."""
    source = pq.ParquetFile(table_file(profile, "connections"))
    schema = source.schema_arrow.append(pa.field("conn", pa.int64()))
    writer = PartitionedWriter(out / "connections", schema, compression_of(source))
    folders: dict[str, int] = {}
    partition_of: list[np.ndarray] = []
    row = 0
    try:
        for batch in source.iter_batches(batch_size=BATCH_ROWS):
            keys = partition_keys(batch.column("ts"), by)
            conn = pa.array(np.arange(row, row + batch.num_rows, dtype=np.int64))
            row += batch.num_rows
            writer.write(pa.RecordBatch.from_arrays([*batch.columns, conn], schema=schema), keys)
            partition_of.append(np.fromiter((folders.setdefault(k, len(folders)) for k in keys), np.int64, len(keys)))
    finally:
        writer.close()
    index = np.concatenate(partition_of) if partition_of else np.zeros(0, np.int64)
    return index.astype(np.min_scalar_type(max(len(folders) - 1, 0))), list(folders)


def write_samples(profile: Path, out: Path, name: str, partition_of: np.ndarray, folders: list[str]) -> None:
    source = pq.ParquetFile(table_file(profile, name))
    writer = PartitionedWriter(out / name, source.schema_arrow, compression_of(source))
    try:
        for batch in source.iter_batches(batch_size=BATCH_ROWS):
            conn = batch.column("conn").to_numpy()
            writer.write(batch, [folders[i] for i in partition_of[conn]])
    finally:
        writer.close()


def write_timed(profile: Path, out: Path, name: str, column: str, by: str) -> None:
    source = pq.ParquetFile(table_file(profile, name))
    writer = PartitionedWriter(out / name, source.schema_arrow, compression_of(source))
    try:
        for batch in source.iter_batches(batch_size=BATCH_ROWS):
            writer.write(batch, partition_keys(batch.column(column), by))
    finally:
        writer.close()


def write_untimed(profile: Path, out: Path, name: str) -> None:
    source = pq.ParquetFile(table_file(profile, name))
    writer = PartitionedWriter(out / name, source.schema_arrow, compression_of(source))
    try:
        for batch in source.iter_batches(batch_size=BATCH_ROWS):
            writer.write(batch, [""] * batch.num_rows)
    finally:
        writer.close()
    if not writer.writers:
        # An empty table still has its folder and schema.
        (out / name).mkdir(parents=True, exist_ok=True)
        pq.write_table(source.schema_arrow.empty_table(), out / name / "part-0.parquet")


def partition_profile(profile: Path, by: str) -> None:
    """Rewrites the profile at `profile` as a partitioned dataset, in a
    staging folder beside it that then takes its place."""
    if by not in GRANULARITIES:
        raise PartitionError(f"--partition must be one of {', '.join(GRANULARITIES)}, got {by!r}")
    staging = profile.with_name(f".{profile.name}.partition-{os.getpid()}")
    old = profile.with_name(f".{profile.name}.unpartitioned-{os.getpid()}")
    try:
        staging.mkdir()
        partition_of, folders = write_connections(profile, staging, by)
        for name in SAMPLE_TABLES:
            if table_file(profile, name).is_file():
                write_samples(profile, staging, name, partition_of, folders)
        write_timed(profile, staging, "load", TIMED_TABLES["load"], by)
        for name in UNTIMED_TABLES:
            if table_file(profile, name).is_file():
                write_untimed(profile, staging, name)
        for kept in ("conn.log", "summary.json"):
            shutil.copy2(profile / kept, staging / kept)
        profile.rename(old)
        staging.rename(profile)
    except (OSError, pa.ArrowException) as e:
        shutil.rmtree(staging, ignore_errors=True)
        if old.exists() and not profile.exists():
            old.rename(profile)
        raise PartitionError(f"{profile}: writing the partitioned dataset: {e}") from e
    shutil.rmtree(old, ignore_errors=True)
