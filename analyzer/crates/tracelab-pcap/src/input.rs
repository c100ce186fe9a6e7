//! A buffered byte stream that counts what it consumed, tells a clean end
//! of file from a short read, and lends whole records straight out of its
//! buffer (no copy per frame).

use std::io::{self, Cursor, Read};

use crate::MAX_CAPLEN;

/// Large reads (few system calls), and always room for a whole pcap record
/// (16-byte header + [`MAX_CAPLEN`]) so [`Input::fill`] can lend one in a
/// single slice.
///
/// `read` into this buffer rather than `mmap` of the file: on make
/// bench-analyzer's 576 MB trace (page cache warm, one byte touched per
/// 64, medians of 7 interleaved) `read` took 0.04 CPU s with 256 KiB,
/// 1 MiB or 4 MiB buffers, `mmap` + `MADV_SEQUENTIAL` 0.03 s, but the
/// mapped file's pages count in the process's RSS (551 MiB at the end,
/// against the profile's 100 MiB limit) unless each consumed range is
/// unmapped, and a file truncated while mapped raises SIGBUS instead of a
/// read error. 0.01 s is 0.5 % of the full profile.
const BUF_CAPACITY: usize = 1 << 20;
const _: () = assert!(BUF_CAPACITY >= 16 + MAX_CAPLEN as usize);

pub(crate) struct Input<R> {
    r: R,
    buf: Box<[u8]>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    offset: u64,
}

impl<R: Read> Input<R> {
    pub(crate) fn new(r: R) -> Input<R> {
        Input { r, buf: vec![0u8; BUF_CAPACITY].into_boxed_slice(), start: 0, end: 0, offset: 0 }
    }

    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The rest of the stream, the bytes already read ahead first.
    pub(crate) fn into_reader(self) -> impl Read {
        Cursor::new(self.buf[self.start..self.end].to_vec()).chain(self.r)
    }

    /// Makes at least `n` (at most [`BUF_CAPACITY`]) unconsumed bytes
    /// available unless the stream ends first, and returns all that are
    /// (fewer than `n` only at end of stream). Consumes nothing.
    #[inline]
    pub(crate) fn fill(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.end - self.start < n {
            self.refill(n)?;
        }
        Ok(&self.buf[self.start..self.end])
    }

    /// The slow part of [`Input::fill`]: once per buffer, not per frame.
    #[cold]
    #[inline(never)]
    fn refill(&mut self, n: usize) -> io::Result<()> {
        debug_assert!(n <= BUF_CAPACITY);
        if self.buf.len() - self.start < n {
            // Not enough room behind the unconsumed bytes: move them to
            // the front (at most one record's worth).
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end - self.start < n {
            match self.r.read(&mut self.buf[self.end..]) {
                Ok(0) => break,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The unconsumed bytes already buffered (no read).
    #[inline(always)]
    pub(crate) fn peek(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Consumes `n` bytes made available by [`Input::fill`] and lends them
    /// until the next call.
    #[inline(always)]
    pub(crate) fn take(&mut self, n: usize) -> &[u8] {
        let at = self.start;
        assert!(n <= self.end - at, "take beyond what fill made available");
        self.start += n;
        self.offset += n as u64;
        &self.buf[at..at + n]
    }

    /// Fills `dst` unless the stream ends first; returns how many bytes were
    /// read (less than `dst.len()` only at end of stream).
    pub(crate) fn read_full(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < dst.len() {
            let got = self.fill(1)?;
            if got.is_empty() {
                break;
            }
            let k = got.len().min(dst.len() - n);
            dst[n..n + k].copy_from_slice(&got[..k]);
            self.take(k);
            n += k;
        }
        Ok(n)
    }

    /// Discards up to `len` bytes without copying them; returns how many
    /// were discarded (less than `len` only at end of stream).
    pub(crate) fn skip(&mut self, len: u64) -> io::Result<u64> {
        let mut left = len;
        while left > 0 {
            let available = self.fill(1)?.len();
            if available == 0 {
                break;
            }
            let k = available.min(usize::try_from(left).unwrap_or(usize::MAX));
            self.take(k);
            left -= k as u64;
        }
        Ok(len - left)
    }
}
