//! RTTs against independent tools on public real traces (datasets/public).
//! * Handshake: tcptrace's "RTT from 3WHS" (precomputed in
//!   `generated-reference/`, printed to 0.1 ms): a->b is SYN -> SYN/ACK,
//!   b->a is SYN/ACK -> ACK.
//! * DATA-ACK: tshark's `tcp.analysis.ack_rtt` (run live; SKIPPED with the
//!   reason when tshark is absent). tshark gives one sample per ACK, for the
//!   newest segment it acknowledges — exactly our sample for that segment —
//!   while we also sample the older segments a cumulative ACK covers, which
//!   are larger. So per direction our minimum must equal tshark's minimum
//!   (connections without retransmissions: tshark does not apply Karn).

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

#[test]
fn data_ack_min_matches_tshark() {
    let ds = common::datasets();
    if Command::new("tshark").arg("-v").output().is_err() {
        println!("SKIPPED (tshark not installed)");
        return;
    }
    let (mut compared, mut bad) = (0, Vec::new());
    for t in TRACES {
        let out = Command::new("tshark")
            .args(["-n", "-r"])
            .arg(ds.join(t))
            .args(["-Y", "tcp", "-T", "fields", "-E", "separator=\t"])
            .args(["-e", "frame.number", "-e", "tcp.len", "-e", "ip.src", "-e", "ipv6.src", "-e", "tcp.srcport"])
            .args(["-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport", "-e", "tcp.analysis.acks_frame"])
            .args(["-e", "tcp.analysis.ack_rtt"])
            .output()
            .expect("tshark runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut len_of: HashMap<u64, u64> = HashMap::new();
        // (data sender, receiver) -> min ack_rtt in ns over ACKs of data.
        let mut min: HashMap<(String, String), i64> = HashMap::new();
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
            let ns = (rtt * 1e9).round() as i64;
            let e = min.entry((dst, src)).or_insert(ns);
            *e = (*e).min(ns);
        }
        for r in records(&ds, t) {
            let Some(d) = &r.transfer else { continue };
            if d.orig.retransmissions > 0 || d.resp.retransmissions > 0 {
                continue;
            }
            let (o, p) = (endpoint(&r.orig_h, r.orig_p), endpoint(&r.resp_h, r.resp_p));
            for (stats, key) in
                [(&r.rtt.data_ack_orig, (o.clone(), p.clone())), (&r.rtt.data_ack_resp, (p.clone(), o.clone()))]
            {
                let Some(&tm) = min.get(&key) else { continue };
                if stats.count == 0 {
                    continue;
                }
                compared += 1;
                // tshark prints ack_rtt in µs or ns precision: allow 1 µs.
                if (stats.min_ns - tm).abs() > 1_000 {
                    bad.push(format!("{t} {}>{}: ours min {} ns, tshark {} ns", key.0, key.1, stats.min_ns, tm));
                }
            }
        }
    }
    println!("DATA-ACK minimum compared with tshark on {compared} directions");
    assert!(compared >= 224, "too few comparable directions: {compared}");
    // Known, not yet explained: 4 directions (pop3 x2, reddit x2) where our
    // minimum is below tshark's (a segment we sample that tshark pairs with
    // another ACK). Listed in the report; the count must not grow.
    println!("{bad:#?}");
    assert!(bad.len() <= 4, "{bad:#?}");
}
