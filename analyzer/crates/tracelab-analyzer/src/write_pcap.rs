//! `tracelab-analyzer write-pcap`: the pcap writer of `tracelab synth`.
//! Synth plans packets as numpy columns and streams them here as
//! fixed-layout records; each is rendered by the project's one frame
//! builder and pcap writer, `tracelab_pcap::write` (checksums by its one
//! RFC 1071 routine), so Python has no pcap writer of its own
//! (docs/decisions/0003-one-pcap-writer-per-language.md).
//!
//! The stream (stdin), all integers little-endian:
//!
//! * the 8 bytes [`MAGIC`];
//! * `u16` the number of payload heads, then each head as a `u16` length
//!   and its bytes: the first bytes of a service's message
//!   (`replay/tracelab/synth/payloads.py`); head 0 is the empty one;
//! * one [`RECORD_LEN`]-byte record per packet, in time order:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | i64 | timestamp, µs since the epoch |
//! | 8 | u32 | source IPv4 address |
//! | 12 | u32 | destination IPv4 address |
//! | 16 | u32 | TCP sequence number (0 for UDP) |
//! | 20 | u32 | TCP acknowledgement number (0 for UDP) |
//! | 24 | u16 | source port |
//! | 26 | u16 | destination port |
//! | 28 | u16 | IPv4 total length |
//! | 30 | u16 | IPv4 identification |
//! | 32 | u8 | protocol: 6 (TCP) or 17 (UDP) |
//! | 33 | u8 | TCP flags |
//! | 34 | u16 | payload head (index into the heads) |
//!
//! Frames are those of [`Ipv4Frame`] with TTL 64 and a TCP window of
//! 65,535; the file is a microsecond pcap of Ethernet frames. It is written
//! to a sibling `.STEM.partial-PID.SUFFIX` and renamed into place only once the
//! stream has ended cleanly: on a bad record, a write error or SIGINT/SIGTERM
//! the partial file is removed and a previous file stays as it was.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use tracelab_pcap::write::{Ipv4Frame, PcapWriter, Resolution, Transport, LINKTYPE_ETHERNET};

use crate::interrupt;

/// The stream's first bytes (format version 1).
pub const MAGIC: [u8; 8] = *b"TLPKTS01";
/// Bytes per packet record.
pub const RECORD_LEN: usize = 36;
/// The headers are always captured whole: Ethernet, IPv4 and TCP.
pub const MIN_SNAPLEN: u32 = 14 + 20 + 20;
/// libpcap's largest snapshot length.
pub const MAX_SNAPLEN: u32 = 262_144;

const TCP: u8 = 6;
const UDP: u8 = 17;
const TTL: u8 = 64;
const WINDOW: u16 = 65_535;
/// Records read per block (1.2 MB); the interrupt flag is polled per block.
const BLOCK_RECORDS: usize = 32_768;

/// Why a record cannot be rendered.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BadRecord {
    #[error("protocol {0} is neither TCP (6) nor UDP (17)")]
    Protocol(u8),
    #[error("IPv4 length {ip_len} is shorter than its headers ({headers} bytes)")]
    IpLen { ip_len: u16, headers: u16 },
    #[error("payload head {index} is not among the stream's {heads} heads")]
    HeadIndex { index: u16, heads: usize },
    #[error("payload head {index} ({len} bytes) is longer than the payload ({payload} bytes)")]
    HeadLength { index: u16, len: usize, payload: usize },
    #[error("timestamp {0} us is outside a pcap's 32-bit seconds")]
    Time(i64),
}

/// Why `write-pcap` failed; [`WriteError::status`] gives the exit class.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("--snaplen must be {MIN_SNAPLEN}..={MAX_SNAPLEN}, got {0}")]
    Snaplen(u32),
    #[error("the packet stream: {0}")]
    Read(#[source] io::Error),
    #[error("the packet stream does not start with {:?} (not a synth packet stream)", String::from_utf8_lossy(&MAGIC))]
    Magic,
    #[error("the packet stream ends inside its header")]
    Header,
    #[error("the packet stream ends inside packet {index} ({bytes} of {RECORD_LEN} bytes)")]
    Truncated { index: u64, bytes: usize },
    #[error("packet {index}: {reason}")]
    Record { index: u64, reason: BadRecord },
    #[error("writing the pcap: {0}")]
    Output(#[source] io::Error),
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
}

impl WriteError {
    /// The toolkit's exit class (replay/tracelab/errors.py): 2 usage, 3 input
    /// data, 4 output; an interruption ends by its signal instead.
    pub fn status(&self) -> u8 {
        match self {
            WriteError::Snaplen(_) => 2,
            WriteError::Output(_) | WriteError::Write { .. } => 4,
            _ => 3,
        }
    }
}

/// One decoded record (the table in the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub time_us: i64,
    pub src: u32,
    pub dst: u32,
    pub seq: u32,
    pub ack: u32,
    pub sport: u16,
    pub dport: u16,
    pub ip_len: u16,
    pub ip_id: u16,
    pub proto: u8,
    pub flags: u8,
    pub head: u16,
}

impl Record {
    pub fn from_bytes(b: &[u8; RECORD_LEN]) -> Record {
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Record {
            time_us: i64::from_le_bytes(b[0..8].try_into().expect("8 bytes")),
            src: u32_at(8),
            dst: u32_at(12),
            seq: u32_at(16),
            ack: u32_at(20),
            sport: u16_at(24),
            dport: u16_at(26),
            ip_len: u16_at(28),
            ip_id: u16_at(30),
            proto: b[32],
            flags: b[33],
            head: u16_at(34),
        }
    }

    /// The frame this record describes, its payload head taken from `heads`.
    pub fn frame<'h>(&self, heads: &'h [Vec<u8>]) -> Result<Ipv4Frame<'h>, BadRecord> {
        let (transport, headers) = match self.proto {
            TCP => {
                (Transport::Tcp { seq: self.seq, ack: self.ack, flags: self.flags, window: WINDOW, options: &[] }, 40)
            }
            UDP => (Transport::Udp, 28),
            p => return Err(BadRecord::Protocol(p)),
        };
        if self.ip_len < headers {
            return Err(BadRecord::IpLen { ip_len: self.ip_len, headers });
        }
        let payload_len = usize::from(self.ip_len - headers);
        let head =
            heads.get(usize::from(self.head)).ok_or(BadRecord::HeadIndex { index: self.head, heads: heads.len() })?;
        if head.len() > payload_len {
            return Err(BadRecord::HeadLength { index: self.head, len: head.len(), payload: payload_len });
        }
        if !(0..=i64::from(u32::MAX) * 1_000_000 + 999_999).contains(&self.time_us) {
            return Err(BadRecord::Time(self.time_us));
        }
        Ok(Ipv4Frame {
            src: self.src.to_be_bytes(),
            dst: self.dst.to_be_bytes(),
            sport: self.sport,
            dport: self.dport,
            ttl: TTL,
            ip_id: self.ip_id,
            transport,
            payload_len,
            payload_head: head,
        })
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn read_heads(input: &mut impl Read) -> Result<Vec<Vec<u8>>, WriteError> {
    let mut exact = |n: usize| -> Result<Vec<u8>, WriteError> {
        let mut b = vec![0; n];
        match fill(input, &mut b).map_err(WriteError::Read)? {
            got if got == n => Ok(b),
            _ => Err(WriteError::Header),
        }
    };
    if exact(MAGIC.len())? != MAGIC {
        return Err(WriteError::Magic);
    }
    let count = exact(2)?;
    (0..u16::from_le_bytes([count[0], count[1]]))
        .map(|_| {
            let len = exact(2)?;
            exact(usize::from(u16::from_le_bytes([len[0], len[1]])))
        })
        .collect()
}

/// Renders the packet stream `input` into `w`; returns the packets written.
pub fn render_stream<W: Write>(mut input: impl Read, w: W, snaplen: u32) -> Result<(W, u64), WriteError> {
    if !(MIN_SNAPLEN..=MAX_SNAPLEN).contains(&snaplen) {
        return Err(WriteError::Snaplen(snaplen));
    }
    let heads = read_heads(&mut input)?;
    let mut pcap = PcapWriter::new(w, Resolution::Micro, snaplen, LINKTYPE_ETHERNET).map_err(WriteError::Output)?;
    let mut block = vec![0u8; BLOCK_RECORDS * RECORD_LEN];
    let mut frame = Vec::with_capacity(snaplen as usize);
    let mut index = 0u64;
    loop {
        if let Some(signal) = interrupt::pending() {
            return Err(WriteError::Interrupted(signal));
        }
        let got = fill(&mut input, &mut block).map_err(WriteError::Read)?;
        let mut records = block[..got].chunks_exact(RECORD_LEN);
        for bytes in &mut records {
            let record = Record::from_bytes(bytes.try_into().expect("RECORD_LEN bytes"));
            let f = record.frame(&heads).map_err(|reason| WriteError::Record { index, reason })?;
            f.render(snaplen as usize, &mut frame);
            pcap.write_record(record.time_us * 1_000, &frame, f.wire_len() as u32).map_err(WriteError::Output)?;
            index += 1;
        }
        if !records.remainder().is_empty() {
            return Err(WriteError::Truncated { index, bytes: records.remainder().len() });
        }
        if got < block.len() {
            return Ok((pcap.into_inner(), index));
        }
    }
}

/// The partial file beside `out` (hidden, named by this process), named as
/// every tracelab output's (`.STEM.partial-PID.SUFFIX`, tracelab_models.outputs),
/// so that the next command writing `out` removes it if a kill -9 left it.
fn partial_path(out: &Path) -> PathBuf {
    let stem = out.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let suffix = out.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    out.with_file_name(format!(".{stem}.partial-{}{suffix}", std::process::id()))
}

/// An I/O error on `path`.
fn at(path: &Path) -> impl Fn(io::Error) -> WriteError + '_ {
    move |source| WriteError::Write { path: path.to_path_buf(), source }
}

/// Writes the stream `input` to the pcap `out` (atomically, see the module
/// documentation); returns the packets written.
pub fn write_pcap(input: impl Read, out: &Path, snaplen: u32) -> Result<u64, WriteError> {
    if !(MIN_SNAPLEN..=MAX_SNAPLEN).contains(&snaplen) {
        return Err(WriteError::Snaplen(snaplen));
    }
    let partial = partial_path(out);
    let file = File::create(&partial).map_err(at(&partial))?;
    let written = render_stream(input, BufWriter::with_capacity(1 << 20, file), snaplen)
        .and_then(|(w, n)| {
            let file = w.into_inner().map_err(|e| at(out)(e.into_error()))?;
            file.sync_all().map_err(at(out))?;
            Ok(n)
        })
        .and_then(|n| match interrupt::pending() {
            Some(signal) => Err(WriteError::Interrupted(signal)),
            None => std::fs::rename(&partial, out).map(|_| n).map_err(at(out)),
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written.map_err(|e| match e {
        WriteError::Output(source) => WriteError::Write { path: out.into(), source },
        e => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partial_file_is_named_as_every_tracelab_output() {
        let pid = std::process::id();
        assert_eq!(partial_path(Path::new("/d/s.pcap")), PathBuf::from(format!("/d/.s.partial-{pid}.pcap")));
        assert_eq!(partial_path(Path::new("x.pcap.gz")), PathBuf::from(format!(".x.pcap.partial-{pid}.gz")));
        assert_eq!(partial_path(Path::new("/d/trace")), PathBuf::from(format!("/d/.trace.partial-{pid}")));
    }

    fn stream(heads: &[&[u8]], records: &[Record]) -> Vec<u8> {
        let mut s = MAGIC.to_vec();
        s.extend_from_slice(&(heads.len() as u16).to_le_bytes());
        for h in heads {
            s.extend_from_slice(&(h.len() as u16).to_le_bytes());
            s.extend_from_slice(h);
        }
        for r in records {
            s.extend_from_slice(&r.time_us.to_le_bytes());
            for v in [r.src, r.dst, r.seq, r.ack] {
                s.extend_from_slice(&v.to_le_bytes());
            }
            for v in [r.sport, r.dport, r.ip_len, r.ip_id] {
                s.extend_from_slice(&v.to_le_bytes());
            }
            s.extend_from_slice(&[r.proto, r.flags]);
            s.extend_from_slice(&r.head.to_le_bytes());
        }
        s
    }

    const SYN: Record = Record {
        time_us: 1_700_000_000_250_000,
        src: 0x0a00_0001,
        dst: 0xc612_0005,
        seq: 7,
        ack: 0,
        sport: 40_000,
        dport: 80,
        ip_len: 40,
        ip_id: 3,
        proto: TCP,
        flags: 0x02,
        head: 0,
    };

    #[test]
    fn records_decode_at_the_documented_offsets() {
        let s = stream(&[b""], &[SYN]);
        let rec: [u8; RECORD_LEN] = s[s.len() - RECORD_LEN..].try_into().unwrap();
        assert_eq!(Record::from_bytes(&rec), SYN);
    }

    /// A SYN and a DNS query with a head, laid out by hand: the record header
    /// holds the µs timestamp, the IPv4 header the length, id, TTL 64 and the
    /// protocol, the head follows the UDP header.
    #[test]
    fn renders_records_by_hand() {
        let dns = Record { proto: UDP, ip_len: 28 + 19, head: 1, sport: 5353, dport: 53, flags: 0, seq: 0, ..SYN };
        let head: &[u8] = b"\x12\x34\x01\x00";
        let (out, n) = render_stream(&stream(&[b"", head], &[SYN, dns])[..], Vec::new(), 65_535).unwrap();
        assert_eq!(n, 2);
        assert_eq!(&out[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
        let syn = &out[24..24 + 16 + 60];
        assert_eq!(&syn[..16], &[0x00, 0xf1, 0x53, 0x65, 0x90, 0xd0, 3, 0, 60, 0, 0, 0, 60, 0, 0, 0]);
        assert_eq!(&syn[16 + 14..16 + 24], &[0x45, 0, 0, 40, 0, 3, 0x40, 0, 64, 6]);
        assert_eq!(&syn[16 + 34 + 4..16 + 34 + 8], &[0, 0, 0, 7]);
        assert_eq!(&syn[16 + 34 + 14..16 + 34 + 16], &[0xff, 0xff], "window 65535");
        let udp = &out[24 + 16 + 60..];
        assert_eq!(udp.len(), 16 + 14 + 47);
        assert_eq!(&udp[16 + 14 + 9..16 + 14 + 10], &[17]);
        assert_eq!(&udp[16 + 42..16 + 46], head);
        assert!(udp[16 + 46..].iter().all(|&b| b == 0));
    }

    #[test]
    fn bad_streams_are_refused_with_the_packet() {
        let bad =
            |heads: &[&[u8]], r: Record| render_stream(&stream(heads, &[SYN, r])[..], Vec::new(), 96).unwrap_err();
        let record = |e: WriteError| match e {
            WriteError::Record { index: 1, reason } => reason,
            e => panic!("{e}"),
        };
        assert_eq!(record(bad(&[b""], Record { proto: 1, ..SYN })), BadRecord::Protocol(1));
        assert_eq!(record(bad(&[b""], Record { ip_len: 39, ..SYN })), BadRecord::IpLen { ip_len: 39, headers: 40 });
        assert_eq!(record(bad(&[b""], Record { head: 1, ..SYN })), BadRecord::HeadIndex { index: 1, heads: 1 });
        assert_eq!(
            record(bad(&[b"", b"ab"], Record { head: 1, ip_len: 41, ..SYN })),
            BadRecord::HeadLength { index: 1, len: 2, payload: 1 }
        );
        assert_eq!(record(bad(&[b""], Record { time_us: -1, ..SYN })), BadRecord::Time(-1));
        let cut = stream(&[b""], &[SYN, SYN]);
        let e = render_stream(&cut[..cut.len() - 5], Vec::new(), 96).unwrap_err();
        assert!(matches!(e, WriteError::Truncated { index: 1, bytes: 31 }), "{e}");
        assert!(matches!(render_stream(&b"TLPKTS00\0\0"[..], Vec::new(), 96), Err(WriteError::Magic)));
        assert!(matches!(render_stream(&MAGIC[..], Vec::new(), 96), Err(WriteError::Header)));
        assert!(matches!(render_stream(&[][..], Vec::new(), 53), Err(WriteError::Snaplen(53))));
    }

    #[test]
    fn the_file_appears_only_when_complete() {
        let dir = std::env::temp_dir().join(format!("tracelab-write-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("s.pcap");
        std::fs::write(&out, b"previous").unwrap();
        let cut = stream(&[b""], &[SYN, SYN]);
        assert!(write_pcap(&cut[..cut.len() - 1], &out, 96).is_err());
        assert_eq!(std::fs::read(&out).unwrap(), b"previous");
        assert_eq!(write_pcap(&cut[..], &out, 96).unwrap(), 2);
        assert_eq!(std::fs::read(&out).unwrap().len(), 24 + 2 * (16 + 60));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no partial file left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
