//! Every trace under datasets/public, read by the pure-Rust readers and
//! checked against two independent oracles: the packet counts the dataset
//! MANIFEST records (measured there with capinfos/tshark), and libpcap
//! itself, frame by frame (timestamp, lengths, link type, bytes).

use std::collections::BTreeMap;
use std::path::Path;

use tracelab_pcap::{libpcap, FrameSource, ReadError};

#[path = "../../../test-support/public_datasets.rs"]
mod public_datasets;
use public_datasets::{datasets, traces};

/// What a reader produced: frames (owned) and the error that ended it.
#[derive(Debug)]
struct Read {
    frames: Vec<(i64, u32, u32, u32, Vec<u8>)>,
    error: Option<ReadError>,
}

fn drain(src: &mut dyn FrameSource) -> Read {
    let mut frames = Vec::new();
    loop {
        match src.next_frame() {
            Ok(Some(f)) => {
                assert_eq!(f.cap_len as usize, f.data.len());
                frames.push((f.ts_ns, f.cap_len, f.wire_len, f.link_type, f.data.to_vec()));
            }
            Ok(None) => return Read { frames, error: None },
            Err(e) => {
                // After an error a source is finished.
                assert!(matches!(src.next_frame(), Ok(None)));
                return Read { frames, error: Some(e) };
            }
        }
    }
}

/// Packet counts from the MANIFEST trace tables (11-column rows):
/// `path -> (packets, damaged)`.
fn manifest_counts(root: &Path) -> BTreeMap<String, (usize, bool)> {
    let text = std::fs::read_to_string(root.join("MANIFEST.md")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 11 || !cells[0].starts_with('`') {
            continue;
        }
        let path = cells[0].trim_matches('`').to_string();
        let packets = cells[7];
        let digits: String =
            packets.chars().take_while(|c| c.is_ascii_digit() || *c == ',').filter(|c| *c != ',').collect();
        out.insert(path, (digits.parse().unwrap(), packets.contains("damaged")));
    }
    out
}

#[test]
fn frame_counts_match_the_manifest() {
    let root = datasets();
    let counts = manifest_counts(&root);
    let files = traces(&root);
    assert!(files.len() >= 100, "only {} traces found", files.len());
    let mut checked = 0;
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap().to_str().unwrap().to_string();
        let Some(&(packets, damaged)) = counts.get(&rel) else {
            panic!("{rel} is not in the MANIFEST");
        };
        let read = match tracelab_pcap::open(path) {
            Ok(mut src) => drain(&mut src),
            Err(e) => Read { frames: Vec::new(), error: Some(e) },
        };
        assert_eq!(read.frames.len(), packets, "{rel}: frame count");
        assert_eq!(read.error.is_some(), damaged, "{rel}: error {:?}", read.error);
        if let Some(e) = &read.error {
            assert_eq!(e.file, *path);
            println!("{e}");
        }
        checked += 1;
    }
    assert_eq!(checked, files.len());
}

/// libpcap reports `DLT_*` values; on Linux a few differ from the file's
/// `LINKTYPE_*` (libpcap's `linktype_to_dlt` table). Raw IP has three names
/// (`LINKTYPE_RAW` 101, and 12/14 written by old BSDs).
fn same_link_type(ours: u32, libpcap_dlt: u32) -> bool {
    let canon = |l: u32| match l {
        12 | 14 | 101 => 101,
        11 => 100, // DLT_ATM_RFC1483
        15 => 102, // DLT_SLIP_BSDOS
        16 => 103, // DLT_PPP_BSDOS
        19 => 106, // DLT_ATM_CLIP = LINKTYPE_LINUX_ATM_CLIP
        l => l,
    };
    canon(ours) == canon(libpcap_dlt)
}

#[test]
fn pure_readers_agree_with_libpcap() {
    let root = datasets();
    let mut compared = 0;
    let mut failures = Vec::new();
    for path in traces(&root) {
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        let ours = match tracelab_pcap::open(&path) {
            Ok(mut src) => drain(&mut src),
            Err(e) => Read { frames: Vec::new(), error: Some(e) },
        };
        let theirs = match libpcap::open(&path) {
            Ok(mut src) => drain(&mut src),
            Err(e) => {
                // Only the cases libpcap cannot read may be skipped: its own
                // refusal of mixed link types in one pcapng, and files whose
                // header we reject too.
                let mixed = ours.frames.windows(2).any(|w| w[0].3 != w[1].3);
                assert!(
                    mixed || (ours.frames.is_empty() && ours.error.is_some()),
                    "{rel}: libpcap cannot open it ({e}) but we read {} frames",
                    ours.frames.len()
                );
                println!("SKIPPED {rel}: libpcap cannot read it ({})", e.reason);
                continue;
            }
        };
        if let Some(e) = &theirs.error {
            if ours.frames.windows(2).any(|w| w[0].3 != w[1].3) {
                println!("SKIPPED {rel}: mixed link types, libpcap stops ({})", e.reason);
                continue;
            }
        }
        let diff = compare(&ours, &theirs);
        match (KNOWN_DIFFERENCES.iter().find(|(p, _)| *p == rel), diff) {
            (None, None) => {}
            (None, Some(d)) => failures.push(format!("{rel}: {d}")),
            (Some((_, why)), Some(d)) => println!("KNOWN DIFFERENCE {rel}: {d} ({why})"),
            (Some(_), None) => failures.push(format!("{rel}: listed as a known difference but agrees")),
        }
        compared += 1;
    }
    assert!(failures.is_empty(), "disagreements with libpcap:\n{}", failures.join("\n"));
    assert!(compared >= 100, "only {compared} traces compared with libpcap");
}

/// Files on which we knowingly differ from libpcap, and why.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "real/ndpi/fuzz-2021-10-13.pcap",
        "a version 2.0 header: libpcap swaps caplen and len when caplen > len (a pre-2.3 \
         writer quirk) and reads one frame; we reject the 524501-byte caplen, as tshark does",
    ),
    (
        "real/tcpdump/timestamp_invalid_micro.pcap",
        "fraction field >= 2^31: unsigned per the pcap spec (and tshark), signed in libpcap",
    ),
    (
        "real/tcpdump/timestamp_invalid_nano.pcap",
        "fraction field >= 2^31: unsigned per the pcap spec (and tshark), signed in libpcap",
    ),
];

/// The first disagreement between two reads, if any.
fn compare(ours: &Read, theirs: &Read) -> Option<String> {
    if ours.frames.len() != theirs.frames.len() {
        return Some(format!(
            "{} frames vs libpcap's {} (ours ended {:?}, libpcap {:?})",
            ours.frames.len(),
            theirs.frames.len(),
            ours.error.as_ref().map(|e| e.to_string()),
            theirs.error.as_ref().map(|e| e.to_string())
        ));
    }
    for (i, (a, b)) in ours.frames.iter().zip(&theirs.frames).enumerate() {
        if (a.0, a.1, a.2) != (b.0, b.1, b.2) {
            return Some(format!("frame {i}: (ts, caplen, len) {:?} vs {:?}", (a.0, a.1, a.2), (b.0, b.1, b.2)));
        }
        if !same_link_type(a.3, b.3) {
            return Some(format!("frame {i}: link type {} vs {}", a.3, b.3));
        }
        if a.4 != b.4 {
            return Some(format!("frame {i}: bytes differ"));
        }
    }
    match (&ours.error, &theirs.error) {
        (None, None) => None,
        // Both name the record that broke (libpcap: its stdio position
        // before the read).
        (Some(a), Some(b)) if a.offset == b.offset => None,
        (a, b) => Some(format!(
            "end: {:?} vs libpcap {:?}",
            a.as_ref().map(|e| e.to_string()),
            b.as_ref().map(|e| e.to_string())
        )),
    }
}
