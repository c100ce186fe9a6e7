//! The profile run: read frames, decode, shard packets by connection onto
//! tracker threads, merge finished connections deterministically, write the
//! outputs.
//!
//! Determinism across thread counts: network time advances in *epochs* (one
//! per second of trace time, fixed by the packet stream, not by sharding).
//! At each epoch boundary every shard is told `advance(now)` and reports the
//! connections it finished during the epoch; the merger sorts one epoch's
//! connections by (first timestamp, uid) before writing. So the set and the
//! order of output rows do not depend on how packets were sharded, and memory
//! stays bounded by active connections plus one epoch of finished ones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread;
use std::time::Instant;

use tracelab_decode::{decode_into, ip_proto, Addr, PacketMeta, SkipReason};
use tracelab_flow::{ConnRecord, Seen, Tracker, TrackerConfig, Uid};
use tracelab_pcap::chain::{expand_inputs, Chain, ChainError, Part};
use tracelab_pcap::{FrameSource, ReadError, ReadErrorKind, Source};

use crate::scope::{LocalNets, Scope};
use crate::writers::{Composition, OutputConfig, OutputError, OutputSink, SizeHistogram, Staging, Totals};
use tracelab_output::table::Codec;

pub const EPOCH_NS: i64 = 1_000_000_000;
const BATCH: usize = 4096;

/// How frames are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReaderKind {
    /// tracelab's own pcap/pcapng/gzip reader (default, faster).
    Native,
    /// libpcap through the `pcap` crate (the reference).
    Libpcap,
}

#[derive(Clone, Debug)]
pub struct ProfileConfig {
    /// The capture's name: the trace, or the first input of several.
    pub trace: PathBuf,
    /// The capture files (directories stand for the files in them), read
    /// as one capture in order of their first timestamps.
    pub inputs: Vec<PathBuf>,
    pub out_dir: PathBuf,
    pub local: LocalNets,
    pub servers: Vec<Addr>,
    pub threads: usize,
    pub tracker: TrackerConfig,
    pub bin_ns: i64,
    pub reader: ReaderKind,
    /// Parquet page compression.
    pub compression: Codec,
    pub progress: bool,
    /// A role model (`--roles`) applied to every host in hosts.parquet.
    pub roles: Option<std::sync::Arc<crate::roles::RoleModel>>,
    pub roles_path: Option<PathBuf>,
}

/// Frame accounting: every frame read is decoded or skipped under a reason.
#[derive(Clone, Debug, Default)]
pub struct Accounting {
    pub frames: u64,
    pub bytes: u64,
    pub decoded: u64,
    pub decoded_by_proto: BTreeMap<&'static str, u64>,
    pub skipped: BTreeMap<&'static str, u64>,
    pub first_ts_ns: Option<i64>,
    pub last_ts_ns: Option<i64>,
    /// Decoded packets whose timestamp was earlier than network time (the
    /// latest timestamp decoded before them): processed at network time,
    /// so time never goes backwards for the trackers.
    pub out_of_order: u64,
    /// Files that end in a cut record (still being written, or cut short):
    /// every whole record before the cut was read, and reading went on with
    /// the next file. A corrupt record is not here: it fails the profile.
    pub truncated_tails: Vec<ReadError>,
    /// Per-packet counts behind `decoded_by_proto`, indexed like
    /// `PROTO_NAMES` and folded into the map when the input ends (a map
    /// update per packet cost more than decoding the packet).
    by_proto: [u64; 5],
}

pub(crate) const PROTO_NAMES: [&str; 5] = ["tcp", "udp", "icmp", "icmp6", "other_ip"];

impl Accounting {
    fn add_decoded(&mut self, p: &PacketMeta) {
        self.decoded += 1;
        let i = match p.ip_proto {
            ip_proto::TCP => 0,
            ip_proto::UDP => 1,
            ip_proto::ICMP => 2,
            ip_proto::ICMPV6 => 3,
            _ => 4,
        };
        self.by_proto[i] += 1;
    }
    /// Moves the per-packet counts into `decoded_by_proto` (protocols seen).
    fn fold_protos(&mut self) {
        for (name, n) in PROTO_NAMES.iter().zip(std::mem::take(&mut self.by_proto)) {
            if n > 0 {
                *self.decoded_by_proto.entry(name).or_default() += n;
            }
        }
    }
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }
}

/// What a run produced, for the summary.
pub struct Profile {
    pub accounting: Accounting,
    pub hosts: usize,
    pub local_hosts: usize,
    pub servers: usize,
    pub connections: u64,
    pub by_proto: BTreeMap<&'static str, u64>,
    pub by_state: BTreeMap<&'static str, u64>,
    pub composition: Composition,
    /// Every output file, by its final path (in `out_dir`).
    pub files: Vec<PathBuf>,
    pub elapsed_s: f64,
    /// The capture's files in reading order, with their frames and times.
    pub parts: Vec<Part>,
    /// The outputs, written but not yet in `out_dir`'s place: the caller
    /// adds summary.json to [`Staging::path`], then commits.
    pub staging: Staging,
}

/// What a shard is sent, in batches. `Copy`: a shard reads its batch in
/// place and clears it, so a packet is copied once, into the batch.
#[derive(Clone, Copy)]
enum Msg {
    Packet(PacketMeta),
    Advance(i64),
    Finish,
}

/// A shard's finished connections for one epoch.
struct EpochResult {
    /// `u64::MAX` = the final flush.
    epoch: u64,
    shard: usize,
    records: Vec<ConnRecord>,
}

struct Shard {
    tx: SyncSender<Vec<Msg>>,
    recycled: Receiver<Vec<Msg>>,
    results: Receiver<EpochResult>,
    /// Written epoch vectors go back to the shard, emptied, so the records
    /// of the next epochs land in memory already touched (a fresh multi-MB
    /// vector per epoch cost a page fault per 4 KiB: ~20 % of the run's CPU
    /// time went to the kernel). First-touch page faults on the 2 M-packet
    /// tcpmix trace 40,977 -> 32,500 (bf5f9fa; docs/performance-history.md,
    /// analyzer step 21).
    written: Sender<Vec<ConnRecord>>,
    batch: Vec<Msg>,
    /// The shard's packet-size histogram, returned when it finishes.
    handle: thread::JoinHandle<SizeHistogram>,
}

fn spawn_shard(index: usize, cfg: TrackerConfig, local: LocalNets) -> Shard {
    let (tx, rx) = mpsc::sync_channel::<Vec<Msg>>(8);
    let (recycle_tx, recycled) = mpsc::channel::<Vec<Msg>>();
    let (res_tx, results) = mpsc::channel::<EpochResult>();
    let (written, written_rx) = mpsc::channel::<Vec<ConnRecord>>();
    let ends = ShardEnds { index, rx, recycle: recycle_tx, results: res_tx, written: written_rx };
    let handle = thread::spawn(move || shard_loop(cfg, local, ends));
    Shard { tx, recycled, results, written, batch: Vec::with_capacity(BATCH), handle }
}

/// A tracker thread's ends of its channels.
struct ShardEnds {
    index: usize,
    rx: Receiver<Vec<Msg>>,
    recycle: Sender<Vec<Msg>>,
    results: Sender<EpochResult>,
    written: Receiver<Vec<ConnRecord>>,
}

fn shard_loop(cfg: TrackerConfig, local: LocalNets, ends: ShardEnds) -> SizeHistogram {
    let ShardEnds { index, rx, recycle, results, written } = ends;
    let mut tracker = Tracker::new(cfg);
    let mut sizes = SizeHistogram::new();
    let mut finished = Vec::new();
    let mut epoch = 0u64;
    for mut batch in rx {
        // Read in place (moving each ~100-byte message out cost a copy).
        for msg in &batch {
            match msg {
                Msg::Packet(p) => {
                    let seen = tracker.process(p, &mut finished);
                    // The scope is the connection's: derived on its first
                    // packet, then kept in its tag.
                    if *seen.tag == Seen::NEW {
                        *seen.tag = Scope::of(&local, &p.src, &p.dst) as u8;
                    }
                    sizes.add(Scope::ALL[usize::from(*seen.tag)], seen.from_orig, p.ip_len);
                }
                &Msg::Advance(now) => {
                    tracker.advance(now, &mut finished);
                    // The next epoch's vector: one the merger has written
                    // and sent back, else one as large as this epoch's, so
                    // it rarely grows (growing moves every record).
                    let next = written.try_recv().unwrap_or_else(|_| Vec::with_capacity(finished.len()));
                    let records = std::mem::replace(&mut finished, next);
                    if results.send(EpochResult { epoch, shard: index, records }).is_err() {
                        return sizes;
                    }
                    epoch += 1;
                }
                Msg::Finish => {
                    tracker.finish(&mut finished);
                    let _ = results.send(EpochResult { epoch: u64::MAX, shard: index, records: finished });
                    return sizes;
                }
            }
        }
        batch.clear();
        // The reader may be gone already; then the batch is simply dropped.
        let _ = recycle.send(batch);
    }
    sizes
}

impl Shard {
    fn push(&mut self, m: Msg) {
        self.batch.push(m);
        if self.batch.len() >= BATCH {
            self.send();
        }
    }
    fn send(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let next = self.recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        self.tx.send(full).expect("tracker thread alive");
    }
}

/// Collects epoch results from all shards and writes complete epochs in
/// deterministic order.
struct Merger {
    /// Per epoch: the shards' results, in the order they arrived.
    pending: BTreeMap<u64, Vec<EpochResult>>,
    shards: usize,
    /// Scratch: an epoch's (first timestamp, uid, result, position) in
    /// output order.
    order: Vec<(i64, Uid, u32, u32)>,
}

impl Merger {
    /// Takes one shard's epoch; writes every epoch all shards have reported.
    /// Each vector goes back to its shard emptied, through `shards`.
    fn offer(
        &mut self,
        result: EpochResult,
        out: &mut impl ConnectionOut,
        shards: &[Shard],
    ) -> Result<(), OutputError> {
        self.pending.entry(result.epoch).or_insert_with(|| Vec::with_capacity(self.shards)).push(result);
        // Epochs complete in order per shard, so write every leading complete one.
        while let Some(entry) = self.pending.first_entry() {
            if entry.get().len() < self.shards {
                break;
            }
            let epoch = *entry.key();
            let results = entry.remove();
            // Small keys are sorted, not the records (moving ~1 KB records,
            // or gathering the shards' into one vector, cost more than
            // comparing them); (result, position) makes the unstable sort
            // keep arrival order among equal keys. Callgrind, tcpmix 300 k:
            // keys instead of records, main thread 474.5 M -> 474.2 M (540c95c,
            // analyzer step 13); the shards' own vectors, --threads 2 476.0 M
            // -> 464.7 M (47f7d99, step 27; docs/performance-history.md).
            self.order.clear();
            for (k, r) in results.iter().enumerate() {
                self.order.extend(r.records.iter().enumerate().map(|(i, c)| (c.ts_ns, c.uid, k as u32, i as u32)));
            }
            self.order.sort_unstable();
            for &(_, _, k, i) in &self.order {
                out.connection(epoch, &results[k as usize].records[i as usize])?;
            }
            for r in results {
                give_back(shards, r);
            }
        }
        Ok(())
    }
}

/// Returns an emptied epoch vector to the shard it came from (dropped when
/// that shard has finished).
fn give_back(shards: &[Shard], mut result: EpochResult) {
    result.records.clear();
    if result.epoch != u64::MAX {
        let _ = shards[result.shard].written.send(result.records);
    }
}

fn open_libpcap(path: &Path) -> Result<Source<'static>, ReadError> {
    tracelab_pcap::libpcap::open(path).map(Source::from)
}

fn open_chain(cfg: &ProfileConfig) -> Result<Chain, ChainError> {
    let opener = match cfg.reader {
        ReaderKind::Native => tracelab_pcap::open,
        ReaderKind::Libpcap => open_libpcap,
    };
    Chain::probe(&expand_inputs(&cfg.inputs)?, opener)
}

/// Why a profile produced no outputs (or incomplete ones).
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The trace could not be opened (a file that ends in a cut record is
    /// not an `Err`: see [`Accounting::truncated_tails`]).
    #[error(transparent)]
    Open(#[from] ReadError),
    /// A record is corrupt, or the system failed to read the file: what
    /// was read before it is not trusted as a profile, so nothing is written.
    #[error("{0} (a corrupt or unreadable capture: no outputs written)")]
    Read(ReadError),
    /// The input files do not make one capture (or cannot be listed).
    #[error(transparent)]
    Inputs(ChainError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("a tracker thread stopped unexpectedly")]
    TrackerStopped,
    #[error("a tracker thread panicked")]
    TrackerPanicked,
    /// SIGINT or SIGTERM: the partial outputs were removed.
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
}

/// Where finished connections go, in output order (epoch by epoch; within
/// an epoch by first time and uid): the profile's outputs, or a shard's
/// records for a later merge (`shard.rs`).
pub trait ConnectionOut {
    /// The first decoded packet's time.
    fn open_at(&mut self, ts_ns: i64);
    /// One finished connection, finished in `epoch` (`u64::MAX`: at the end
    /// of the capture).
    fn connection(&mut self, epoch: u64, c: &ConnRecord) -> Result<(), OutputError>;
}

impl ConnectionOut for OutputSink {
    fn open_at(&mut self, ts_ns: i64) {
        OutputSink::open_at(self, ts_ns);
    }
    fn connection(&mut self, _epoch: u64, c: &ConnRecord) -> Result<(), OutputError> {
        OutputSink::connection(self, c)
    }
}

/// Which connections a run tracks: shard `index` of `count` (by
/// [`Tracker::shard_of`], the hash the tracker threads share out by), or
/// all of them. Every shard reads and decodes the whole capture, so its
/// network time and epochs are the capture's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardSpec {
    pub index: usize,
    pub count: usize,
}

impl ShardSpec {
    pub const WHOLE: ShardSpec = ShardSpec { index: 0, count: 1 };
}

/// What reading the capture produced besides the connections.
pub struct Tracked {
    pub accounting: Accounting,
    /// Packets per scope, side and IP length, of the tracked connections.
    pub sizes: SizeHistogram,
    pub parts: Vec<Part>,
}

/// Opens the capture's files as one capture; a file that cannot be read is
/// [`ProfileError::Open`].
pub fn open_capture(cfg: &ProfileConfig) -> Result<Chain, ProfileError> {
    open_chain(cfg).map_err(|e| match e {
        ChainError::Read(e) => ProfileError::Open(e),
        e => ProfileError::Inputs(e),
    })
}

/// The sink's configuration for outputs staged in `staging`.
pub fn output_config(cfg: &ProfileConfig, staging: &Staging) -> OutputConfig {
    OutputConfig {
        dir: staging.path().to_path_buf(),
        name: cfg.out_dir.clone(),
        codec: cfg.compression,
        local: cfg.local.clone(),
        servers: cfg.servers.clone(),
        roles: cfg.roles.clone(),
        bin_ns: cfg.bin_ns,
    }
}

/// Profiles one trace into `cfg.out_dir`. Returns the profile even when a
/// file ends in a cut record (the outputs then hold every whole record; the
/// cut is in `accounting.truncated_tails`). A corrupt or unreadable record,
/// and errors opening the files or writing outputs, are returned as `Err`.
pub fn profile(cfg: &ProfileConfig) -> Result<Profile, ProfileError> {
    let started = Instant::now();
    without_huge_pages();
    let chain = open_capture(cfg)?;
    // Outputs go to a partial directory beside out_dir, put in its place
    // by the caller once summary.json is written; dropped on any error.
    let staging =
        Staging::begin(&cfg.out_dir).map_err(|source| OutputError::CreateDir { dir: cfg.out_dir.clone(), source })?;
    let mut sink = OutputSink::create(output_config(cfg, &staging))?;
    let tracked = track(cfg, ShardSpec::WHOLE, chain, &mut sink)?;
    finish_profile(cfg, sink, tracked, staging, started)
}

/// Phase 2 of a profile whose connections are all in `sink`: the outputs
/// that need the whole capture.
pub fn finish_profile(
    cfg: &ProfileConfig,
    sink: OutputSink,
    tracked: Tracked,
    staging: Staging,
    started: Instant,
) -> Result<Profile, ProfileError> {
    let Tracked { accounting, sizes, parts } = tracked;
    let w = sink.finish(Totals { last_ts_ns: accounting.last_ts_ns, sizes })?;
    Ok(Profile {
        accounting,
        servers: w.servers,
        local_hosts: w.local_hosts,
        hosts: w.hosts,
        connections: w.connections,
        by_proto: w.by_proto,
        by_state: w.by_state,
        composition: w.composition,
        files: w.files.iter().map(|f| cfg.out_dir.join(f.strip_prefix(staging.path()).unwrap_or(f))).collect(),
        elapsed_s: started.elapsed().as_secs_f64(),
        parts,
        staging,
    })
}

/// Reads the capture, tracks the connections of `shard` and hands them to
/// `out` in output order.
pub fn track(
    cfg: &ProfileConfig,
    shard: ShardSpec,
    mut chain: Chain,
    out: &mut impl ConnectionOut,
) -> Result<Tracked, ProfileError> {
    let threads = cfg.threads.max(1);
    let tracked_ways = threads * shard.count.max(1);
    let mut shards: Vec<Shard> = (0..threads).map(|i| spawn_shard(i, cfg.tracker.clone(), cfg.local.clone())).collect();
    let mut merger = Merger { pending: BTreeMap::new(), shards: threads, order: Vec::new() };
    let mut acc = Accounting::default();
    let progress = crate::progress::Progress::new(cfg.progress, chain.size_hint());
    // The end of the current epoch; `None` before the first decoded packet.
    let mut epoch_end: Option<i64> = None;
    // Network time: the latest timestamp decoded (meaningful once
    // `epoch_end` is set).
    let mut now = i64::MIN;
    let mut first_write_error: Option<OutputError> = None;
    // Decoded into in place, then copied once into a shard's batch.
    let mut meta = PacketMeta::default();
    // The last frame's own timestamp (before any clamping), for the gaps
    // and overlaps between files.
    let mut last_frame_ts: Option<i64> = None;

    loop {
        // Finished connections are written every batch's worth of frames:
        // written in one go every 65,536 frames, they left the tracker
        // thread idle while this one caught up. On the 6 M-packet tcpmix
        // trace of make bench-analyzer: wall time 1.42 -> 1.16 s (median of
        // 7, alternated), CPU time unchanged (64a14a6;
        // docs/performance-history.md, analyzer step 30).
        if acc.frames % BATCH as u64 == BATCH as u64 - 1 {
            if acc.frames % 65_536 == 65_535 {
                progress.update(acc.frames, chain.offset());
            }
            if let Some(signal) = crate::interrupt::pending() {
                return Err(ProfileError::Interrupted(signal));
            }
            for shard in &shards {
                while let Ok(r) = shard.results.try_recv() {
                    if let Err(e) = merger.offer(r, out, &shards) {
                        first_write_error.get_or_insert(e);
                    }
                }
            }
        }
        let frame = match chain.current().next_frame() {
            Ok(Some(f)) => f,
            // The next file continues the capture: same network time,
            // same trackers, so connections span the boundary.
            Ok(None) => match chain.next_file(acc.frames, last_frame_ts) {
                Ok(true) => continue,
                Ok(false) => break,
                Err(e) => return Err(ProfileError::Open(e)),
            },
            // A file cut in a record (a capture still being written, a
            // rotated file cut by a full disk) holds only whole records
            // before the cut, as tcpdump and Zeek read it: counted, and
            // the next file read, so rotation loses nothing after it.
            Err(e) if e.kind == ReadErrorKind::TruncatedTail => {
                acc.truncated_tails.push(e);
                match chain.next_file(acc.frames, last_frame_ts) {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(e) => return Err(ProfileError::Open(e)),
                }
            }
            Err(e) => return Err(ProfileError::Read(e)),
        };
        acc.frames += 1;
        last_frame_ts = Some(frame.ts_ns);
        acc.bytes += frame.cap_len as u64;
        // The readers clamp a time outside i64 nanoseconds (before
        // 1677-09-21 or after 2262-04-11) to the ends of the range: the
        // frame's real time is not known.
        if frame.ts_ns == i64::MIN || frame.ts_ns == i64::MAX {
            *acc.skipped.entry(TIMESTAMP_OUT_OF_RANGE).or_default() += 1;
            continue;
        }
        if let Err(reason) =
            decode_into(frame.link_type, frame.data, frame.ts_ns, frame.wire_len, frame.interface, &mut meta)
        {
            *acc.skipped.entry(reason.name()).or_default() += 1;
            continue;
        }
        acc.add_decoded(&meta);
        // Network time never goes backwards (as in Zeek): the maximum seen.
        // A packet from before it is processed at network time (so no
        // duration, RTT or warm-up comes out negative) and counted.
        if meta.ts_ns < now {
            acc.out_of_order += 1;
            meta.ts_ns = now;
        }
        now = meta.ts_ns;
        match epoch_end {
            None => {
                // The first decoded packet.
                acc.first_ts_ns = Some(meta.ts_ns);
                out.open_at(meta.ts_ns);
                epoch_end = Some(epoch_end_after(now));
            }
            Some(end) if now >= end => {
                for shard in &mut shards {
                    shard.push(Msg::Advance(now));
                    shard.send();
                }
                epoch_end = Some(epoch_end_after(now));
            }
            _ => {}
        }
        // One shard needs no hash. Shard I of N keeps the packets whose
        // hash falls in its N-th (the high part of the hash picks the
        // shard, the rest the thread: any thread count gives the same
        // shards).
        let s = if tracked_ways == 1 { 0 } else { Tracker::shard_of(&meta, tracked_ways) };
        if shard.count > 1 && s / threads != shard.index {
            continue;
        }
        shards[s % threads].push(Msg::Packet(meta));
    }
    acc.fold_protos();
    acc.last_ts_ns = epoch_end.map(|_| now);
    for shard in &mut shards {
        shard.push(Msg::Finish);
        shard.send();
    }
    let mut live = shards.len();
    let mut finished_shards = vec![false; shards.len()];
    while live > 0 {
        for (i, shard) in shards.iter().enumerate() {
            if finished_shards[i] {
                continue;
            }
            match shard.results.recv() {
                Ok(r) => {
                    let last = r.epoch == u64::MAX;
                    if let Err(e) = merger.offer(r, out, &shards) {
                        first_write_error.get_or_insert(e);
                    }
                    if last {
                        finished_shards[i] = true;
                        live -= 1;
                    }
                }
                Err(_) => return Err(ProfileError::TrackerStopped),
            }
        }
    }
    let mut sizes = SizeHistogram::new();
    for shard in shards {
        sizes.merge(&shard.handle.join().map_err(|_| ProfileError::TrackerPanicked)?);
    }
    if let Some(e) = first_write_error {
        return Err(e.into());
    }
    progress.finish(acc.frames, chain.offset());
    Ok(Tracked { accounting: acc, sizes, parts: chain.parts().to_vec() })
}

/// Turns transparent huge pages off for this process. mimalloc asks for
/// them (`MADV_HUGEPAGE` on its arenas); the kernel then zeroes a whole
/// 2 MiB page at the first touch of any byte of it, and again each time
/// mimalloc has purged a freed page and reuses it, so the profile's churn
/// of row-group and epoch buffers cost ~17 % of its CPU in `clear_page`,
/// and half-used huge pages ~45 MiB of its peak RSS. make bench-analyzer
/// (6 M-packet tcpmix, medians of 7, interleaved, before and after):
/// `--threads 1` peak RSS 142 -> 101 MiB, sys 0.59 -> 0.27 CPU s, but user
/// time rises by about as much (more TLB misses), so total CPU is the same
/// within the shared machine's noise (2.27 -> 2.25 s); `--threads 2` RSS
/// 178 -> 108 MiB, CPU 2.27 -> 2.08 s. Applies to pages touched from now
/// on; a kernel without the `prctl` (before 3.15) keeps huge pages, which
/// changes only speed and memory.
pub fn without_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and changes only
    // how the kernel backs this process's future page faults.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}

/// The skip reason of a frame whose time the reader could not represent.
pub const TIMESTAMP_OUT_OF_RANGE: &str = "timestamp_out_of_range";

/// The end of the epoch holding `now`: the next whole second, saturating
/// at `i64::MAX` (the last epoch then never ends before the trace does).
fn epoch_end_after(now: i64) -> i64 {
    now.div_euclid(EPOCH_NS).saturating_add(1).saturating_mul(EPOCH_NS)
}

/// The name of each skip reason, so summaries list every reason (0 included).
pub fn all_skip_reasons() -> impl Iterator<Item = &'static str> {
    SkipReason::ALL.iter().map(|r| r.name()).chain([TIMESTAMP_OUT_OF_RANGE])
}

pub fn relative(out: &Path, p: &Path) -> String {
    p.strip_prefix(out).unwrap_or(p).display().to_string()
}
