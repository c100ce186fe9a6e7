//! Writers of the analyzer's outputs: Parquet tables (a row-oriented front
//! end over column vectors, and our own Parquet encoder) and Zeek's conn.log
//! format. No analysis happens here.

mod column;
pub mod conn;
mod file;
mod schema;
pub mod table;
mod thrift;
