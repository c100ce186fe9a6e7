//! Rules the mutation run found untested (docs/mutants.md): each test pins
//! one of them with a hand-worked case, from Zeek's rules
//! (TCPSessionAdapter.cc, TCP_Reassembler.cc, base/protocols/conn) or the
//! crate's own contract.

use tracelab_decode::{ip_proto, tcp_flags as F, Addr, PacketMeta, TcpMeta};
use tracelab_flow::service::{clue, clues, confirm};
use tracelab_flow::{ConnRecord, List, Service, Tracker, TrackerConfig};

#[path = "../../../test-support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

const MS: i64 = 1_000_000;
const SEC: i64 = 1_000 * MS;

/// A TCP/IPv4 packet (20-byte headers) between 10.0.0.1:`cport` (client)
/// and 10.0.0.2:`sport` (server); `from_client` gives its direction.
struct Pkt {
    ts: i64,
    from_client: bool,
    flags: u8,
    seq: u32,
    ack: u32,
    len: u32,
    window: u16,
}

fn packets(cport: u16, sport: u16, pkts: &[Pkt]) -> Vec<ConnRecord> {
    packets_cfg(TrackerConfig::default(), cport, sport, pkts)
}

fn packets_cfg(cfg: TrackerConfig, cport: u16, sport: u16, pkts: &[Pkt]) -> Vec<ConnRecord> {
    let (c, s) = ((Addr::v4([10, 0, 0, 1]), cport), (Addr::v4([10, 0, 0, 2]), sport));
    let mut t = Tracker::new(cfg);
    let mut out = Vec::new();
    for p in pkts {
        let (src, dst) = if p.from_client { (c, s) } else { (s, c) };
        let meta = PacketMeta {
            ts_ns: p.ts,
            wire_len: 54 + p.len,
            cap_len: 54 + p.len,
            src: src.0,
            dst: dst.0,
            ip_proto: ip_proto::TCP,
            ip_len: 40 + p.len,
            sport: src.1,
            dport: dst.1,
            payload_len: p.len,
            payload_captured: p.len,
            tcp: TcpMeta {
                flags: p.flags,
                seq: p.seq,
                ack: p.ack,
                window: p.window,
                header_len: 20,
                ..Default::default()
            },
            ..Default::default()
        };
        t.process(&meta, &mut out);
    }
    t.finish(&mut out);
    out
}

fn client(ts: i64, flags: u8, seq: u32, ack: u32, len: u32) -> Pkt {
    Pkt { ts, from_client: true, flags, seq, ack, len, window: 1000 }
}

fn server(ts: i64, flags: u8, seq: u32, ack: u32, len: u32) -> Pkt {
    Pkt { ts, from_client: false, flags, seq, ack, len, window: 1000 }
}

/// Client ISN 100, server ISN 500: S, SA, A at 0, 10 and 20 ms.
fn handshake() -> Vec<Pkt> {
    vec![
        client(0, F::SYN, 100, 0, 0),
        server(10 * MS, F::SYN | F::ACK, 500, 101, 0),
        client(20 * MS, F::ACK, 101, 501, 0),
    ]
}

/// Zeek's history letters 'W' and 'w': a zero window advertised by the
/// originator and by the responder (each once: the letters repeat only at
/// 10, 100, ... occurrences). The server's pure ACK is also its first 'a'.
/// Mutant: `Tcp::zero_window` -> ().
#[test]
fn zero_windows_are_history_w() {
    let mut p = handshake();
    p.push(Pkt { window: 0, ..client(30 * MS, F::ACK, 101, 501, 0) });
    p.push(Pkt { window: 0, ..server(40 * MS, F::ACK, 501, 101, 0) });
    let v = packets(40_000, 80, &p);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].history, "ShAWaw");
}

/// A connection still in its handshake keeps the UDP inactivity timeout
/// (60 s) that the TCP adapter starts with; only an endpoint leaving the
/// handshake switches it to tcp_inactivity_timeout (300 s). With the
/// attempt timer moved past both (tcp_attempt_delay 400 s), an unanswered
/// SYN retransmitted 61 s later finds the first attempt expired by
/// inactivity (two S0 connections); 59 s later it is the same one. Mutant:
/// `&&` -> `||` in `Tcp::set_state`, which switched to 300 s on the first
/// SYN.
#[test]
fn an_unanswered_syn_expires_after_the_udp_timeout() {
    let cfg = TrackerConfig { tcp_attempt_delay_ns: 400 * SEC, ..TrackerConfig::default() };
    let again = |gap: i64| {
        packets_cfg(cfg.clone(), 40_000, 80, &[client(0, F::SYN, 100, 0, 0), client(gap, F::SYN, 100, 0, 0)])
    };
    let v = again(61 * SEC);
    assert_eq!(v.iter().map(|r| (r.history.as_str(), r.orig_pkts)).collect::<Vec<_>>(), [("S", 1), ("S", 1)]);
    let v = again(59 * SEC);
    assert_eq!(v.iter().map(|r| (r.history.as_str(), r.orig_pkts)).collect::<Vec<_>>(), [("S", 2)]);
}

/// base/protocols/conn/inactivity.zeek: the 1-hour timeout of ports 21,
/// 22, 23 and 513 applies to connections to those ports only. A 400 s
/// silence after the handshake ends a connection to port 80 (300 s
/// tcp_inactivity_timeout: the late ACK starts a second one) and not one
/// to port 22. Mutant: `==` -> `!=` in the port lookup of `Conn::packet`,
/// which gave port 80 the timeout of port 21.
#[test]
fn per_port_inactivity_applies_to_its_port_only() {
    let quiet = |port: u16| {
        let mut p = handshake();
        p.push(client(20 * MS + 400 * SEC, F::ACK, 101, 501, 0));
        packets(40_000, port, &p).len()
    };
    assert_eq!(quiet(80), 2);
    assert_eq!(quiet(22), 1);
}

/// TCP_Reassembler: with tcp_max_above_hole_without_any_acks = 16384,
/// once more than 16384 bytes wait above a hole and the peer has acked
/// none of the sender's data, Zeek drops them and stops reassembling that
/// endpoint, so the hole is never reported. The client's first 1000 bytes
/// (seq 101..1101) are missing; `above` bytes follow; the server then acks
/// everything. At 16384 bytes the hole is a 1000-byte gap ('G'); at 16385
/// nothing is missed. Mutants: `undelivered` -> 0 and `>` -> `==` in
/// `Tcp::data_sent`.
#[test]
fn bytes_above_a_hole_without_acks_stop_reassembly_past_16384() {
    let missed = |above: u32| {
        let mut p = handshake();
        let first = above / 2;
        p.push(client(30 * MS, F::ACK, 1101, 501, first));
        p.push(client(31 * MS, F::ACK, 1101 + first, 501, above - first));
        p.push(server(40 * MS, F::ACK, 501, 1101 + above, 0));
        let v = packets(40_000, 80, &p);
        assert_eq!(v.len(), 1, "{v:#?}");
        (v[0].missed_bytes, v[0].history.contains('G'))
    };
    assert_eq!(missed(16_384), (1000, true));
    assert_eq!(missed(16_385), (0, false));
    assert_eq!(missed(100), (1000, true));
}

/// A SIP request and its response confirm the service `sip` (the clue bit
/// must be a bit: with `SIP = 1 >> 17`, i.e. 0, nothing is confirmed).
/// Mutant: `<<` -> `>>` in `clue::SIP`.
#[test]
fn sip_request_and_response_confirm_sip() {
    let (u, len) = (ip_proto::UDP, 300);
    let orig = clues(u, 5060, 5060, b"INVITE sip:bob@example.com SIP/2.0\r\n", len);
    let resp = clues(u, 5060, 5060, b"SIP/2.0 200 OK\r\n", len);
    assert_ne!(clue::SIP, 0);
    assert_eq!((orig, resp), (clue::SIP, clue::SIP));
    assert_eq!(confirm(orig, resp), Some(Service::Sip));
    assert_eq!(confirm(0, 0), None);
}

/// `for x in &list` visits the items in order, inline and spilled to the
/// heap alike. Mutant: `IntoIterator for &List` -> an empty iterator.
#[test]
fn list_iterates_by_reference() {
    let mut l: List<u32, 2> = List::default();
    for v in [7, 8] {
        l.push(v);
    }
    assert_eq!((&l).into_iter().copied().collect::<Vec<_>>(), [7, 8]);
    l.push(9);
    let mut seen = Vec::new();
    for v in &l {
        seen.push(*v);
    }
    assert_eq!(seen, [7, 8, 9]);
}

/// The timer wheel's count of registrations is exact and bounded by the
/// open connections. Five one-packet UDP flows register once each at
/// their inactivity deadline (60 s); an advance past it ends them and
/// leaves no registration. Then 6,000 TCP connections one after the other
/// on one 5-tuple, 3 ms apart (S, SA, A, F, FA, A): each new SYN reuses the
/// closed 5-tuple, which ends the previous connection in `process` and
/// leaves its registration stale until its second comes, so stale
/// registrations pile up (333 a second) past `2 * active() + 1024` and
/// `advance` must compact: after every advance the open connection holds
/// its live registration (at least `active()`), at most
/// `2 * active() + 1024` are kept, and some advance drops the count.
/// The wheel has room for what it holds. Mutants: `Wheel::compact` -> (),
/// `+=` -> `*=` or `-=` on its count, `-=` -> `+=` on the count in
/// `Wheel::take_due`, `timer_registrations` and `timer_capacity` -> 0 or 1.
#[test]
fn timer_registrations_are_counted_exactly_and_compacted() {
    let mut t = Tracker::new(TrackerConfig::default());
    let mut out = Vec::new();
    for i in 0..5u8 {
        let p = PacketMeta {
            ts_ns: i64::from(i) * MS,
            src: Addr::v4([10, 0, 0, 1]),
            dst: Addr::v4([10, 0, 0, 2 + i]),
            ip_proto: ip_proto::UDP,
            ip_len: 28,
            sport: 5000,
            dport: 53,
            ..Default::default()
        };
        t.process(&p, &mut out);
    }
    assert_eq!((t.active(), t.timer_registrations()), (5, 5));
    t.advance(30 * SEC, &mut out);
    assert_eq!((t.active(), t.timer_registrations()), (5, 5));
    t.advance(61 * SEC, &mut out);
    assert_eq!((t.active(), t.timer_registrations(), out.len()), (0, 0, 5));

    let mut t = Tracker::new(TrackerConfig::default());
    let mut out = Vec::new();
    let (mut second, mut compacted, mut before) = (0, false, 0);
    for i in 0..6_000u32 {
        let (ts, isn) = (i64::from(i) * 3 * MS, i * 100_000);
        for (k, (from_client, flags, seq, ack)) in [
            (true, F::SYN, isn, 0),
            (false, F::SYN | F::ACK, 500, isn + 1),
            (true, F::ACK, isn + 1, 501),
            (true, F::FIN | F::ACK, isn + 1, 501),
            (false, F::FIN | F::ACK, 501, isn + 2),
            (true, F::ACK, isn + 2, 502),
        ]
        .into_iter()
        .enumerate()
        {
            let at = ts + k as i64 * MS / 2;
            if at >= (second + 1) * SEC {
                second += 1;
                t.advance(second * SEC, &mut out);
                let (n, active) = (t.timer_registrations(), t.active());
                assert!(n >= active && n <= 2 * active + 1024, "at {second} s: {n} registrations, {active} open");
                assert!(t.timer_capacity() >= n, "room for {} of {n} registrations", t.timer_capacity());
                compacted |= n < before;
                before = n;
            }
            t.process(&bare(at, 1000, from_client, flags, seq, ack), &mut out);
        }
    }
    assert!(compacted, "no advance compacted the wheel");
    t.finish(&mut out);
    assert_eq!(out.len(), 6_000);
    // The server's FIN acks the client's: 'f', no pure 'a'.
    assert!(out.iter().all(|c| c.history == "ShAFf"), "{:?}", out[0].history);
}

/// Allocations made while `new` connections open (one SYN each), after
/// `finished` connections have opened, closed and ended.
fn allocations_of_syns_after(finished: u16, new: u16) -> usize {
    let mut t = Tracker::new(TrackerConfig::default());
    let mut out = Vec::new();
    let mut packets: Vec<PacketMeta> = (0..finished)
        .flat_map(|i| {
            let ts = i64::from(i) * 1_000;
            [
                bare(ts, 1024 + i, true, F::SYN, 100, 0),
                bare(ts + 10 * MS, 1024 + i, false, F::SYN | F::ACK, 500, 101),
                bare(ts + 20 * MS, 1024 + i, true, F::FIN | F::ACK, 101, 501),
                bare(ts + 30 * MS, 1024 + i, false, F::FIN | F::ACK, 501, 102),
                bare(ts + 40 * MS, 1024 + i, true, F::ACK, 102, 502),
            ]
        })
        .collect();
    packets.sort_by_key(|p| p.ts_ns);
    for p in &packets {
        t.process(p, &mut out);
    }
    t.advance(30 * SEC, &mut out);
    assert_eq!((t.active(), out.len()), (0, usize::from(finished)));
    let syns: Vec<PacketMeta> = (0..new).map(|i| bare(31 * SEC, 30_000 + i, true, F::SYN, 100, 0)).collect();
    let before = allocations();
    for p in &syns {
        t.process(p, &mut out);
    }
    allocations() - before
}

/// A connection that ends gives its TCP state to the next one that opens
/// (no allocation of it then), and at most 1,024 are kept. Mutants:
/// `Spares::give` -> (), and `<` -> `==`, `>` or `<=` in its bound.
#[test]
fn ended_tcp_states_are_reused_up_to_1024() {
    let fresh = allocations_of_syns_after(0, 1);
    let reused = allocations_of_syns_after(1, 1);
    assert!(reused < fresh, "a SYN after an ended connection: {reused} allocations, on a fresh tracker {fresh}");
    assert_eq!(allocations_of_syns_after(1025, 1025), allocations_of_syns_after(1024, 1025));
    assert!(allocations_of_syns_after(1024, 1025) > allocations_of_syns_after(1024, 1024));
}

/// A TCP packet between 10.0.0.1:`cport` and 10.0.0.2:80, without payload.
fn bare(ts: i64, cport: u16, from_client: bool, flags: u8, seq: u32, ack: u32) -> PacketMeta {
    let (c, s) = ((Addr::v4([10, 0, 0, 1]), cport), (Addr::v4([10, 0, 0, 2]), 80));
    let (src, dst) = if from_client { (c, s) } else { (s, c) };
    PacketMeta {
        ts_ns: ts,
        wire_len: 54,
        cap_len: 54,
        src: src.0,
        dst: dst.0,
        ip_proto: ip_proto::TCP,
        ip_len: 40,
        sport: src.1,
        dport: dst.1,
        tcp: TcpMeta { flags, seq, ack, window: 1000, header_len: 20, ..Default::default() },
        ..Default::default()
    }
}

/// Connections spread evenly over the shards by their addresses too, not
/// only their ports: ICMP echoes (no ports) from 4,000 IPv4 hosts to one
/// server over 4 shards. An IPv4 address is IPv4-mapped, so its bits are all in
/// one half of the 128-bit word that `shard_of` folds. Mutants: `^` -> `&`
/// and `>>` -> `<<` in the fold, which left every IPv4 host on one shard.
#[test]
fn shards_spread_ipv4_hosts_without_ports() {
    let mut per_shard = [0; 4];
    for i in 0..4000u32 {
        let [_, _, a, b] = i.to_be_bytes();
        let p = PacketMeta {
            src: Addr::v4([10, 1, a, b]),
            dst: Addr::v4([192, 168, 0, 1]),
            ip_proto: ip_proto::ICMP,
            ip_len: 84,
            sport: 8,
            ..Default::default()
        };
        per_shard[Tracker::shard_of(&p, 4)] += 1;
    }
    assert!(per_shard.iter().all(|&k| (850..1150).contains(&k)), "{per_shard:?}");
}
