//! The system libpcap behind [`FrameSource`]: the reference the pure-Rust
//! readers are tested against (and a fallback for formats only libpcap
//! knows).
//!
//! Differences from the pure readers, all libpcap's own:
//! - `link_type` is libpcap's `DLT_*` value, not the file's `LINKTYPE_*`
//!   (they differ for raw IP: `LINKTYPE_RAW` 101 is `DLT_RAW` 12 on Linux);
//! - `interface` is always 0 (libpcap does not report pcapng interfaces), and
//!   libpcap refuses pcapng files whose interfaces have different link types;
//! - no gzip;
//! - a record whose caplen exceeds the file's snaplen is cut to the snaplen.

use std::ffi::c_void;
use std::os::raw::c_long;
use std::path::{Path, PathBuf};

use pcap::{Capture, Offline, Precision};

use crate::{Frame, FrameSource, ReadError, ReadErrorKind};

extern "C" {
    // libpcap's stdio stream for an offline capture, to report offsets;
    // the `pcap` crate does not wrap it.
    fn pcap_file(p: *mut c_void) -> *mut c_void;
    fn ftell(stream: *mut c_void) -> c_long;
}

/// libpcap's error as a [`ReadError`]. libpcap tells a cut file only in its
/// message: "truncated dump file; tried to read N captured bytes, only got
/// M" (pcap) or "truncated pcapng dump file; ..."; a file it cannot open is
/// "No such file or directory"/"Permission denied"; anything else is a bad file.
fn libpcap_error(file: &Path, offset: u64, e: &pcap::Error) -> ReadError {
    let reason = format!("libpcap: {e}");
    let kind = if reason.contains("truncated") {
        ReadErrorKind::TruncatedTail
    } else if matches!(e, pcap::Error::IoError(_))
        || reason.contains("No such file")
        || reason.contains("Permission denied")
    {
        ReadErrorKind::Io
    } else {
        ReadErrorKind::Corrupt
    };
    ReadError::new(file, offset, kind, reason)
}

pub struct LibpcapSource {
    capture: Capture<Offline>,
    name: PathBuf,
    link_type: u32,
    size_hint: Option<u64>,
    done: bool,
}

/// Opens `path` with `pcap_open_offline_with_tstamp_precision(.., NANO)`.
pub fn open(path: &Path) -> Result<LibpcapSource, ReadError> {
    let capture = Capture::from_file_with_precision(path, Precision::Nano).map_err(|e| libpcap_error(path, 0, &e))?;
    let link_type = capture.get_datalink().0 as u32;
    let size_hint = std::fs::metadata(path).ok().map(|m| m.len());
    Ok(LibpcapSource { capture, name: path.to_path_buf(), link_type, size_hint, done: false })
}

impl LibpcapSource {
    fn tell(&self) -> u64 {
        // SAFETY: the handle is a live offline capture, for which libpcap
        // keeps a FILE* until `pcap_close`; ftell only reads its position.
        let pos = unsafe {
            let f = pcap_file(self.capture.as_ptr().cast());
            if f.is_null() {
                return 0;
            }
            ftell(f)
        };
        u64::try_from(pos).unwrap_or(0)
    }
}

impl FrameSource for LibpcapSource {
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        if self.done {
            return Ok(None);
        }
        let start = self.tell();
        match self.capture.next_packet() {
            Ok(p) => {
                // With nanosecond precision libpcap puts nanoseconds in
                // tv_usec. time_t and suseconds_t are i64 here but not on
                // every platform, hence the conversions.
                #[allow(clippy::useless_conversion)]
                let ts_ns = i64::from(p.header.ts.tv_sec) * 1_000_000_000 + i64::from(p.header.ts.tv_usec);
                Ok(Some(Frame {
                    ts_ns,
                    cap_len: p.header.caplen,
                    wire_len: p.header.len,
                    link_type: self.link_type,
                    interface: 0,
                    data: p.data,
                }))
            }
            Err(pcap::Error::NoMorePackets) => {
                self.done = true;
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                Err(libpcap_error(&self.name, start, &e))
            }
        }
    }

    fn offset(&self) -> u64 {
        self.tell()
    }

    fn size_hint(&self) -> Option<u64> {
        self.size_hint
    }
}
