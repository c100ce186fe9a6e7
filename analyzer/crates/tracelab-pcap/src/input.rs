//! A buffered byte stream that counts what it consumed and tells a clean end
//! of file from a short read.

use std::io::{self, BufRead, BufReader, Read};

/// Large enough that a frame is usually copied straight out of the buffer
/// in one piece.
const BUF_CAPACITY: usize = 256 * 1024;

pub(crate) struct Input<R> {
    r: BufReader<R>,
    offset: u64,
}

impl<R: Read> Input<R> {
    pub(crate) fn new(r: R) -> Input<R> {
        Input {
            r: BufReader::with_capacity(BUF_CAPACITY, r),
            offset: 0,
        }
    }

    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The buffered reader itself: unlike `BufReader::into_inner` this keeps
    /// the bytes already read ahead.
    pub(crate) fn into_buf_reader(self) -> BufReader<R> {
        self.r
    }

    /// Fills `buf` unless the stream ends first; returns how many bytes were
    /// read (less than `buf.len()` only at end of stream).
    pub(crate) fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.offset += n as u64;
                    return Err(e);
                }
            }
        }
        self.offset += n as u64;
        Ok(n)
    }

    /// Discards up to `len` bytes without copying them; returns how many
    /// were discarded (less than `len` only at end of stream).
    pub(crate) fn skip(&mut self, len: u64) -> io::Result<u64> {
        let mut left = len;
        while left > 0 {
            let available = match self.r.fill_buf() {
                Ok(b) => b.len(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available == 0 {
                break;
            }
            let k = available.min(usize::try_from(left).unwrap_or(usize::MAX));
            self.r.consume(k);
            self.offset += k as u64;
            left -= k as u64;
        }
        Ok(len - left)
    }
}
