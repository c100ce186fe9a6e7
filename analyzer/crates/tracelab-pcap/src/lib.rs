//! Capture-file readers: classic pcap (micro- and nanosecond, both byte
//! orders), pcapng (several sections and interfaces, mixed link types), and
//! gzip-compressed files of either, recognised by their magic number.
//!
//! The pure-Rust readers are buffered, reuse one frame buffer (no allocation
//! per frame once the largest frame has been seen) and enforce explicit
//! limits ([`MAX_CAPLEN`], [`MAX_IDB_LEN`]) so that a corrupt length field is
//! a [`ReadError`], never an allocation bomb. A file that ends in the middle
//! of a record yields every complete frame before it and then one
//! `ReadError` naming the file and the offset of the broken record, its
//! [`ReadErrorKind`] telling such a cut tail from corruption; after an
//! error a source only returns `Ok(None)`.
//!
//! [`libpcap`] wraps the system libpcap (through the `pcap` crate) behind the
//! same trait. It is the reference the pure readers are tested against; the
//! `libpcap` feature (on by default) brings it in.
//!
//! [`write`] is the project's Rust pcap writer and frame builder; [`chain`]
//! reads many rotated files as one capture.
//!
//! Not implemented: pcapng Decryption Secrets, Name Resolution and statistics
//! blocks are skipped; the "modified" (Kuznetsov) and Navtel pcap variants
//! are rejected by magic; pcapng SPB frames carry no timestamp (`ts_ns` 0).

use std::fs::File;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

pub mod chain;
mod input;
#[cfg(feature = "libpcap")]
pub mod libpcap;
mod pcap_file;
mod pcapng;
pub mod write;

use input::Input;

/// Largest frame accepted, in bytes: libpcap's and Wireshark's own ceiling
/// (`MAXIMUM_SNAPLEN`, 256 KiB). A larger record length means a corrupt file.
pub const MAX_CAPLEN: u32 = 262_144;

/// Largest pcapng Interface Description Block accepted (it is read whole to
/// parse its options); other blocks are streamed or skipped, never buffered
/// beyond their frame.
pub const MAX_IDB_LEN: u32 = 1 << 20;

/// One captured frame, borrowed from the reader's buffer until the next call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Capture timestamp in nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    /// Bytes captured (`data.len()`).
    pub cap_len: u32,
    /// Length of the frame on the wire.
    pub wire_len: u32,
    /// The file's (pcap) or interface's (pcapng) `LINKTYPE_*` value.
    pub link_type: u32,
    /// pcapng interface index within its section (0 for pcap).
    pub interface: u32,
    pub data: &'a [u8],
}

/// A read failure, located: `FILE: offset N: reason`. The offset is where
/// the broken record (or header) starts in the (decompressed) stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: offset {offset}: {reason}", file.display())]
pub struct ReadError {
    pub file: PathBuf,
    pub offset: u64,
    pub reason: String,
    pub kind: ReadErrorKind,
}

/// What a [`ReadError`] says about the bytes: whether every record before
/// it can be trusted as the whole capture so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// The stream ends inside a record or header (or a gzip stream ends
    /// before its trailer): a file still being written, or cut short by a
    /// full disk or a copy. Every record before the offset is whole.
    TruncatedTail,
    /// The bytes are not a valid capture: a bad magic, version, length or
    /// option, a corrupt deflate stream or gzip checksum.
    Corrupt,
    /// The system could not open or read the file.
    Io,
}

impl ReadError {
    pub(crate) fn new(file: &Path, offset: u64, kind: ReadErrorKind, reason: impl Into<String>) -> ReadError {
        ReadError { file: file.to_path_buf(), offset, reason: reason.into(), kind }
    }

    /// A failed read of the byte stream at `offset`: a gzip stream that ends
    /// early is a cut tail, one that does not inflate is corrupt.
    pub(crate) fn io(file: &Path, offset: u64, e: &std::io::Error) -> ReadError {
        ReadError::new(file, offset, io_kind(e), format!("read error: {e}"))
    }
}

/// The kind of an error of the byte stream (the file or the gzip decoder
/// over it): flate2 reports a stream that ends before its trailer as
/// `UnexpectedEof`, bad deflate data or checksum as `InvalidInput`/`InvalidData`.
pub(crate) fn io_kind(e: &std::io::Error) -> ReadErrorKind {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => ReadErrorKind::TruncatedTail,
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData => ReadErrorKind::Corrupt,
        _ => ReadErrorKind::Io,
    }
}

/// A stream of frames.
pub trait FrameSource {
    /// The next frame, `Ok(None)` at the end of the file (or after an error).
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError>;
    /// Bytes of the (decompressed) file consumed so far.
    fn offset(&self) -> u64;
    /// Size of the file on disk, for progress; `None` when unknown (a reader
    /// over a stream, or a gzip file whose decompressed size is unknown).
    fn size_hint(&self) -> Option<u64>;
}

/// A reader of any supported format: a pure reader chosen by magic number,
/// or the system libpcap. A concrete type rather than a
/// `Box<dyn FrameSource>` so that a read loop over it calls the per-frame
/// code statically (and can inline it): one predictable branch on the
/// reader per frame instead of an indirect call. The byte stream underneath
/// is boxed instead: it is called once per megabyte buffer, not per frame.
/// Callgrind, tcpmix 300 k packets: 510.3 M -> 507.7 M instructions, -9 per
/// packet (92a4a6d; docs/performance-history.md, analyzer step 19).
pub struct Source<'r>(Reader<'r>);

enum Reader<'r> {
    Pcap(pcap_file::PcapReader<Box<dyn Read + Send + 'r>>),
    Pcapng(pcapng::PcapngReader<Box<dyn Read + Send + 'r>>),
    #[cfg(feature = "libpcap")]
    Libpcap(libpcap::LibpcapSource),
}

#[cfg(feature = "libpcap")]
impl From<libpcap::LibpcapSource> for Source<'_> {
    fn from(r: libpcap::LibpcapSource) -> Self {
        Source(Reader::Libpcap(r))
    }
}

impl FrameSource for Source<'_> {
    #[inline]
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        match &mut self.0 {
            Reader::Pcap(r) => r.next_frame(),
            Reader::Pcapng(r) => r.next_frame(),
            #[cfg(feature = "libpcap")]
            Reader::Libpcap(r) => r.next_frame(),
        }
    }

    fn offset(&self) -> u64 {
        match &self.0 {
            Reader::Pcap(r) => r.offset(),
            Reader::Pcapng(r) => r.offset(),
            #[cfg(feature = "libpcap")]
            Reader::Libpcap(r) => r.offset(),
        }
    }

    fn size_hint(&self) -> Option<u64> {
        match &self.0 {
            Reader::Pcap(r) => r.size_hint(),
            Reader::Pcapng(r) => r.size_hint(),
            #[cfg(feature = "libpcap")]
            Reader::Libpcap(r) => r.size_hint(),
        }
    }
}

/// Opens a capture file of any supported format, recognised by its magic
/// number (not by its name).
pub fn open(path: &Path) -> Result<Source<'static>, ReadError> {
    let file = File::open(path).map_err(|e| ReadError::new(path, 0, ReadErrorKind::Io, format!("cannot open: {e}")))?;
    let size = file.metadata().ok().map(|m| m.len());
    sniff(Box::new(file), path.to_path_buf(), size)
}

/// Reads a capture from any byte stream (a slice, a pipe, a socket);
/// `name` is what errors call it.
pub fn from_reader<'r, R: Read + Send + 'r>(reader: R, name: impl Into<PathBuf>) -> Result<Source<'r>, ReadError> {
    sniff(Box::new(reader), name.into(), None)
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

fn sniff<'r>(
    reader: Box<dyn Read + Send + 'r>,
    name: PathBuf,
    size_hint: Option<u64>,
) -> Result<Source<'r>, ReadError> {
    let mut input = Input::new(reader);
    let magic = read_magic(&mut input, &name)?;
    if magic[..2] == GZIP_MAGIC {
        // Give the decoder back the bytes we sniffed; the stream inside is
        // sniffed again (a pcap or pcapng, never a second gzip layer). Its
        // offsets count decompressed bytes, so the on-disk size is no
        // measure of progress: the size hint is dropped.
        let gz = flate2::read::MultiGzDecoder::new(Cursor::new(magic).chain(input.into_reader()));
        let mut inner = Input::new(Box::new(gz) as Box<dyn Read + Send + 'r>);
        let magic = read_magic(&mut inner, &name)?;
        return dispatch(inner, magic, name, None);
    }
    dispatch(input, magic, name, size_hint)
}

fn read_magic<R: Read>(input: &mut Input<R>, name: &Path) -> Result<[u8; 4], ReadError> {
    let mut magic = [0u8; 4];
    let n = input.read_full(&mut magic).map_err(|e| ReadError::io(name, 0, &e))?;
    if n < magic.len() {
        return Err(ReadError::new(
            name,
            0,
            ReadErrorKind::TruncatedTail,
            format!("file too short to be a capture file ({n} bytes)"),
        ));
    }
    Ok(magic)
}

fn dispatch<'r>(
    input: Input<Box<dyn Read + Send + 'r>>,
    magic: [u8; 4],
    name: PathBuf,
    size_hint: Option<u64>,
) -> Result<Source<'r>, ReadError> {
    if let Some(format) = pcap_file::Format::from_magic(magic) {
        let r = pcap_file::PcapReader::new(input, format, name, size_hint)?;
        return Ok(Source(Reader::Pcap(r)));
    }
    if magic == pcapng::SHB_TYPE {
        let r = pcapng::PcapngReader::new(input, name, size_hint)?;
        return Ok(Source(Reader::Pcapng(r)));
    }
    Err(ReadError::new(
        &name,
        0,
        ReadErrorKind::Corrupt,
        format!(
            "not a pcap, pcapng or gzip file (magic {:02x}{:02x}{:02x}{:02x})",
            magic[0], magic[1], magic[2], magic[3]
        ),
    ))
}
