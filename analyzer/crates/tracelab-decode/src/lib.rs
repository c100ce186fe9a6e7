//! Pure packet decoder: bytes of one captured frame plus its link type in,
//! a [`PacketMeta`] (or the named reason it was skipped) out.
//!
//! No state, no allocation, no I/O, no panic on any input (every read is a
//! checked slice): easy to fuzz (see `analyzer/fuzz/`).
//!
//! What is decoded, and how it follows Zeek (whose `conn.log` the tracker
//! reproduces) is documented in `link.rs` and `ip.rs`. In short:
//! - link types: Ethernet (802.1Q/802.1ad/QinQ tags, MPLS, PPPoE session,
//!   VN-Tag, 802.1ah PBB, Cisco FabricPath), Linux SLL and SLL2, raw IP,
//!   BSD null/loopback, PPP, NFLOG;
//! - IPv4 with options, IPv6 with extension headers; TCP (with the MSS,
//!   window-scale and SACK-permitted options), UDP, ICMP and ICMPv6; other
//!   IP protocols decoded with ports 0.
//!
//! Not implemented: IP reassembly (a first fragment is decoded on its own,
//! later fragments are counted as [`SkipReason::IpFragment`]); tunnels
//! (GRE, IP-in-IP, Teredo, VXLAN, ...) are decoded as their outer packet;
//! 802.2 LLC/SNAP frames count as [`SkipReason::NotIp`]; checksums are not
//! verified (like `zeek -C`).

mod ip;
mod link;
mod meta;
pub use meta::*;

/// The `LINKTYPE_*` values [`decode`] understands (tcpdump.org registry).
pub mod linktype {
    /// BSD loopback: a 4-byte address family in the capturing host's order.
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    pub const PPP: u32 = 9;
    /// `DLT_RAW` as most platforms (and libpcap on Linux) number it.
    pub const RAW_12: u32 = 12;
    /// `DLT_RAW` as OpenBSD numbers it.
    pub const RAW_14: u32 = 14;
    /// PPP in HDLC-like framing (`LINKTYPE_PPP_HDLC`, Zeek's PPP serial).
    pub const PPP_HDLC: u32 = 50;
    pub const RAW: u32 = 101;
    /// OpenBSD loopback: the address family in network order.
    pub const LOOP: u32 = 108;
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const NFLOG: u32 = 239;
    pub const LINUX_SLL2: u32 = 276;
}

/// Decodes one frame. `data` is what was captured (`cap_len` is its
/// length), `wire_len` the frame's length on the wire.
pub fn decode(
    link_type: u32,
    data: &[u8],
    ts_ns: i64,
    wire_len: u32,
    interface: u32,
) -> Result<PacketMeta, SkipReason> {
    let mut meta = PacketMeta::default();
    decode_into(link_type, data, ts_ns, wire_len, interface, &mut meta)?;
    Ok(meta)
}

/// [`decode`] into a caller's `PacketMeta` (for example one reused for
/// every frame), saving the copy of the result. On success every field is
/// set (each one written once, no reset of the whole struct first); on
/// error `meta` holds a partly decoded packet and must not be used.
/// Writing each field once, callgrind, tcpmix 300 k packets: -19
/// instructions per packet (8a7f3a0; docs/performance-history.md, analyzer
/// step 15).
#[inline]
pub fn decode_into(
    link_type: u32,
    data: &[u8],
    ts_ns: i64,
    wire_len: u32,
    interface: u32,
    meta: &mut PacketMeta,
) -> Result<(), SkipReason> {
    let l3 = link::locate_ip(link_type, data)?;
    meta.ts_ns = ts_ns;
    meta.wire_len = wire_len;
    meta.cap_len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    meta.vlan = l3.vlan;
    meta.inner_vlan = l3.inner_vlan;
    meta.interface = interface;
    ip::decode_ip(data, l3.offset, wire_len, meta)
}
