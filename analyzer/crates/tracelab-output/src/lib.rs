//! Writers of the analyzer's outputs: Parquet tables (a row-oriented front
//! end over Arrow array builders, written by the `parquet` crate) and Zeek's
//! conn.log format. No analysis happens here.

pub mod conn;
mod schema;
pub mod table;
mod writer;
