//! Hand-built packets for the integration tests that feed the tracker
//! directly (no pcap): what the decoder gives for a plain TCP/IPv4 packet.

use tracelab_decode::{ip_proto, Addr, PacketMeta, TcpMeta};

/// An endpoint: IPv4 address and port.
pub type Endpoint = ([u8; 4], u16);

/// A TCP/IPv4 packet with 20-byte IP and TCP headers behind a 14-byte
/// Ethernet header, `len` payload bytes, all captured; a 65,535-byte window.
pub fn tcp4(ts: i64, src: Endpoint, dst: Endpoint, flags: u8, seq: u32, ack: u32, len: u32) -> PacketMeta {
    PacketMeta {
        ts_ns: ts,
        wire_len: 54 + len,
        cap_len: 54 + len,
        src: Addr::v4(src.0),
        dst: Addr::v4(dst.0),
        ip_proto: ip_proto::TCP,
        ip_len: 40 + len,
        sport: src.1,
        dport: dst.1,
        payload_len: len,
        payload_captured: len,
        tcp: TcpMeta { flags, seq, ack, window: 65535, header_len: 20, ..Default::default() },
        ..Default::default()
    }
}
