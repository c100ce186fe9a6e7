//! The shared real traces, for the tests of every analyzer crate (included
//! with `#[path]`): `../shared/datasets` beside the checkout, in CI too.

use std::path::{Path, PathBuf};

/// The datasets folder; its absence is a failure, not a skip.
pub fn datasets() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/datasets");
    assert!(d.join("MANIFEST.md").is_file(), "datasets not found at {} (expected beside the checkout)", d.display());
    d.canonicalize().unwrap()
}

/// Every capture file under `real/` and `zeek-baselines/`, sorted.
pub fn traces(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if matches!(p.extension().and_then(|x| x.to_str()), Some("pcap" | "pcapng" | "gz")) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for sub in ["real", "zeek-baselines"] {
        walk(&root.join(sub), &mut out);
    }
    out.sort();
    out
}
