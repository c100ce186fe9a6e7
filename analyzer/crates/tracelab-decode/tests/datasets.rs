//! The decoder over every trace under datasets/public, against tshark's
//! view of the same traces (the dataset's generated references: per TCP
//! conversation frame counts, and the MANIFEST's UDP conversation counts).

use std::collections::BTreeMap;
use std::path::Path;

use tracelab_decode::{decode, decode_into, ip_proto, PacketMeta, SkipReason};
use tracelab_pcap::FrameSource;

#[path = "../../../test-support/public_datasets.rs"]
mod public_datasets;
use public_datasets::{datasets, traces};

/// An endpoint as tshark prints it: `addr:port`.
type Conv = (String, String);

#[derive(Default)]
struct Tally {
    frames: usize,
    decoded: usize,
    skipped: BTreeMap<SkipReason, usize>,
    /// Per unordered TCP endpoint pair: frames (lower → higher, reverse).
    tcp: BTreeMap<Conv, (usize, usize)>,
    udp: BTreeMap<Conv, usize>,
}

fn tally(path: &Path) -> Tally {
    let mut t = Tally::default();
    let Ok(mut src) = tracelab_pcap::open(path) else {
        return t;
    };
    // A read error ends the file; what came before is still counted.
    while let Ok(Some(f)) = src.next_frame() {
        t.frames += 1;
        match decode(f.link_type, f.data, f.ts_ns, f.wire_len, f.interface) {
            Ok(m) => {
                t.decoded += 1;
                let a = format!("{}:{}", m.src, m.sport);
                let b = format!("{}:{}", m.dst, m.dport);
                let forward = a < b;
                let key = if forward { (a, b) } else { (b, a) };
                match m.ip_proto {
                    ip_proto::TCP => {
                        let e = t.tcp.entry(key).or_default();
                        if forward {
                            e.0 += 1
                        } else {
                            e.1 += 1
                        }
                    }
                    ip_proto::UDP => *t.udp.entry(key).or_default() += 1,
                    _ => {}
                }
            }
            Err(r) => *t.skipped.entry(r).or_default() += 1,
        }
    }
    t
}

/// `tshark -q -z conv,tcp` rows: `A <-> B  <-frames bytes unit  ->frames ...`
/// where `->` counts A to B.
fn tshark_tcp(text: &str) -> BTreeMap<Conv, (usize, usize)> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let tok: Vec<&str> = line.split_whitespace().collect();
        if tok.len() < 14 || tok[1] != "<->" {
            continue;
        }
        let (a, b) = (tok[0].to_string(), tok[2].to_string());
        let (b_to_a, a_to_b): (usize, usize) = (tok[3].parse().unwrap(), tok[6].parse().unwrap());
        let (key, fwd, back) = if a < b { ((a, b), a_to_b, b_to_a) } else { ((b, a), b_to_a, a_to_b) };
        // tshark splits a reused 4-tuple into several conversations.
        let e: &mut (usize, usize) = out.entry(key).or_default();
        e.0 += fwd;
        e.1 += back;
    }
    out
}

/// Traces where tshark and the decoder knowingly see different TCP frames.
const TCP_DIFFERENCES: &[(&str, &str)] = &[
    ("real/ndpi/6in4tunnel.pcap", "tunnel: tshark counts the inner TCP, we decode the outer IPv4 (protocol 41)"),
    ("zeek-baselines/gre/gre-sample.pcap", "tunnel: tshark counts the TCP inside GRE"),
    ("real/ndpi/ip_fragmented_garbage.pcap", "tshark reassembles IP fragments, we count them as ip_fragment"),
    (
        "real/zeek/truncated-header.pcap",
        "snaplen 68 cuts one SYN's TCP options: tshark calls it malformed, we decode the fixed header",
    ),
    (
        "zeek-baselines/cisco-fabric-path/cisco-fabric-path.pcap",
        "tshark does not open FabricPath; we do, as Zeek does (its baseline has 2 packets per connection, as we)",
    ),
];

#[test]
fn tcp_conversations_match_tshark() {
    let root = datasets();
    let reference = root.join("generated-reference");
    let mut compared = 0;
    let mut failures = Vec::new();
    for path in traces(&root) {
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        let Ok(text) = std::fs::read_to_string(reference.join(format!("{rel}.tshark-conv-tcp.txt"))) else {
            continue;
        };
        let theirs = tshark_tcp(&text);
        let ours = tally(&path).tcp;
        let known = TCP_DIFFERENCES.iter().find(|(p, _)| *p == rel);
        match (ours == theirs, known) {
            (true, None) => compared += 1,
            (false, Some((_, why))) => println!("KNOWN DIFFERENCE {rel}: {why}"),
            (true, Some(_)) => failures.push(format!("{rel}: listed as a known difference but agrees")),
            (false, None) => {
                let diff: Vec<_> = ours
                    .iter()
                    .filter(|(k, v)| theirs.get(*k) != Some(*v))
                    .map(|(k, v)| format!("{k:?} ours {v:?} tshark {:?}", theirs.get(k)))
                    .chain(theirs.keys().filter(|k| !ours.contains_key(*k)).map(|k| format!("{k:?} missing")))
                    .take(5)
                    .collect();
                failures.push(format!("{rel}: {}", diff.join("; ")));
            }
        }
    }
    assert!(failures.is_empty(), "TCP conversations differ from tshark:\n{}", failures.join("\n"));
    assert!(compared >= 70, "only {compared} traces compared");
}

/// `udp conv N` from the MANIFEST's tshark column, per trace path.
fn manifest_udp_conversations(root: &Path) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(root.join("MANIFEST.md")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 11 {
            continue;
        }
        let Some(rest) = cells[10].split("udp conv ").nth(1) else {
            continue;
        };
        let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
        out.insert(cells[0].trim_matches('`').to_string(), n.parse().unwrap());
    }
    out
}

const UDP_DIFFERENCES: &[(&str, &str)] = &[
    ("real/ndpi/6in4tunnel.pcap", "tunnel: tshark counts the inner UDP"),
    ("zeek-baselines/gre/gre-sample.pcap", "tunnel: tshark counts the UDP inside GRE"),
    ("zeek-baselines/radiotap/radiotap.pcap", "802.11 radiotap is not a link type we decode"),
    (
        "real/ndpi/badpackets.pcap",
        "every IP total length exceeds the frame on the wire: Zeek drops these (truncated_IP_len), tshark decodes them",
    ),
    (
        "real/pcapplusplus/null_loopback.pcap",
        "one frame's null header is 0f 00 08 00 (Cisco HDLC-like), no BSD address family; Zeek skips it too",
    ),
];

#[test]
fn udp_conversation_counts_match_the_manifest() {
    let root = datasets();
    let expected = manifest_udp_conversations(&root);
    assert!(expected.len() >= 100);
    let mut failures = Vec::new();
    for (rel, n) in &expected {
        let ours = tally(&root.join(rel)).udp.len();
        let known = UDP_DIFFERENCES.iter().find(|(p, _)| p == rel);
        match (ours == *n, known) {
            (true, None) => {}
            (false, Some((_, why))) => println!("KNOWN DIFFERENCE {rel}: {why}"),
            (true, Some(_)) => failures.push(format!("{rel}: listed as a known difference but agrees")),
            (false, None) => failures.push(format!("{rel}: {ours} UDP conversations, tshark {n}")),
        }
    }
    assert!(failures.is_empty(), "UDP conversations differ from tshark:\n{}", failures.join("\n"));
}

#[test]
fn every_frame_is_decoded_or_skipped_for_a_reason() {
    let root = datasets();
    let mut total = Tally::default();
    for path in traces(&root) {
        let t = tally(&path);
        let skipped: usize = t.skipped.values().sum();
        assert_eq!(t.decoded + skipped, t.frames, "{}", path.display());
        total.frames += t.frames;
        total.decoded += t.decoded;
        for (r, n) in t.skipped {
            *total.skipped.entry(r).or_default() += n;
        }
    }
    println!("{} frames: {} decoded, skipped {:?}", total.frames, total.decoded, total.skipped);
    // The MANIFEST's total ("total packets 70,518").
    assert_eq!(total.frames, 70_518);
}

/// `decode_into` a reused `PacketMeta` (holding the previous packet, or a
/// frame that failed half way) gives exactly what `decode` gives, on every
/// frame of every public trace: nothing stale survives.
#[test]
fn decode_into_a_reused_meta_equals_decode() {
    let root = datasets();
    let mut reused = PacketMeta { sport: 0xdead, ip_len: u32::MAX, ..PacketMeta::default() };
    let mut frames = 0;
    for path in traces(&root) {
        let Ok(mut src) = tracelab_pcap::open(&path) else {
            continue;
        };
        while let Ok(Some(f)) = src.next_frame() {
            frames += 1;
            let fresh = decode(f.link_type, f.data, f.ts_ns, f.wire_len, f.interface);
            let into = decode_into(f.link_type, f.data, f.ts_ns, f.wire_len, f.interface, &mut reused);
            assert_eq!(into.err(), fresh.err(), "{} frame {frames}", path.display());
            if let Ok(m) = fresh {
                assert_eq!(reused, m, "{} frame {frames}", path.display());
            }
        }
    }
    assert_eq!(frames, 70_518);
}
