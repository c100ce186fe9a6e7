//! The decoded-packet contract shared by the decoder, the connection tracker
//! and the outputs. Changing a field here is a contract change: update
//! `docs/analyzer.md` with it.

use std::cmp::Ordering;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An IP address stored in 16 bytes; IPv4 uses the IPv4-mapped form
/// `::ffff:a.b.c.d`, so one type orders and hashes both families.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Addr(pub [u8; 16]);

/// The order of the 16 bytes (lexicographic), computed as one big-endian
/// `u128` comparison: every packet orders its two endpoints for its flow
/// key, and the byte-wise comparison the derive gives was a loop.
/// Callgrind, tcpmix 300 k packets, with `TcpMetrics::packet` inlined:
/// whole run 744.6 M -> 733.7 M instructions (cbb7fe5;
/// docs/performance-history.md, analyzer step 16).
impl Ord for Addr {
    #[inline]
    fn cmp(&self, other: &Addr) -> Ordering {
        u128::from_be_bytes(self.0).cmp(&u128::from_be_bytes(other.0))
    }
}

impl PartialOrd for Addr {
    #[inline]
    fn partial_cmp(&self, other: &Addr) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Addr {
    pub fn v4(b: [u8; 4]) -> Addr {
        let mut a = [0u8; 16];
        a[10] = 0xff;
        a[11] = 0xff;
        a[12..].copy_from_slice(&b);
        Addr(a)
    }
    pub fn v6(b: [u8; 16]) -> Addr {
        Addr(b)
    }
    pub fn is_v4(&self) -> bool {
        self.0[..10].iter().all(|&x| x == 0) && self.0[10] == 0xff && self.0[11] == 0xff
    }
    pub fn to_ip(&self) -> IpAddr {
        if self.is_v4() {
            IpAddr::V4(Ipv4Addr::new(self.0[12], self.0[13], self.0[14], self.0[15]))
        } else {
            IpAddr::V6(Ipv6Addr::from(self.0))
        }
    }
}

impl From<IpAddr> for Addr {
    fn from(ip: IpAddr) -> Addr {
        match ip {
            IpAddr::V4(v4) => Addr::v4(v4.octets()),
            IpAddr::V6(v6) => Addr::v6(v6.octets()),
        }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // IpAddr's Display is the RFC 5952 form Zeek also prints.
        write!(f, "{}", self.to_ip())
    }
}

impl fmt::Debug for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self)
    }
}

/// IP protocol numbers the tracker understands.
pub mod ip_proto {
    pub const ICMP: u8 = 1;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const ICMPV6: u8 = 58;
}

/// TCP flag bits as in the header's flags byte.
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
}

/// TCP header fields the tracker needs. Meaningful only when
/// `PacketMeta::ip_proto == TCP`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpMeta {
    pub flags: u8,
    pub seq: u32,
    pub ack: u32,
    pub window: u16,
    /// Header length in bytes (data offset * 4).
    pub header_len: u16,
    /// MSS option of a SYN segment if present (0 otherwise). The three
    /// options are read from SYN segments only: that is the only place they
    /// are defined (RFC 9293 §3.7.1, RFC 7323 §2.2, RFC 2018 §2), and a
    /// receiver ignores them elsewhere; the option walk would otherwise run
    /// on every segment carrying timestamps.
    pub mss: u16,
    /// Window-scale shift of a SYN segment if present (`None` otherwise).
    pub wscale: Option<u8>,
    /// SACK-permitted option present on a SYN segment.
    pub sack_permitted: bool,
}

/// How many payload bytes a [`PacketMeta`] keeps: enough for every
/// signature of the tracker's service detection (the longest, a DNS header
/// and the start of its question name, ends here; see
/// tracelab-flow/src/service.rs).
pub const PAYLOAD_HEAD: usize = 32;

/// One decoded IP packet: everything downstream needs, copied out of the
/// frame so the frame buffer can be reused at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketMeta {
    /// Capture timestamp, nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    /// Length of the frame on the wire (pcap `len`).
    pub wire_len: u32,
    /// Bytes captured (pcap `caplen`).
    pub cap_len: u32,
    pub src: Addr,
    pub dst: Addr,
    /// The transport protocol number (after IPv6 extension headers).
    pub ip_proto: u8,
    /// IP-level length from the header: IPv4 total length, IPv6 40 + payload
    /// length (what Zeek counts as `*_ip_bytes`).
    pub ip_len: u32,
    /// Ports for TCP/UDP; for ICMP/ICMPv6 Zeek's convention:
    /// `sport` = type, `dport` = code.
    pub sport: u16,
    pub dport: u16,
    /// Transport payload length derived from the IP header lengths (not from
    /// what was captured), e.g. TCP: ip_len - ip header(s) - tcp header.
    pub payload_len: u32,
    /// Bytes of transport payload actually present in the capture.
    pub payload_captured: u32,
    /// The first [`PAYLOAD_HEAD`] captured bytes of a TCP or UDP payload,
    /// zero beyond `payload_captured` (and for other protocols): what the
    /// tracker's service detection reads. A fixed array, so a packet still
    /// needs no allocation and leaves the frame buffer free at once.
    pub payload_head: [u8; PAYLOAD_HEAD],
    pub tcp: TcpMeta,
    /// Outer and inner 802.1Q VLAN ids (0 when absent).
    pub vlan: u16,
    pub inner_vlan: u16,
    /// Interface index for pcapng (0 for pcap).
    pub interface: u32,
}

/// Why a frame was not decoded into a [`PacketMeta`]. Every frame read is
/// either decoded or counted under exactly one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// The capture ended before a header the decoder needs.
    Truncated,
    /// The file's (or interface's) link type is not one we decode.
    UnsupportedLinkType,
    /// An Ethernet/SLL/null frame carrying something other than IPv4/IPv6
    /// (ARP, LLDP, ...).
    NotIp,
    /// IP version, header length or total length inconsistent.
    BadIpHeader,
    /// TCP data offset < 5 or beyond the packet.
    BadTcpHeader,
    /// UDP length field inconsistent.
    BadUdpHeader,
    /// A non-first IPv4/IPv6 fragment (counted; not reassembled).
    IpFragment,
    /// IPv6 extension header chain longer than the decoder's limit.
    Ipv6ExtensionLimit,
    /// Encapsulations we do not open (GRE, VXLAN, Teredo, MPLS beyond limits ...).
    UnsupportedEncapsulation,
}

impl SkipReason {
    /// Stable snake_case name used in `summary.json`.
    pub fn name(&self) -> &'static str {
        match self {
            SkipReason::Truncated => "truncated",
            SkipReason::UnsupportedLinkType => "unsupported_link_type",
            SkipReason::NotIp => "not_ip",
            SkipReason::BadIpHeader => "bad_ip_header",
            SkipReason::BadTcpHeader => "bad_tcp_header",
            SkipReason::BadUdpHeader => "bad_udp_header",
            SkipReason::IpFragment => "ip_fragment",
            SkipReason::Ipv6ExtensionLimit => "ipv6_extension_limit",
            SkipReason::UnsupportedEncapsulation => "unsupported_encapsulation",
        }
    }
    pub const ALL: [SkipReason; 9] = [
        SkipReason::Truncated,
        SkipReason::UnsupportedLinkType,
        SkipReason::NotIp,
        SkipReason::BadIpHeader,
        SkipReason::BadTcpHeader,
        SkipReason::BadUdpHeader,
        SkipReason::IpFragment,
        SkipReason::Ipv6ExtensionLimit,
        SkipReason::UnsupportedEncapsulation,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The u128 order is the byte-wise (lexicographic) order of the
    /// addresses, on random pairs and on pairs differing in one byte.
    #[test]
    fn addr_order_is_the_byte_order() {
        let mut x: u64 = 11;
        let mut byte = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 56) as u8
        };
        for i in 0..20_000 {
            let a: [u8; 16] = std::array::from_fn(|_| byte());
            let mut b: [u8; 16] = std::array::from_fn(|_| byte());
            if i % 2 == 0 {
                // Equal but for one byte, as IPv4-mapped addresses are.
                let at = usize::from(byte()) % 16;
                let v = byte();
                b = a;
                b[at] = v;
            }
            assert_eq!(Addr(a).cmp(&Addr(b)), a.as_slice().cmp(b.as_slice()), "{a:?} {b:?}");
            assert_eq!(Addr(a).partial_cmp(&Addr(b)), Some(a.cmp(&b)));
        }
    }
}
