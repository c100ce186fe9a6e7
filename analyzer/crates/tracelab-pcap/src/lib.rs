//! Capture-file readers (see Cargo.toml description).
