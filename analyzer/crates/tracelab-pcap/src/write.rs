//! The project's one writer of classic pcap files and of the Ethernet/IPv4
//! TCP and UDP frames they carry, with the one Rust copy of the RFC 1071
//! Internet checksum. The trace generator (`datasets/generate`), the
//! analyzer's hand-built test captures (`analyzer/test-support`) and
//! `tracelab synth` (through `tracelab-analyzer write-pcap`) write through
//! it (docs/decisions/0003-one-pcap-writer-per-language.md).
//!
//! Files are little-endian, as libpcap writes them on every platform the
//! project builds on. Frames carry locally administered MAC addresses made
//! of the IPv4 addresses (`02:00:a.b.c.d`), IPv4 with DF and no options, and
//! zero payload bytes after an optional head given by the caller; the IPv4,
//! TCP and UDP checksums are those of the whole packet, so they verify even
//! when the capture is cut at `snaplen`.

use std::io::{self, Write};

/// `LINKTYPE_ETHERNET`.
pub const LINKTYPE_ETHERNET: u32 = 1;

const ETH_LEN: usize = 14;
const IPV4_LEN: usize = 20;
const TCP_LEN: usize = 20;
const UDP_LEN: usize = 8;
/// Frames shorter than this are padded on the wire (Ethernet's minimum
/// without the FCS), as a capture of received frames shows them.
pub const ETH_MIN_FRAME: usize = 60;

/// The RFC 1071 Internet checksum, summed over one or more pieces (a
/// pseudo-header, a header, a payload). Every piece but the last must have
/// an even length: a piece is read as big-endian 16-bit words, an odd last
/// byte padded with zero.
#[derive(Clone, Copy, Debug, Default)]
pub struct Checksum {
    /// Plain sum of the words; 64 bits hold any IPv4 packet's without a
    /// fold per word.
    sum: u64,
}

impl Checksum {
    pub fn new() -> Checksum {
        Checksum::default()
    }

    /// Adds `bytes` as big-endian 16-bit words.
    #[inline]
    pub fn add_bytes(mut self, bytes: &[u8]) -> Checksum {
        let mut words = bytes.chunks_exact(2);
        for w in &mut words {
            self.sum += u64::from(u16::from_be_bytes([w[0], w[1]]));
        }
        if let [last] = words.remainder() {
            self.sum += u64::from(*last) << 8;
        }
        self
    }

    /// Adds one 16-bit word given as a number (a pseudo-header's protocol or
    /// length).
    #[inline]
    pub fn add_word(mut self, word: u16) -> Checksum {
        self.sum += u64::from(word);
        self
    }

    /// The ones' complement of the ones' complement sum: the value of the
    /// checksum field. Over data that contain a correct checksum field it is 0.
    #[inline]
    pub fn finish(self) -> u16 {
        let mut s = self.sum;
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }
}

/// The Internet checksum of `bytes` alone.
#[inline]
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    Checksum::new().add_bytes(bytes).finish()
}

/// Timestamp resolution of a classic pcap file (its magic number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    Micro,
    Nano,
}

/// A classic pcap file being written: the file header at creation, then one
/// record per call.
pub struct PcapWriter<W: Write> {
    w: W,
    resolution: Resolution,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the 24-byte file header (version 2.4, zone and sigfigs 0).
    pub fn new(mut w: W, resolution: Resolution, snaplen: u32, link_type: u32) -> io::Result<Self> {
        let magic: u32 = match resolution {
            Resolution::Micro => 0xa1b2_c3d4,
            Resolution::Nano => 0xa1b2_3c4d,
        };
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&magic.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&link_type.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w, resolution })
    }

    /// One record: `data` as captured, `wire_len` the frame's length on the
    /// wire, `ts_ns` nanoseconds since the epoch (seconds must fit 32 bits;
    /// microsecond files truncate the fraction).
    pub fn write_record(&mut self, ts_ns: i64, data: &[u8], wire_len: u32) -> io::Result<()> {
        let sec = ts_ns.div_euclid(1_000_000_000);
        let frac = match self.resolution {
            Resolution::Micro => ts_ns.rem_euclid(1_000_000_000) / 1_000,
            Resolution::Nano => ts_ns.rem_euclid(1_000_000_000),
        };
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&(sec as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&(frac as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&wire_len.to_le_bytes());
        self.w.write_all(&rec)?;
        self.w.write_all(data)
    }

    pub fn into_inner(self) -> W {
        self.w
    }
}

/// The transport header of an [`Ipv4Frame`].
#[derive(Clone, Copy, Debug)]
pub enum Transport<'a> {
    /// `options` (a multiple of 4 bytes) follow the 20-byte header.
    Tcp {
        seq: u32,
        ack: u32,
        flags: u8,
        window: u16,
        options: &'a [u8],
    },
    Udp,
}

/// One Ethernet/IPv4 TCP or UDP packet to render.
#[derive(Clone, Copy, Debug)]
pub struct Ipv4Frame<'a> {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub ttl: u8,
    pub ip_id: u16,
    pub transport: Transport<'a>,
    /// Payload bytes after the transport header (the IP total length is
    /// 20 + transport header + this, at most 65,535).
    pub payload_len: usize,
    /// The payload's first bytes (at most `payload_len`); the rest are zeros.
    pub payload_head: &'a [u8],
}

impl Ipv4Frame<'_> {
    #[inline]
    fn transport_len(&self) -> usize {
        match self.transport {
            Transport::Tcp { options, .. } => TCP_LEN + options.len(),
            Transport::Udp => UDP_LEN,
        }
    }

    /// The IPv4 total length.
    #[inline]
    pub fn ip_len(&self) -> usize {
        IPV4_LEN + self.transport_len() + self.payload_len
    }

    /// The frame's length on the wire: Ethernet header and IP packet, padded
    /// to [`ETH_MIN_FRAME`].
    #[inline]
    pub fn wire_len(&self) -> usize {
        (ETH_LEN + self.ip_len()).max(ETH_MIN_FRAME)
    }

    /// Replaces `out` by the frame's first `snaplen` bytes (all of it when it
    /// is shorter). `out` keeps its capacity, so a writer that reuses it
    /// allocates nothing per frame once it has seen the largest. This and
    /// the checksum are `#[inline]` so that they inline into the caller's
    /// loop across the crate boundary: callgrind, `tcpmix --packets 300000
    /// --seed 3`, the generator's writer 149.4 M instructions with its former
    /// built-in code, 165.0 M through this module without `#[inline]`,
    /// 138.1 M with it (docs/decisions/0003-one-pcap-writer-per-language.md).
    #[inline]
    pub fn render(&self, snaplen: usize, out: &mut Vec<u8>) {
        let l4_len = self.transport_len();
        let headers = ETH_LEN + IPV4_LEN + l4_len;
        debug_assert!(self.payload_head.len() <= self.payload_len);
        let cap = self.wire_len().min(snaplen);
        out.clear();
        out.resize(cap.max(headers + self.payload_head.len()), 0);
        let f = out.as_mut_slice();

        f[0..2].copy_from_slice(&[0x02, 0x00]);
        f[2..6].copy_from_slice(&self.dst);
        f[6..8].copy_from_slice(&[0x02, 0x00]);
        f[8..12].copy_from_slice(&self.src);
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());

        let (proto, checksum_at) = match self.transport {
            Transport::Tcp { .. } => (6u8, 16),
            Transport::Udp => (17u8, 6),
        };
        let ip = &mut f[ETH_LEN..ETH_LEN + IPV4_LEN];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(self.ip_len() as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = self.ttl;
        ip[9] = proto;
        ip[12..16].copy_from_slice(&self.src);
        ip[16..20].copy_from_slice(&self.dst);
        let ip_sum = internet_checksum(ip);
        ip[10..12].copy_from_slice(&ip_sum.to_be_bytes());

        let segment_len = l4_len + self.payload_len;
        let (l4, payload) = f[ETH_LEN + IPV4_LEN..].split_at_mut(l4_len);
        l4[0..2].copy_from_slice(&self.sport.to_be_bytes());
        l4[2..4].copy_from_slice(&self.dport.to_be_bytes());
        match self.transport {
            Transport::Tcp { seq, ack, flags, window, options } => {
                debug_assert!(options.len() % 4 == 0);
                l4[4..8].copy_from_slice(&seq.to_be_bytes());
                l4[8..12].copy_from_slice(&ack.to_be_bytes());
                l4[12] = ((l4_len / 4) as u8) << 4;
                l4[13] = flags;
                l4[14..16].copy_from_slice(&window.to_be_bytes());
                if !options.is_empty() {
                    l4[TCP_LEN..].copy_from_slice(options);
                }
            }
            Transport::Udp => l4[4..6].copy_from_slice(&(segment_len as u16).to_be_bytes()),
        }
        let head = &mut payload[..self.payload_head.len()];
        if !head.is_empty() {
            head.copy_from_slice(self.payload_head);
        }
        // Pseudo-header, transport header, payload (zeros add nothing).
        let mut sum = Checksum::new()
            .add_bytes(&self.src)
            .add_bytes(&self.dst)
            .add_word(u16::from(proto))
            .add_word(segment_len as u16)
            .add_bytes(l4)
            .add_bytes(head)
            .finish();
        if proto == 17 && sum == 0 {
            sum = 0xffff; // UDP: a checksum field of 0 means "none"
        }
        l4[checksum_at..checksum_at + 2].copy_from_slice(&sum.to_be_bytes());
        out.truncate(cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 1071 §3's worked example: the words 0001 f203 f4f5 f6f7 sum to
    /// 2ddf0, which folds to ddf2; the checksum is its complement, 220d.
    #[test]
    fn checksum_of_the_rfc_1071_example() {
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(internet_checksum(&data), 0x220d);
        // Pieces sum as the whole; an odd last byte is padded with zero.
        assert_eq!(Checksum::new().add_bytes(&data[..4]).add_bytes(&data[4..]).finish(), 0x220d);
        assert_eq!(internet_checksum(&[0x00, 0x01, 0xf2]), !(0x0001u16 + 0xf200));
        // With its checksum appended, the data sum to 0.
        assert_eq!(Checksum::new().add_bytes(&data).add_word(0x220d).finish(), 0);
    }

    /// Wikipedia's worked example ("Internet checksum"): the IPv4 header
    /// 4500 0073 0000 4000 4011 .... c0a8 0001 c0a8 00c7 has checksum b861.
    #[test]
    fn checksum_of_a_known_ipv4_header() {
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8,
            0x00, 0xc7,
        ];
        assert_eq!(internet_checksum(&h), 0xb861);
    }

    #[test]
    fn file_header_and_records_in_both_resolutions() {
        let mut w = PcapWriter::new(Vec::new(), Resolution::Micro, 96, LINKTYPE_ETHERNET).unwrap();
        w.write_record(1_700_000_000_123_456_789, &[1, 2, 3], 60).unwrap();
        let out = w.into_inner();
        assert_eq!(&out[..24], &[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 96, 0, 0, 0, 1, 0, 0, 0]);
        let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        assert_eq!(
            [u32_at(&out, 24), u32_at(&out, 28), u32_at(&out, 32), u32_at(&out, 36)],
            [1_700_000_000, 123_456, 3, 60]
        );
        assert_eq!(&out[40..], &[1, 2, 3]);

        let mut w = PcapWriter::new(Vec::new(), Resolution::Nano, 65_535, 101).unwrap();
        w.write_record(5_000_000_007, &[], 0).unwrap();
        let out = w.into_inner();
        assert_eq!(&out[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u32_at(&out, 20), 101);
        assert_eq!([u32_at(&out, 24), u32_at(&out, 28)], [5, 7]);
    }

    fn verifies(frame: &[u8], proto: u8) -> bool {
        let ip = &frame[ETH_LEN..ETH_LEN + IPV4_LEN];
        let ip_len = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        let segment = &frame[ETH_LEN + IPV4_LEN..ETH_LEN + ip_len];
        internet_checksum(ip) == 0
            && Checksum::new()
                .add_bytes(&ip[12..20])
                .add_word(u16::from(proto))
                .add_word(segment.len() as u16)
                .add_bytes(segment)
                .finish()
                == 0
    }

    #[test]
    fn tcp_frame_with_options_is_laid_out_and_verifies() {
        let options = [2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1];
        let p = Ipv4Frame {
            src: [10, 1, 0, 1],
            dst: [93, 184, 216, 34],
            sport: 40_000,
            dport: 80,
            ttl: 63,
            ip_id: 7,
            transport: Transport::Tcp { seq: 1, ack: 0, flags: 0x02, window: 64_240, options: &options },
            payload_len: 0,
            payload_head: &[],
        };
        let mut f = Vec::new();
        p.render(usize::MAX, &mut f);
        assert_eq!(f.len(), 66);
        assert_eq!(&f[..14], &[2, 0, 93, 184, 216, 34, 2, 0, 10, 1, 0, 1, 8, 0]);
        assert_eq!(&f[14..24], &[0x45, 0, 0, 52, 0, 7, 0x40, 0, 63, 6]);
        assert_eq!(&f[34..38], &[0x9c, 0x40, 0, 80]);
        assert_eq!(f[34 + 12], 8 << 4);
        assert_eq!(f[34 + 13], 0x02);
        assert_eq!(&f[54..66], &options);
        assert!(verifies(&f, 6));
    }

    #[test]
    fn cut_padded_and_udp_frames() {
        let data = Ipv4Frame {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            sport: 1,
            dport: 2,
            ttl: 64,
            ip_id: 0,
            transport: Transport::Tcp { seq: 5, ack: 2, flags: 0x10, window: 502, options: &[] },
            payload_len: 1460,
            payload_head: &[],
        };
        let mut f = Vec::new();
        data.render(96, &mut f);
        assert_eq!((f.len(), data.wire_len()), (96, 1514));
        let mut whole = Vec::new();
        data.render(usize::MAX, &mut whole);
        assert!(verifies(&whole, 6));
        assert_eq!(&whole[..96], &f[..]);

        let ack = Ipv4Frame { payload_len: 0, ..data };
        ack.render(usize::MAX, &mut f);
        assert_eq!(f.len(), 60, "54 bytes padded to Ethernet's minimum");
        assert!(f[54..].iter().all(|&b| b == 0));

        let dns = Ipv4Frame { transport: Transport::Udp, payload_len: 35, payload_head: &[0xbe, 0xef, 1, 0], ..data };
        dns.render(usize::MAX, &mut f);
        assert_eq!(f.len(), 14 + 20 + 8 + 35);
        assert_eq!(&f[38..40], &[0, 43]);
        assert_eq!(&f[42..46], &[0xbe, 0xef, 1, 0]);
        assert!(verifies(&f, 17));
        // A head longer than the capture is summed but not kept.
        dns.render(44, &mut f);
        assert_eq!(f.len(), 44);
    }

    /// A UDP checksum that computes to 0 is sent as ffff (RFC 768). The
    /// ports are chosen so that the sum of the rest is ffff.
    #[test]
    fn udp_checksum_zero_is_sent_as_all_ones() {
        let mut p = Ipv4Frame {
            src: [0, 0, 0, 0],
            dst: [0, 0, 0, 0],
            sport: 0,
            dport: 0,
            ttl: 64,
            ip_id: 0,
            transport: Transport::Udp,
            payload_len: 0,
            payload_head: &[],
        };
        // Pseudo-header: protocol 17 + length 8, plus the UDP length 8.
        p.sport = 0xffff - (17 + 8 + 8);
        let mut f = Vec::new();
        p.render(usize::MAX, &mut f);
        assert_eq!(&f[40..42], &[0xff, 0xff]);
        assert!(verifies(&f, 17));
    }
}
