//! pcapng (draft-ietf-opsawg-pcapng): sections (SHB, either byte order),
//! interfaces (IDB with `if_tsresol` and `if_tsoffset`), and the packet
//! blocks EPB, SPB and the obsolete OPB. Every other block is skipped
//! unread, so its size is not limited.

use std::io::{self, Read};
use std::path::PathBuf;

use crate::input::Input;
use crate::ReadErrorKind::{self, Corrupt, TruncatedTail};
use crate::{io_kind, Frame, FrameSource, ReadError, MAX_CAPLEN, MAX_IDB_LEN};

/// Block type of a Section Header Block; the same bytes in both orders.
pub(crate) const SHB_TYPE: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
const IDB: u32 = 1;
const OPB: u32 = 2;
const SPB: u32 = 3;
const EPB: u32 = 6;

const OPT_ENDOFOPT: u16 = 0;
const OPT_IF_TSRESOL: u16 = 9;
const OPT_IF_TSOFFSET: u16 = 14;

/// Type, length and trailing length of every block.
const BLOCK_OVERHEAD: u64 = 12;

#[derive(Clone, Copy)]
struct Order {
    big_endian: bool,
}

impl Order {
    fn u16(self, b: [u8; 2]) -> u16 {
        if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }
    fn u32(self, b: [u8; 4]) -> u32 {
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }
    fn u32_at(self, b: &[u8], at: usize) -> u32 {
        self.u32([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }
}

struct Interface {
    link_type: u32,
    snaplen: u32,
    /// Timestamp units per second: 10^n or 2^n from `if_tsresol`.
    units_per_sec: u64,
    /// `if_tsoffset`, seconds added to every timestamp.
    offset_s: i64,
}

pub(crate) struct PcapngReader<R> {
    input: Input<R>,
    name: PathBuf,
    size_hint: Option<u64>,
    order: Order,
    /// Interfaces of the current section, indexed by interface id.
    interfaces: Vec<Interface>,
    /// Frame bytes (and whole IDBs); reused, grows to the largest seen.
    buf: Vec<u8>,
    done: bool,
}

/// Why a block's bytes could not be read or skipped; the caller adds file
/// and offset (a [`ReadError`] with this as its reason).
#[derive(Debug, thiserror::Error)]
enum BlockError {
    #[error("truncated block ({read} of {want} bytes read)")]
    Truncated { read: usize, want: usize },
    #[error("truncated block ({skipped} of {want} bytes to skip)")]
    TruncatedSkip { skipped: u64, want: u64 },
    #[error("read error: {0}")]
    Io(io::Error),
}

impl BlockError {
    fn kind(&self) -> ReadErrorKind {
        match self {
            BlockError::Truncated { .. } | BlockError::TruncatedSkip { .. } => TruncatedTail,
            BlockError::Io(e) => io_kind(e),
        }
    }
}

fn fill<R: Read>(input: &mut Input<R>, dst: &mut [u8]) -> Result<(), BlockError> {
    match input.read_full(dst) {
        Ok(n) if n == dst.len() => Ok(()),
        Ok(n) => Err(BlockError::Truncated { read: n, want: dst.len() }),
        Err(e) => Err(BlockError::Io(e)),
    }
}

fn skip<R: Read>(input: &mut Input<R>, len: u64) -> Result<(), BlockError> {
    match input.skip(len) {
        Ok(n) if n == len => Ok(()),
        Ok(n) => Err(BlockError::TruncatedSkip { skipped: n, want: len }),
        Err(e) => Err(BlockError::Io(e)),
    }
}

impl<R: Read> PcapngReader<R> {
    /// `input` is positioned just after the first SHB's block type.
    pub(crate) fn new(input: Input<R>, name: PathBuf, size_hint: Option<u64>) -> Result<PcapngReader<R>, ReadError> {
        let mut r = PcapngReader {
            input,
            name,
            size_hint,
            order: Order { big_endian: false },
            interfaces: Vec::new(),
            buf: Vec::new(),
            done: false,
        };
        r.section_header(0)?;
        Ok(r)
    }

    fn fail(&mut self, offset: u64, kind: ReadErrorKind, reason: impl Into<String>) -> ReadError {
        self.done = true;
        ReadError::new(&self.name, offset, kind, reason)
    }

    /// Reads an SHB whose type has been consumed: its byte-order magic sets
    /// the order of everything up to the next SHB, and a new section starts
    /// with no interfaces.
    fn section_header(&mut self, start: u64) -> Result<(), ReadError> {
        let mut h = [0u8; 12]; // length, byte-order magic, major, minor
        fill(&mut self.input, &mut h).map_err(|r| self.fail(start, r.kind(), format!("section header: {r}")))?;
        self.order = match [h[4], h[5], h[6], h[7]] {
            [0x1a, 0x2b, 0x3c, 0x4d] => Order { big_endian: true },
            [0x4d, 0x3c, 0x2b, 0x1a] => Order { big_endian: false },
            m => return Err(self.fail(start, Corrupt, format!("section header: bad byte-order magic {m:02x?}"))),
        };
        let total = u64::from(self.order.u32([h[0], h[1], h[2], h[3]]));
        // Type, length, BOM, version (4) and the 8-byte section length.
        if total < 28 || total % 4 != 0 {
            return Err(self.fail(start, Corrupt, format!("section header: invalid block length {total}")));
        }
        let major = self.order.u16([h[8], h[9]]);
        if major != 1 {
            return Err(self.fail(start, Corrupt, format!("section header: unsupported pcapng version {major}")));
        }
        // Section length and options are not needed.
        skip(&mut self.input, total - 16).map_err(|r| self.fail(start, r.kind(), format!("section header: {r}")))?;
        self.interfaces.clear();
        Ok(())
    }

    fn interface_description(&mut self, start: u64, total: u64) -> Result<(), ReadError> {
        if total > u64::from(MAX_IDB_LEN) {
            return Err(self.fail(
                start,
                Corrupt,
                format!("interface description block of {total} bytes exceeds the limit"),
            ));
        }
        let body = (total - BLOCK_OVERHEAD) as usize;
        if body < 8 {
            return Err(self.fail(start, Corrupt, format!("interface description block too short ({total} bytes)")));
        }
        let len = body + 4;
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        fill(&mut self.input, &mut self.buf[..len]).map_err(|r| self.fail(start, r.kind(), r.to_string()))?;
        let o = self.order;
        let b = &self.buf[..body];
        let link_type = u32::from(o.u16([b[0], b[1]]));
        let snaplen = o.u32_at(b, 4);
        let mut tsresol = 6u8; // microseconds unless the option says otherwise
        let mut offset_s = 0i64;
        let mut p = 8;
        while p + 4 <= body {
            let code = o.u16([b[p], b[p + 1]]);
            let olen = usize::from(o.u16([b[p + 2], b[p + 3]]));
            let v = p + 4;
            if v + olen > body {
                return Err(self.fail(start, Corrupt, format!("interface option {code} runs past its block")));
            }
            match code {
                OPT_ENDOFOPT => break,
                OPT_IF_TSRESOL if olen >= 1 => tsresol = b[v],
                OPT_IF_TSOFFSET if olen == 8 => {
                    let hi = o.u32_at(b, v);
                    let lo = o.u32_at(b, v + 4);
                    // The option is one 64-bit integer in the section's order.
                    let raw = if o.big_endian {
                        (u64::from(hi) << 32) | u64::from(lo)
                    } else {
                        (u64::from(lo) << 32) | u64::from(hi)
                    };
                    offset_s = raw as i64;
                }
                _ => {}
            }
            p = v + ((olen + 3) & !3);
        }
        // Bit 7 set: a power of two; clear: a power of ten. Larger
        // exponents than these do not fit the 64-bit timestamp arithmetic.
        let units_per_sec = if tsresol & 0x80 != 0 {
            let e = tsresol & 0x7f;
            if e > 63 {
                return Err(self.fail(start, Corrupt, format!("if_tsresol 2^-{e} out of range")));
            }
            1u64 << e
        } else {
            if tsresol > 19 {
                return Err(self.fail(start, Corrupt, format!("if_tsresol 10^-{tsresol} out of range")));
            }
            10u64.pow(u32::from(tsresol))
        };
        self.interfaces.push(Interface { link_type, snaplen, units_per_sec, offset_s });
        Ok(())
    }

    fn interface(&mut self, start: u64, id: u32) -> Result<&Interface, ReadError> {
        if (id as usize) < self.interfaces.len() {
            return Ok(&self.interfaces[id as usize]);
        }
        let n = self.interfaces.len();
        Err(self.fail(start, Corrupt, format!("packet block refers to interface {id}, but the section describes {n}")))
    }
}

/// Nanoseconds since the epoch of a timestamp in interface units, floored
/// like libpcap's own conversion.
fn ts_ns(i: &Interface, hi: u32, lo: u32) -> i64 {
    let units = i128::from((u64::from(hi) << 32) | u64::from(lo));
    let ns = units * 1_000_000_000 / i128::from(i.units_per_sec) + i128::from(i.offset_s) * 1_000_000_000;
    ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl<R: Read> FrameSource for PcapngReader<R> {
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        loop {
            if self.done {
                return Ok(None);
            }
            let start = self.input.offset();
            let mut h = [0u8; 8];
            let n = match self.input.read_full(&mut h[..4]) {
                Ok(n) => n,
                Err(e) => return Err(self.fail(start, io_kind(&e), format!("read error: {e}"))),
            };
            if n == 0 {
                self.done = true;
                return Ok(None);
            }
            if n < 4 {
                return Err(self.fail(start, TruncatedTail, format!("truncated block header ({n} of 8 bytes)")));
            }
            if h[..4] == SHB_TYPE {
                self.section_header(start)?;
                continue;
            }
            fill(&mut self.input, &mut h[4..]).map_err(|r| self.fail(start, r.kind(), format!("block header: {r}")))?;
            let o = self.order;
            let block_type = o.u32_at(&h, 0);
            let total = u64::from(o.u32_at(&h, 4));
            if total < BLOCK_OVERHEAD || total % 4 != 0 {
                return Err(self.fail(
                    start,
                    Corrupt,
                    format!("block type {block_type:#x}: invalid block length {total}"),
                ));
            }
            let body = total - BLOCK_OVERHEAD;
            // Fixed part of the packet block: (interface, ts_high, ts_low,
            // caplen, wire_len) for EPB and OPB, wire_len alone for SPB.
            let (interface, hi, lo, cap_len, wire_len, fixed) = match block_type {
                IDB => {
                    self.interface_description(start, total)?;
                    continue;
                }
                EPB | OPB => {
                    let mut f = [0u8; 20];
                    if body < 20 {
                        return Err(self.fail(start, Corrupt, format!("packet block too short ({total} bytes)")));
                    }
                    fill(&mut self.input, &mut f).map_err(|r| self.fail(start, r.kind(), r.to_string()))?;
                    let interface = if block_type == EPB {
                        o.u32_at(&f, 0)
                    } else {
                        // OPB: 16-bit interface id, then a drops counter.
                        u32::from(o.u16([f[0], f[1]]))
                    };
                    (interface, o.u32_at(&f, 4), o.u32_at(&f, 8), o.u32_at(&f, 12), o.u32_at(&f, 16), 20)
                }
                SPB => {
                    let mut f = [0u8; 4];
                    if body < 4 {
                        return Err(self.fail(
                            start,
                            Corrupt,
                            format!("simple packet block too short ({total} bytes)"),
                        ));
                    }
                    fill(&mut self.input, &mut f).map_err(|r| self.fail(start, r.kind(), r.to_string()))?;
                    let wire_len = o.u32_at(&f, 0);
                    let snaplen = self.interface(start, 0)?.snaplen;
                    // An SPB has no caplen: the spec derives it from the
                    // original length, the snaplen and the block size.
                    let mut cap = u64::from(wire_len).min(body - 4);
                    if snaplen != 0 {
                        cap = cap.min(u64::from(snaplen));
                    }
                    (0, 0, 0, cap.min(u64::from(u32::MAX)) as u32, wire_len, 4)
                }
                _ => {
                    skip(&mut self.input, total - 8).map_err(|r| self.fail(start, r.kind(), r.to_string()))?;
                    continue;
                }
            };
            if cap_len > MAX_CAPLEN {
                return Err(self.fail(
                    start,
                    Corrupt,
                    format!("packet caplen {cap_len} exceeds the limit of {MAX_CAPLEN} bytes"),
                ));
            }
            if fixed + u64::from(cap_len) > body {
                return Err(self.fail(
                    start,
                    Corrupt,
                    format!("packet caplen {cap_len} exceeds its block of {total} bytes"),
                ));
            }
            let link_type = self.interface(start, interface)?.link_type;
            let ts = if block_type == SPB { 0 } else { ts_ns(self.interface(start, interface)?, hi, lo) };
            let len = cap_len as usize;
            if self.buf.len() < len {
                self.buf.resize(len, 0);
            }
            fill(&mut self.input, &mut self.buf[..len]).map_err(|r| self.fail(start, r.kind(), r.to_string()))?;
            // Padding, options and the trailing length.
            skip(&mut self.input, total - 8 - fixed - u64::from(cap_len))
                .map_err(|r| self.fail(start, r.kind(), r.to_string()))?;
            return Ok(Some(Frame { ts_ns: ts, cap_len, wire_len, link_type, interface, data: &self.buf[..len] }));
        }
    }

    fn offset(&self) -> u64 {
        self.input.offset()
    }

    fn size_hint(&self) -> Option<u64> {
        self.size_hint
    }
}
