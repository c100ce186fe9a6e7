//! Link layers: find where the IP header starts.
//!
//! The encapsulations follow Zeek's packet analyzers (Ethernet, VLAN, MPLS,
//! PPPoE, VN-Tag, PBB, LinuxSLL/SLL2, Null, PPP, NFLog), so the same frames
//! reach IP. Where Zeek is more permissive the decoder also is: after SLL
//! and SLL2 the full Ethertype chain (VLAN tags, MPLS, ...) is followed.

use crate::linktype;
use crate::SkipReason::{self, NotIp, Truncated, UnsupportedEncapsulation, UnsupportedLinkType};

/// Headers between the link header and IP (VLAN tags, VN-Tag, PBB):
/// more than this is not a real frame.
const MAX_L2_HEADERS: usize = 8;
/// MPLS labels before the bottom of the stack.
const MAX_MPLS_LABELS: usize = 16;

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;
const ETH_VLAN: u16 = 0x8100;
const ETH_QINQ: u16 = 0x88a8;
/// Pre-standard QinQ outer tag.
const ETH_QINQ_OLD: u16 = 0x9100;
const ETH_MPLS: u16 = 0x8847;
const ETH_MPLS_MULTICAST: u16 = 0x8848;
const ETH_PPPOE_SESSION: u16 = 0x8864;
const ETH_VNTAG: u16 = 0x8926;
const ETH_PBB: u16 = 0x88e7;
const ETH_FABRICPATH: u16 = 0x8903;

const PPP_IPV4: u16 = 0x0021;
const PPP_IPV6: u16 = 0x0057;
const PPP_MPLS: u16 = 0x0281;

/// Where IP starts, and the VLAN ids met on the way.
pub(crate) struct L3 {
    pub offset: usize,
    pub vlan: u16,
    pub inner_vlan: u16,
}

fn at(offset: usize) -> Result<L3, SkipReason> {
    Ok(L3 { offset, vlan: 0, inner_vlan: 0 })
}

fn be16(b: &[u8], at: usize) -> Result<u16, SkipReason> {
    match b.get(at..at + 2) {
        Some(&[x, y]) => Ok(u16::from_be_bytes([x, y])),
        _ => Err(Truncated),
    }
}

#[inline]
pub(crate) fn locate_ip(link_type: u32, d: &[u8]) -> Result<L3, SkipReason> {
    match link_type {
        linktype::ETHERNET => ethernet(d),
        linktype::RAW | linktype::RAW_12 | linktype::RAW_14 | linktype::IPV4 | linktype::IPV6 => at(0),
        linktype::LINUX_SLL => ethertype_chain(d, 16, be16(d, 14)?),
        linktype::LINUX_SLL2 => {
            // The protocol comes first in SLL2; the header is 20 bytes.
            let proto = be16(d, 0)?;
            if d.len() < 20 {
                return Err(Truncated);
            }
            ethertype_chain(d, 20, proto)
        }
        linktype::NULL => {
            let h = d.first_chunk::<4>().ok_or(Truncated)?;
            // The family is in the capturing host's byte order; families
            // are small numbers, so high bits set mean the other order.
            let af = u32::from_le_bytes(*h);
            bsd_family(if af & 0xffff_0000 != 0 { af.swap_bytes() } else { af })
        }
        linktype::LOOP => bsd_family(u32::from_be_bytes(*d.first_chunk::<4>().ok_or(Truncated)?)),
        linktype::PPP | linktype::PPP_HDLC => ppp(d),
        linktype::NFLOG => nflog(d),
        _ => Err(UnsupportedLinkType),
    }
}

/// BSD address families: AF_INET is 2 everywhere; AF_INET6 is 24
/// (NetBSD, OpenBSD, BSD/OS), 28 (FreeBSD, DragonFly) or 30 (Darwin), all
/// accepted since the trace may come from any of them (as in Zeek).
fn bsd_family(af: u32) -> Result<L3, SkipReason> {
    match af {
        2 | 24 | 28 | 30 => at(4),
        _ => Err(NotIp),
    }
}

#[inline]
fn ethernet(d: &[u8]) -> Result<L3, SkipReason> {
    let mut ethertype = be16(d, 12)?;
    // Untagged IP, most frames: the chain would return at its first step.
    if ethertype == ETH_IPV4 || ethertype == ETH_IPV6 {
        return at(14);
    }
    let mut offset = 14;
    if ethertype == ETH_FABRICPATH {
        // Cisco FabricPath: a 16-byte outer header before the original
        // Ethernet header (Zeek skips it the same way).
        ethertype = be16(d, 16 + 12)?;
        offset = 16 + 14;
    }
    ethertype_chain(d, offset, ethertype)
}

/// Follows Ethertypes from `offset` until IP. Zeek's IP analyzer then
/// trusts the version nibble, not the Ethertype, and so does `ip.rs`.
fn ethertype_chain(d: &[u8], mut offset: usize, mut ethertype: u16) -> Result<L3, SkipReason> {
    let mut l3 = L3 { offset, vlan: 0, inner_vlan: 0 };
    let mut tags = 0;
    for _ in 0..=MAX_L2_HEADERS {
        match ethertype {
            ETH_IPV4 | ETH_IPV6 => {
                l3.offset = offset;
                return Ok(l3);
            }
            ETH_VLAN | ETH_QINQ | ETH_QINQ_OLD => {
                let id = be16(d, offset)? & 0x0fff;
                // Outer tag, then inner; a third tag overwrites the inner
                // one, as in Zeek.
                if tags == 0 {
                    l3.vlan = id;
                } else {
                    l3.inner_vlan = id;
                }
                tags += 1;
                ethertype = be16(d, offset + 2)?;
                offset += 4;
            }
            ETH_MPLS | ETH_MPLS_MULTICAST => {
                l3.offset = mpls(d, offset)?;
                return Ok(l3);
            }
            ETH_PPPOE_SESSION => {
                // version/type, code, session id, length, then PPP protocol.
                let proto = be16(d, offset + 6)?;
                l3.offset = ppp_payload(d, offset + 8, proto)?;
                return Ok(l3);
            }
            ETH_VNTAG => {
                ethertype = be16(d, offset + 4)?;
                offset += 6;
            }
            ETH_PBB => {
                // 802.1ah: I-TAG (4), customer destination and source MAC
                // (12), then the customer Ethertype.
                ethertype = be16(d, offset + 16)?;
                offset += 18;
            }
            // ARP, LLDP, IPX, 802.3 length fields (LLC/SNAP), ...
            _ => return Err(NotIp),
        }
    }
    Err(UnsupportedEncapsulation)
}

/// Skips an MPLS label stack. RFC 3032 does not say what follows the
/// bottom label; like Zeek, IP is recognised by its version nibble, and
/// anything else (e.g. an Ethernet pseudowire) is not opened.
fn mpls(d: &[u8], mut offset: usize) -> Result<usize, SkipReason> {
    for _ in 0..MAX_MPLS_LABELS {
        let label = d.get(offset..offset + 4).ok_or(Truncated)?;
        offset += 4;
        if label[2] & 0x01 != 0 {
            let version = d.get(offset).ok_or(Truncated)? >> 4;
            return if version == 4 || version == 6 { Ok(offset) } else { Err(UnsupportedEncapsulation) };
        }
    }
    Err(UnsupportedEncapsulation)
}

/// LINKTYPE_PPP and PPP_HDLC: an optional `ff 03` address/control pair,
/// then the 2-byte PPP protocol.
fn ppp(d: &[u8]) -> Result<L3, SkipReason> {
    let offset = if d.starts_with(&[0xff, 0x03]) { 2 } else { 0 };
    let proto = be16(d, offset)?;
    at(ppp_payload(d, offset + 2, proto)?)
}

fn ppp_payload(d: &[u8], offset: usize, proto: u16) -> Result<usize, SkipReason> {
    match proto {
        PPP_IPV4 | PPP_IPV6 => Ok(offset),
        PPP_MPLS => mpls(d, offset),
        // LCP, IPCP, CHAP, ...
        _ => Err(NotIp),
    }
}

/// Linux NFLOG: a 4-byte header (family, version 0, resource id), then
/// TLVs whose length and type are in the capturing host's order (little
/// endian in practice, as Zeek assumes); the packet is the payload TLV.
fn nflog(d: &[u8]) -> Result<L3, SkipReason> {
    const NFULA_PAYLOAD: u16 = 9;
    const AF_INET: u8 = 2;
    const AF_INET6: u8 = 10;
    let h = d.first_chunk::<4>().ok_or(Truncated)?;
    if h[1] != 0 {
        return Err(UnsupportedEncapsulation);
    }
    if h[0] != AF_INET && h[0] != AF_INET6 {
        return Err(NotIp);
    }
    let mut offset = 4;
    // Each TLV is at least 4 bytes, so this ends with the frame.
    loop {
        let tlv = d.get(offset..offset + 4).ok_or(Truncated)?;
        let len = usize::from(u16::from_le_bytes([tlv[0], tlv[1]]));
        if u16::from_le_bytes([tlv[2], tlv[3]]) == NFULA_PAYLOAD {
            return at(offset + 4);
        }
        if len < 4 {
            return Err(UnsupportedEncapsulation);
        }
        // TLVs are padded to 4 bytes.
        offset += (len + 3) & !3;
    }
}
