//! The public test traces committed with the repository, for the tests of
//! every analyzer crate (included with `#[path]`): `datasets/public` at the
//! repository root; its `MANIFEST.md` gives source and licence of each file.

use std::path::{Path, PathBuf};

/// The datasets folder; its absence is a failure, not a skip.
pub fn datasets() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../datasets/public");
    assert!(d.join("MANIFEST.md").is_file(), "datasets not found at {} (part of the repository)", d.display());
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
