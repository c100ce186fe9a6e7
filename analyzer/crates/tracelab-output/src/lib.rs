//! Writers of the analyzer's outputs: Parquet tables (through a small
//! row-oriented front end over Arrow builders) and Zeek's conn.log format.
//! No analysis happens here.

pub mod conn;
pub mod table;
