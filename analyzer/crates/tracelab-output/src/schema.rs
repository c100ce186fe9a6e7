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
/// files ~1.9x smaller; `--compression snappy` is for profiles kept long.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Codec {
    #[default]
    None,
    Snappy,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Snappy => "snappy",
        }
    }
}
