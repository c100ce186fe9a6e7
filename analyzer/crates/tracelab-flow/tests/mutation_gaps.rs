//! Rules the mutation run found untested (docs/mutants.md): each test pins
//! one of them with a hand-worked case, from Zeek's rules
//! (TCPSessionAdapter.cc, TCP_Reassembler.cc, base/protocols/conn) or the
//! crate's own contract.

use tracelab_decode::{ip_proto, tcp_flags as F, Addr, PacketMeta, TcpMeta};
use tracelab_flow::service::{clue, clues, confirm};
use tracelab_flow::{ConnRecord, List, Service, Tracker, TrackerConfig};

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
