//! Hand-built packet sequences; every expected value is worked out in the
//! comments from Zeek's rules (conn/main.zeek, TCPSessionAdapter.cc) or the
//! spec (docs/reference/algorithms.md §9.2–9.3).

use tracelab_decode::{ip_proto, tcp_flags as F, Addr, PacketMeta};
mod packets;
use packets::{tcp4, Endpoint};
use tracelab_flow::{flight, theory_ns, ConnRecord, ConnState, RttSample, Seen, Tracker, TrackerConfig};

const MS: i64 = 1_000_000;
const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

fn flags(s: &str) -> u8 {
    s.chars()
        .map(|c| match c {
            'S' => F::SYN,
            'A' => F::ACK,
            'F' => F::FIN,
            'R' => F::RST,
            'P' => F::PSH,
            _ => panic!("flag {c}"),
        })
        .fold(0, |a, b| a | b)
}

/// A TCP/IPv4 packet: 20-byte IP and TCP headers.
fn tcp(ts: i64, src: Endpoint, dst: Endpoint, fl: &str, seq: u32, ack: u32, len: u32) -> PacketMeta {
    let mut p = tcp4(ts, src, dst, flags(fl), seq, ack, len);
    p.tcp.window = 1000;
    p
}

fn udp(ts: i64, src: ([u8; 4], u16), dst: ([u8; 4], u16), len: u32) -> PacketMeta {
    PacketMeta {
        ts_ns: ts,
        src: Addr::v4(src.0),
        dst: Addr::v4(dst.0),
        ip_proto: ip_proto::UDP,
        ip_len: 28 + len,
        sport: src.1,
        dport: dst.1,
        payload_len: len,
        payload_captured: len,
        ..Default::default()
    }
}

fn run_cfg(cfg: TrackerConfig, pkts: &[PacketMeta]) -> Vec<ConnRecord> {
    let mut t = Tracker::new(cfg);
    let mut out = Vec::new();
    for p in pkts {
        t.process(p, &mut out);
    }
    t.finish(&mut out);
    out
}

fn run(pkts: &[PacketMeta]) -> Vec<ConnRecord> {
    run_cfg(TrackerConfig::default(), pkts)
}

fn one(pkts: &[PacketMeta]) -> ConnRecord {
    let v = run(pkts);
    assert_eq!(v.len(), 1, "{v:#?}");
    v.into_iter().next().unwrap()
}

const CL: ([u8; 4], u16) = (C, 40000);
const SV: ([u8; 4], u16) = (S, 80);

fn handshake() -> Vec<PacketMeta> {
    vec![
        tcp(0, CL, SV, "S", 100, 0, 0),
        tcp(10 * MS, SV, CL, "SA", 500, 101, 0),
        tcp(20 * MS, CL, SV, "A", 101, 501, 0),
    ]
}

#[test]
fn sf_full_exchange() {
    // S h A, server banner 50 B ('d'), request 100 B ('D'), pure ACK from
    // the server ('a'), FIN each way ('F','f'), last ACK (no letter: 'A'
    // already recorded).
    let mut p = handshake();
    p.extend([
        tcp(30 * MS, SV, CL, "PA", 501, 101, 50),
        tcp(40 * MS, CL, SV, "PA", 101, 551, 100),
        tcp(50 * MS, SV, CL, "A", 551, 201, 0),
        tcp(60 * MS, CL, SV, "FA", 201, 551, 0),
        tcp(70 * MS, SV, CL, "FA", 551, 202, 0),
        tcp(80 * MS, CL, SV, "A", 202, 552, 0),
    ]);
    let r = one(&p);
    assert_eq!(r.history, "ShAdDaFf");
    assert_eq!(r.conn_state, ConnState::SF);
    assert_eq!((r.orig_h, r.orig_p, r.resp_h, r.resp_p), (Addr::v4(C), 40000, Addr::v4(S), 80));
    // Sizes from sequence numbers: orig last_seq 202 - ISN 100 - SYN - FIN.
    assert_eq!((r.orig_bytes, r.resp_bytes), (Some(100), Some(50)));
    // The last ACK comes after both FINs: Zeek stops the clock at 70 ms.
    assert_eq!(r.duration_ns, Some(70 * MS));
    // orig: 4 x 40 + 140; resp: 40 + 90 + 40 + 40.
    assert_eq!((r.orig_pkts, r.orig_ip_bytes, r.resp_pkts, r.resp_ip_bytes), (5, 300, 4, 210));
    assert_eq!(r.rtt.syn_synack_ns, Some(10 * MS));
    assert_eq!(r.rtt.synack_ack_ns, Some(10 * MS));
    assert_eq!(r.rtt.handshake_ns, Some(20 * MS));
    // Banner acked by the request at 40 ms: an ACK of less than two
    // full-sized segments sent with the client's data, so held (delayed
    // ACK); request acked at 50 ms by a pure ACK, 10 ms = the handshake's.
    let sample = |ms: i64, delayed_ack: bool| RttSample { rtt_ns: ms * MS, delayed_ack };
    assert_eq!(r.rtt.data_ack_resp_samples.to_vec(), vec![sample(10, true)]);
    assert_eq!(r.rtt.data_ack_orig_samples.to_vec(), vec![sample(10, false)]);
    assert_eq!((r.rtt.data_ack_resp.count, r.rtt.data_ack_orig.count), (0, 1));
    assert!(r.handshake_complete && r.closed && r.well_behaved);
    let d = r.transfer.expect("data");
    // setup: 0 -> first data at 30; transfer 30 -> 40; teardown 40 -> FIN at 70.
    assert_eq!((d.setup_ns, d.transfer_ns, d.teardown_ns), (30 * MS, 10 * MS, 30 * MS));
    assert_eq!(d.resp.train_sizes.to_vec(), vec![1]);
    assert_eq!(d.orig.train_sizes.to_vec(), vec![1]);
    assert_eq!(d.orig.warmups_ns.to_vec(), vec![10 * MS]);
    assert_eq!(d.resp.warmups_ns.to_vec(), vec![0]);
}

fn state_of(p: &[PacketMeta]) -> (ConnState, String) {
    let r = one(p);
    (r.conn_state, r.history)
}

#[test]
fn every_conn_state() {
    let h = handshake();
    let with = |extra: &[PacketMeta]| -> Vec<PacketMeta> { h.iter().chain(extra).copied().collect() };
    // S0: a lone SYN.
    assert_eq!(state_of(&h[..1]), (ConnState::S0, "S".into()));
    // REJ: SYN answered by RST/ACK; orig still SYN_SENT.
    assert_eq!(state_of(&[h[0], tcp(MS, SV, CL, "RA", 0, 101, 0)]), (ConnState::REJ, "Sr".into()));
    // S1: established, never closed.
    assert_eq!(state_of(&h), (ConnState::S1, "ShA".into()));
    // S2 / S3: one FIN only.
    assert_eq!(state_of(&with(&[tcp(30 * MS, CL, SV, "FA", 101, 501, 0)])), (ConnState::S2, "ShAF".into()));
    assert_eq!(state_of(&with(&[tcp(30 * MS, SV, CL, "FA", 501, 101, 0)])), (ConnState::S3, "ShAf".into()));
    // RSTO / RSTR: established, then a RST from one side.
    assert_eq!(state_of(&with(&[tcp(30 * MS, CL, SV, "R", 101, 0, 0)])), (ConnState::RSTO, "ShAR".into()));
    assert_eq!(state_of(&with(&[tcp(30 * MS, SV, CL, "R", 501, 0, 0)])), (ConnState::RSTR, "ShAr".into()));
    // RSTOS0: SYN then RST from the originator, no SYN/ACK ("SR" matches
    // /^?S[^HAFGIQ]*R.*/).
    assert_eq!(state_of(&[h[0], tcp(MS, CL, SV, "R", 101, 0, 0)]), (ConnState::RSTOS0, "SR".into()));
    // RSTRH: SYN/ACK then RST from the responder, no SYN. The SYN/ACK from
    // port 80 makes Zeek flip the roles at once ('^'), so it is 'h'.
    assert_eq!(
        state_of(&[tcp(0, SV, CL, "SA", 500, 101, 0), tcp(MS, SV, CL, "R", 501, 0, 0)]),
        (ConnState::RSTRH, "^hr".into())
    );
    // SH: SYN then FIN from the originator, no reply.
    assert_eq!(state_of(&[h[0], tcp(MS, CL, SV, "F", 101, 0, 0)]), (ConnState::SH, "SF".into()));
    // SHR: SYN/ACK then FIN from the responder.
    assert_eq!(
        state_of(&[tcp(0, SV, CL, "SA", 500, 101, 0), tcp(MS, SV, CL, "FA", 501, 101, 0)]),
        (ConnState::SHR, "^hf".into())
    );
    // OTH: mid-stream ACK, no SYN anywhere.
    assert_eq!(state_of(&[tcp(0, CL, SV, "A", 1000, 2000, 0)]), (ConnState::OTH, "A".into()));
}

#[test]
fn single_packet_has_no_duration_or_bytes() {
    // Zeek leaves duration and bytes unset when duration is 0.
    let r = one(&handshake()[..1]);
    assert_eq!((r.duration_ns, r.orig_bytes, r.resp_bytes), (None, None, None));
    assert_eq!((r.orig_pkts, r.orig_ip_bytes), (1, 40));
}

#[test]
fn retransmission_gives_no_rtt_sample() {
    // Request sent at 30 ms, again at 330 ms (same range), ACK at 340 ms.
    // Karn: the ACK is ambiguous, no DATA-ACK sample for the originator.
    // Zeek: the second copy does not advance last_seq -> 'T'.
    let mut p = handshake();
    p.extend([
        tcp(30 * MS, CL, SV, "PA", 101, 501, 100),
        tcp(330 * MS, CL, SV, "PA", 101, 501, 100),
        tcp(340 * MS, SV, CL, "A", 501, 201, 0),
    ]);
    let r = one(&p);
    assert_eq!(r.history, "ShADTa");
    assert_eq!(r.rtt.data_ack_orig.count, 0);
    assert!(r.rtt.data_ack_orig_samples.is_empty());
    let d = r.transfer.unwrap();
    assert_eq!((d.orig.data_pkts, d.orig.distinct_data_pkts, d.orig.retransmissions), (2, 1, 1));
    // One train of two packets (retransmissions included).
    assert_eq!(d.orig.train_sizes.to_vec(), vec![2]);
    assert_eq!(r.orig_bytes, Some(100));
}

#[test]
fn reordering_is_not_a_retransmission() {
    // Second segment (201..301) overtakes the first (101..201). Our metric:
    // the late one fills a hole -> no retransmission. The ACK of 301 at
    // 50 ms ends exactly at the segment sent at 30 ms, but data below it
    // was sent later (31 ms): tcptrace's intervening transmission, no
    // sample; the one sent at 31 ms is covered cumulatively, no sample.
    // Zeek's history still says 'T' (it only compares with last_seq).
    let mut p = handshake();
    p.extend([
        tcp(30 * MS, CL, SV, "PA", 201, 501, 100),
        tcp(31 * MS, CL, SV, "PA", 101, 501, 100),
        tcp(50 * MS, SV, CL, "A", 501, 301, 0),
    ]);
    let r = one(&p);
    assert_eq!(r.history, "ShADTa");
    let d = r.transfer.as_ref().unwrap();
    assert_eq!(d.orig.retransmissions, 0);
    assert!(r.rtt.data_ack_orig_samples.is_empty());
    assert_eq!(r.orig_bytes, Some(200));
}

#[test]
fn midstream_start_flips_to_the_client() {
    // First packet: data from port 80 to an ephemeral port. Zeek's
    // WantConnection flips (80 is a likely server port): orig = client,
    // history starts with '^', the data is the responder's ('d').
    let p = [tcp(0, SV, CL, "PA", 5000, 9000, 100), tcp(10 * MS, CL, SV, "A", 9000, 5100, 0)];
    let r = one(&p);
    assert_eq!((r.orig_h, r.orig_p), (Addr::v4(C), 40000));
    assert_eq!(r.history, "^dA");
    assert_eq!((r.orig_pkts, r.resp_pkts), (1, 1));
    // Partial: resp_bytes from seq 5000..5100 (ISN taken as 4999).
    assert_eq!(r.resp_bytes, Some(100));
    assert_eq!(r.conn_state, ConnState::OTH);
}

#[test]
fn synack_first_then_ack_flips_by_history() {
    // Both ports ephemeral: no port flip. The SYN/ACK sender is first taken
    // as originator ("H"); the ACK that follows makes Zeek flip:
    // history becomes "^h" then 'A' from the new originator.
    let a = (C, 5000);
    let b = (S, 6000);
    let r = one(&[tcp(0, a, b, "SA", 700, 301, 0), tcp(MS, b, a, "A", 301, 701, 0)]);
    assert_eq!(r.history, "^hA");
    assert_eq!((r.orig_h, r.orig_p), (Addr::v4(S), 6000));
}

#[test]
fn seq_wraparound_counts_bytes() {
    // ISN 0xFFFFFF00: 512 bytes from 0xFFFFFF01 end at 0x101 after the
    // wrap. Size = 2^32 + 0x101 - 0xFFFFFF00 - 1 (SYN) = 512.
    let isn = 0xFFFF_FF00u32;
    let p = [
        tcp(0, CL, SV, "S", isn, 0, 0),
        tcp(10 * MS, SV, CL, "SA", 500, isn.wrapping_add(1), 0),
        tcp(20 * MS, CL, SV, "A", isn.wrapping_add(1), 501, 0),
        tcp(30 * MS, CL, SV, "PA", isn.wrapping_add(1), 501, 256),
        tcp(31 * MS, CL, SV, "PA", isn.wrapping_add(257), 501, 256),
        tcp(45 * MS, SV, CL, "A", 501, isn.wrapping_add(513), 0),
    ];
    let r = one(&p);
    assert_eq!(r.orig_bytes, Some(512));
    assert_eq!(r.history, "ShADa");
    // The wrapped ACK ends exactly at the second segment: 45 - 31 = 14 ms
    // (the first is covered cumulatively: no sample, as tcptrace).
    assert_eq!(r.rtt.data_ack_orig.count, 1);
    assert_eq!((r.rtt.data_ack_orig.min_ns, r.rtt.data_ack_orig.max_ns), (14 * MS, 14 * MS));
    assert_eq!(r.transfer.unwrap().orig.retransmissions, 0);
}

#[test]
fn content_gap_is_missed_bytes() {
    // 100 bytes sent but not captured (101..201), then 201..301 seen; the
    // server ACKs 301: Zeek reports a 100-byte gap ('G').
    let mut p = handshake();
    p.extend([tcp(30 * MS, CL, SV, "PA", 201, 501, 100), tcp(40 * MS, SV, CL, "A", 501, 301, 0)]);
    let r = one(&p);
    assert_eq!(r.missed_bytes, 100);
    assert_eq!(r.history, "ShADaG");
    assert_eq!(r.orig_bytes, Some(200));
}

#[test]
fn udp_and_icmp() {
    // DNS-like exchange: history Dd, SF, payload bytes each way.
    let c = (C, 40000);
    let dns = (S, 53);
    let r = one(&[udp(0, c, dns, 30), udp(5 * MS, dns, c, 100)]);
    assert_eq!((r.conn_state, r.history.as_str()), (ConnState::SF, "Dd"));
    assert_eq!((r.orig_bytes, r.resp_bytes, r.orig_ip_bytes, r.resp_ip_bytes), (Some(30), Some(100), 58, 128));
    // A reply alone, from port 53: flipped, responder-only -> SHR "^d".
    let r = one(&[udp(0, dns, c, 100)]);
    assert_eq!((r.conn_state, r.history.as_str(), r.orig_p), (ConnState::SHR, "^d", 40000));
    // Same 5-tuple 61 s later: udp_inactivity_timeout (60 s) split it.
    let v = run(&[udp(0, c, dns, 30), udp(61_000 * MS, c, dns, 30)]);
    assert_eq!(v.len(), 2);
    assert!(v.iter().all(|r| r.conn_state == ConnState::S0));

    // ICMP echo request/reply: one connection, "ports" 8 -> 0, OTH.
    let icmp = |ts, src: [u8; 4], dst: [u8; 4], ty: u16| PacketMeta {
        ts_ns: ts,
        src: Addr::v4(src),
        dst: Addr::v4(dst),
        ip_proto: ip_proto::ICMP,
        ip_len: 84,
        sport: ty,
        dport: 0,
        payload_len: 56,
        payload_captured: 56,
        ..Default::default()
    };
    let r = one(&[icmp(0, C, S, 8), icmp(MS, S, C, 0)]);
    assert_eq!((r.orig_p, r.resp_p, r.conn_state), (8, 0, ConnState::OTH));
    assert_eq!((r.orig_bytes, r.resp_bytes, r.orig_pkts, r.resp_pkts), (Some(56), Some(56), 1, 1));
    assert_eq!(r.history, "");
}

#[test]
fn eq_5_10_flights_and_theory() {
    // Thesis Eq. 5.10: 1, 2, 3, 4, 6, 9, 13, 19, 27, 38, 54, ...
    let w: Vec<u128> = (1..=11).map(flight).collect();
    assert_eq!(w, vec![1, 2, 3, 4, 6, 9, 13, 19, 27, 38, 54]);
    // Cumulative 1, 3, 6, 10, 16: r rounds, (r-1) RTTs.
    let rounds: Vec<i64> = [0u64, 1, 2, 3, 4, 6, 7, 10, 11, 16, 17].iter().map(|&n| theory_ns(n, 1)).collect();
    assert_eq!(rounds, vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5]);
}

#[test]
fn trains_warmups_theory_pacing() {
    // A request of 2 packets (30, 31 ms), B answers 5 packets (50..54 ms),
    // A sends 1 more (100 ms). ACKs: B at 41 (ack 301), A at 62 (ack 701)
    // and 64 (ack 1001), B at 110 (ack 401).
    let mut p = handshake();
    p.extend([
        tcp(30 * MS, CL, SV, "PA", 101, 501, 100),
        tcp(31 * MS, CL, SV, "PA", 201, 501, 100),
        tcp(41 * MS, SV, CL, "A", 501, 301, 0),
    ]);
    for i in 0..5u32 {
        p.push(tcp((50 + i as i64) * MS, SV, CL, "PA", 501 + 100 * i, 301, 100));
    }
    p.extend([
        tcp(62 * MS, CL, SV, "A", 301, 701, 0),
        tcp(64 * MS, CL, SV, "A", 301, 1001, 0),
        tcp(100 * MS, CL, SV, "PA", 301, 1001, 100),
        tcp(110 * MS, SV, CL, "A", 1001, 401, 0),
        tcp(120 * MS, CL, SV, "FA", 401, 1001, 0),
        tcp(121 * MS, SV, CL, "FA", 1001, 402, 0),
        tcp(130 * MS, CL, SV, "A", 402, 1002, 0),
    ]);
    let r = one(&p);
    assert_eq!(r.conn_state, ConnState::SF);
    // Samples, one per ACK for the segment it ends at: A's data 41-31 and
    // 110-100 = 10, 10 (the lone last segment's pure ACK is not late:
    // 10 ms = SYN -> SYN/ACK); B's data 62-51, 64-54 = 11, 10 (mean 10.5).
    assert_eq!(r.rtt.data_ack_orig.count, 2);
    assert_eq!(r.rtt.data_ack_resp.count, 2);
    assert_eq!(r.rtt.data_ack_orig.mean_ns, 10.0 * MS as f64);
    assert_eq!(r.rtt.data_ack_resp.mean_ns, 10.5 * MS as f64);
    assert_eq!(r.rtt.data_ack_orig.median_ns, 10 * MS);
    assert_eq!(r.rtt.data_ack_resp.median_ns, 10 * MS);
    let d = r.transfer.unwrap();
    // Trains: A[30,31] x2 (warm-up 0), B[50..54] x5 (50-31 = 19),
    // A[100] x1 (100-54 = 46).
    assert_eq!(d.orig.train_sizes.to_vec(), vec![2, 1]);
    assert_eq!(d.resp.train_sizes.to_vec(), vec![5]);
    assert_eq!(d.orig.warmups_ns.to_vec(), vec![0, 46 * MS]);
    assert_eq!(d.resp.warmups_ns.to_vec(), vec![19 * MS]);
    // Segments [30,31]->A 1, [31,54]->B 23, [54,100]->A 46.
    assert_eq!((d.orig.actual_ns, d.resp.actual_ns), (47 * MS, 23 * MS));
    assert_eq!(d.orig.actual_ns + d.resp.actual_ns, d.transfer_ns);
    // RTT_A-B = 10 + 10.5 ms = 20.5 ms.
    // A: 3 packets, flights 1+2 -> r = 2 -> 1 RTT; B: 5 -> 1+2+3 -> 2 RTTs.
    assert_eq!(d.orig.theory_ns, 20_500_000);
    assert_eq!(d.resp.theory_ns, 41_000_000);
    // Pacing = Actual - WarmUp - Theory (negative: the real exchange beat
    // the ideal slow start this RTT implies).
    assert_eq!(d.orig.pacing_ns, 47 * MS - 46 * MS - 20_500_000);
    assert_eq!(d.resp.pacing_ns, 23 * MS - 19 * MS - 41_000_000);
    assert!((d.resp.pacing_per_pkt_ns - (-37_000_000.0 / 5.0)).abs() < 1e-6);
    assert!(r.well_behaved);
}

/// Delayed ACKs (docs/analyzer.md, "DATA-ACK RTT"): a 1460-byte MSS
/// server answers 3 segments; the client ACKs the first two at once and
/// the lone third after its 40 ms timer; its next request carries the ACK
/// of the server's last reply segment. Handshake components: 10 ms each.
#[test]
fn delayed_acks_are_flagged_and_left_out_of_the_statistics() {
    let mut p = handshake();
    p.extend([
        tcp(30 * MS, CL, SV, "PA", 101, 501, 100),
        tcp(40 * MS, SV, CL, "A", 501, 201, 0), // request: 10 ms, at once
        tcp(45 * MS, SV, CL, "A", 501, 201, 1460),
        tcp(46 * MS, SV, CL, "A", 1961, 201, 1460),
        tcp(47 * MS, SV, CL, "PA", 3421, 201, 1460),
        tcp(56 * MS, CL, SV, "A", 201, 3421, 0), // two full segments: at once, 10 ms
        tcp(97 * MS, CL, SV, "A", 201, 4881, 0), // the lone third: 50 ms, 40 late
        tcp(100 * MS, SV, CL, "PA", 4881, 201, 300),
        tcp(130 * MS, CL, SV, "PA", 201, 5181, 100), // ACK with the next request: 30 ms, held
        tcp(140 * MS, SV, CL, "A", 5181, 301, 0),    // 10 ms
    ]);
    let r = one(&p);
    let sample = |ms: i64, delayed_ack: bool| RttSample { rtt_ns: ms * MS, delayed_ack };
    assert_eq!(r.rtt.data_ack_orig_samples.to_vec(), vec![sample(10, false), sample(10, false)]);
    assert_eq!(r.rtt.data_ack_resp_samples.to_vec(), vec![sample(10, false), sample(50, true), sample(30, true)]);
    let s = &r.rtt.data_ack_resp;
    assert_eq!((s.count, s.min_ns, s.median_ns, s.max_ns, s.mean_ns), (1, 10 * MS, 10 * MS, 10 * MS, 10.0 * MS as f64));

    // A lone segment ACKed by a pure ACK, on a path of `h` ms each way of
    // the monitor: flagged only when later than the handshake's `h` by more
    // than max(1 ms, h / 4).
    const US: i64 = 1_000;
    for (h, rtt_us, delayed_ack) in
        [(10, 11_000, false), (10, 12_500, false), (10, 12_600, true), (20, 25_000, false), (20, 25_100, true)]
    {
        let r = one(&[
            tcp(0, CL, SV, "S", 100, 0, 0),
            tcp(h * MS, SV, CL, "SA", 500, 101, 0),
            tcp(2 * h * MS, CL, SV, "A", 101, 501, 0),
            tcp(100 * MS, CL, SV, "PA", 101, 501, 100),
            tcp(100 * MS + rtt_us * US, SV, CL, "A", 501, 201, 0),
        ]);
        let want = RttSample { rtt_ns: rtt_us * US, delayed_ack };
        assert_eq!(r.rtt.data_ack_orig_samples.to_vec(), vec![want], "path {h} ms");
        assert_eq!(r.rtt.data_ack_orig.count, u32::from(!delayed_ack));
    }
}

/// tcptrace's rules: one sample per ACK, for the segment ending exactly at
/// it; none once data below that segment was retransmitted after it.
#[test]
fn one_sample_per_ack_and_none_across_a_retransmission() {
    let mut p = handshake();
    p.extend([
        tcp(30 * MS, CL, SV, "A", 101, 501, 1000),
        tcp(31 * MS, CL, SV, "A", 1101, 501, 1000),
        tcp(32 * MS, CL, SV, "A", 2101, 501, 1000),
        tcp(41 * MS, SV, CL, "A", 501, 2101, 0),    // ends at the second: 10 ms
        tcp(60 * MS, SV, CL, "A", 501, 2101, 0),    // duplicate: nothing new
        tcp(70 * MS, CL, SV, "A", 2101, 501, 1000), // third resent
        tcp(71 * MS, CL, SV, "A", 3101, 501, 1000), // fourth, after the resend
        tcp(72 * MS, CL, SV, "A", 4101, 501, 1000), // fifth
        tcp(80 * MS, SV, CL, "A", 501, 4101, 0),    // ends at the fourth: sent after the resend, 9 ms
        tcp(83 * MS, SV, CL, "A", 501, 5101, 0),    // fifth: 11 ms
    ]);
    let r = one(&p);
    let v: Vec<i64> = r.rtt.data_ack_orig_samples.iter().map(|s| s.rtt_ns).collect();
    assert_eq!(v, vec![10 * MS, 9 * MS, 11 * MS]);
    assert_eq!(r.transfer.unwrap().orig.retransmissions, 1);
}

#[test]
fn unanswered_syns_split_by_attempt_timer() {
    // tcp_attempt_delay = 5 s: the SYN retransmitted at 6 s finds the first
    // attempt gone, so Zeek logs two S0 connections.
    let v = run(&[tcp(0, CL, SV, "S", 100, 0, 0), tcp(6_000 * MS, CL, SV, "S", 100, 0, 0)]);
    assert_eq!(v.len(), 2);
    // Retransmitted at 3 s: still one connection with two SYNs.
    let r = one(&[tcp(0, CL, SV, "S", 100, 0, 0), tcp(3_000 * MS, CL, SV, "S", 100, 0, 0)]);
    assert_eq!((r.history.as_str(), r.orig_pkts, r.duration_ns), ("S", 2, Some(3_000 * MS)));
}

/// The caller's tag belongs to one connection: kept across its packets
/// (both directions), fresh for another 5-tuple and for a new connection
/// that replaces a finished one on the same 5-tuple.
#[test]
fn tag_lives_with_its_connection() {
    let mut t = Tracker::new(TrackerConfig::default());
    let mut out = Vec::new();
    let seen = t.process(&udp(0, (C, 1234), (S, 53), 10), &mut out);
    assert!(seen.from_orig);
    assert_eq!(*seen.tag, Seen::NEW);
    *seen.tag = 7;
    let seen = t.process(&udp(MS, (S, 53), (C, 1234), 10), &mut out);
    assert!(!seen.from_orig);
    assert_eq!(*seen.tag, 7);
    let seen = t.process(&udp(2 * MS, (C, 1235), (S, 53), 10), &mut out);
    assert_eq!(*seen.tag, Seen::NEW);
    // Past UDP inactivity (60 s) the 5-tuple starts a new connection.
    let seen = t.process(&udp(100_000 * MS, (C, 1234), (S, 53), 10), &mut out);
    assert_eq!(*seen.tag, Seen::NEW);
    assert_eq!(out.len(), 1);
}

#[test]
fn advance_expires_only_due_connections() {
    let mut t = Tracker::new(TrackerConfig::default());
    let mut out = Vec::new();
    t.process(&tcp(0, CL, SV, "S", 100, 0, 0), &mut out);
    t.process(&udp(1_000 * MS, (C, 1234), (S, 53), 10), &mut out);
    assert!(out.is_empty());
    t.advance(4_999 * MS, &mut out);
    assert!(out.is_empty());
    t.advance(5_000 * MS, &mut out); // attempt timer of the SYN
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ip_proto, ip_proto::TCP);
    t.advance(61_000 * MS, &mut out); // UDP inactivity (1 s + 60 s)
    assert_eq!(out.len(), 2);
    assert_eq!(t.active(), 0);
}

#[test]
fn closed_connection_then_new_syn_is_reuse() {
    // After a full close, a new SYN with another ISN starts a new
    // connection on the same 5-tuple (IsReuse), even within 5 s.
    let mut p = handshake();
    p.extend([
        tcp(30 * MS, CL, SV, "FA", 101, 501, 0),
        tcp(31 * MS, SV, CL, "FA", 501, 102, 0),
        tcp(32 * MS, CL, SV, "A", 102, 502, 0),
        tcp(40 * MS, CL, SV, "S", 9000, 0, 0),
    ]);
    let v = run(&p);
    assert_eq!(v.len(), 2);
    assert_eq!((v[0].conn_state, v[1].conn_state), (ConnState::SF, ConnState::S0));
}

#[test]
fn shard_is_direction_independent_and_uid_deterministic() {
    let a = tcp(0, CL, SV, "S", 1, 0, 0);
    let b = tcp(0, SV, CL, "SA", 1, 2, 0);
    for n in [1, 2, 3, 7, 16] {
        assert_eq!(Tracker::shard_of(&a, n), Tracker::shard_of(&b, n));
    }
    // ICMP echo request and reply: type/code differ by direction.
    let (mut q, mut r) = (udp(0, (C, 0), (S, 0), 8), udp(0, (S, 0), (C, 0), 8));
    (q.ip_proto, q.sport, q.dport) = (ip_proto::ICMP, 8, 0);
    (r.ip_proto, r.sport, r.dport) = (ip_proto::ICMP, 0, 0);
    for n in [2, 3, 7, 16] {
        assert_eq!(Tracker::shard_of(&q, n), Tracker::shard_of(&r, n));
    }
    // Connections spread evenly: 4,000 client ports over 4 shards.
    let mut per_shard = [0; 4];
    for port in 0..4000u16 {
        let mut p = tcp(0, CL, SV, "S", 1, 0, 0);
        p.sport = 20_000 + port;
        per_shard[Tracker::shard_of(&p, 4)] += 1;
    }
    assert!(per_shard.iter().all(|&k| (850..1150).contains(&k)), "{per_shard:?}");
    let u1 = one(&handshake()).uid;
    let u2 = one(&handshake()).uid;
    assert_eq!(u1, u2);
    assert!(u1.as_str().starts_with('C') && u1.as_str().len() == 18);
}

#[test]
fn load_bins_change_with_the_bin() {
    // 300 s bins: packets at 299 s and 301 s fall in bins 0 and 1.
    let v = one(&[udp(299_000 * MS, (C, 1), (S, 2), 10), udp(301_000 * MS, (S, 2), (C, 1), 20)]);
    assert_eq!(v.load_bins.len(), 2);
    assert_eq!((v.load_bins[0].bin, v.load_bins[0].orig_ip_bytes, v.load_bins[0].resp_ip_bytes), (0, 38, 0));
    assert_eq!((v.load_bins[1].bin, v.load_bins[1].orig_pkts, v.load_bins[1].resp_ip_bytes), (1, 0, 48));
}

/// Connection timers at the top of the i64 range saturate instead of
/// overflowing (the debug build checks every addition): a connection a
/// few ns below i64::MAX lives until the end of the input.
#[test]
fn timers_near_the_end_of_time_saturate() {
    let top = i64::MAX - 3 * MS;
    let mut t = Tracker::new(TrackerConfig::default());
    let mut out = Vec::new();
    for p in [
        tcp(top, CL, SV, "S", 100, 0, 0),
        tcp(top + MS, SV, CL, "SA", 500, 101, 0),
        tcp(top + 2 * MS, CL, SV, "FA", 101, 501, 0),
        udp(top + 2 * MS, (C, 5000), (S, 53), 10),
    ] {
        t.process(&p, &mut out);
        t.advance(p.ts_ns, &mut out);
    }
    assert!(out.is_empty());
    t.finish(&mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].duration_ns, Some(2 * MS));
    assert_eq!(out[0].rtt.syn_synack_ns, Some(MS));
}

/// A SYN that reuses a 5-tuple at the very time its previous connection
/// started gets a uid of its own; the first keeps the uid it always had.
#[test]
fn reuse_within_one_timestamp_keeps_uids_distinct() {
    let v = run(&[
        tcp(100 * MS, CL, SV, "S", 1, 0, 0),
        tcp(100 * MS, CL, SV, "S", 9000, 0, 0),
        tcp(100 * MS, CL, SV, "S", 20000, 0, 0),
    ]);
    assert_eq!(v.len(), 3);
    let alone = run(&[tcp(100 * MS, CL, SV, "S", 1, 0, 0)]);
    let mut uids: Vec<_> = v.iter().map(|r| r.uid).collect();
    assert!(uids.contains(&alone[0].uid));
    uids.sort();
    uids.dedup();
    assert_eq!(uids.len(), 3);
}

/// Memory follows the open connections, not the trace's length: 100,000
/// DNS-like exchanges at 50 per second over 2,000 s of trace time (about
/// 3,000 open at once, each held 60 s by the UDP timeout) leave the timer
/// wheel no larger at the end than after 200 s, and its registrations
/// within 2 x active + 1024 after every advance. (The wheel used to keep
/// the capacity of every second it had drained: ~5x more by 1,024 s.)
#[test]
fn timer_memory_is_bounded_by_open_connections() {
    let mut t = Tracker::new(TrackerConfig::default());
    let mut out = Vec::new();
    let (mut at_200, mut peak_after) = (0, 0);
    for i in 0..100_000u32 {
        let ts = i64::from(i) * 20 * MS;
        let client = ([10, 1, (i >> 8) as u8, i as u8], 1024 + (i % 60_000) as u16);
        t.process(&udp(ts, client, (S, 53), 40), &mut out);
        t.process(&udp(ts + MS, (S, 53), client, 120), &mut out);
        if i % 50 == 49 {
            t.advance(ts + 2 * MS, &mut out);
            assert!(t.timer_registrations() <= 2 * t.active() + 1024, "{} for {}", t.timer_registrations(), t.active());
            let sec = (ts + 2 * MS) / (1000 * MS);
            if sec == 200 {
                at_200 = t.timer_capacity();
            } else if sec > 200 {
                peak_after = peak_after.max(t.timer_capacity());
            }
            out.clear();
        }
    }
    assert!(t.active() > 2_500 && t.active() < 3_500, "{}", t.active());
    assert!(at_200 > 0 && peak_after <= at_200 * 13 / 10, "at 200 s {at_200}, later up to {peak_after}");
}
