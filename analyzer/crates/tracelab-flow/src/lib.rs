//! Connection tracking: [`PacketMeta`](tracelab_decode::PacketMeta) in,
//! finished [`ConnRecord`]s out, with Zeek conn.log semantics and the
//! per-connection TCP metrics of ALGORITHMS.md §9.

mod record;
pub use record::*;
