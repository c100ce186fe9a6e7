//! What a table is made of, below the column vectors and the file writer
//! that both use it: the kinds of columns, their Arrow types (for the Arrow
//! schema each file carries), the page compression and the schema version.

use arrow_schema::{DataType, TimeUnit};

/// What a column holds, and so how it is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    F64,
    I64,
    I32,
    /// A point in time: Arrow `timestamp[us, tz=UTC]`, Parquet
    /// TIMESTAMP(MICROS, isAdjustedToUTC), filled in nanoseconds since the
    /// epoch and stored to the microsecond (Zeek's precision), rounded down.
    Time,
    /// A label from a small set (proto, state, history, side, ...):
    /// dictionary-encoded, and without min/max (nobody filters on the
    /// lexical range of labels).
    Str,
    /// A string nearly unique per row (uids, addresses): written plain,
    /// since a dictionary would only cost a hash per value and then grow
    /// with every row.
    Id,
    Bool,
}

impl Kind {
    /// The column's Arrow type (every column is nullable).
    pub fn data_type(self) -> DataType {
        match self {
            Kind::F64 => DataType::Float64,
            Kind::I64 => DataType::Int64,
            Kind::I32 => DataType::Int32,
            Kind::Time => DataType::Timestamp(TimeUnit::Microsecond, Some(TIME_ZONE.into())),
            Kind::Str | Kind::Id => DataType::Utf8,
            Kind::Bool => DataType::Boolean,
        }
    }
}

/// The time zone of `Kind::Time` columns.
pub const TIME_ZONE: &str = "UTC";

/// A column of a table: its name, kind and description (stored with the
/// Arrow schema as the field's `description` metadata; none if empty).
pub type ColumnDef = (&'static str, Kind, &'static str);

/// Page compression. The analyzer's default is ZSTD at `ZSTD_LEVEL`, which
/// pyarrow, DuckDB and Spark read: files a third smaller than with Snappy,
/// their own default, for ~11 % more CPU (docs/performance-history.md,
/// "Where the 3× goes"); `None` for the fastest runs, `Snappy` for readers
/// without ZSTD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    None,
    Snappy,
    /// ZSTD at this level.
    Zstd(i32),
}

/// The ZSTD level of `--compression zstd`: see docs/decisions/0002 for
/// levels 1-3 measured on the whole profile.
pub const ZSTD_LEVEL: i32 = 1;

/// The version of the tables' schema, in every file's key-value metadata
/// as `tracelab.schema_version`: the major changes when a column changes
/// type or meaning or goes away, the minor when columns are added.
/// Readers refuse a major they do not know. 2.0: times as timestamps
/// (`ts`, `bin_start`), `uid` in the samples tables.
pub const SCHEMA_VERSION: &str = "2.0";

/// The key of `SCHEMA_VERSION` in the files' key-value metadata.
pub const SCHEMA_VERSION_KEY: &str = "tracelab.schema_version";

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Snappy => "snappy",
            Codec::Zstd(_) => "zstd",
        }
    }
}
