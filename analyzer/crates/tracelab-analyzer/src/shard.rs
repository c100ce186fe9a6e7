//! The parallel profile's two phases (docs/scale.md "The parallel
//! profile"). Phase 1, `--shard I/N`: one process per shard reads the whole
//! capture (so its network time and epochs are the capture's), tracks only
//! the connections of its shard and records each finished connection with
//! the epoch it finished in, in its output order, plus the packet
//! accounting and its packets' sizes. Phase 2, `--merge DIR...`: the shards'
//! records are merged in the serial output order (finish epoch, first time,
//! uid) and fed to the same [`OutputSink`] a serial profile writes through,
//! so the server set, categories, hosts and load come from the same code.
//!
//! A shard directory holds `connections.rec` and `summary.json` (what the
//! merge needs besides the connections); it is staged and put in place like
//! a profile directory, so a shard run again (a retried task) replaces it
//! whole or not at all.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

use serde_json::{json, Value};
use tracelab_decode::Addr;
use tracelab_flow::{
    ConnRecord, ConnState, Decomposition, List, LoadBin, RttRecord, RttSample, SampleStats, Service, SideTransfer, Uid,
};
use tracelab_pcap::chain::Part;
use tracelab_pcap::{ReadError, ReadErrorKind};

use crate::driver::{
    all_skip_reasons, finish_profile, open_capture, output_config, track, without_huge_pages, Accounting,
    ConnectionOut, Profile, ProfileConfig, ProfileError, ShardSpec, Tracked, PROTO_NAMES,
};
use crate::writers::{OutputError, OutputSink, SizeHistogram, Staging};

/// The connection records of a shard directory.
pub const RECORDS: &str = "connections.rec";
/// The layout of [`RECORDS`] and of the shard's summary.json.
const FORMAT: u64 = 1;
/// At most this many shards (a shard per worker core).
pub const MAX_SHARDS: usize = 4096;

/// `--shard I/N` that is not `I/N` with 0 <= I < N <= [`MAX_SHARDS`].
#[derive(Debug, thiserror::Error)]
#[error("--shard must be I/N with 0 <= I < N <= {MAX_SHARDS}, got `{0}`")]
pub struct ShardSpecError(String);

impl FromStr for ShardSpec {
    type Err = ShardSpecError;
    fn from_str(s: &str) -> Result<ShardSpec, ShardSpecError> {
        let bad = || ShardSpecError(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) =
            (i.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
        if index < count && count <= MAX_SHARDS {
            Ok(ShardSpec { index, count })
        } else {
            Err(bad())
        }
    }
}

/// Shard directories that cannot be merged into one profile.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("{}: not a readable shard: {reason}", dir.display())]
    Unreadable { dir: PathBuf, reason: String },
    #[error("{}: {what}", dir.display())]
    Mismatch { dir: PathBuf, what: String },
    #[error("--merge needs the directories of shards 0..{count} of one run; shard {missing} is missing")]
    Missing { count: usize, missing: usize },
}

/// Profiles shard `spec` of the capture into the shard directory
/// `cfg.out_dir`; `options` (the tracker's configuration) must be the
/// merge's. Returns the staged directory (the caller commits it) and the
/// accounting.
pub fn profile_shard(
    cfg: &ProfileConfig,
    spec: ShardSpec,
    options: &Value,
) -> Result<(Staging, Accounting), ProfileError> {
    without_huge_pages();
    let chain = open_capture(cfg)?;
    let staging =
        Staging::begin(&cfg.out_dir).map_err(|source| OutputError::CreateDir { dir: cfg.out_dir.clone(), source })?;
    let write = |source| OutputError::Write { dir: cfg.out_dir.clone(), source };
    let file = File::create(staging.path().join(RECORDS)).map_err(write)?;
    let mut records = RecordWriter { w: BufWriter::with_capacity(1 << 20, file), buf: Vec::new(), count: 0 };
    let tracked = track(cfg, spec, chain, &mut records).map_err(|e| match e {
        ProfileError::Output(OutputError::Write { source, .. }) => write(source).into(),
        e => e,
    })?;
    records.w.flush().map_err(write)?;
    let meta = shard_json(spec, options, records.count, &tracked);
    let mut text = serde_json::to_string(&meta).map_err(io::Error::other).map_err(write)?;
    text.push('\n');
    std::fs::write(staging.path().join("summary.json"), text).map_err(write)?;
    Ok((staging, tracked.accounting))
}

/// Merges the shard directories `dirs` (shards 0..N of one capture, any
/// order) into the profile `cfg.out_dir`, as [`crate::driver::profile`]
/// would have written it.
pub fn merge_shards(cfg: &ProfileConfig, dirs: &[PathBuf], options: &Value) -> Result<Profile, MergeError> {
    let started = Instant::now();
    without_huge_pages();
    let shards = read_shards(dirs, options)?;
    let staging = Staging::begin(&cfg.out_dir)
        .map_err(|source| ProfileError::from(OutputError::CreateDir { dir: cfg.out_dir.clone(), source }))?;
    let mut sink = OutputSink::create(output_config(cfg, &staging)).map_err(ProfileError::from)?;
    let first = &shards[0];
    if let Some(ts) = first.accounting.first_ts_ns {
        sink.open_at(ts);
    }
    let mut readers = Vec::with_capacity(shards.len());
    for s in &shards {
        let file = File::open(s.dir.join(RECORDS)).map_err(|e| unreadable(&s.dir, e))?;
        readers.push(RecordReader { r: BufReader::with_capacity(1 << 20, file), buf: Vec::new(), dir: s.dir.clone() });
    }
    // The next record of every shard, smallest (epoch, first time, uid) first.
    let mut heads: Vec<Option<(u64, ConnRecord)>> = Vec::with_capacity(readers.len());
    let mut heap = BinaryHeap::new();
    for (i, r) in readers.iter_mut().enumerate() {
        let head = r.next()?;
        if let Some((epoch, c)) = &head {
            heap.push(Reverse((*epoch, c.ts_ns, c.uid, i)));
        }
        heads.push(head);
    }
    let mut merged = vec![0u64; shards.len()];
    while let Some(Reverse((epoch, ts, uid, i))) = heap.pop() {
        let (_, c) = heads[i].take().expect("a head for every shard in the heap");
        sink.connection(&c).map_err(ProfileError::from)?;
        merged[i] += 1;
        if let Some((next_epoch, next)) = readers[i].next()? {
            if (next_epoch, next.ts_ns, next.uid) < (epoch, ts, uid) {
                return Err(mismatch(&shards[i].dir, "connection records out of order").into());
            }
            heap.push(Reverse((next_epoch, next.ts_ns, next.uid, i)));
            heads[i] = Some((next_epoch, next));
        }
    }
    for (s, n) in shards.iter().zip(&merged) {
        if *n != s.connections {
            return Err(mismatch(&s.dir, &format!("{n} connection records, its summary says {}", s.connections)).into());
        }
    }
    let mut sizes = SizeHistogram::new();
    for s in &shards {
        for &(slot, n) in &s.sizes {
            if !sizes.add_slot(slot, n) {
                return Err(mismatch(&s.dir, "packet size slot out of range").into());
            }
        }
    }
    let first = shards.into_iter().next().expect("at least one shard");
    let tracked = Tracked { accounting: first.accounting, sizes, parts: first.parts };
    Ok(finish_profile(cfg, sink, tracked, staging, started)?)
}

/// Why `--merge` produced no profile.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The shard directories (input data).
    #[error(transparent)]
    Shards(#[from] ShardError),
    /// The profile directory.
    #[error(transparent)]
    Profile(#[from] ProfileError),
}

/// A shard directory's summary.json, read back.
struct ShardMeta {
    dir: PathBuf,
    connections: u64,
    accounting: Accounting,
    parts: Vec<Part>,
    sizes: Vec<(usize, u64)>,
}

fn unreadable(dir: &Path, reason: impl ToString) -> ShardError {
    ShardError::Unreadable { dir: dir.to_path_buf(), reason: reason.to_string() }
}

fn mismatch(dir: &Path, what: &str) -> ShardError {
    ShardError::Mismatch { dir: dir.to_path_buf(), what: what.to_string() }
}

/// Reads every shard's summary.json, in shard order, and checks that they
/// are the shards 0..N of one run with `options`, over the same capture.
fn read_shards(dirs: &[PathBuf], options: &Value) -> Result<Vec<ShardMeta>, ShardError> {
    let mut by_index: BTreeMap<usize, ShardMeta> = BTreeMap::new();
    let mut frames: Option<(u64, u64, u64)> = None;
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("summary.json")).map_err(|e| unreadable(dir, e))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| unreadable(dir, e))?;
        let shard = &v["shard"];
        if shard["format"].as_u64() != Some(FORMAT) {
            return Err(unreadable(dir, "not a shard directory of this analyzer (--shard)"));
        }
        let index = shard["index"].as_u64().ok_or_else(|| unreadable(dir, "no shard index"))? as usize;
        let count = shard["count"].as_u64().ok_or_else(|| unreadable(dir, "no shard count"))? as usize;
        if count != dirs.len() {
            return Err(mismatch(dir, &format!("shard {index} of {count}, but {} directories were given", dirs.len())));
        }
        if &shard["options"] != options {
            return Err(mismatch(
                dir,
                &format!("tracked with other options ({}) than these ({options})", shard["options"]),
            ));
        }
        let accounting = accounting_of(&v["accounting"]).ok_or_else(|| unreadable(dir, "bad packet accounting"))?;
        let these = (accounting.frames, accounting.bytes, accounting.decoded);
        if *frames.get_or_insert(these) != these {
            return Err(mismatch(dir, "read another capture than the other shards"));
        }
        let parts = v["parts"].as_array().and_then(|a| a.iter().map(part_of).collect::<Option<Vec<_>>>());
        let sizes = v["packet_sizes"].as_array().and_then(|a| {
            a.iter().map(|p| Some((p[0].as_u64()? as usize, p[1].as_u64()?))).collect::<Option<Vec<_>>>()
        });
        let meta = ShardMeta {
            dir: dir.clone(),
            connections: shard["connections"].as_u64().ok_or_else(|| unreadable(dir, "no connection count"))?,
            accounting,
            parts: parts.ok_or_else(|| unreadable(dir, "bad file list"))?,
            sizes: sizes.ok_or_else(|| unreadable(dir, "bad packet sizes"))?,
        };
        if by_index.insert(index, meta).is_some() {
            return Err(mismatch(dir, &format!("shard {index} given twice")));
        }
    }
    let count = dirs.len();
    if let Some(missing) = (0..count).find(|i| !by_index.contains_key(i)) {
        return Err(ShardError::Missing { count, missing });
    }
    Ok(by_index.into_values().collect())
}

fn shard_json(spec: ShardSpec, options: &Value, connections: u64, t: &Tracked) -> Value {
    let a = &t.accounting;
    json!({
        "shard": {"format": FORMAT, "index": spec.index, "count": spec.count, "options": options,
                  "connections": connections},
        "accounting": {
            "frames": a.frames, "bytes": a.bytes, "decoded": a.decoded,
            "decoded_by_proto": a.decoded_by_proto, "skipped": a.skipped,
            "first_ts_ns": a.first_ts_ns, "last_ts_ns": a.last_ts_ns, "out_of_order": a.out_of_order,
            "truncated_tails": a.truncated_tails.iter().map(|e| json!({
                "file": e.file, "offset": e.offset, "reason": e.reason,
            })).collect::<Vec<_>>(),
        },
        "parts": t.parts.iter().map(|p| json!({
            "path": p.path, "first_ts_ns": p.first_ts_ns, "link_type": p.link_type,
            "frames": p.frames, "last_ts_ns": p.last_ts_ns,
        })).collect::<Vec<_>>(),
        "packet_sizes": t.sizes.slots().map(|(slot, n)| json!([slot, n])).collect::<Vec<_>>(),
    })
}

/// A name of `names`, as the `'static` string the accounting keys by.
fn static_name(names: impl IntoIterator<Item = &'static str>, name: &str) -> Option<&'static str> {
    names.into_iter().find(|n| *n == name)
}

fn counts(v: &Value, names: impl IntoIterator<Item = &'static str> + Clone) -> Option<BTreeMap<&'static str, u64>> {
    v.as_object()?.iter().map(|(k, n)| Some((static_name(names.clone(), k)?, n.as_u64()?))).collect()
}

fn opt_i64(v: &Value) -> Option<Option<i64>> {
    if v.is_null() {
        Some(None)
    } else {
        v.as_i64().map(Some)
    }
}

fn accounting_of(v: &Value) -> Option<Accounting> {
    // A shard's read errors are only cut tails: any other fails the shard.
    let truncated_tails = v["truncated_tails"]
        .as_array()?
        .iter()
        .map(|e| {
            Some(ReadError {
                file: PathBuf::from(e["file"].as_str()?),
                offset: e["offset"].as_u64()?,
                reason: e["reason"].as_str()?.to_string(),
                kind: ReadErrorKind::TruncatedTail,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let mut a = Accounting::default();
    a.frames = v["frames"].as_u64()?;
    a.bytes = v["bytes"].as_u64()?;
    a.decoded = v["decoded"].as_u64()?;
    a.decoded_by_proto = counts(&v["decoded_by_proto"], PROTO_NAMES)?;
    a.skipped = counts(&v["skipped"], all_skip_reasons().collect::<Vec<_>>())?;
    a.first_ts_ns = opt_i64(&v["first_ts_ns"])?;
    a.last_ts_ns = opt_i64(&v["last_ts_ns"])?;
    a.out_of_order = v["out_of_order"].as_u64()?;
    a.truncated_tails = truncated_tails;
    Some(a)
}

fn part_of(v: &Value) -> Option<Part> {
    Some(Part {
        path: PathBuf::from(v["path"].as_str()?),
        first_ts_ns: opt_i64(&v["first_ts_ns"])?,
        link_type: if v["link_type"].is_null() { None } else { Some(u32::try_from(v["link_type"].as_u64()?).ok()?) },
        frames: v["frames"].as_u64()?,
        last_ts_ns: opt_i64(&v["last_ts_ns"])?,
    })
}

/// Phase 1's connection records: each a little-endian `u32` length, then
/// the finish epoch and the record ([`encode`]).
struct RecordWriter {
    w: BufWriter<File>,
    buf: Vec<u8>,
    count: u64,
}

impl ConnectionOut for RecordWriter {
    /// The first packet's time is in the shard's accounting.
    fn open_at(&mut self, _ts_ns: i64) {}

    fn connection(&mut self, epoch: u64, c: &ConnRecord) -> Result<(), OutputError> {
        self.buf.clear();
        encode(epoch, c, &mut self.buf);
        let len = u32::try_from(self.buf.len()).expect("a connection record under 4 GiB");
        let written = self.w.write_all(&len.to_le_bytes()).and_then(|_| self.w.write_all(&self.buf));
        self.count += 1;
        // The sink's error names the shard directory (profile_shard).
        written.map_err(|source| OutputError::Write { dir: PathBuf::new(), source })
    }
}

struct RecordReader {
    r: BufReader<File>,
    buf: Vec<u8>,
    dir: PathBuf,
}

impl RecordReader {
    /// The next (epoch, connection), or None at the end of the records.
    fn next(&mut self) -> Result<Option<(u64, ConnRecord)>, ShardError> {
        let mut len = [0u8; 4];
        match self.r.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(unreadable(&self.dir, e)),
        }
        self.buf.resize(u32::from_le_bytes(len) as usize, 0);
        self.r.read_exact(&mut self.buf).map_err(|e| unreadable(&self.dir, format!("{RECORDS}: {e}")))?;
        decode(&self.buf).map(Some).ok_or_else(|| unreadable(&self.dir, format!("{RECORDS}: a malformed record")))
    }
}

/// Appends `epoch` and every field of `c` to `b`. The destructuring lists
/// every field, so a field added to the record fails to compile here
/// until the format carries it.
pub fn encode(epoch: u64, c: &ConnRecord, b: &mut Vec<u8>) {
    let ConnRecord {
        ts_ns,
        uid,
        orig_h,
        orig_p,
        resp_h,
        resp_p,
        ip_proto,
        service,
        duration_ns,
        orig_bytes,
        resp_bytes,
        conn_state,
        missed_bytes,
        history,
        orig_pkts,
        orig_ip_bytes,
        resp_pkts,
        resp_ip_bytes,
        last_ts_ns,
        handshake_complete,
        closed,
        rtt,
        transfer,
        well_behaved,
        load_bins,
    } = c;
    put_u64(b, epoch);
    put_i64(b, *ts_ns);
    b.extend_from_slice(uid.as_bytes());
    b.extend_from_slice(&orig_h.0);
    b.extend_from_slice(&orig_p.to_le_bytes());
    b.extend_from_slice(&resp_h.0);
    b.extend_from_slice(&resp_p.to_le_bytes());
    b.push(*ip_proto);
    b.push(service.map_or(0, |s| service_code(s) + 1));
    put_opt(b, duration_ns.map(|v| v as u64));
    put_opt(b, *orig_bytes);
    put_opt(b, *resp_bytes);
    b.push(*conn_state as u8);
    put_u64(b, *missed_bytes);
    put_u64(b, history.len() as u64);
    b.extend_from_slice(history.as_bytes());
    for v in [orig_pkts, orig_ip_bytes, resp_pkts, resp_ip_bytes] {
        put_u64(b, *v);
    }
    put_i64(b, *last_ts_ns);
    b.push(u8::from(*handshake_complete) | u8::from(*closed) << 1 | u8::from(*well_behaved) << 2);
    let RttRecord {
        syn_synack_ns,
        synack_ack_ns,
        handshake_ns,
        data_ack_orig,
        data_ack_resp,
        data_ack_orig_samples,
        data_ack_resp_samples,
    } = rtt;
    for v in [syn_synack_ns, synack_ack_ns, handshake_ns] {
        put_opt(b, v.map(|v| v as u64));
    }
    for s in [data_ack_orig, data_ack_resp] {
        let SampleStats { count, min_ns, median_ns, mean_ns, max_ns } = s;
        b.extend_from_slice(&count.to_le_bytes());
        put_i64(b, *min_ns);
        put_i64(b, *median_ns);
        put_u64(b, mean_ns.to_bits());
        put_i64(b, *max_ns);
    }
    for samples in [data_ack_orig_samples, data_ack_resp_samples] {
        put_u64(b, samples.len() as u64);
        for RttSample { rtt_ns, delayed_ack } in samples.iter() {
            put_i64(b, *rtt_ns);
            b.push(u8::from(*delayed_ack));
        }
    }
    match transfer {
        None => b.push(0),
        Some(Decomposition { setup_ns, transfer_ns, teardown_ns, orig, resp }) => {
            b.push(1);
            for v in [setup_ns, transfer_ns, teardown_ns] {
                put_i64(b, *v);
            }
            for side in [orig, resp] {
                put_side(b, side);
            }
        }
    }
    put_u64(b, load_bins.len() as u64);
    for LoadBin { bin, orig_ip_bytes, resp_ip_bytes, orig_pkts, resp_pkts } in load_bins.iter() {
        put_i64(b, *bin);
        for v in [orig_ip_bytes, resp_ip_bytes, orig_pkts, resp_pkts] {
            put_u64(b, *v);
        }
    }
}

fn put_side(b: &mut Vec<u8>, s: &SideTransfer) {
    let SideTransfer {
        data_pkts,
        distinct_data_pkts,
        retransmissions,
        trains,
        train_sizes,
        warmups_ns,
        actual_ns,
        warmup_ns,
        theory_ns,
        pacing_ns,
        pacing_per_pkt_ns,
    } = s;
    for v in [data_pkts, distinct_data_pkts, retransmissions] {
        put_u64(b, *v);
    }
    b.extend_from_slice(&trains.to_le_bytes());
    put_u64(b, train_sizes.len() as u64);
    for v in train_sizes.iter() {
        b.extend_from_slice(&v.to_le_bytes());
    }
    put_u64(b, warmups_ns.len() as u64);
    for v in warmups_ns.iter() {
        put_i64(b, *v);
    }
    for v in [actual_ns, warmup_ns, theory_ns, pacing_ns] {
        put_i64(b, *v);
    }
    put_u64(b, pacing_per_pkt_ns.to_bits());
}

fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_i64(b: &mut Vec<u8>, v: i64) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_opt(b: &mut Vec<u8>, v: Option<u64>) {
    b.push(u8::from(v.is_some()));
    put_u64(b, v.unwrap_or(0));
}

/// Every service by its code (its position).
const SERVICES: [Service; 12] = [
    Service::Dhcp,
    Service::Dns,
    Service::Ftp,
    Service::Http,
    Service::Imap,
    Service::Irc,
    Service::Ntp,
    Service::Pop3,
    Service::Sip,
    Service::Smtp,
    Service::Ssh,
    Service::Ssl,
];

/// A service's code; exhaustive, so a new service must be given one.
fn service_code(s: Service) -> u8 {
    match s {
        Service::Dhcp => 0,
        Service::Dns => 1,
        Service::Ftp => 2,
        Service::Http => 3,
        Service::Imap => 4,
        Service::Irc => 5,
        Service::Ntp => 6,
        Service::Pop3 => 7,
        Service::Sip => 8,
        Service::Smtp => 9,
        Service::Ssh => 10,
        Service::Ssl => 11,
    }
}

/// Every `conn_state` by its discriminant.
const STATES: [ConnState; 13] = [
    ConnState::S0,
    ConnState::S1,
    ConnState::SF,
    ConnState::REJ,
    ConnState::S2,
    ConnState::S3,
    ConnState::RSTO,
    ConnState::RSTR,
    ConnState::RSTOS0,
    ConnState::RSTRH,
    ConnState::SH,
    ConnState::SHR,
    ConnState::OTH,
];

/// Reads back what [`encode`] wrote; None if `b` is not such a record.
pub fn decode(b: &[u8]) -> Option<(u64, ConnRecord)> {
    let mut d = Cursor { b, at: 0 };
    let epoch = d.u64()?;
    let ts_ns = d.i64()?;
    let uid = Uid::parse(std::str::from_utf8(d.take(18)?).ok()?)?;
    let orig_h = d.addr()?;
    let orig_p = d.u16()?;
    let resp_h = d.addr()?;
    let resp_p = d.u16()?;
    let ip_proto = d.u8()?;
    let service = match d.u8()? {
        0 => None,
        code => Some(*SERVICES.get(usize::from(code) - 1)?),
    };
    let duration_ns = d.opt()?.map(|v| v as i64);
    let orig_bytes = d.opt()?;
    let resp_bytes = d.opt()?;
    let conn_state = *STATES.get(usize::from(d.u8()?))?;
    let missed_bytes = d.u64()?;
    let history_len = usize::try_from(d.u64()?).ok()?;
    let history = String::from_utf8(d.take(history_len)?.to_vec()).ok()?;
    let (orig_pkts, orig_ip_bytes, resp_pkts, resp_ip_bytes) = (d.u64()?, d.u64()?, d.u64()?, d.u64()?);
    let last_ts_ns = d.i64()?;
    let flags = d.u8()?;
    let syn_synack_ns = d.opt()?.map(|v| v as i64);
    let synack_ack_ns = d.opt()?.map(|v| v as i64);
    let handshake_ns = d.opt()?.map(|v| v as i64);
    let data_ack_orig = d.stats()?;
    let data_ack_resp = d.stats()?;
    let data_ack_orig_samples = d.rtt_samples()?;
    let data_ack_resp_samples = d.rtt_samples()?;
    let transfer = match d.u8()? {
        0 => None,
        1 => Some(Decomposition {
            setup_ns: d.i64()?,
            transfer_ns: d.i64()?,
            teardown_ns: d.i64()?,
            orig: d.side()?,
            resp: d.side()?,
        }),
        _ => return None,
    };
    let bins = d.len()?;
    let mut load_bins = List::default();
    for _ in 0..bins {
        load_bins.push(LoadBin {
            bin: d.i64()?,
            orig_ip_bytes: d.u64()?,
            resp_ip_bytes: d.u64()?,
            orig_pkts: d.u64()?,
            resp_pkts: d.u64()?,
        });
    }
    if d.at != b.len() {
        return None;
    }
    let c = ConnRecord {
        ts_ns,
        uid,
        orig_h,
        orig_p,
        resp_h,
        resp_p,
        ip_proto,
        service,
        duration_ns,
        orig_bytes,
        resp_bytes,
        conn_state,
        missed_bytes,
        history,
        orig_pkts,
        orig_ip_bytes,
        resp_pkts,
        resp_ip_bytes,
        last_ts_ns,
        handshake_complete: flags & 1 != 0,
        closed: flags & 2 != 0,
        rtt: RttRecord {
            syn_synack_ns,
            synack_ack_ns,
            handshake_ns,
            data_ack_orig,
            data_ack_resp,
            data_ack_orig_samples,
            data_ack_resp_samples,
        },
        transfer,
        well_behaved: flags & 4 != 0,
        load_bins,
    };
    Some((epoch, c))
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        self.u64().map(|v| v as i64)
    }
    fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }
    fn addr(&mut self) -> Option<Addr> {
        Some(Addr(self.take(16)?.try_into().ok()?))
    }
    fn opt(&mut self) -> Option<Option<u64>> {
        let some = self.u8()?;
        let v = self.u64()?;
        match some {
            0 => Some(None),
            1 => Some(Some(v)),
            _ => None,
        }
    }
    /// A list's length, no longer than the bytes left could hold.
    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok().filter(|&n| n <= self.b.len() - self.at)
    }
    fn stats(&mut self) -> Option<SampleStats> {
        Some(SampleStats {
            count: self.u32()?,
            min_ns: self.i64()?,
            median_ns: self.i64()?,
            mean_ns: self.f64()?,
            max_ns: self.i64()?,
        })
    }
    fn rtt_samples(&mut self) -> Option<List<RttSample, 8>> {
        let n = self.len()?;
        let mut l = List::default();
        for _ in 0..n {
            l.push(RttSample { rtt_ns: self.i64()?, delayed_ack: self.u8()? != 0 });
        }
        Some(l)
    }
    fn side(&mut self) -> Option<SideTransfer> {
        let (data_pkts, distinct_data_pkts, retransmissions) = (self.u64()?, self.u64()?, self.u64()?);
        let trains = self.u32()?;
        let n = self.len()?;
        let mut train_sizes = List::default();
        for _ in 0..n {
            train_sizes.push(self.u32()?);
        }
        let n = self.len()?;
        let mut warmups_ns = List::default();
        for _ in 0..n {
            warmups_ns.push(self.i64()?);
        }
        Some(SideTransfer {
            data_pkts,
            distinct_data_pkts,
            retransmissions,
            trains,
            train_sizes,
            warmups_ns,
            actual_ns: self.i64()?,
            warmup_ns: self.i64()?,
            theory_ns: self.i64()?,
            pacing_ns: self.i64()?,
            pacing_per_pkt_ns: self.f64()?,
        })
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

    fn side(seed: u64) -> SideTransfer {
        SideTransfer {
            data_pkts: seed,
            distinct_data_pkts: seed - 1,
            retransmissions: 1,
            trains: 6,
            // Beyond the inline capacities: the heap form is recorded too.
            train_sizes: (0..6).map(|i| i * 3 + 1).collect(),
            warmups_ns: (0..6).map(|i| -i * 1_000).collect(),
            actual_ns: 11,
            warmup_ns: -12,
            theory_ns: 13,
            pacing_ns: 14,
            pacing_per_pkt_ns: 0.1 + seed as f64,
        }
    }

    fn record(i: u8) -> ConnRecord {
        let samples = |n: i64| (0..n).map(|k| RttSample { rtt_ns: k * 7, delayed_ack: k % 2 == 0 }).collect();
        ConnRecord {
            ts_ns: -5 + i64::from(i),
            uid: Uid::parse("CAbcdefghijklmnop1").unwrap(),
            orig_h: addr(i),
            orig_p: 40_000 + u16::from(i),
            resp_h: addr(200),
            resp_p: 443,
            ip_proto: 6,
            service: i.is_multiple_of(2).then_some(Service::Ssl),
            duration_ns: (!i.is_multiple_of(3)).then_some(123),
            orig_bytes: Some(u64::MAX),
            resp_bytes: None,
            conn_state: STATES[usize::from(i) % STATES.len()],
            missed_bytes: 9,
            history: "ShADadFf".into(),
            orig_pkts: 1,
            orig_ip_bytes: 2,
            resp_pkts: 3,
            resp_ip_bytes: 4,
            last_ts_ns: i64::MAX,
            handshake_complete: true,
            closed: i % 2 == 1,
            rtt: RttRecord {
                syn_synack_ns: Some(-1),
                synack_ack_ns: None,
                handshake_ns: Some(i64::MIN),
                data_ack_orig: SampleStats { count: 3, min_ns: 1, median_ns: 2, mean_ns: 2.5, max_ns: 4 },
                data_ack_resp: SampleStats::default(),
                data_ack_orig_samples: samples(3),
                data_ack_resp_samples: samples(20),
            },
            transfer: i.is_multiple_of(2).then(|| Decomposition {
                setup_ns: 1,
                transfer_ns: 2,
                teardown_ns: 3,
                orig: side(10),
                resp: side(20),
            }),
            well_behaved: i.is_multiple_of(3),
            load_bins: (0..i64::from(i % 4))
                .map(|b| LoadBin { bin: b, orig_ip_bytes: 1, resp_ip_bytes: 2, orig_pkts: 3, resp_pkts: 4 })
                .collect(),
        }
    }

    #[test]
    fn records_read_back_field_for_field() {
        let mut b = Vec::new();
        for i in 0..13u8 {
            let c = record(i);
            b.clear();
            encode(u64::from(i) * 1_000, &c, &mut b);
            assert_eq!(decode(&b), Some((u64::from(i) * 1_000, c)));
            // A cut or padded record is refused, never misread.
            assert_eq!(decode(&b[..b.len() - 1]), None);
            b.push(0);
            assert_eq!(decode(&b), None);
        }
    }

    #[test]
    fn shard_specs_parse_or_are_refused() {
        assert_eq!("1/3".parse::<ShardSpec>().unwrap(), ShardSpec { index: 1, count: 3 });
        for bad in ["3/3", "0/0", "1", "a/2", "-1/2", "0/5000"] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }
}
