//! tracelab-analyzer as a library: the profile run and its parts. The
//! binary (`main.rs`) is a thin CLI over [`driver::profile`].

pub mod driver;
pub mod hosts;
pub mod interrupt;
pub mod predict_c45;
pub mod progress;
pub mod roles;
pub mod scope;
pub mod shard;
pub mod spill;
pub mod summary;
pub mod write_pcap;
pub mod writers;
