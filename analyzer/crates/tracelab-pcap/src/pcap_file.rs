//! Classic libpcap files: a 24-byte file header, then records of a 16-byte
//! header and `caplen` bytes. Both byte orders, micro- and nanosecond
//! timestamps.

use std::io::Read;
use std::path::PathBuf;

use crate::input::Input;
use crate::ReadErrorKind::{Corrupt, TruncatedTail};
use crate::{Frame, FrameSource, ReadError, ReadErrorKind, MAX_CAPLEN};

/// Which of the four standard magic numbers the file starts with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Format {
    /// Fields are big-endian (the magic reads `a1 b2 ..` on disk).
    big_endian: bool,
    nanos: bool,
}

impl Format {
    pub(crate) fn from_magic(m: [u8; 4]) -> Option<Format> {
        let (big_endian, nanos) = match m {
            [0xa1, 0xb2, 0xc3, 0xd4] => (true, false),
            [0xd4, 0xc3, 0xb2, 0xa1] => (false, false),
            [0xa1, 0xb2, 0x3c, 0x4d] => (true, true),
            [0x4d, 0x3c, 0xb2, 0xa1] => (false, true),
            _ => return None,
        };
        Some(Format { big_endian, nanos })
    }

    /// The four fields of a record header, in the file's byte order
    /// (one test of the order per record, not per field).
    fn record_header(&self, h: &[u8; 16]) -> [u32; 4] {
        let w = |i: usize| [h[i], h[i + 1], h[i + 2], h[i + 3]];
        let words = [w(0), w(4), w(8), w(12)];
        if self.big_endian {
            words.map(u32::from_be_bytes)
        } else {
            words.map(u32::from_le_bytes)
        }
    }

    /// A record's fraction of a second in nanoseconds. Both fields are
    /// unsigned (pcap spec; Wireshark agrees). libpcap reads them as signed
    /// 32-bit, so the two differ only on seconds past 2038 and on invalid
    /// fractions >= 2^31. An out-of-range fraction (>= 1 s) is not
    /// normalised away, only carried over.
    #[inline(always)]
    fn frac_ns(&self, frac: u32) -> i64 {
        i64::from(frac) * if self.nanos { 1 } else { 1000 }
    }

    fn u32(&self, b: [u8; 4]) -> u32 {
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn u16(&self, b: [u8; 2]) -> u16 {
        if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }
}

pub(crate) struct PcapReader<R> {
    input: Input<R>,
    format: Format,
    link_type: u32,
    /// The header's snaplen, or MAX_CAPLEN when it is 0 or larger (as
    /// libpcap sanitises it).
    snaplen: u32,
    name: PathBuf,
    size_hint: Option<u64>,
    done: bool,
}

/// The upper bits of the header's link-type field carry FCS information
/// (pcap spec `LinkType` and libpcap's `LT_LINKTYPE`); the link type proper
/// is the low 26 bits.
const LINKTYPE_MASK: u32 = 0x03ff_ffff;

impl<R: Read> PcapReader<R> {
    /// `input` is positioned just after the 4-byte magic.
    pub(crate) fn new(
        mut input: Input<R>,
        format: Format,
        name: PathBuf,
        size_hint: Option<u64>,
    ) -> Result<PcapReader<R>, ReadError> {
        let mut h = [0u8; 20];
        let n = input.read_full(&mut h).map_err(|e| ReadError::io(&name, 0, &e))?;
        if n < h.len() {
            return Err(ReadError::new(
                &name,
                0,
                TruncatedTail,
                format!("truncated pcap file header ({} of 24 bytes)", 4 + n),
            ));
        }
        let major = format.u16([h[0], h[1]]);
        if major != 2 {
            return Err(ReadError::new(
                &name,
                0,
                Corrupt,
                format!("unsupported pcap format version {major} (expected 2)"),
            ));
        }
        // thiszone and sigfigs (h[4..12]) are not needed: libpcap ignores
        // thiszone too.
        let snaplen = match format.u32([h[12], h[13], h[14], h[15]]) {
            0 => MAX_CAPLEN,
            s => s.min(MAX_CAPLEN),
        };
        let link_type = format.u32([h[16], h[17], h[18], h[19]]) & LINKTYPE_MASK;
        Ok(PcapReader { input, format, link_type, snaplen, name, size_hint, done: false })
    }

    fn fail(&mut self, offset: u64, kind: ReadErrorKind, reason: String) -> ReadError {
        self.done = true;
        ReadError::new(&self.name, offset, kind, reason)
    }

    fn fail_io(&mut self, offset: u64, e: &std::io::Error) -> ReadError {
        self.done = true;
        ReadError::io(&self.name, offset, e)
    }
}

impl<R: Read> PcapReader<R> {
    /// The header fields of the next record when the whole record is
    /// already in the buffer (nearly every record): then the frame needs no
    /// refill test and no header copy.
    #[inline(always)]
    fn buffered_header(&self) -> Option<[u32; 4]> {
        let (h, rest) = self.input.peek().split_first_chunk::<16>()?;
        let header = self.format.record_header(h);
        let cap_len = header[2];
        (!self.done && cap_len <= MAX_CAPLEN && rest.len() >= cap_len as usize).then_some(header)
    }

    /// Consumes the record with this `header`, whole in the buffer, and
    /// lends its frame (never copied).
    #[inline(always)]
    fn frame(&mut self, [sec, frac, cap_len, wire_len]: [u32; 4]) -> Frame<'_> {
        // A record longer than the snaplen is cut to it, exactly as libpcap
        // (and so Zeek) reads it: the header's snaplen is what the capture
        // promised, and the reference reader must see the same frames.
        let kept = cap_len.min(self.snaplen);
        let ts_ns = i64::from(sec) * 1_000_000_000 + self.format.frac_ns(frac);
        let data = &self.input.take(16 + cap_len as usize)[16..16 + kept as usize];
        Frame { ts_ns, cap_len: kept, wire_len, link_type: self.link_type, interface: 0, data }
    }

    /// Every record the buffer does not hold whole: refills, the end of the
    /// file, and the errors. This cold path and the one bounds check of
    /// `buffered_header`, callgrind, tcpmix 300 k packets: 479.9 M -> 469.3 M
    /// instructions, -35 per packet (8de361c; docs/performance-history.md,
    /// analyzer step 22).
    #[cold]
    #[inline(never)]
    fn next_frame_slow(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        if self.done {
            return Ok(None);
        }
        let start = self.input.offset();
        // The header is copied out (16 bytes) so the buffer can be refilled.
        let h = match self.input.fill(16) {
            Ok(b) => b.first_chunk::<16>().copied().ok_or(b.len()),
            Err(e) => return Err(self.fail_io(start, &e)),
        };
        let h = match h {
            Ok(h) => h,
            Err(0) => {
                self.done = true;
                return Ok(None);
            }
            Err(n) => {
                return Err(self.fail(start, TruncatedTail, format!("truncated record header ({n} of 16 bytes)")))
            }
        };
        let header = self.format.record_header(&h);
        let cap_len = header[2];
        if cap_len > MAX_CAPLEN {
            return Err(self.fail(
                start,
                Corrupt,
                format!("record caplen {cap_len} exceeds the limit of {MAX_CAPLEN} bytes"),
            ));
        }
        // The whole record is lent from the input's buffer (it always fits:
        // cap_len <= MAX_CAPLEN).
        let record = 16 + cap_len as usize;
        let have = match self.input.fill(record) {
            Ok(b) => b.len(),
            Err(e) => return Err(self.fail_io(start, &e)),
        };
        if have < record {
            let have = have - 16;
            return Err(self.fail(
                start,
                TruncatedTail,
                format!("truncated record ({have} of {cap_len} captured bytes)"),
            ));
        }
        Ok(Some(self.frame(header)))
    }
}

impl<R: Read> FrameSource for PcapReader<R> {
    #[inline]
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        match self.buffered_header() {
            Some(header) => Ok(Some(self.frame(header))),
            None => self.next_frame_slow(),
        }
    }

    fn offset(&self) -> u64 {
        self.input.offset()
    }

    fn size_hint(&self) -> Option<u64> {
        self.size_hint
    }
}
