//! Fixed-size binary spill files for phase 2. Connection categories (lc-rp,
//! ls-ls, ...) depend on which hosts are servers, which is known only at the
//! end of the trace; rather than hold every connection in memory, phase 1
//! spills what phase 2 needs of each written connection and of each of its
//! load bins, and phase 2 reads them back in the same order.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use tracelab_decode::Addr;
use tracelab_flow::{ConnRecord, LoadBin};

use crate::scope::Scope;

/// A hidden file of N-byte records in the output directory, written in
/// order and read back once in the same order; removed once read.
struct Records<const N: usize> {
    path: PathBuf,
    w: BufWriter<File>,
}

impl<const N: usize> Records<N> {
    fn create(dir: &Path, name: &str) -> io::Result<Self> {
        let path = dir.join(format!(".{name}.spill"));
        Ok(Records { w: BufWriter::new(File::create(&path)?), path })
    }
    fn push(&mut self, record: &[u8; N]) -> io::Result<()> {
        self.w.write_all(record)
    }
    fn into_reader(mut self) -> io::Result<RecordReader<N>> {
        self.w.flush()?;
        let r = BufReader::new(File::open(&self.path)?);
        Ok(RecordReader { r, path: self.path })
    }
}

struct RecordReader<const N: usize> {
    r: BufReader<File>,
    path: PathBuf,
}

impl<const N: usize> RecordReader<N> {
    /// The next record, or None at the end of the file.
    fn next(&mut self) -> io::Result<Option<[u8; N]>> {
        let mut record = [0u8; N];
        match self.r.read_exact(&mut record) {
            Ok(()) => Ok(Some(record)),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl<const N: usize> Drop for RecordReader<N> {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn addr_at(b: &[u8], at: usize) -> Addr {
    Addr(b[at..at + 16].try_into().expect("16 bytes"))
}

/// What phase 2 needs of a connection's row: its hosts (for the category
/// and `orig_is_client`) and the volumes of the composition, so it reads no
/// Parquet back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnTotals {
    pub orig: Addr,
    pub resp: Addr,
    pub orig_ip_bytes: u64,
    pub resp_ip_bytes: u64,
    pub orig_pkts: u64,
    pub resp_pkts: u64,
    /// Payload bytes in either direction (`orig_bytes` + `resp_bytes` > 0).
    pub payload: bool,
}

impl ConnTotals {
    pub fn of(c: &ConnRecord) -> ConnTotals {
        ConnTotals {
            orig: c.orig_h,
            resp: c.resp_h,
            orig_ip_bytes: c.orig_ip_bytes,
            resp_ip_bytes: c.resp_ip_bytes,
            orig_pkts: c.orig_pkts,
            resp_pkts: c.resp_pkts,
            payload: c.orig_bytes.unwrap_or(0) + c.resp_bytes.unwrap_or(0) > 0,
        }
    }
}

/// orig, resp, four volumes, the payload flag.
const CONN: usize = 16 + 16 + 4 * 8 + 1;

/// One `ConnTotals` per written connection, in output order.
pub struct ConnSpill(Records<CONN>);

impl ConnSpill {
    pub fn create(dir: &Path) -> io::Result<ConnSpill> {
        Ok(ConnSpill(Records::create(dir, "connections")?))
    }
    pub fn push(&mut self, t: &ConnTotals) -> io::Result<()> {
        let mut b = [0u8; CONN];
        b[..16].copy_from_slice(&t.orig.0);
        b[16..32].copy_from_slice(&t.resp.0);
        for (i, v) in [t.orig_ip_bytes, t.resp_ip_bytes, t.orig_pkts, t.resp_pkts].into_iter().enumerate() {
            b[32 + i * 8..40 + i * 8].copy_from_slice(&v.to_le_bytes());
        }
        b[64] = u8::from(t.payload);
        self.0.push(&b)
    }
    pub fn into_reader(self) -> io::Result<ConnSpillReader> {
        Ok(ConnSpillReader(self.0.into_reader()?))
    }
}

pub struct ConnSpillReader(RecordReader<CONN>);

impl ConnSpillReader {
    /// The next connection's totals; an error if the spill has ended (phase
    /// 2 asks for exactly as many as were written).
    pub fn next_conn(&mut self) -> io::Result<ConnTotals> {
        let b = self
            .0
            .next()?
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "connection spill ended early"))?;
        Ok(ConnTotals {
            orig: addr_at(&b, 0),
            resp: addr_at(&b, 16),
            orig_ip_bytes: u64_at(&b, 32),
            resp_ip_bytes: u64_at(&b, 40),
            orig_pkts: u64_at(&b, 48),
            resp_pkts: u64_at(&b, 56),
            payload: b[64] != 0,
        })
    }
}

/// One row per (connection, load bin): the bin with the connection's scope
/// and hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadRow {
    pub bin: LoadBin,
    pub scope: Scope,
    pub orig: Addr,
    pub resp: Addr,
}

/// bin, scope, orig, resp, bytes and packets per side.
const LOAD_ROW: usize = 8 + 1 + 32 + 32;

pub struct LoadSpill(Records<LOAD_ROW>);

impl LoadSpill {
    pub fn create(dir: &Path) -> io::Result<LoadSpill> {
        Ok(LoadSpill(Records::create(dir, "load")?))
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
        self.0.push(&buf)
    }
    /// Calls `f` for every spilled row, then removes the spill.
    pub fn drain(self, mut f: impl FnMut(LoadRow)) -> io::Result<()> {
        let mut r = self.0.into_reader()?;
        while let Some(b) = r.next()? {
            f(LoadRow {
                bin: LoadBin {
                    bin: u64_at(&b, 0) as i64,
                    orig_ip_bytes: u64_at(&b, 41),
                    resp_ip_bytes: u64_at(&b, 49),
                    orig_pkts: u64_at(&b, 57),
                    resp_pkts: u64_at(&b, 65),
                },
                scope: Scope::ALL[b[8] as usize],
                orig: addr_at(&b, 9),
                resp: addr_at(&b, 25),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(last: u8) -> Addr {
        let mut a = [0u8; 16];
        a[10] = 0xff;
        a[11] = 0xff;
        a[15] = last;
        Addr(a)
    }

    #[test]
    fn spills_read_back_what_was_written_and_are_removed() {
        let dir = std::env::temp_dir().join(format!("tracelab-spill-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let mut conns = ConnSpill::create(&dir).unwrap();
        let mut load = LoadSpill::create(&dir).unwrap();
        let mut want_conns = Vec::new();
        let mut want_load = Vec::new();
        for i in 0..1000u64 {
            let c = ConnTotals {
                orig: addr(i as u8),
                resp: addr(255 - i as u8),
                orig_ip_bytes: i * 1_000_003,
                resp_ip_bytes: u64::MAX - i,
                orig_pkts: i,
                resp_pkts: 7 * i,
                payload: i % 3 != 0,
            };
            conns.push(&c).unwrap();
            want_conns.push(c);
            let bin = LoadBin {
                bin: i as i64 - 500,
                orig_ip_bytes: i,
                resp_ip_bytes: 2 * i,
                orig_pkts: 3 * i,
                resp_pkts: 4 * i,
            };
            let scope = Scope::ALL[i as usize % Scope::ALL.len()];
            load.push(&bin, scope, &c.orig, &c.resp).unwrap();
            want_load.push(LoadRow { bin, scope, orig: c.orig, resp: c.resp });
        }
        let mut r = conns.into_reader().unwrap();
        for want in &want_conns {
            assert_eq!(&r.next_conn().unwrap(), want);
        }
        assert_eq!(r.next_conn().unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        drop(r);
        let mut got_load = Vec::new();
        load.drain(|row| got_load.push(row)).unwrap();
        assert_eq!(got_load, want_load);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "spill files left behind");
        fs::remove_dir(&dir).unwrap();
    }
}
