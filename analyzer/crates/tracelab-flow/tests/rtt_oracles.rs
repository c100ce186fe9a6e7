//! RTTs against independent tools on public real traces (datasets/public).
//! * Handshake: tcptrace's "RTT from 3WHS" (precomputed in
//!   `generated-reference/`, printed to 0.1 ms): a->b is SYN -> SYN/ACK,
//!   b->a is SYN/ACK -> ACK.
//! * DATA-ACK: tshark's `tcp.analysis.ack_rtt` (run live; SKIPPED with the
//!   reason when tshark is absent). tshark, like tcptrace and us, gives one
//!   sample per ACK, for the segment the ACK ends at exactly; so on
//!   connections without retransmissions (tshark does not apply Karn's
//!   rule) the samples must be the same, one for one.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use tracelab_flow::{ConnRecord, TrackerConfig};

const TRACES: &[&str] = &[
    "zeek-baselines/wikipedia/wikipedia.pcap",
    "zeek-baselines/ftp-ipv4/ipv4.pcap",
    "zeek-baselines/ftp-ipv6/ipv6.pcap",
    "zeek-baselines/http-no-crlf/no_crlf.pcap",
    "zeek-baselines/pop3/pop3.pcap",
    "zeek-baselines/http-concurrent-range-requests/concurrent-range-requests.pcap",
    "zeek-baselines/tcp-padding/tcp-http-with-padding.pcap",
    "real/zeek/bro.org.pcap",
    "real/chrissanders-packets/latency1.pcapng",
    "real/chrissanders-packets/latency4.pcapng",
    "real/chrissanders-packets/http_espn.pcapng",
    "real/tcpdump/dns_tcp.pcap",
    "real/ndpi/reddit.pcap",
];

fn records(ds: &Path, t: &str) -> Vec<ConnRecord> {
    common::track(&ds.join(t), TrackerConfig::default(), &|_| true)
}

/// (a, b, a->b 3WHS ms, b->a 3WHS ms) per tcptrace connection.
fn tcptrace(text: &str) -> Vec<(String, String, f64, f64)> {
    let mut v = Vec::new();
    let (mut a, mut b) = (String::new(), String::new());
    for line in text.lines() {
        let l = line.trim();
        if let Some(x) = l.strip_prefix("host a:") {
            a = x.trim().to_string();
        } else if let Some(x) = l.strip_prefix("host b:") {
            b = x.trim().to_string();
        } else if l.starts_with("RTT from 3WHS:") {
            let nums: Vec<f64> = l.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            v.push((a.clone(), b.clone(), nums[0], nums[1]));
        }
    }
    v
}

fn endpoint(h: &tracelab_decode::Addr, p: u16) -> String {
    format!("{h}:{p}")
}

#[test]
fn handshake_rtt_matches_tcptrace() {
    let ds = common::datasets();
    let (mut compared, mut bad) = (0, Vec::new());
    for t in TRACES {
        let refp = ds.join("generated-reference").join(format!("{t}.tcptrace-lr.txt"));
        let Ok(text) = std::fs::read_to_string(&refp) else { continue };
        let mut ours = records(&ds, t);
        ours.sort_by_key(|r| r.ts_ns);
        // tcptrace lists connections in first-packet order; a reused
        // 5-tuple is matched occurrence by occurrence.
        let mut used = vec![false; ours.len()];
        for (a, b, ab, ba) in tcptrace(&text) {
            // tcptrace prints 0.0 when it has no sample.
            if ab == 0.0 && ba == 0.0 {
                continue;
            }
            let Some(i) = (0..ours.len()).find(|&i| {
                let r = &ours[i];
                !used[i] && endpoint(&r.orig_h, r.orig_p) == a && endpoint(&r.resp_h, r.resp_p) == b
            }) else {
                continue;
            };
            used[i] = true;
            let r = &ours[i];
            if r.rtt.handshake_ns.is_none() {
                continue;
            }
            compared += 1;
            let ms = |v: Option<i64>| v.unwrap() as f64 / 1e6;
            let (x, y) = (ms(r.rtt.syn_synack_ns), ms(r.rtt.synack_ack_ns));
            if (x - ab).abs() > 0.051 || (y - ba).abs() > 0.051 {
                bad.push(format!("{t} {a}>{b}: ours {x:.3}/{y:.3} ms, tcptrace {ab}/{ba}"));
            }
        }
    }
    println!("handshake RTT compared with tcptrace on {compared} connections");
    // Level reached: tcptrace prints fewer 3WHS pairs than connections
    // (IPv6 and reused tuples do not line up yet); raise when fixed.
    assert!(compared >= 9, "too few comparable connections: {compared}");
    assert!(bad.is_empty(), "{bad:#?}");
}

/// tshark's ack_rtt per direction (data sender, receiver), in ACK order:
/// one sample per ACK that ends exactly at a data segment.
fn tshark_ack_rtts(trace: &Path) -> HashMap<(String, String), Vec<i64>> {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(trace)
        .args(["-Y", "tcp", "-T", "fields", "-E", "separator=\t"])
        .args(["-e", "frame.number", "-e", "tcp.len", "-e", "ip.src", "-e", "ipv6.src", "-e", "tcp.srcport"])
        .args(["-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport", "-e", "tcp.analysis.acks_frame"])
        .args(["-e", "tcp.analysis.ack_rtt"])
        .output()
        .expect("tshark runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut len_of: HashMap<u64, u64> = HashMap::new();
    let mut rtts: HashMap<(String, String), Vec<i64>> = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 10 {
            continue;
        }
        let n: u64 = f[0].parse().unwrap_or(0);
        len_of.insert(n, f[1].parse().unwrap_or(0));
        let Ok(acked) = f[8].parse::<u64>() else { continue };
        // tshark leaves ack_rtt empty when it is 0 (same timestamp).
        let rtt: f64 = if f[9].is_empty() { 0.0 } else { f[9].parse().unwrap_or(0.0) };
        if len_of.get(&acked).copied().unwrap_or(0) == 0 {
            continue; // acknowledges a SYN or FIN, not data
        }
        let src = format!("{}:{}", if f[2].is_empty() { f[3] } else { f[2] }, f[4]);
        let dst = format!("{}:{}", if f[5].is_empty() { f[6] } else { f[5] }, f[7]);
        rtts.entry((dst, src)).or_default().push((rtt * 1e9).round() as i64);
    }
    rtts
}

/// Per direction (matched by 5-tuple), on connections without
/// retransmissions (tshark does not apply Karn's rule): our DATA-ACK
/// samples, delayed ACKs included, are tshark's `tcp.analysis.ack_rtt`
/// one for one in ACK order (both take one sample per ACK, for the segment
/// it ends at exactly; tshark prints µs or ns: 1 µs tolerance); and our
/// statistics (count, min, median, mean, max) are those of tshark's samples
/// at the positions we did not flag `delayed_ack` (the split used).
#[test]
fn data_ack_samples_match_tshark() {
    let ds = common::datasets();
    if Command::new("tshark").arg("-v").output().is_err() {
        println!("SKIPPED (tshark not installed)");
        return;
    }
    let (mut compared, mut flagged, mut samples, mut bad) = (0, 0, 0, Vec::new());
    for t in TRACES {
        let theirs = tshark_ack_rtts(&ds.join(t));
        for r in records(&ds, t) {
            let Some(d) = &r.transfer else { continue };
            if d.orig.retransmissions > 0 || d.resp.retransmissions > 0 {
                continue;
            }
            let (o, p) = (endpoint(&r.orig_h, r.orig_p), endpoint(&r.resp_h, r.resp_p));
            for (stats, ours, key) in [
                (&r.rtt.data_ack_orig, &r.rtt.data_ack_orig_samples, (o.clone(), p.clone())),
                (&r.rtt.data_ack_resp, &r.rtt.data_ack_resp_samples, (p.clone(), o.clone())),
            ] {
                let Some(tm) = theirs.get(&key) else { continue };
                compared += 1;
                samples += ours.len();
                flagged += ours.iter().filter(|s| s.delayed_ack).count();
                let same = ours.len() == tm.len() && ours.iter().zip(tm).all(|(a, b)| (a.rtt_ns - b).abs() <= 1_000);
                if !same {
                    let v: Vec<i64> = ours.iter().map(|s| s.rtt_ns).collect();
                    bad.push(format!("{t} {}>{}: ours {v:?}, tshark {tm:?}", key.0, key.1));
                    continue;
                }
                let mut kept: Vec<i64> =
                    tm.iter().zip(ours.iter()).filter(|(_, s)| !s.delayed_ack).map(|(v, _)| *v).collect();
                kept.sort();
                let n = kept.len();
                let want = (n, kept.first(), kept.get(n.saturating_sub(1) / 2), kept.last());
                let got = (stats.count as usize, Some(&stats.min_ns), Some(&stats.median_ns), Some(&stats.max_ns));
                let mean = kept.iter().sum::<i64>() as f64 / n.max(1) as f64;
                let close = |a: &i64, b: &i64| (a - b).abs() <= 1_000;
                let stats_ok = n == 0 && stats.count == 0
                    || n == got.0
                        && close(want.1.unwrap(), got.1.unwrap())
                        && close(want.2.unwrap(), got.2.unwrap())
                        && close(want.3.unwrap(), got.3.unwrap())
                        && (mean - stats.mean_ns).abs() <= 1_000.0;
                if !stats_ok {
                    bad.push(format!("{t} {}>{}: statistics {stats:?}, tshark's unflagged {kept:?}", key.0, key.1));
                }
            }
        }
    }
    let agree = compared - bad.len();
    println!(
        "DATA-ACK samples equal tshark's in {agree} of {compared} directions ({samples} samples, {flagged} flagged delayed_ack)"
    );
    println!("{bad:#?}");
    assert!(compared >= 224, "too few comparable directions: {compared}");
    // Known, by design: concurrent-range-requests 88.198.248.254:80 ->
    // :58718, where a segment fills a hole after the one the last ACK ends
    // at; tshark samples that ACK (65 ms), tcptrace and we do not (the ACK
    // waited for the late segment). The count must not grow.
    assert!(bad.len() <= 1, "{bad:#?}");
}
