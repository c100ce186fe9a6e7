//! Fixed-size binary spill files for phase 2. Connection categories (lc-rp,
//! ls-ls, ...) depend on which hosts are servers, which is known only at the
//! end of the trace; rather than hold every connection in memory, phase 1
//! spills the (orig, resp) pair of each written connection and each
//! connection's load bins, and phase 2 reads them back in the same order.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use tracelab_decode::Addr;
use tracelab_flow::{ConnRecord, LoadBin};

use crate::scope::Scope;

fn spill_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(".{name}.spill"))
}

/// (orig, resp) of every connection, in output order: 32 bytes each.
pub struct PairSpill {
    path: PathBuf,
    w: BufWriter<File>,
}

impl PairSpill {
    pub fn create(dir: &Path) -> io::Result<PairSpill> {
        let path = spill_path(dir, "pairs");
        Ok(PairSpill { w: BufWriter::new(File::create(&path)?), path })
    }
    pub fn push(&mut self, orig: &Addr, resp: &Addr) -> io::Result<()> {
        self.w.write_all(&orig.0)?;
        self.w.write_all(&resp.0)
    }
    /// Reopens the spill for reading (and removes the file once read).
    pub fn into_reader(mut self) -> io::Result<PairReader> {
        self.w.flush()?;
        let r = BufReader::new(File::open(&self.path)?);
        Ok(PairReader { r, path: self.path })
    }
}

pub struct PairReader {
    r: BufReader<File>,
    path: PathBuf,
}

impl PairReader {
    pub fn next_pair(&mut self) -> io::Result<(Addr, Addr)> {
        let mut buf = [0u8; 32];
        self.r.read_exact(&mut buf)?;
        let mut o = [0u8; 16];
        let mut r = [0u8; 16];
        o.copy_from_slice(&buf[..16]);
        r.copy_from_slice(&buf[16..]);
        Ok((Addr(o), Addr(r)))
    }
}

impl Drop for PairReader {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Per connection, in output order, what phase 2's composition needs of
/// its row: IP bytes and packets per side, and whether it carried payload
/// (33 bytes each), so phase 2 reads no Parquet back.
pub struct VolumeSpill {
    path: PathBuf,
    w: BufWriter<File>,
}

#[derive(Clone, Copy, Debug)]
pub struct Volumes {
    pub orig_ip_bytes: u64,
    pub resp_ip_bytes: u64,
    pub orig_pkts: u64,
    pub resp_pkts: u64,
    /// Payload bytes in either direction (`orig_bytes` + `resp_bytes` > 0).
    pub payload: bool,
}

const VOLUMES: usize = 4 * 8 + 1;

impl VolumeSpill {
    pub fn create(dir: &Path) -> io::Result<VolumeSpill> {
        let path = spill_path(dir, "volumes");
        Ok(VolumeSpill { w: BufWriter::new(File::create(&path)?), path })
    }
    pub fn push(&mut self, c: &ConnRecord) -> io::Result<()> {
        let mut buf = [0u8; VOLUMES];
        for (i, v) in [c.orig_ip_bytes, c.resp_ip_bytes, c.orig_pkts, c.resp_pkts].into_iter().enumerate() {
            buf[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        buf[32] = u8::from(c.orig_bytes.unwrap_or(0) + c.resp_bytes.unwrap_or(0) > 0);
        self.w.write_all(&buf)
    }
    /// Reopens the spill for reading (and removes the file once read).
    pub fn into_reader(mut self) -> io::Result<VolumeReader> {
        self.w.flush()?;
        let r = BufReader::new(File::open(&self.path)?);
        Ok(VolumeReader { r, path: self.path })
    }
}

pub struct VolumeReader {
    r: BufReader<File>,
    path: PathBuf,
}

impl VolumeReader {
    pub fn next_volumes(&mut self) -> io::Result<Volumes> {
        let mut buf = [0u8; VOLUMES];
        self.r.read_exact(&mut buf)?;
        let u64_at = |i: usize| u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        Ok(Volumes {
            orig_ip_bytes: u64_at(0),
            resp_ip_bytes: u64_at(1),
            orig_pkts: u64_at(2),
            resp_pkts: u64_at(3),
            payload: buf[32] != 0,
        })
    }
}

impl Drop for VolumeReader {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// One record per (connection, load bin): bin, scope, orig, resp, bytes and
/// packets per side: 73 bytes each.
pub struct LoadSpill {
    path: PathBuf,
    w: BufWriter<File>,
}

pub struct LoadRow {
    pub bin: i64,
    pub scope: Scope,
    pub orig: Addr,
    pub resp: Addr,
    pub orig_ip_bytes: u64,
    pub resp_ip_bytes: u64,
    pub orig_pkts: u64,
    pub resp_pkts: u64,
}

const LOAD_ROW: usize = 8 + 1 + 32 + 32;

impl LoadSpill {
    pub fn create(dir: &Path) -> io::Result<LoadSpill> {
        let path = spill_path(dir, "load");
        Ok(LoadSpill { w: BufWriter::new(File::create(&path)?), path })
    }
    pub fn push(&mut self, b: &LoadBin, scope: Scope, orig: &Addr, resp: &Addr) -> io::Result<()> {
        let mut buf = [0u8; LOAD_ROW];
        buf[..8].copy_from_slice(&b.bin.to_le_bytes());
        buf[8] = scope as u8;
        buf[9..25].copy_from_slice(&orig.0);
        buf[25..41].copy_from_slice(&resp.0);
        buf[41..49].copy_from_slice(&b.orig_ip_bytes.to_le_bytes());
        buf[49..57].copy_from_slice(&b.resp_ip_bytes.to_le_bytes());
        buf[57..65].copy_from_slice(&b.orig_pkts.to_le_bytes());
        buf[65..73].copy_from_slice(&b.resp_pkts.to_le_bytes());
        self.w.write_all(&buf)
    }
    /// Calls `f` for every spilled row, then removes the spill.
    pub fn drain(mut self, mut f: impl FnMut(LoadRow)) -> io::Result<()> {
        self.w.flush()?;
        let mut r = BufReader::new(File::open(&self.path)?);
        let mut buf = [0u8; LOAD_ROW];
        let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        loop {
            match r.read_exact(&mut buf) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(e),
            }
            let mut orig = [0u8; 16];
            let mut resp = [0u8; 16];
            orig.copy_from_slice(&buf[9..25]);
            resp.copy_from_slice(&buf[25..41]);
            f(LoadRow {
                bin: u64_at(&buf, 0) as i64,
                scope: Scope::ALL[buf[8] as usize],
                orig: Addr(orig),
                resp: Addr(resp),
                orig_ip_bytes: u64_at(&buf, 41),
                resp_ip_bytes: u64_at(&buf, 49),
                orig_pkts: u64_at(&buf, 57),
                resp_pkts: u64_at(&buf, 65),
            });
        }
        drop(r);
        fs::remove_file(&self.path)
    }
}
