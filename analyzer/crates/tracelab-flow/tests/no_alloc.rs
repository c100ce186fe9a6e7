//! The tracker allocates nothing per packet once a connection's state has
//! grown to its bounds (RTT samples at `max_rtt_samples_per_conn`, the
//! outstanding-segment queue at the flight size): counted with an allocator
//! that tallies this thread's allocations. Allocations are per connection
//! (its history, its TCP state unless a finished one is reused), never per
//! packet, so the profile's memory follows the active connections.

use tracelab_decode::{ip_proto, tcp_flags as F, Addr, PacketMeta};
use tracelab_flow::{Tracker, TrackerConfig};

#[path = "../../../test-support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

mod packets;
use packets::tcp4;

const US: i64 = 1_000;
const CLIENT: ([u8; 4], u16) = ([10, 0, 0, 1], 40000);
const SERVER: ([u8; 4], u16) = ([10, 0, 0, 2], 80);
const ISN_C: u32 = 1_000;
const ISN_S: u32 = 9_000;
const SEGMENT: u32 = 100;

fn tcp(ts: i64, from_client: bool, flags: u8, seq: u32, ack: u32, len: u32) -> PacketMeta {
    let (src, dst) = if from_client { (CLIENT, SERVER) } else { (SERVER, CLIENT) };
    tcp4(ts, src, dst, flags, seq, ack, len)
}

/// Round `i` of a bulk transfer: a client segment and the server's ACK of
/// it, 10 µs apart (one train, one load bin, no timer due).
fn round(i: u32) -> [PacketMeta; 2] {
    let ts = 1_000_000 * US + i64::from(i) * 20 * US;
    let seq = ISN_C + 1 + i * SEGMENT;
    [
        tcp(ts, true, F::ACK | F::PSH, seq, ISN_S + 1, SEGMENT),
        tcp(ts + 10 * US, false, F::ACK, ISN_S + 1, seq + SEGMENT, 0),
    ]
}

#[test]
fn established_tcp_packets_allocate_nothing() {
    let cfg = TrackerConfig::default();
    // Past the cap, RTT samples stop growing their list.
    let warm_up = cfg.max_rtt_samples_per_conn as u32 + 100;
    let measured = 10_000u32;
    let mut tracker = Tracker::new(cfg);
    let mut out = Vec::new();
    let start = 999_000 * US;
    for p in [
        tcp(start, true, F::SYN, ISN_C, 0, 0),
        tcp(start + 100 * US, false, F::SYN | F::ACK, ISN_S, ISN_C + 1, 0),
        tcp(start + 200 * US, true, F::ACK, ISN_C + 1, ISN_S + 1, 0),
    ] {
        tracker.process(&p, &mut out);
    }
    for i in 0..warm_up {
        for p in round(i) {
            tracker.process(&p, &mut out);
        }
    }
    // Built before counting: the packets are the caller's.
    let packets: Vec<PacketMeta> = (warm_up..warm_up + measured).flat_map(round).collect();
    let before = allocations();
    for p in &packets {
        tracker.process(p, &mut out);
    }
    let during = allocations() - before;
    assert!(out.is_empty(), "the connection stayed open");
    assert_eq!(during, 0, "allocations during {} established packets", packets.len());
    tracker.finish(&mut out);
    let c = &out[0];
    assert_eq!((c.orig_pkts, c.resp_pkts), (2 + u64::from(warm_up + measured), 1 + u64::from(warm_up + measured)));
}

#[test]
fn datagrams_of_a_known_flow_allocate_nothing() {
    let mut tracker = Tracker::new(TrackerConfig::default());
    let mut out = Vec::new();
    let udp = |i: i64, from_client: bool| {
        let (src, dst) = if from_client {
            (([10, 0, 0, 1], 5353), ([10, 0, 0, 2], 53))
        } else {
            (([10, 0, 0, 2], 53), ([10, 0, 0, 1], 5353))
        };
        PacketMeta {
            ts_ns: 1_000_000 * US + i * 10 * US,
            src: Addr::v4(src.0),
            dst: Addr::v4(dst.0),
            ip_proto: ip_proto::UDP,
            ip_len: 28 + 40,
            sport: src.1,
            dport: dst.1,
            payload_len: 40,
            payload_captured: 40,
            ..Default::default()
        }
    };
    // The first packets each way: the connection, its history, its
    // service clues.
    for i in 0..20 {
        tracker.process(&udp(i, i % 2 == 0), &mut out);
    }
    let packets: Vec<PacketMeta> = (20..20_020).map(|i| udp(i, i % 2 == 0)).collect();
    let before = allocations();
    for p in &packets {
        tracker.process(p, &mut out);
    }
    assert_eq!(allocations() - before, 0, "allocations during {} datagrams", packets.len());
    assert!(out.is_empty());
}
