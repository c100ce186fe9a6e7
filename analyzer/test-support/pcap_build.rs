//! Hand-built captures for tests: Ethernet/IPv4 TCP and UDP frames written
//! as a classic pcap (nanosecond timestamps) or as a pcapng (microsecond
//! timestamps, any 64-bit value). Checksums are left zero: the analyzer,
//! like `zeek -C`, does not verify them.

// Each test binary uses its own part of this file.
#![allow(dead_code)]

use std::io::{self, Write};

pub const SYN: u8 = 0x02;
pub const FIN: u8 = 0x01;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

/// One frame: when, and its bytes from the Ethernet header on.
#[derive(Clone, Debug)]
pub struct Frame {
    pub ts: u64,
    pub data: Vec<u8>,
}

/// A TCP segment of `payload` zero bytes from `src:sport` to `dst:dport`.
#[allow(clippy::too_many_arguments)]
pub fn tcp(
    ts: u64,
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    flags: u8,
    seq: u32,
    ack: u32,
    payload: usize,
) -> Frame {
    let mut l4 = Vec::with_capacity(20 + payload);
    l4.extend_from_slice(&sport.to_be_bytes());
    l4.extend_from_slice(&dport.to_be_bytes());
    l4.extend_from_slice(&seq.to_be_bytes());
    l4.extend_from_slice(&ack.to_be_bytes());
    l4.push(5 << 4);
    l4.push(flags);
    l4.extend_from_slice(&65_535u16.to_be_bytes());
    l4.extend_from_slice(&[0, 0, 0, 0]);
    l4.resize(20 + payload, 0);
    Frame { ts, data: ipv4(src, dst, 6, &l4) }
}

/// A UDP datagram of `payload` zero bytes.
pub fn udp(ts: u64, src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, payload: usize) -> Frame {
    let mut l4 = Vec::with_capacity(8 + payload);
    l4.extend_from_slice(&sport.to_be_bytes());
    l4.extend_from_slice(&dport.to_be_bytes());
    l4.extend_from_slice(&((8 + payload) as u16).to_be_bytes());
    l4.extend_from_slice(&[0, 0]);
    l4.resize(8 + payload, 0);
    Frame { ts, data: ipv4(src, dst, 17, &l4) }
}

fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, l4: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(34 + l4.len());
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00]);
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(l4);
    f
}

/// A classic pcap, nanosecond resolution (`ts` in ns; seconds must fit
/// 32 bits).
pub fn write_pcap(w: &mut impl Write, frames: impl IntoIterator<Item = Frame>) -> io::Result<()> {
    w.write_all(&0xa1b2_3c4du32.to_le_bytes())?;
    w.write_all(&2u16.to_le_bytes())?;
    w.write_all(&4u16.to_le_bytes())?;
    w.write_all(&[0; 8])?;
    w.write_all(&65_535u32.to_le_bytes())?;
    w.write_all(&1u32.to_le_bytes())?;
    for f in frames {
        let len = f.data.len() as u32;
        w.write_all(&((f.ts / 1_000_000_000) as u32).to_le_bytes())?;
        w.write_all(&((f.ts % 1_000_000_000) as u32).to_le_bytes())?;
        w.write_all(&len.to_le_bytes())?;
        w.write_all(&len.to_le_bytes())?;
        w.write_all(&f.data)?;
    }
    Ok(())
}

/// A pcapng with one Ethernet interface of the default (microsecond)
/// resolution: `ts` in µs, any 64-bit value.
pub fn write_pcapng(w: &mut impl Write, frames: impl IntoIterator<Item = Frame>) -> io::Result<()> {
    // Section header: byte-order magic, version 1.0, unknown length.
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&u64::MAX.to_le_bytes());
    block(w, 0x0a0d_0d0a, &shb)?;
    let mut idb = Vec::new();
    idb.extend_from_slice(&1u16.to_le_bytes());
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&65_535u32.to_le_bytes());
    block(w, 1, &idb)?;
    for f in frames {
        let mut epb = Vec::with_capacity(20 + f.data.len() + 3);
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&((f.ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(f.ts as u32).to_le_bytes());
        epb.extend_from_slice(&(f.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(f.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&f.data);
        block(w, 6, &epb)?;
    }
    Ok(())
}

fn block(w: &mut impl Write, kind: u32, body: &[u8]) -> io::Result<()> {
    let pad = (4 - body.len() % 4) % 4;
    let total = (12 + body.len() + pad) as u32;
    w.write_all(&kind.to_le_bytes())?;
    w.write_all(&total.to_le_bytes())?;
    w.write_all(body)?;
    w.write_all(&[0; 3][..pad])?;
    w.write_all(&total.to_le_bytes())
}
