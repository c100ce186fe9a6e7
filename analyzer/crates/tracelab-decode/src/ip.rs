//! IPv4, IPv6 and the transport headers.
//!
//! Lengths follow Zeek's IP analyzer (`packet_analysis/protocol/ip/IP.cc`),
//! because the tracker reproduces Zeek's byte counts:
//! - lengths come from the headers, not from what was captured: a packet
//!   cut by the snaplen keeps its header lengths;
//! - an IP length larger than the frame was *on the wire* is an error
//!   (Zeek: `truncated_IP_len`), reported as [`BadIpHeader`];
//! - an IPv4 total length of 0 (TCP segmentation offload writes packets
//!   before the NIC fills it in) is replaced by the captured length, which
//!   is what Zeek does when checksums are ignored (`-C`, our mode; without
//!   `-C` Zeek drops these packets, their checksums being wrong too); an
//!   IPv6 payload length of 0 (BIG TCP, jumbograms) likewise;
//! - transport headers: TCP needs 20 bytes, UDP 8 and ICMP 8, both in the
//!   IP length (else a bad header) and in the capture (else truncated).
//!
//! Where we differ from Zeek: TCP options cut off by the snaplen do not
//! drop the packet (Zeek: `truncated_header`); the fixed header is enough
//! for connection tracking, and header-only enterprise traces need it.
//! The UDP length field must be consistent (at least 8, at most the IP
//! payload) where Zeek only flags a weird. No reassembly: see `lib.rs`.
//! IPv6 routing headers and home-address options do not replace the
//! addresses (Zeek uses the final destination of a type-0 routing header).

use crate::SkipReason::{self, BadIpHeader, BadTcpHeader, BadUdpHeader, IpFragment, Ipv6ExtensionLimit, Truncated};
use crate::{ip_proto, tcp_flags, Addr, PacketMeta, TcpMeta, PAYLOAD_HEAD};

/// Extension headers in one IPv6 packet.
const MAX_IPV6_EXTENSION_HEADERS: usize = 8;

const IPV6_HOP_BY_HOP: u8 = 0;
const IPV6_ROUTING: u8 = 43;
const IPV6_FRAGMENT: u8 = 44;
const IPV6_AH: u8 = 51;
const IPV6_DEST_OPTS: u8 = 60;

#[inline(always)]
fn be16(x: u8, y: u8) -> u16 {
    u16::from_be_bytes([x, y])
}

#[inline(always)]
fn be32(b: &[u8; 20], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// `offset` is where IP starts in `d` (the link header's length).
#[inline]
pub(crate) fn decode_ip(d: &[u8], offset: usize, wire_len: u32, m: &mut PacketMeta) -> Result<(), SkipReason> {
    let ip = d.get(offset..).ok_or(Truncated)?;
    // What the wire carried from the IP header on.
    let wire_ip = (wire_len as usize).saturating_sub(offset);
    let first = *ip.first().ok_or(Truncated)?;
    match first >> 4 {
        4 => ipv4(ip, wire_ip, m),
        6 => ipv6(ip, wire_ip, m),
        _ => Err(BadIpHeader),
    }
}

#[inline]
fn ipv4(ip: &[u8], wire_ip: usize, m: &mut PacketMeta) -> Result<(), SkipReason> {
    let h = ip.first_chunk::<20>().ok_or(Truncated)?;
    let header_len = usize::from(h[0] & 0x0f) * 4;
    let total = match usize::from(be16(h[2], h[3])) {
        0 => ip.len(),
        t => t,
    };
    if total > wire_ip || header_len < 20 || header_len > total {
        return Err(BadIpHeader);
    }
    if header_len > ip.len() {
        return Err(Truncated);
    }
    let fragment = be16(h[6], h[7]);
    if fragment & 0x1fff != 0 {
        return Err(IpFragment);
    }
    let more_fragments = fragment & 0x2000 != 0;
    m.src = Addr::v4([h[12], h[13], h[14], h[15]]);
    m.dst = Addr::v4([h[16], h[17], h[18], h[19]]);
    m.ip_proto = h[9];
    m.ip_len = total as u32;
    transport(ip, header_len, total, more_fragments, m)
}

fn ipv6(ip: &[u8], wire_ip: usize, m: &mut PacketMeta) -> Result<(), SkipReason> {
    let h = ip.first_chunk::<40>().ok_or(Truncated)?;
    // Payload length 0: as for IPv4, segmentation offload (BIG TCP) or a
    // jumbogram; the capture gives the length (Zeek does the same for the
    // payload; it keeps 40 as the IP length, we count what was captured).
    let total = match usize::from(be16(h[4], h[5])) {
        0 => ip.len(),
        p => 40 + p,
    };
    if total > wire_ip {
        return Err(BadIpHeader);
    }
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&h[8..24]);
    dst.copy_from_slice(&h[24..40]);
    m.src = Addr::v6(src);
    m.dst = Addr::v6(dst);
    m.ip_len = total as u32;

    // An extension header must lie within the IPv6 payload length (else
    // the packet is malformed) and within the capture (else it is
    // truncated).
    let need = |end: usize| {
        if end > total {
            Err(BadIpHeader)
        } else if end > ip.len() {
            Err(Truncated)
        } else {
            Ok(())
        }
    };
    let mut next = h[6];
    let mut offset = 40;
    let mut more_fragments = false;
    for _ in 0..=MAX_IPV6_EXTENSION_HEADERS {
        let len = match next {
            IPV6_HOP_BY_HOP | IPV6_ROUTING | IPV6_DEST_OPTS => {
                need(offset + 2)?;
                (usize::from(ip[offset + 1]) + 1) * 8
            }
            IPV6_AH => {
                need(offset + 2)?;
                (usize::from(ip[offset + 1]) + 2) * 4
            }
            IPV6_FRAGMENT => {
                need(offset + 8)?;
                let f = be16(ip[offset + 2], ip[offset + 3]);
                if f & 0xfff8 != 0 {
                    return Err(IpFragment);
                }
                more_fragments = f & 0x0001 != 0;
                8
            }
            proto => {
                m.ip_proto = proto;
                return transport(ip, offset, total, more_fragments, m);
            }
        };
        need(offset + len)?;
        next = ip[offset];
        offset += len;
    }
    Err(Ipv6ExtensionLimit)
}

/// The first [`PAYLOAD_HEAD`] bytes of `payload`, zero-padded. A payload
/// that fills the head (most data segments) is a fixed-size copy, inlined;
/// only a shorter one takes the variable-length copy.
#[inline]
fn head(payload: &[u8]) -> [u8; PAYLOAD_HEAD] {
    if let Some(h) = payload.first_chunk::<PAYLOAD_HEAD>() {
        return *h;
    }
    let mut h = [0; PAYLOAD_HEAD];
    h[..payload.len()].copy_from_slice(payload);
    h
}

/// The transport header at `offset` in `ip`, `total` the IP length. Sets
/// every transport field of `m` (ports, payload lengths, `tcp`): `m` may
/// hold the previous packet.
/// `first_fragment`: the datagram continues in later fragments, so the IP
/// length covers only part of it.
#[inline]
fn transport(
    ip: &[u8],
    offset: usize,
    total: usize,
    first_fragment: bool,
    m: &mut PacketMeta,
) -> Result<(), SkipReason> {
    let claimed = total - offset;
    // The captured part of the segment, without Ethernet padding.
    let seg = ip.get(offset..total.min(ip.len())).unwrap_or(&[]);
    // A fixed header longer than the IP length leaves: in a first fragment
    // it continues in the next one (not reassembled); otherwise the packet
    // is malformed.
    let short = |malformed: SkipReason| {
        if first_fragment {
            IpFragment
        } else {
            malformed
        }
    };
    match m.ip_proto {
        ip_proto::TCP => {
            if claimed < 20 {
                return Err(short(BadTcpHeader));
            }
            let t = seg.first_chunk::<20>().ok_or(Truncated)?;
            let header_len = usize::from(t[12] >> 4) * 4;
            if header_len < 20 || header_len > claimed {
                return Err(BadTcpHeader);
            }
            m.sport = be16(t[0], t[1]);
            m.dport = be16(t[2], t[3]);
            m.tcp = TcpMeta {
                flags: t[13],
                seq: be32(t, 4),
                ack: be32(t, 8),
                window: be16(t[14], t[15]),
                header_len: header_len as u16,
                ..TcpMeta::default()
            };
            // Options as far as they were captured, of SYN segments only
            // (see `TcpMeta::mss`). Callgrind, tcpmix 300 k packets: 469.3 M
            // -> 467.3 M instructions (43d9dd4; docs/performance-history.md,
            // analyzer step 22).
            if t[13] & tcp_flags::SYN != 0 {
                if let Some(options) = seg.get(20..header_len.min(seg.len())) {
                    tcp_options(options, &mut m.tcp);
                }
            }
            m.payload_len = (claimed - header_len) as u32;
            m.payload_captured = seg.len().saturating_sub(header_len) as u32;
            m.payload_head = head(seg.get(header_len..).unwrap_or(&[]));
        }
        ip_proto::UDP => {
            if claimed < 8 {
                return Err(short(BadUdpHeader));
            }
            let u = seg.first_chunk::<8>().ok_or(Truncated)?;
            let udp_len = usize::from(be16(u[4], u[5]));
            // A first fragment's UDP length covers the whole datagram, which
            // is also what Zeek counts once it has reassembled it.
            if udp_len < 8 || (udp_len > claimed && !first_fragment) {
                return Err(BadUdpHeader);
            }
            m.sport = be16(u[0], u[1]);
            m.dport = be16(u[2], u[3]);
            // Zeek counts the UDP length field, not the IP length.
            m.payload_len = (udp_len - 8) as u32;
            m.payload_captured = (seg.len() - 8).min(udp_len - 8) as u32;
            m.payload_head = head(&seg[8..8 + m.payload_captured as usize]);
            m.tcp = TcpMeta::default();
        }
        ip_proto::ICMP | ip_proto::ICMPV6 => {
            if claimed < 8 {
                return Err(short(Truncated));
            }
            let c = seg.first_chunk::<8>().ok_or(Truncated)?;
            // Zeek's convention: type and code stand in for the ports.
            m.sport = u16::from(c[0]);
            m.dport = u16::from(c[1]);
            m.payload_len = (claimed - 8) as u32;
            m.payload_captured = (seg.len() - 8) as u32;
            m.payload_head = [0; PAYLOAD_HEAD];
            m.tcp = TcpMeta::default();
        }
        _ => {
            m.sport = 0;
            m.dport = 0;
            m.payload_len = claimed as u32;
            m.payload_captured = seg.len() as u32;
            m.payload_head = [0; PAYLOAD_HEAD];
            m.tcp = TcpMeta::default();
        }
    }
    Ok(())
}

/// MSS, window scale and SACK-permitted. A malformed option (length < 2
/// or past the header) ends the parse and keeps what was read: the packet
/// itself is still good for tracking.
fn tcp_options(mut o: &[u8], t: &mut TcpMeta) {
    const EOL: u8 = 0;
    const NOP: u8 = 1;
    const MSS: u8 = 2;
    const WSCALE: u8 = 3;
    const SACK_PERMITTED: u8 = 4;
    while let Some((&kind, rest)) = o.split_first() {
        match kind {
            EOL => return,
            NOP => {
                o = rest;
                continue;
            }
            _ => {}
        }
        let Some(&len) = rest.first() else { return };
        let len = usize::from(len);
        let Some(value) = o.get(2..len) else { return };
        match (kind, value) {
            (MSS, &[a, b]) => t.mss = be16(a, b),
            (WSCALE, &[s]) => t.wscale = Some(s),
            (SACK_PERMITTED, &[]) => t.sack_permitted = true,
            _ => {}
        }
        o = &o[len..];
    }
}
