//! Many capture files read as one capture: the rotated files of
//! `tcpdump -G/-C` or `dumpcap -b`, ordered by their first timestamp (not by
//! their names, which rotation schemes number differently) and read one
//! after the other through a single reader at a time.
//!
//! [`Chain::probe`] opens every file once to read its first frame (its time
//! and link type), checks that the files share one link type and orders
//! them. The caller then reads frames from [`Chain::current`] and, when it
//! ends, moves on with [`Chain::next_file`], telling the chain the last
//! timestamp it saw so that gaps and overlaps between files are measured.
//! (A `FrameSource` over the chain would have to return a frame borrowed
//! from a reader it may replace in the same call, which the borrow checker
//! rejects; the read loop switching files itself costs nothing per frame.)

use std::path::{Path, PathBuf};

use crate::{FrameSource, ReadError, Source};

/// Opens one file of the chain (the native reader or libpcap).
pub type Opener = fn(&Path) -> Result<Source<'static>, ReadError>;

/// One file of the chain, as probed and then as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub path: PathBuf,
    /// The first frame's timestamp; `None` for a file without frames.
    pub first_ts_ns: Option<i64>,
    /// The first frame's `LINKTYPE_*`; `None` for a file without frames.
    pub link_type: Option<u32>,
    /// Frames read from the file (set once it has been read).
    pub frames: u64,
    /// The last frame's timestamp (set once the file has been read).
    pub last_ts_ns: Option<i64>,
}

/// Why the files do not make one capture.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(
        "{}: link type {second_type}, but {} has link type {first_type}: files of different link types are not one capture",
        second.display(), first.display()
    )]
    LinkTypes { first: PathBuf, first_type: u32, second: PathBuf, second_type: u32 },
    #[error("{}: directory holds no capture file", .0.display())]
    EmptyDir(PathBuf),
    #[error("{}: cannot list directory: {source}", dir.display())]
    ListDir { dir: PathBuf, source: std::io::Error },
    #[error("no input file")]
    NoInput,
}

/// The files given, with each directory replaced by the files in it (sorted
/// by name; hidden files skipped). The order is not the reading order: see
/// [`Chain::probe`].
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, ChainError> {
    let mut files = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            files.push(input.clone());
            continue;
        }
        let entries = std::fs::read_dir(input).map_err(|e| ChainError::ListDir { dir: input.clone(), source: e })?;
        let mut inside = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| ChainError::ListDir { dir: input.clone(), source: e })?;
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if !hidden && entry.path().is_file() {
                inside.push(entry.path());
            }
        }
        if inside.is_empty() {
            return Err(ChainError::EmptyDir(input.clone()));
        }
        inside.sort();
        files.extend(inside);
    }
    if files.is_empty() {
        return Err(ChainError::NoInput);
    }
    Ok(files)
}

/// The files of one capture, read in order of their first timestamp.
pub struct Chain {
    parts: Vec<Part>,
    open: Opener,
    /// The part [`Chain::current`] reads.
    index: usize,
    current: Source<'static>,
    /// Decompressed bytes of the parts before the current one.
    done_bytes: u64,
    /// Frames counted by the caller when the current part started.
    frames_at_start: u64,
}

impl Chain {
    /// Opens each file to read its first frame, checks that all share one
    /// link type, orders them by first timestamp (files without frames
    /// last; ties in the order given) and opens the first for reading.
    pub fn probe(files: &[PathBuf], open: Opener) -> Result<Chain, ChainError> {
        let mut parts = Vec::with_capacity(files.len());
        for path in files {
            let mut source = open(path)?;
            // A file whose first record is broken has no first frame: it
            // is ordered last, and reading it reports the error with the
            // frames before it profiled, as for a single file.
            let first = source.next_frame().ok().flatten().map(|f| (f.ts_ns, f.link_type));
            parts.push(Part {
                path: path.clone(),
                first_ts_ns: first.map(|f| f.0),
                link_type: first.map(|f| f.1),
                frames: 0,
                last_ts_ns: None,
            });
        }
        let Some(first) = parts.first() else { return Err(ChainError::NoInput) };
        let mut reference: Option<(PathBuf, u32)> = first.link_type.map(|t| (first.path.clone(), t));
        for part in &parts {
            match (&reference, part.link_type) {
                (None, Some(t)) => reference = Some((part.path.clone(), t)),
                (Some((path, t)), Some(u)) if *t != u => {
                    return Err(ChainError::LinkTypes {
                        first: path.clone(),
                        first_type: *t,
                        second: part.path.clone(),
                        second_type: u,
                    });
                }
                _ => {}
            }
        }
        // Stable: equal first timestamps keep the order given.
        parts.sort_by_key(|p| (p.first_ts_ns.is_none(), p.first_ts_ns));
        let current = open(&parts[0].path)?;
        Ok(Chain { parts, open, index: 0, current, done_bytes: 0, frames_at_start: 0 })
    }

    /// The reader of the current file.
    #[inline]
    pub fn current(&mut self) -> &mut Source<'static> {
        &mut self.current
    }

    /// Ends the current file (`frames` = frames the caller has read from the
    /// whole chain so far, `last_ts_ns` = the timestamp of the last one) and
    /// opens the next. `Ok(false)` when there is none.
    pub fn next_file(&mut self, frames: u64, last_ts_ns: Option<i64>) -> Result<bool, ReadError> {
        let part = &mut self.parts[self.index];
        part.frames = frames - self.frames_at_start;
        part.last_ts_ns = if part.frames > 0 { last_ts_ns } else { None };
        if self.index + 1 == self.parts.len() {
            return Ok(false);
        }
        self.done_bytes += self.current.offset();
        self.frames_at_start = frames;
        self.index += 1;
        self.current = (self.open)(&self.parts[self.index].path)?;
        Ok(true)
    }

    /// The files in reading order.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Bytes consumed over all files, for progress.
    pub fn offset(&self) -> u64 {
        self.done_bytes + self.current.offset()
    }

    /// The files' total size, for progress; `None` when a file is gzipped
    /// (its offsets count decompressed bytes) or cannot be measured.
    pub fn size_hint(&self) -> Option<u64> {
        if self.parts.iter().any(|p| is_gzip(&p.path)) {
            return None;
        }
        self.parts.iter().map(|p| std::fs::metadata(&p.path).ok().map(|m| m.len())).sum()
    }
}

fn is_gzip(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 2];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && magic == crate::GZIP_MAGIC
}

/// The time between consecutive files' last and first frames, for each
/// boundary: positive = a gap, negative = an overlap (the next file starts
/// before the previous one ends). Files without frames are left out.
pub fn boundaries(parts: &[Part]) -> Vec<Boundary<'_>> {
    let read: Vec<&Part> = parts.iter().filter(|p| p.first_ts_ns.is_some()).collect();
    read.windows(2)
        .filter_map(|w| {
            let (end, start) = (w[0].last_ts_ns?, w[1].first_ts_ns?);
            Some(Boundary { before: &w[0].path, after: &w[1].path, gap_ns: start.saturating_sub(end) })
        })
        .collect()
}

/// Where one file ends and the next begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Boundary<'a> {
    pub before: &'a Path,
    pub after: &'a Path,
    /// Next file's first timestamp less the previous file's last one.
    pub gap_ns: i64,
}
