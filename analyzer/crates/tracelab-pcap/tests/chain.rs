//! Rotated files read as one capture: order by first timestamp, files
//! without frames, gaps and overlaps, link-type mismatch, directories.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use tracelab_pcap::chain::{boundaries, expand_inputs, Chain, ChainError};
use tracelab_pcap::write::{PcapWriter, Resolution};
use tracelab_pcap::FrameSource;

const ETHERNET: u32 = 1;
const RAW: u32 = 101;
const S: i64 = 1_000_000_000;

/// A fresh directory per test under the target's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracelab-chain-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A pcap of one-byte frames, each holding its index, at `times`.
fn pcap(path: &Path, link_type: u32, first_index: u8, times: &[i64]) -> PathBuf {
    let mut w = PcapWriter::new(File::create(path).unwrap(), Resolution::Nano, 65535, link_type).unwrap();
    for (i, &t) in times.iter().enumerate() {
        w.write_record(t, &[first_index + i as u8], 1).unwrap();
    }
    path.to_path_buf()
}

/// Every frame of the chain, as (time, first byte), switching files as the
/// analyzer's driver does.
fn read_all(chain: &mut Chain) -> Vec<(i64, u8)> {
    let mut frames = Vec::new();
    let mut last = None;
    loop {
        match chain.current().next_frame().unwrap() {
            Some(f) => {
                last = Some(f.ts_ns);
                frames.push((f.ts_ns, f.data[0]));
            }
            None => {
                if !chain.next_file(frames.len() as u64, last).unwrap() {
                    return frames;
                }
            }
        }
    }
}

#[test]
fn files_are_read_in_order_of_their_first_frame() {
    let dir = scratch("order");
    // Named against time order; one file holds only its header.
    let late = pcap(&dir.join("a.pcap"), ETHERNET, 3, &[10 * S, 11 * S]);
    let empty = pcap(&dir.join("b.pcap"), RAW, 0, &[]);
    let early = pcap(&dir.join("c.pcap"), ETHERNET, 0, &[S, 2 * S, 3 * S]);
    let mut chain = Chain::probe(&[late.clone(), empty.clone(), early.clone()], tracelab_pcap::open).unwrap();
    let frames = read_all(&mut chain);
    assert_eq!(frames, vec![(S, 0), (2 * S, 1), (3 * S, 2), (10 * S, 3), (11 * S, 4)]);
    let parts = chain.parts();
    assert_eq!(parts.iter().map(|p| p.path.clone()).collect::<Vec<_>>(), vec![early, late, empty]);
    assert_eq!(parts.iter().map(|p| p.frames).collect::<Vec<_>>(), vec![3, 2, 0]);
    assert_eq!((parts[0].first_ts_ns, parts[0].last_ts_ns), (Some(S), Some(3 * S)));
    assert_eq!((parts[2].first_ts_ns, parts[2].last_ts_ns), (None, None));
    let b = boundaries(parts);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].gap_ns, 7 * S);
}

#[test]
fn an_overlap_is_a_negative_gap() {
    let dir = scratch("overlap");
    let first = pcap(&dir.join("1.pcap"), ETHERNET, 0, &[S, 5 * S]);
    let second = pcap(&dir.join("2.pcap"), ETHERNET, 2, &[3 * S, 6 * S]);
    let mut chain = Chain::probe(&[first, second], tracelab_pcap::open).unwrap();
    // Read in file order, not merged: the driver counts the late frames.
    assert_eq!(read_all(&mut chain), vec![(S, 0), (5 * S, 1), (3 * S, 2), (6 * S, 3)]);
    assert_eq!(boundaries(chain.parts())[0].gap_ns, -2 * S);
}

#[test]
fn different_link_types_are_refused() {
    let dir = scratch("links");
    let eth = pcap(&dir.join("eth.pcap"), ETHERNET, 0, &[S]);
    let raw = pcap(&dir.join("raw.pcap"), RAW, 1, &[2 * S]);
    let err = Chain::probe(&[eth.clone(), raw.clone()], tracelab_pcap::open).err().unwrap();
    assert!(matches!(err, ChainError::LinkTypes { first_type: 1, second_type: 101, .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&*raw.to_string_lossy()) && text.contains(&*eth.to_string_lossy()), "{text}");
}

#[test]
fn a_directory_stands_for_its_visible_files() {
    let dir = scratch("dir");
    let inside = dir.join("captures");
    fs::create_dir(&inside).unwrap();
    pcap(&inside.join("b.pcap"), ETHERNET, 0, &[S]);
    pcap(&inside.join("a.pcap"), ETHERNET, 1, &[2 * S]);
    fs::write(inside.join(".partial"), b"not a capture").unwrap();
    let other = pcap(&dir.join("z.pcap"), ETHERNET, 2, &[3 * S]);
    let files = expand_inputs(&[inside.clone(), other.clone()]).unwrap();
    assert_eq!(files, vec![inside.join("a.pcap"), inside.join("b.pcap"), other]);
    let empty = dir.join("empty");
    fs::create_dir(&empty).unwrap();
    assert!(matches!(expand_inputs(&[empty]), Err(ChainError::EmptyDir(_))));
}

#[test]
fn a_missing_file_is_a_read_error_naming_it() {
    let dir = scratch("missing");
    let there = pcap(&dir.join("there.pcap"), ETHERNET, 0, &[S]);
    let missing = dir.join("missing.pcap");
    match Chain::probe(&[there, missing.clone()], tracelab_pcap::open) {
        Err(ChainError::Read(e)) => assert_eq!(e.file, missing),
        other => panic!("expected a read error, got {:?}", other.err()),
    }
}

#[test]
fn a_file_broken_at_its_first_record_is_read_last_and_reports_the_error() {
    let dir = scratch("broken");
    let good = pcap(&dir.join("good.pcap"), ETHERNET, 0, &[S]);
    let broken = pcap(&dir.join("broken.pcap"), ETHERNET, 0, &[2 * S]);
    // Cut inside the first record's header.
    let bytes = fs::read(&broken).unwrap();
    fs::write(&broken, &bytes[..24 + 8]).unwrap();
    let mut chain = Chain::probe(&[broken.clone(), good], tracelab_pcap::open).unwrap();
    assert_eq!(chain.parts()[1].path, broken);
    assert_eq!(chain.current().next_frame().unwrap().map(|f| f.ts_ns), Some(S));
    assert_eq!(chain.current().next_frame().unwrap(), None);
    assert!(chain.next_file(1, Some(S)).unwrap());
    let err = chain.current().next_frame().err().unwrap();
    assert_eq!((err.file, err.offset), (broken, 24));
}
