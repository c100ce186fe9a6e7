//! Common to the integration tests: locate `datasets/public` (the public
//! traces committed with the repository) and run a trace through reader,
//! decoder and tracker.

use std::path::{Path, PathBuf};

use tracelab_decode::PacketMeta;
use tracelab_flow::{ConnRecord, Tracker, TrackerConfig};
use tracelab_pcap::FrameSource;

// `traces` is not used by these tests.
#[expect(dead_code)]
#[path = "../../../../test-support/public_datasets.rs"]
mod public_datasets;

/// `<repo>/datasets/public`; its absence is a failure, not a skip.
pub fn datasets() -> PathBuf {
    public_datasets::datasets()
}

/// Every decodable packet of a trace, through `keep`, into one tracker;
/// `advance` once per packet time, as the driver does.
pub fn track(path: &Path, cfg: TrackerConfig, keep: &dyn Fn(&PacketMeta) -> bool) -> Vec<ConnRecord> {
    let mut src = tracelab_pcap::open(path).unwrap_or_else(|e| panic!("{e}"));
    let mut t = Tracker::new(cfg);
    let mut out = Vec::new();
    loop {
        let f = match src.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                eprintln!("{e} (results so far kept)");
                break;
            }
        };
        let Ok(p) = tracelab_decode::decode(f.link_type, f.data, f.ts_ns, f.wire_len, f.interface) else { continue };
        if !keep(&p) {
            continue;
        }
        t.advance(p.ts_ns, &mut out);
        t.process(&p, &mut out);
    }
    t.finish(&mut out);
    out
}
