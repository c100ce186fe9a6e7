//! `tracelab-analyzer`: profile a trace. Also reached as `tracelab profile`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};

use tracelab_analyzer::driver::{profile, ProfileConfig, ProfileError, ReaderKind, ShardSpec};
use tracelab_analyzer::interrupt;
use tracelab_analyzer::predict_c45::{load_tree, predict_stream};
use tracelab_analyzer::roles::{RoleModel, RoleModelError};
use tracelab_analyzer::scope::{Cidr, CidrError, LocalNets};
use tracelab_analyzer::shard::{merge_shards, profile_shard, MergeError};
use tracelab_analyzer::summary::{print_human, summary_json, write_summary};
use tracelab_analyzer::write_pcap::{write_pcap, WriteError};
use tracelab_decode::Addr;
use tracelab_flow::TrackerConfig;
use tracelab_output::table::{Codec, ZSTD_LEVEL};
use tracelab_pcap::chain::{boundaries, Part};

// mimalloc: callgrind, tcpmix 300 k: 487.5 M -> 485.1 M instructions
// (2ede884; docs/performance-history.md, analyzer step 21). Its 2 MiB pages
// are off during a profile (driver::without_huge_pages, d54407c): the kernel
// zeroed each one at first touch after mimalloc released it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EXAMPLES: &str = "\
Examples:
  tracelab-analyzer datasets/real/pcapplusplus-example.pcap --local 10.0.0.0/8 -o out/example
  tracelab-analyzer big.pcapng.gz --local 10.0.0.0/8,192.168.0.0/16 --threads 2 -o out/big
  tracelab-analyzer captures/ --local 10.0.0.0/8 -o out/week      (rotated files, one capture)
  tracelab-analyzer trace.pcap --servers 10.0.0.5,10.0.0.6 --bin 60 --json -o out/t
  tracelab-analyzer captures/ --shard 0/2 -o out/s0; ... --shard 1/2 -o out/s1
  tracelab-analyzer captures/ --local 10.0.0.0/8 --merge out/s0 --merge out/s1 -o out/week
                                         (the parallel profile in two phases: docs/scale.md)

Outputs (in DIR): connections.parquet, conn.log (Zeek TSV), hosts.parquet, load.parquet,
samples/{warmups,trains,rtt,packet_sizes}.parquet, summary.json. See docs/analyzer.md.
They are written to .DIR.partial-PID beside DIR, which replaces DIR only once complete:
on an error or SIGINT/SIGTERM it is removed and a previous DIR stays as it was.

A file that ends in a cut record (still being written, or cut short by a full disk) is
profiled up to the cut: summary.json lists it under `truncated_tails` (file, offset), one
warning line says so, and the exit status is 0. Rotated files go on with the next file.

Exit status (as every tracelab command):
  0  success (also with cut tails, see above)
  2  usage: bad arguments or options
  3  input data: the trace (or --roles model) cannot be read or is invalid: a file cut in its
     file header, a corrupt record (bad length, block or gzip data) or a failed read. Nothing
     is written: a previous DIR stays as it was
  4  output: DIR cannot be written (permission, full disk, ...)
  5  internal: a bug (please report it)
Killed by SIGINT/SIGTERM, it ends by that signal after removing its partial outputs.

`tracelab-analyzer write-pcap --snaplen N -o FILE` is `tracelab synth`'s pcap writer: it
reads synth's packet records on stdin (see `tracelab-analyzer write-pcap --help`).
`tracelab-analyzer predict-c45 --tree FILE` is the C4.5 predictor of the models package
(see `tracelab-analyzer predict-c45 --help`).";

/// The toolkit's exit statuses (replay/tracelab/errors.py).
const USAGE: u8 = 2;
const INPUT: u8 = 3;
const OUTPUT: u8 = 4;
const INTERNAL: u8 = 5;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Reader {
    /// tracelab's own reader (pcap, pcapng, gzip)
    Native,
    /// libpcap (the reference; no gzip, no mixed-link-type pcapng)
    Libpcap,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Compression {
    None,
    Snappy,
    Zstd,
}

/// Profile a pcap/pcapng trace (optionally gzip-compressed): connections with
/// Zeek conn.log semantics, RTT, warm-up, pacing and trains, hosts and load.
#[derive(Parser, Debug)]
#[command(name = "tracelab-analyzer", version, after_help = EXAMPLES)]
struct Args {
    /// The trace: pcap (us/ns, either byte order), pcapng, or either gzipped. Several
    /// files, or a directory of them, are one capture (rotated files): read in order of
    /// their first timestamps; they must share one link type
    #[arg(value_name = "TRACE", required = true)]
    traces: Vec<PathBuf>,
    /// Output directory (created if missing)
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Enterprise networks (CIDR, comma-separated or repeated): defines intranet/internet
    #[arg(long, value_name = "CIDR", value_delimiter = ',')]
    local: Vec<String>,
    /// Hosts known to be servers (addresses, comma-separated), in addition to the
    /// hosts seen accepting TCP connections
    #[arg(long, value_name = "ADDR", value_delimiter = ',')]
    servers: Vec<String>,
    /// Tracker threads (connections are sharded by 5-tuple hash; output is identical for any N).
    /// Default: the cores less one, which the reading and writing thread keeps busy
    #[arg(long, default_value_t = default_threads())]
    threads: usize,
    /// Load bin width in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    bin: f64,
    /// TCP inactivity timeout in seconds (Zeek's tcp_inactivity_timeout)
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    tcp_inactivity: f64,
    /// UDP inactivity timeout in seconds (Zeek's udp_inactivity_timeout)
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    udp_inactivity: f64,
    /// ICMP inactivity timeout in seconds (Zeek's icmp_inactivity_timeout)
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    icmp_inactivity: f64,
    /// Host-role model from `tracelab roles train` (C4.5): adds the predicted `role` to hosts.parquet
    #[arg(long, value_name = "MODEL_JSON")]
    roles: Option<PathBuf>,
    /// Frame reader
    #[arg(long, value_enum, default_value_t = Reader::Native)]
    reader: Reader,
    /// Parquet page compression: zstd (level 1), none (fastest; files ~2.3x larger) or snappy
    #[arg(long, value_enum, default_value_t = Compression::Zstd)]
    compression: Compression,
    /// Print summary.json instead of the human summary
    #[arg(long)]
    json: bool,
    /// Print nothing on stdout
    #[arg(short, long)]
    quiet: bool,
    /// No progress bar (it is shown only on a terminal anyway)
    #[arg(long)]
    no_progress: bool,
    /// Phase 1 of a parallel profile: read the whole capture, track only the connections
    /// of shard I of N, and write their records to DIR (a shard directory, for --merge)
    #[arg(long, value_name = "I/N", conflicts_with = "merge")]
    shard: Option<ShardSpec>,
    /// Phase 2 of a parallel profile: merge the shard directories of shards 0..N (repeat the
    /// option for each) into the profile DIR, equal to the serial profile of TRACE. The
    /// tracker and --bin options must be the shards'; TRACE is not read again
    #[arg(long, value_name = "SHARD_DIR")]
    merge: Vec<PathBuf>,
}

/// `tracelab-analyzer write-pcap`.
#[derive(Parser, Debug)]
#[command(name = "tracelab-analyzer write-pcap", version)]
#[command(about = "Write the pcap of `tracelab synth`'s packet records read on stdin (the stream's \
layout: analyzer/crates/tracelab-analyzer/src/write_pcap.rs). FILE is replaced only once complete.")]
struct WritePcapArgs {
    /// Bytes captured per frame (54..=262144; the headers are always whole)
    #[arg(long, default_value_t = 65_535)]
    snaplen: u32,
    /// The pcap to write
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
}

/// `tracelab-analyzer predict-c45`.
#[derive(Parser, Debug)]
#[command(name = "tracelab-analyzer predict-c45", version)]
#[command(about = "Class probabilities of a C4.5 tree (C45Classifier.to_json) for rows of little-endian \
f64 feature values on stdin, as little-endian f64 rows on stdout (analyzer/crates/tracelab-analyzer/src/predict_c45.rs).")]
struct PredictC45Args {
    /// The tree (format tracelab-c45, version 1)
    #[arg(long, value_name = "FILE")]
    tree: PathBuf,
}

/// One tracker per core but the one the reading, decoding and writing thread
/// uses: on 2 cores `--threads 2` ran 3-17 % slower in wall time than 1.
fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

/// An option clap accepted but the profile cannot use.
#[derive(Debug, thiserror::Error)]
enum ConfigError {
    #[error(transparent)]
    Local(#[from] CidrError),
    #[error("--servers: `{0}` is not an IP address")]
    Server(String),
    #[error("--threads must be 1..=256, got {0}")]
    Threads(usize),
    #[error("--{option} must be a positive number of seconds, got {value}")]
    Seconds { option: &'static str, value: f64 },
    #[error(transparent)]
    Roles(#[from] RoleModelError),
}

fn seconds_to_ns(option: &'static str, value: f64) -> Result<i64, ConfigError> {
    if value.is_finite() && value > 0.0 && value < 1e9 {
        Ok((value * 1e9).round() as i64)
    } else {
        Err(ConfigError::Seconds { option, value })
    }
}

fn build_config(a: &Args) -> Result<(ProfileConfig, serde_json::Value), ConfigError> {
    let local = a.local.iter().filter(|s| !s.is_empty()).map(|s| s.parse::<Cidr>()).collect::<Result<Vec<_>, _>>()?;
    let servers = a
        .servers
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<std::net::IpAddr>().map(Addr::from).map_err(|_| ConfigError::Server(s.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    if a.threads == 0 || a.threads > 256 {
        return Err(ConfigError::Threads(a.threads));
    }
    let tcp = seconds_to_ns("tcp-inactivity", a.tcp_inactivity)?;
    let udp = seconds_to_ns("udp-inactivity", a.udp_inactivity)?;
    let icmp = seconds_to_ns("icmp-inactivity", a.icmp_inactivity)?;
    let bin_ns = seconds_to_ns("bin", a.bin)?;
    let tracker = TrackerConfig {
        tcp_inactivity_timeout_ns: tcp,
        udp_inactivity_timeout_ns: udp,
        icmp_inactivity_timeout_ns: icmp,
        load_bin_ns: bin_ns,
        ..TrackerConfig::default()
    };
    let tracker_json = serde_json::json!({
        "tcp_inactivity_s": a.tcp_inactivity,
        "udp_inactivity_s": a.udp_inactivity,
        "icmp_inactivity_s": a.icmp_inactivity,
    });
    let out = a.out.clone().unwrap_or_else(|| {
        let stem = a.traces[0].file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "trace".into());
        PathBuf::from(format!("{stem}.profile"))
    });
    Ok((
        ProfileConfig {
            trace: a.traces[0].clone(),
            inputs: a.traces.clone(),
            out_dir: out,
            local: LocalNets(local),
            servers,
            threads: a.threads,
            tracker,
            bin_ns,
            reader: match a.reader {
                Reader::Native => ReaderKind::Native,
                Reader::Libpcap => ReaderKind::Libpcap,
            },
            compression: match a.compression {
                Compression::None => Codec::None,
                Compression::Snappy => Codec::Snappy,
                Compression::Zstd => Codec::Zstd(ZSTD_LEVEL),
            },
            progress: !a.no_progress,
            roles: a.roles.as_deref().map(RoleModel::load).transpose()?.map(std::sync::Arc::new),
            roles_path: a.roles.clone(),
        },
        tracker_json,
    ))
}

impl ConfigError {
    /// A model file that cannot be read is input data; the rest is usage.
    fn status(&self) -> u8 {
        match self {
            ConfigError::Roles(_) => INPUT,
            _ => USAGE,
        }
    }
}

fn main() -> ExitCode {
    interrupt::install();
    // A panic is a bug: one line, status 5 (not Rust's 101).
    std::panic::set_hook(Box::new(|info| {
        let text = info.to_string().replace('\n', " ");
        eprintln!("tracelab-analyzer: internal error (a bug, please report it): {text}");
    }));
    // clap exits 2 on bad arguments (and 0 for --help, --version).
    if std::env::args_os().nth(1).is_some_and(|a| a == "write-pcap") {
        let args = WritePcapArgs::parse_from(subcommand_args("write-pcap"));
        return std::panic::catch_unwind(|| run_write_pcap(&args)).unwrap_or(ExitCode::from(INTERNAL));
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == "predict-c45") {
        let args = PredictC45Args::parse_from(subcommand_args("predict-c45"));
        return std::panic::catch_unwind(|| run_predict_c45(&args)).unwrap_or(ExitCode::from(INTERNAL));
    }
    let args = Args::parse();
    std::panic::catch_unwind(|| run(&args)).unwrap_or(ExitCode::from(INTERNAL))
}

/// The arguments after the subcommand's name, behind the name clap shows
/// in its usage and errors (`tracelab-analyzer NAME`).
fn subcommand_args(name: &str) -> impl Iterator<Item = std::ffi::OsString> {
    std::iter::once(format!("tracelab-analyzer {name}").into()).chain(std::env::args_os().skip(2))
}

fn run_write_pcap(args: &WritePcapArgs) -> ExitCode {
    match write_pcap(std::io::stdin().lock(), &args.out, args.snaplen) {
        Ok(_) => ExitCode::SUCCESS,
        Err(WriteError::Interrupted(signal)) => {
            eprintln!(
                "tracelab-analyzer write-pcap: interrupted by signal {signal}: {} left as it was",
                args.out.display()
            );
            interrupt::reraise(signal);
        }
        Err(e) => {
            eprintln!("tracelab-analyzer write-pcap: {e}");
            ExitCode::from(e.status())
        }
    }
}

fn run_predict_c45(args: &PredictC45Args) -> ExitCode {
    let done =
        load_tree(&args.tree).and_then(|tree| predict_stream(&tree, std::io::stdin().lock(), std::io::stdout().lock()));
    match done {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tracelab-analyzer predict-c45: {e}");
            ExitCode::from(e.status())
        }
    }
}

/// What a shard's records depend on besides the capture: a merge checks
/// that its shards were tracked with its own.
fn shard_options(args: &Args, tracker_json: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({"tracker": tracker_json, "load_bin_s": args.bin, "reader": format!("{:?}", args.reader)})
}

fn run_shard(cfg: &ProfileConfig, spec: ShardSpec, options: &serde_json::Value) -> ExitCode {
    let staging = match profile_shard(cfg, spec, options) {
        Ok((staging, _)) => staging,
        Err(ProfileError::Interrupted(signal)) => {
            eprintln!("tracelab-analyzer: interrupted by signal {signal}: {} left as it was", cfg.out_dir.display());
            interrupt::reraise(signal);
        }
        Err(e) => {
            eprintln!("tracelab-analyzer: {e}");
            return ExitCode::from(profile_error_status(&e));
        }
    };
    if let Some(signal) = interrupt::pending() {
        drop(staging);
        eprintln!("tracelab-analyzer: interrupted by signal {signal}: {} left as it was", cfg.out_dir.display());
        interrupt::reraise(signal);
    }
    // Cut tails are in the shard's summary: the merge reports them.
    if let Err(e) = staging.commit() {
        eprintln!("tracelab-analyzer: {}: putting the outputs in place: {e}", cfg.out_dir.display());
        return ExitCode::from(OUTPUT);
    }
    ExitCode::SUCCESS
}

fn profile_error_status(e: &ProfileError) -> u8 {
    match e {
        ProfileError::Open(_) | ProfileError::Read(_) | ProfileError::Inputs(_) => INPUT,
        ProfileError::Output(_) => OUTPUT,
        _ => INTERNAL,
    }
}

fn run(args: &Args) -> ExitCode {
    let (cfg, tracker_json) = match build_config(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tracelab-analyzer: {e}");
            return ExitCode::from(e.status());
        }
    };
    if let Some(spec) = args.shard {
        return run_shard(&cfg, spec, &shard_options(args, &tracker_json));
    }
    let profiled = if args.merge.is_empty() {
        profile(&cfg)
    } else {
        match merge_shards(&cfg, &args.merge, &shard_options(args, &tracker_json)) {
            Ok(p) => Ok(p),
            Err(MergeError::Profile(e)) => Err(e),
            Err(MergeError::Shards(e)) => {
                eprintln!("tracelab-analyzer: --merge: {e}");
                return ExitCode::from(INPUT);
            }
        }
    };
    let p = match profiled {
        Ok(p) => p,
        Err(ProfileError::Interrupted(signal)) => {
            eprintln!("tracelab-analyzer: interrupted by signal {signal}: {} left as it was", cfg.out_dir.display());
            interrupt::reraise(signal);
        }
        Err(e) => {
            eprintln!("tracelab-analyzer: {e}");
            return ExitCode::from(profile_error_status(&e));
        }
    };
    let mut summary = summary_json(&cfg, &p, tracker_json);
    if p.parts.len() > 1 {
        add_parts(&mut summary, &p.parts);
    }
    if let Err(e) = write_summary(p.staging.path(), &summary) {
        eprintln!("tracelab-analyzer: {}: writing summary.json: {e}", cfg.out_dir.display());
        return ExitCode::from(OUTPUT);
    }
    // A signal that came after the last frame: nothing is replaced.
    if let Some(signal) = interrupt::pending() {
        drop(p.staging);
        eprintln!("tracelab-analyzer: interrupted by signal {signal}: {} left as it was", cfg.out_dir.display());
        interrupt::reraise(signal);
    }
    let cuts: Vec<String> = p.accounting.truncated_tails.iter().map(|e| e.to_string()).collect();
    let (frames, elapsed_s) = (p.accounting.frames, p.elapsed_s);
    let human = if args.quiet || args.json {
        None
    } else {
        let mut text = Vec::new();
        let _ = print_human(&mut text, &cfg, &p);
        Some(text)
    };
    if let Err(e) = p.staging.commit() {
        eprintln!("tracelab-analyzer: {}: putting the outputs in place: {e}", cfg.out_dir.display());
        return ExitCode::from(OUTPUT);
    }
    let mut stdout = std::io::stdout().lock();
    let shown = if args.quiet {
        Ok(())
    } else if args.json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&summary).expect("json"))
    } else {
        stdout.write_all(&human.unwrap_or_default()).and_then(|_| {
            writeln!(stdout, "\nWrote {} ({} packets in {:.2} s)", cfg.out_dir.display(), frames, elapsed_s)
        })
    };
    // A closed stdout (e.g. piped into `head`) is not an error of the profile.
    let _ = shown;
    for cut in &cuts {
        eprintln!(
            "tracelab-analyzer: warning: {cut}: the file ends in a cut record; profiled every whole record before it"
        );
    }
    ExitCode::SUCCESS
}

/// A gap between files longer than this is reported on stderr: a quiet
/// minute on a captured link more likely means a missing file.
const GAP_WARN_NS: i64 = 60_000_000_000;

/// Lists a many-file capture's files in summary.json (`trace.files`, in
/// reading order, each with the gap since the previous one) and reports
/// overlaps and long gaps on stderr.
fn add_parts(summary: &mut serde_json::Value, parts: &[Part]) {
    let secs = |ns: Option<i64>| ns.map(|v| v as f64 / 1e9);
    let gaps: std::collections::HashMap<&std::path::Path, i64> =
        boundaries(parts).iter().map(|b| (b.after, b.gap_ns)).collect();
    let files: Vec<serde_json::Value> = parts
        .iter()
        .map(|p| {
            serde_json::json!({
                "path": p.path.display().to_string(),
                "frames": p.frames,
                "first_ts": secs(p.first_ts_ns),
                "last_ts": secs(p.last_ts_ns),
                "gap_before_s": gaps.get(p.path.as_path()).map(|&g| g as f64 / 1e9),
            })
        })
        .collect();
    summary["trace"]["files"] = serde_json::Value::Array(files);
    summary["trace"]["size_bytes"] =
        parts.iter().map(|p| std::fs::metadata(&p.path).ok().map(|m| m.len())).sum::<Option<u64>>().into();
    for b in boundaries(parts) {
        if b.gap_ns < 0 {
            eprintln!(
                "tracelab-analyzer: warning: {} starts {:.6} s before {} ends (overlap; its earlier packets count as out of order)",
                b.after.display(),
                -b.gap_ns as f64 / 1e9,
                b.before.display()
            );
        } else if b.gap_ns > GAP_WARN_NS {
            eprintln!(
                "tracelab-analyzer: warning: {:.3} s gap between {} and {} (a missing file?)",
                b.gap_ns as f64 / 1e9,
                b.before.display(),
                b.after.display()
            );
        }
    }
}
