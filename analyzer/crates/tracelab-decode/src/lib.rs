//! Pure packet decoder: bytes of one captured frame plus its link type in,
//! a [`PacketMeta`] (or the named reason it was skipped) out.
//!
//! No state, no allocation, no I/O: easy to fuzz (see `fuzz/`).

mod meta;
pub use meta::*;
