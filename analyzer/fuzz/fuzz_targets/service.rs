//! The service parsers (tracelab-flow/src/service.rs) on arbitrary payload
//! heads, lengths and ports: they must return, not panic; clues never
//! depend on bytes beyond the head the decoder keeps or beyond the payload
//! length; and `confirm` names a service only from clues.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelab_decode::{ip_proto, PAYLOAD_HEAD};
use tracelab_flow::service::{clues, confirm};

fuzz_target!(|input: &[u8]| {
    // Bytes 0-5: protocol selector, source and destination port; 6-7: how
    // far the payload's length reaches beyond the bytes given.
    let [sel, s0, s1, d0, d1, e0, e1, payload @ ..] = input else { return };
    let proto = [ip_proto::TCP, ip_proto::UDP, ip_proto::ICMP][usize::from(*sel) % 3];
    // Well-known ports often, so that the port-gated parsers run.
    let port = |a: u8, b: u8| match a % 4 {
        0 => [53, 123, 67, 5060, 137, 5353][usize::from(b) % 6],
        _ => u16::from_be_bytes([a, b]),
    };
    let (sport, dport) = (port(*s0, *s1), port(*d0, *d1));
    let len = (payload.len() as u32).saturating_add(u32::from(u16::from_be_bytes([*e0, *e1])) % 2048);
    let c = clues(proto, sport, dport, payload, len);
    let head = &payload[..payload.len().min(PAYLOAD_HEAD)];
    assert_eq!(c, clues(proto, sport, dport, head, len), "bytes beyond the head were read");
    if proto == ip_proto::ICMP {
        assert_eq!(c, 0);
    }
    assert_eq!(confirm(0, 0), None);
    let _ = (confirm(c, 0), confirm(0, c), confirm(c, c));
});
