"""A partitioned profile dataset (`tracelab profile ... --partition date|hour`,
docs/analyzer.md): what it holds, for sqlprofile.py, which reads it as the
plain profile it was made from.

The dataset holds one folder per table, hive-partitioned by UTC date (and
hour): DIR/connections/date=.../hour=.../part-0.parquet, the sample tables
beside it, DIR/hosts/part-0.parquet, DIR/summary.json. Connections carry
`conn`, their row number in the profile; a sample's `conn` is its
connection's. The profile's row order: connections by `conn` (which must
then be 0..n-1), every sample table stably by `conn` (a connection's samples
sit in one partition, in their order), load and the untimed tables in
partition order (chronological: the folder names sort as their times).
"""

from __future__ import annotations

from pathlib import Path

from . import schema as S

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
