//! What a table is made of, below the column vectors and the file writer
//! that both use it: the kinds of columns and the page compression.

/// What a column holds, and so how it is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    F64,
    I64,
    I32,
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

/// Page compression. None is the default: Snappy adds ~330 instructions
/// per packet of the trace (+17 % on the whole profile, callgrind) for
/// files ~1.9x smaller; `--compression snappy` is for profiles kept long,
/// `--compression zstd` for files that DuckDB or Spark users expect
/// (ZSTD at `ZSTD_LEVEL`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Codec {
    #[default]
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
/// Readers refuse a major they do not know.
pub const SCHEMA_VERSION: &str = "1.0";

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Snappy => "snappy",
            Codec::Zstd(_) => "zstd",
        }
    }
}
