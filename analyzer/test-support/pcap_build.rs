//! Hand-built captures for tests: Ethernet/IPv4 TCP and UDP frames (built by
//! the project's pcap writer, `tracelab_pcap::write`) written as a classic
//! pcap (nanosecond timestamps) or as a pcapng (microsecond timestamps, any
//! 64-bit value). Checksums are right, though the analyzer, like `zeek -C`,
//! does not verify them.

// Each test binary uses its own part of this file.
#![allow(dead_code)]

use std::io::{self, Write};

use tracelab_pcap::write::{Ipv4Frame, PcapWriter, Resolution, Transport, LINKTYPE_ETHERNET};

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
    let transport = Transport::Tcp { seq, ack, flags, window: 65_535, options: &[] };
    frame(ts, src, sport, dst, dport, transport, payload)
}

/// A UDP datagram of `payload` zero bytes.
pub fn udp(ts: u64, src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, payload: usize) -> Frame {
    frame(ts, src, sport, dst, dport, Transport::Udp, payload)
}

fn frame(ts: u64, src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, transport: Transport, payload: usize) -> Frame {
    let packet =
        Ipv4Frame { src, dst, sport, dport, ttl: 64, ip_id: 0, transport, payload_len: payload, payload_head: &[] };
    let mut data = Vec::new();
    packet.render(usize::MAX, &mut data);
    Frame { ts, data }
}

/// A classic pcap, nanosecond resolution (`ts` in ns; seconds must fit
/// 32 bits).
pub fn write_pcap(w: &mut impl Write, frames: impl IntoIterator<Item = Frame>) -> io::Result<()> {
    let mut file = PcapWriter::new(w, Resolution::Nano, 65_535, LINKTYPE_ETHERNET)?;
    for f in frames {
        file.write_record(f.ts as i64, &f.data, f.data.len() as u32)?;
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
