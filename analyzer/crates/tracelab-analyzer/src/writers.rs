//! The profile directory: connections.parquet and conn.log (streamed, then
//! finished in phase 2 with the columns that need the final server set),
//! samples/, hosts.parquet, load.parquet. Schemas in docs/analyzer.md.
//!
//! One [`OutputSink`] owns the directory, the spill files and the writer of
//! every table: the driver hands it finished connections in output order,
//! then, at the end of the trace, the totals only the end knows.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tracelab_decode::Addr;
use tracelab_flow::{ConnRecord, ConnState};
use tracelab_output::conn::{self, AddrText, ConnContext, ConnText, CONN_COLUMNS, CONN_FINAL_COLUMNS};
use tracelab_output::table::{Codec, ColumnDef, Kind, LateColumns, ParquetTable, ROW_GROUP_ROWS};

use crate::hosts::HostTable;
use crate::roles::RoleModel;
use crate::scope::{Category, LocalNets, Locality, Scope, Servers};
use crate::spill::{ConnSpill, ConnTotals, LoadSpill};

/// What the outputs depend on besides the connections.
#[derive(Clone, Debug)]
pub struct OutputConfig {
    /// Where the outputs are written (created if missing): the profile's
    /// [`Staging`] directory.
    pub dir: PathBuf,
    /// The directory error messages name: the profile directory the user
    /// asked for.
    pub name: PathBuf,
    /// Parquet page compression.
    pub codec: Codec,
    /// `--local`: scopes, categories, `local_orig`/`local_resp`.
    pub local: LocalNets,
    /// `--servers`: servers besides the hosts seen accepting TCP connections.
    pub servers: Vec<Addr>,
    /// `--roles`: the model that fills hosts.parquet's `role`.
    pub roles: Option<Arc<RoleModel>>,
    /// Load bin width.
    pub bin_ns: i64,
}

/// An output that could not be written; the directory names the profile.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{}: cannot create output directory: {source}", dir.display())]
    CreateDir { dir: PathBuf, source: io::Error },
    #[error("{}: writing outputs: {source}", dir.display())]
    Write { dir: PathBuf, source: io::Error },
}

/// What only the end of the trace tells the sink.
pub struct Totals {
    /// The last decoded packet's time (conn.log's `#close`).
    pub last_ts_ns: Option<i64>,
    /// Packets per scope, side and IP length, over every tracker thread.
    pub sizes: SizeHistogram,
}

/// What the sink wrote, for the summary.
pub struct Written {
    /// Every file, in the order written.
    pub files: Vec<PathBuf>,
    pub connections: u64,
    pub by_proto: BTreeMap<&'static str, u64>,
    pub by_state: BTreeMap<&'static str, u64>,
    pub composition: Composition,
    pub hosts: usize,
    pub local_hosts: usize,
    pub servers: usize,
}

/// The profile directory being written: every output of the run.
pub struct OutputSink {
    cfg: OutputConfig,
    /// `--local` was given (else `local_orig`/`local_resp` are unset).
    has_local: bool,
    tables: ConnTables,
    hosts: HostTable,
    load: LoadSpill,
    count: u64,
    /// First packet's time, for conn.log's `#open`.
    open_ns: i64,
    /// Connections per IP protocol number and per `conn_state` (by its
    /// discriminant, with its name), folded into named maps at the end (two
    /// map updates per connection cost ~165 instructions).
    by_ip_proto: [u64; 256],
    by_state: [(&'static str, u64); STATES],
}

/// At least the number of `ConnState` values (`OTH` is the last).
const STATES: usize = 16;
const _: () = assert!((ConnState::OTH as usize) < STATES);

impl OutputSink {
    /// Creates the directory and opens every streamed output in it.
    pub fn create(cfg: OutputConfig) -> Result<OutputSink, OutputError> {
        fs::create_dir_all(cfg.dir.join("samples"))
            .map_err(|source| OutputError::CreateDir { dir: cfg.name.clone(), source })?;
        let write = |source| OutputError::Write { dir: cfg.name.clone(), source };
        let tables = ConnTables::create(&cfg.dir, cfg.codec).map_err(write)?;
        let load = LoadSpill::create(&cfg.dir).map_err(write)?;
        Ok(OutputSink {
            has_local: !cfg.local.is_empty(),
            cfg,
            tables,
            hosts: HostTable::default(),
            load,
            count: 0,
            open_ns: 0,
            by_ip_proto: [0; 256],
            by_state: [("", 0); STATES],
        })
    }

    /// The first decoded packet's time: conn.log's `#open`.
    pub fn open_at(&mut self, ts_ns: i64) {
        self.open_ns = ts_ns;
    }

    fn error(&self, source: io::Error) -> OutputError {
        OutputError::Write { dir: self.cfg.name.clone(), source }
    }

    /// One finished connection, in output order.
    pub fn connection(&mut self, c: &ConnRecord) -> Result<(), OutputError> {
        self.write(c).map_err(|e| self.error(e))
    }

    fn write(&mut self, c: &ConnRecord) -> io::Result<()> {
        let ends = Locality::of(&self.cfg.local, &c.orig_h, &c.resp_h);
        let scope = ends.scope();
        self.tables.connection(c, self.count, ends, self.has_local, self.open_ns)?;
        self.by_ip_proto[usize::from(c.ip_proto)] += 1;
        let state = &mut self.by_state[c.conn_state as usize];
        *state = (c.conn_state.name(), state.1 + 1);
        self.hosts.add(c, ends);
        for b in &c.load_bins {
            self.load.push(b, scope, &c.orig_h, &c.resp_h)?;
        }
        self.count += 1;
        Ok(())
    }

    /// Phase 2: the outputs that need the whole trace (the final server
    /// set, the totals), and every file closed.
    pub fn finish(self, totals: Totals) -> Result<Written, OutputError> {
        let dir = self.cfg.name.clone();
        self.write_rest(totals).map_err(|source| OutputError::Write { dir, source })
    }

    fn write_rest(self, totals: Totals) -> io::Result<Written> {
        let OutputSink { cfg, tables, hosts, load, count, open_ns, by_ip_proto, by_state, .. } = self;
        let mut by_proto = BTreeMap::new();
        for (p, n) in (0..=u8::MAX).zip(by_ip_proto).filter(|&(_, n)| n > 0) {
            *by_proto.entry(conn::proto_name(p)).or_default() += n;
        }
        let by_state = by_state.into_iter().filter(|&(_, n)| n > 0).collect();
        let servers = hosts.servers(&cfg.servers);
        let (mut files, composition) =
            tables.finish(&cfg.dir, open_ns, totals.last_ts_ns.unwrap_or(0), &servers, &cfg.local, &totals.sizes)?;
        files.push(write_hosts(&cfg.dir, &hosts, &servers, &cfg.local, cfg.roles.as_deref(), cfg.codec)?);
        files.push(write_load(&cfg.dir, load, &servers, &cfg.local, cfg.bin_ns, cfg.codec)?);
        Ok(Written {
            files,
            connections: count,
            by_proto,
            by_state,
            composition,
            hosts: hosts.len(),
            local_hosts: hosts.addrs().filter(|a| cfg.local.is_local(a)).count(),
            servers: servers.0.len(),
        })
    }
}

/// A profile directory written beside its final place and moved there
/// whole: the outputs of `DIR` go to `.NAME.partial-PID` in DIR's parent
/// (NAME = DIR's name), which [`Staging::commit`] puts in DIR's place in
/// one step, replacing a previous DIR only then (an existing DIR must be
/// empty or a profile, with a summary.json: it is replaced whole). Dropped uncommitted (an
/// error, SIGINT/SIGTERM) the partial directory is removed; one left by a
/// killed run (kill -9, a crash) is removed by the next run for the same
/// DIR once its process is gone.
pub struct Staging {
    partial: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Staging {
    /// Creates the partial directory for `target` (removing stale ones).
    pub fn begin(target: &Path) -> io::Result<Staging> {
        let name = target
            .file_name()
            .filter(|n| *n != "." && *n != "..")
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a directory name"))?
            .to_string_lossy()
            .into_owned();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if let Ok(m) = fs::metadata(target) {
            if !m.is_dir() {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, "exists and is not a directory"));
            }
            // The commit replaces DIR whole: never a directory holding
            // anything but a profile (the user's files would go with it).
            let empty = fs::read_dir(target)?.next().is_none();
            if !empty && !target.join("summary.json").is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "exists and is not a profile (no summary.json): not replaced",
                ));
            }
        }
        fs::create_dir_all(&parent)?;
        remove_stale(&parent, &name);
        let partial = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if partial.exists() {
            fs::remove_dir_all(&partial)?;
        }
        fs::create_dir(&partial)?;
        Ok(Staging { partial, target: target.to_path_buf(), committed: false })
    }

    /// Where the outputs are written until the commit.
    pub fn path(&self) -> &Path {
        &self.partial
    }

    /// Puts the outputs in the profile directory's place: one rename, or
    /// with a previous profile there, one exchange of the two (Linux
    /// `renameat2(RENAME_EXCHANGE)`; elsewhere or where the file system
    /// cannot, two renames), then the previous one is removed.
    pub fn commit(mut self) -> io::Result<()> {
        if fs::symlink_metadata(&self.target).is_ok() {
            if exchange(&self.partial, &self.target).is_err() {
                let old = self.partial.with_file_name(format!(
                    "{}.old",
                    self.partial.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
                ));
                fs::rename(&self.target, &old)?;
                if let Err(e) = fs::rename(&self.partial, &self.target) {
                    let _ = fs::rename(&old, &self.target);
                    return Err(e);
                }
                fs::rename(&old, &self.partial)?;
            }
            // The partial path now holds the previous profile.
            self.committed = true;
            fs::remove_dir_all(&self.partial)?;
        } else {
            fs::rename(&self.partial, &self.target)?;
            self.committed = true;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.partial);
        }
    }
}

/// Swaps two paths atomically (Linux); an error elsewhere.
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
        let (a, b) = (c(a)?, c(b)?);
        // SAFETY: two valid NUL-terminated paths relative to the cwd.
        let r =
            unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (a, b);
        Err(io::Error::other("no atomic exchange"))
    }
}

/// Removes `.NAME.partial-PID[.old]` directories in `parent` whose process
/// is gone (a run killed before it could clean up).
fn remove_stale(parent: &Path, name: &str) {
    let prefix = format!(".{name}.partial-");
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let Ok(pid) = rest.trim_end_matches(".old").parse::<i32>() else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks whether the process exists.
        let alive = pid > 0
            && (unsafe { libc::kill(pid, 0) } == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM));
        if !alive {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

fn create_file(path: &Path) -> io::Result<BufWriter<File>> {
    Ok(BufWriter::with_capacity(1 << 20, File::create(path)?))
}

/// Packet counts per (scope, side, IP length): a fixed table, no
/// allocation per packet. Side is the sender's role in its connection.
pub struct SizeHistogram {
    counts: Vec<u64>,
}

const SIZE_SLOTS: usize = 65_536;

impl SizeHistogram {
    pub fn new() -> SizeHistogram {
        SizeHistogram { counts: vec![0; 3 * 2 * SIZE_SLOTS] }
    }
    pub fn add(&mut self, scope: Scope, from_orig: bool, ip_len: u32) {
        let scope = scope as usize;
        let side = usize::from(!from_orig);
        let len = ip_len.min(65_535) as usize;
        self.counts[(scope * 2 + side) * SIZE_SLOTS + len] += 1;
    }
    pub fn merge(&mut self, other: &SizeHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }
    /// The non-zero slots as (slot, count): what a shard records of its
    /// packets (shard.rs).
    pub fn slots(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts.iter().enumerate().filter(|&(_, &n)| n > 0).map(|(i, &n)| (i, n))
    }
    /// Adds `count` to a slot of [`SizeHistogram::slots`]; false if there
    /// is no such slot.
    pub fn add_slot(&mut self, slot: usize, count: u64) -> bool {
        self.counts.get_mut(slot).map(|n| *n += count).is_some()
    }
}

impl Default for SizeHistogram {
    fn default() -> Self {
        SizeHistogram::new()
    }
}

// Samples name their connection twice: by `conn`, its row in
// connections.parquet (0-based, output order; a join by position, or on
// `conn` in a partitioned profile), and by `uid`, the key Zeek users and
// SQL joins expect.
const CONN: ColumnDef = ("conn", Kind::I64, "the connection's row in connections.parquet (0-based)");
const UID: ColumnDef = ("uid", Kind::Id, "the connection's uid in connections.parquet");
const SIDE: ColumnDef = ("side", Kind::Str, "orig or resp: the party that sent the data");
const WARMUP_COLUMNS: &[ColumnDef] = &[
    CONN,
    UID,
    SIDE,
    ("train", Kind::I32, "index of the party's train in the connection (0-based)"),
    ("warmup_s", Kind::F64, "the train's warm-up, seconds"),
];
const TRAIN_COLUMNS: &[ColumnDef] = &[
    CONN,
    UID,
    SIDE,
    ("train", Kind::I32, "index of the party's train in the connection (0-based)"),
    ("size_pkts", Kind::I64, "the train's data packets"),
];
const RTT_COLUMNS: &[ColumnDef] = &[
    CONN,
    UID,
    SIDE,
    ("rtt_s", Kind::F64, "DATA-ACK round-trip time at the monitor, seconds"),
    ("delayed_ack", Kind::Bool, "the receiver held the ACK (left out of the statistics)"),
];
const SIZE_COLUMNS: &[ColumnDef] = &[
    ("scope", Kind::Str, "intranet, internet or external"),
    ("side", Kind::Str, "the sender's role in its connection: orig or resp"),
    ("ip_len", Kind::I32, "IP length, bytes"),
    ("count", Kind::I64, "packets of that scope, side and length"),
];
const HOST_COLUMNS: &[ColumnDef] = &[
    ("host", Kind::Id, "IP address"),
    ("local", Kind::Bool, "in --local"),
    ("server", Kind::Bool, "accepted a TCP handshake, answered UDP on one port to two peers, or in --servers"),
    ("incnx", Kind::I64, "connections accepted"),
    ("outcnx", Kind::I64, "connections initiated"),
    ("dportin", Kind::I64, "distinct destination ports of accepted connections"),
    ("dportout", Kind::I64, "distinct destination ports of initiated connections"),
    ("fan_in", Kind::I64, "distinct peers of accepted connections"),
    ("fan_out", Kind::I64, "distinct peers of initiated connections"),
    ("bytes_in", Kind::I64, "IP bytes received"),
    ("bytes_out", Kind::I64, "IP bytes sent"),
    ("pkts_in", Kind::I64, "packets received"),
    ("pkts_out", Kind::I64, "packets sent"),
    ("bytes_internal", Kind::I64, "IP bytes exchanged with local peers"),
    ("bytes_external", Kind::I64, "IP bytes exchanged with remote peers"),
    ("internal_ratio", Kind::F64, "bytes_internal / (bytes_internal + bytes_external)"),
    ("down_up_ratio", Kind::F64, "bytes_in / bytes_out"),
    ("role", Kind::Str, "the class the --roles model predicts; null without one"),
];
const LOAD_COLUMNS: &[ColumnDef] = &[
    ("bin_start", Kind::Time, "start of the time bin (UTC, microseconds)"),
    ("bin_s", Kind::F64, "the bin's width, seconds"),
    ("scope", Kind::Str, "intranet, internet or external"),
    ("category", Kind::Str, "lc-rp, ls-rp, lc-ls, ls-ls or other"),
    ("bytes", Kind::I64, "IP bytes in the bin, both directions"),
    ("pkts", Kind::I64, "packets in the bin, both directions"),
    ("upload_bytes", Kind::I64, "IP bytes sent by clients"),
    ("download_bytes", Kind::I64, "IP bytes sent by servers"),
];

/// The outputs written a connection at a time: conn.log, connections.parquet
/// (its last columns, `CONN_FINAL_COLUMNS`, in phase 2, from the spill) and
/// the samples.
struct ConnTables {
    conn_log: BufWriter<File>,
    conn_log_started: bool,
    codec: Codec,
    text: ConnText,
    connections: ParquetTable,
    conns: ConnSpill,
    warmups: ParquetTable,
    trains: ParquetTable,
    rtts: ParquetTable,
}

impl ConnTables {
    fn create(dir: &Path, codec: Codec) -> io::Result<ConnTables> {
        let samples = dir.join("samples");
        Ok(ConnTables {
            conn_log: create_file(&dir.join("conn.log"))?,
            conn_log_started: false,
            codec,
            text: ConnText::default(),
            connections: ParquetTable::with_late_columns(
                &dir.join("connections.parquet"),
                CONN_COLUMNS,
                CONN_FINAL_COLUMNS,
                codec,
                ROW_GROUP_ROWS,
            )?,
            conns: ConnSpill::create(dir)?,
            warmups: ParquetTable::create(&samples.join("warmups.parquet"), WARMUP_COLUMNS, codec)?,
            trains: ParquetTable::create(&samples.join("trains.parquet"), TRAIN_COLUMNS, codec)?,
            rtts: ParquetTable::create(&samples.join("rtt.parquet"), RTT_COLUMNS, codec)?,
        })
    }

    fn start_conn_log(&mut self, open_ns: i64) -> io::Result<()> {
        if !self.conn_log_started {
            conn::write_conn_log_header(&mut self.conn_log, &conn::zeek_stamp(open_ns))?;
            self.conn_log_started = true;
        }
        Ok(())
    }

    /// One finished connection, in output order; `row` is its row number in
    /// connections.parquet (the samples' `conn`). `open_ns` stamps conn.log's
    /// `#open` line (the first packet's time) when this is the first one.
    /// `has_local`: `--local` was given (else `local_orig`/`local_resp` are unset).
    fn connection(
        &mut self,
        c: &ConnRecord,
        row: u64,
        ends: Locality,
        has_local: bool,
        open_ns: i64,
    ) -> io::Result<()> {
        let ctx = ConnContext {
            scope: ends.scope().name(),
            local_orig: has_local.then_some(ends.orig),
            local_resp: has_local.then_some(ends.resp),
        };
        self.start_conn_log(open_ns)?;
        let uid = c.uid.as_bytes();
        self.text.fill(c, uid, &ctx);
        self.conn_log.write_all(self.text.line())?;
        conn::push_conn(self.connections.row(), c, c.uid.as_str(), &ctx, &self.text);
        self.connections.flush_if_full()?;
        self.conns.push(&ConnTotals::of(c))?;
        // A connection's samples of one kind, both sides, are one run of
        // rows appended a column at a time (`conn` and `side` filled, not
        // pushed per row): the originator's first, then the responder's.
        let row = row as i64;
        let uid = c.uid.as_str();
        if let Some(t) = &c.transfer {
            let w = Sides { orig: &t.orig.warmups_ns, resp: &t.resp.warmups_ns };
            self.warmups.extend(w.len(), |r, at| {
                r.i64_all(row)
                    .id_all(uid)
                    .label_split(w.orig_rows(&at), "orig", "resp")
                    .i32_each(w.index(at.clone()))
                    .f64_each(w.values(at).map(|w| w as f64 / 1e9));
            })?;
            let n = Sides { orig: &t.orig.train_sizes, resp: &t.resp.train_sizes };
            self.trains.extend(n.len(), |r, at| {
                r.i64_all(row)
                    .id_all(uid)
                    .label_split(n.orig_rows(&at), "orig", "resp")
                    .i32_each(n.index(at.clone()))
                    .i64_each(n.values(at).map(|n| n as i64));
            })?;
        }
        let s = Sides { orig: &c.rtt.data_ack_orig_samples, resp: &c.rtt.data_ack_resp_samples };
        self.rtts.extend(s.len(), |r, at| {
            r.i64_all(row)
                .id_all(uid)
                .label_split(s.orig_rows(&at), "orig", "resp")
                .f64_each(s.values(at.clone()).map(|s| s.rtt_ns as f64 / 1e9))
                .bool_each(s.values(at).map(|s| s.delayed_ack));
        })?;
        Ok(())
    }

    /// Phase 2: closes the streamed files and writes connections.parquet with
    /// the category columns, and samples/packet_sizes.parquet. `open_ns` and
    /// `close_ns` stamp conn.log (its header too when no connection came).
    fn finish(
        mut self,
        dir: &Path,
        open_ns: i64,
        close_ns: i64,
        servers: &Servers,
        local: &LocalNets,
        sizes: &SizeHistogram,
    ) -> io::Result<(Vec<PathBuf>, Composition)> {
        self.start_conn_log(open_ns)?;
        conn::write_conn_log_close(&mut self.conn_log, &conn::zeek_stamp(close_ns))?;
        self.conn_log.flush()?;
        let mut files = vec![dir.join("conn.log")];
        for t in [self.warmups, self.trains, self.rtts] {
            files.push(t.close()?);
        }
        let (path, composition) = add_category(self.connections.into_late()?, servers, local, self.conns)?;
        files.push(path);

        let path = dir.join("samples").join("packet_sizes.parquet");
        let mut t = ParquetTable::create(&path, SIZE_COLUMNS, self.codec)?;
        for scope in Scope::ALL {
            for (side_idx, side) in ["orig", "resp"].into_iter().enumerate() {
                let base = (scope as usize * 2 + side_idx) * SIZE_SLOTS;
                // Most of the 65,536 lengths never occur: eight at a time
                // are tested for zero before any is looked at.
                for (eight, counts) in sizes.counts[base..base + SIZE_SLOTS].chunks_exact(8).enumerate() {
                    if counts.iter().fold(0, |any, &n| any | n) == 0 {
                        continue;
                    }
                    for (k, &n) in counts.iter().enumerate() {
                        if n > 0 {
                            let len = eight * 8 + k;
                            t.row()
                                .str(Some(scope.name()))
                                .str(Some(side))
                                .i32(Some(len as i32))
                                .i64(Some(n as i64))
                                .end();
                            t.flush_if_full()?;
                        }
                    }
                }
            }
        }
        files.push(t.close()?);
        Ok((files, composition))
    }
}

/// A connection's samples of both sides seen as one run of rows: rows
/// `0..orig.len()` are the originator's, the rest the responder's.
struct Sides<'a, T> {
    orig: &'a [T],
    resp: &'a [T],
}

impl<T: Copy> Sides<'_, T> {
    fn len(&self) -> usize {
        self.orig.len() + self.resp.len()
    }
    /// How many rows of `at` are the originator's (they come first).
    fn orig_rows(&self, at: &Range<usize>) -> usize {
        self.orig.len().clamp(at.start, at.end) - at.start
    }
    /// Each row's index within its side (the `train` column).
    fn index(&self, at: Range<usize>) -> impl ExactSizeIterator<Item = i32> + '_ {
        at.map(|i| i.checked_sub(self.orig.len()).unwrap_or(i) as i32)
    }
    fn values(&self, at: Range<usize>) -> impl ExactSizeIterator<Item = T> + '_ {
        at.map(|i| match i.checked_sub(self.orig.len()) {
            Some(k) => self.resp[k],
            None => self.orig[i],
        })
    }
}

/// Phase 2: connections.parquet's two columns that need the final server
/// set, written row group by row group after all the others (nothing of
/// the rest is read back or copied). The composition takes each
/// connection's volumes from the connection spill, so nothing is decoded.
fn add_category(
    mut out: LateColumns,
    servers: &Servers,
    local: &LocalNets,
    conns: ConnSpill,
) -> io::Result<(PathBuf, Composition)> {
    let mut conns = conns.into_reader()?;
    // Summed per (scope, category) in a fixed table, then handed over as
    // the map of the cells that had connections.
    let mut cells = [[CompositionCell::default(); Category::ALL.len()]; Scope::ALL.len()];
    for group in 0..out.group_rows().len() {
        for _ in 0..out.group_rows()[group] {
            let v = conns.next_conn()?;
            let (o, r) = (v.orig, v.resp);
            let ends = Locality::of(local, &o, &r);
            let category = servers.category(ends, &o, &r);
            let orig_client = servers.orig_is_client(&o, &r);
            out.row().str(Some(category.name())).bool(Some(orig_client)).end();
            let cell = &mut cells[ends.scope() as usize][category as usize];
            cell.cnxs += 1;
            cell.bytes += v.orig_ip_bytes + v.resp_ip_bytes;
            cell.pkts += v.orig_pkts + v.resp_pkts;
            // Immature transfers (no payload either way) are left out of the
            // upload/download split, as in thesis Fig. 8.1.
            if v.payload {
                let (up, down) =
                    if orig_client { (v.orig_ip_bytes, v.resp_ip_bytes) } else { (v.resp_ip_bytes, v.orig_ip_bytes) };
                cell.upload_bytes += up;
                cell.download_bytes += down;
            }
        }
        out.end_group()?;
    }
    let path = out.close()?;
    let mut comp = Composition::default();
    for (scope, row) in Scope::ALL.into_iter().zip(cells) {
        for (category, cell) in Category::ALL.into_iter().zip(row) {
            if cell.cnxs > 0 {
                comp.cells.insert((scope, category), cell);
            }
        }
    }
    Ok((path, comp))
}

/// Traffic composition (thesis Tables 8.1/8.2 and Fig. 8.1): per scope and
/// category, connections, IP bytes and packets, and the upload/download
/// split of mature transfers.
#[derive(Clone, Debug, Default)]
pub struct Composition {
    pub cells: BTreeMap<(Scope, Category), CompositionCell>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct CompositionCell {
    pub cnxs: u64,
    pub bytes: u64,
    pub pkts: u64,
    pub upload_bytes: u64,
    pub download_bytes: u64,
}

/// hosts.parquet; `role` is the class a `--roles` model predicts (null without one).
fn write_hosts(
    dir: &Path,
    hosts: &HostTable,
    servers: &Servers,
    local: &LocalNets,
    roles: Option<&RoleModel>,
    codec: Codec,
) -> io::Result<PathBuf> {
    let mut t = ParquetTable::create(&dir.join("hosts.parquet"), HOST_COLUMNS, codec)?;
    for (addr, h) in hosts.sorted() {
        let total = h.bytes_internal + h.bytes_external;
        t.row()
            .id(Some(AddrText::new(&addr).as_str()))
            .bool(Some(local.is_local(&addr)))
            .bool(Some(servers.is_server(&addr)))
            .i64(Some(h.incnx as i64))
            .i64(Some(h.outcnx as i64))
            .i64(Some(h.dportin() as i64))
            .i64(Some(h.dportout() as i64))
            .i64(Some(h.fan_in() as i64))
            .i64(Some(h.fan_out() as i64))
            .i64(Some(h.bytes_in as i64))
            .i64(Some(h.bytes_out as i64))
            .i64(Some(h.pkts_in as i64))
            .i64(Some(h.pkts_out as i64))
            .i64(Some(h.bytes_internal as i64))
            .i64(Some(h.bytes_external as i64))
            .f64((total > 0).then(|| h.bytes_internal as f64 / total as f64))
            .f64((h.bytes_out > 0).then(|| h.bytes_in as f64 / h.bytes_out as f64))
            .str(roles.map(|m| {
                m.predict([h.incnx, h.outcnx, h.dportin(), h.dportout(), h.fan_in(), h.fan_out()].map(|v| v as f64))
            }))
            .end();
        t.flush_if_full()?;
    }
    t.close()
}

#[derive(Default)]
struct LoadCell {
    bytes: u64,
    pkts: u64,
    upload: u64,
    download: u64,
}

fn write_load(
    dir: &Path,
    load: LoadSpill,
    servers: &Servers,
    local: &LocalNets,
    bin_ns: i64,
    codec: Codec,
) -> io::Result<PathBuf> {
    let mut cells: BTreeMap<(i64, Scope, Category), LoadCell> = BTreeMap::new();
    load.drain(|row| {
        let cat = servers.category(Locality::of(local, &row.orig, &row.resp), &row.orig, &row.resp);
        let cell = cells.entry((row.bin.bin, row.scope, cat)).or_default();
        cell.bytes += row.bin.orig_ip_bytes + row.bin.resp_ip_bytes;
        cell.pkts += row.bin.orig_pkts + row.bin.resp_pkts;
        let (up, down) = if servers.orig_is_client(&row.orig, &row.resp) {
            (row.bin.orig_ip_bytes, row.bin.resp_ip_bytes)
        } else {
            (row.bin.resp_ip_bytes, row.bin.orig_ip_bytes)
        };
        cell.upload += up;
        cell.download += down;
    })?;
    let mut t = ParquetTable::create(&dir.join("load.parquet"), LOAD_COLUMNS, codec)?;
    for ((bin, scope, cat), c) in cells {
        t.row()
            .time_ns(Some(bin.saturating_mul(bin_ns)))
            .f64(Some(bin_ns as f64 / 1e9))
            .str(Some(scope.name()))
            .str(Some(cat.name()))
            .i64(Some(c.bytes as i64))
            .i64(Some(c.pkts as i64))
            .i64(Some(c.upload as i64))
            .i64(Some(c.download as i64))
            .end();
        t.flush_if_full()?;
    }
    t.close()
}
