//! The flow table under a SYN flood (issue 17): the profile of N SYNs on
//! one address pair with varying ports against N SYNs over N distinct
//! address pairs. The two traces have the same packets, sizes and times;
//! only the keys differ, so their ratio measures how the table's hash
//! spreads keys an attacker chooses (a hash whose table index ignores the
//! ports puts the whole one-pair flood into a few buckets).
//!
//! Usage: flood [--packets N] [--rounds R] [--dir DIR] [--analyzer BIN]
//!
//! Writes `one-pair.pcap` and `spread.pcap` (N = 300,000 SYNs each, 10 µs
//! apart, so all of them are open at once) into DIR (default: a temporary
//! directory, removed after), profiles each R times (default 3, alternating)
//! with BIN (default: the `tracelab-analyzer` built beside this example),
//! and prints the best wall time of each and their ratio. Target: <= 2.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

#[path = "../../../test-support/pcap_build.rs"]
mod pcap_build;

use pcap_build::{tcp, write_pcap, Frame, SYN};

const USAGE: &str = "usage: flood [--packets N] [--rounds R] [--dir DIR] [--analyzer BIN]";

/// N SYNs, 10 µs apart; `one_pair`: all from 10.0.0.1 to 10.0.0.2, the
/// ports varying (source fastest), else from N distinct addresses of
/// 10.0.0.0/8 to one server port.
fn flood(n: u32, one_pair: bool) -> impl Iterator<Item = Frame> {
    let t0: u64 = 1_700_000_000_000_000_000;
    (0..n).map(move |i| {
        let ts = t0 + u64::from(i) * 10_000;
        if one_pair {
            let sport = 1024 + (i % 64_000) as u16;
            let dport = 1 + (i / 64_000) as u16;
            tcp(ts, [10, 0, 0, 1], sport, [10, 0, 0, 2], dport, SYN, i, 0, 0)
        } else {
            let a = i + 1;
            tcp(ts, [10, (a >> 16) as u8, (a >> 8) as u8, a as u8], 40_000, [192, 168, 0, 2], 80, SYN, i, 0, 0)
        }
    })
}

fn profile_secs(analyzer: &Path, trace: &Path, out: &Path) -> Result<f64, String> {
    let started = Instant::now();
    let o = Command::new(analyzer)
        .arg(trace)
        .arg("-o")
        .arg(out)
        .args(["--threads", "1", "--quiet", "--no-progress"])
        .output()
        .map_err(|e| format!("{}: {e}", analyzer.display()))?;
    let secs = started.elapsed().as_secs_f64();
    if !o.status.success() {
        return Err(format!(
            "{} exited {:?}: {}",
            analyzer.display(),
            o.status.code(),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(secs)
}

fn main() -> ExitCode {
    let mut packets = 300_000u32;
    let mut rounds = 3u32;
    let mut dir: Option<PathBuf> = None;
    let mut analyzer: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next();
        let ok = match (a.as_str(), value) {
            ("--packets", Some(v)) => v.parse().map(|v| packets = v).is_ok(),
            ("--rounds", Some(v)) => v.parse().map(|v: u32| rounds = v.max(1)).is_ok(),
            ("--dir", Some(v)) => {
                dir = Some(v.into());
                true
            }
            ("--analyzer", Some(v)) => {
                analyzer = Some(v.into());
                true
            }
            _ => false,
        };
        if !ok {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    }
    let analyzer = analyzer.unwrap_or_else(|| {
        let exe = std::env::current_exe().expect("current exe");
        exe.parent().and_then(Path::parent).expect("target dir").join("tracelab-analyzer")
    });
    let temporary = dir.is_none();
    let dir = dir.unwrap_or_else(|| std::env::temp_dir().join(format!("tracelab-flood-{}", std::process::id())));
    let run = || -> Result<(f64, f64), String> {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut best = [f64::INFINITY; 2];
        let traces = ["one-pair", "spread"].map(|name| dir.join(format!("{name}.pcap")));
        for (trace, one_pair) in traces.iter().zip([true, false]) {
            let mut w = BufWriter::new(File::create(trace).map_err(|e| format!("{}: {e}", trace.display()))?);
            write_pcap(&mut w, flood(packets, one_pair)).map_err(|e| format!("{}: {e}", trace.display()))?;
        }
        for _ in 0..rounds {
            for (i, trace) in traces.iter().enumerate() {
                let secs = profile_secs(&analyzer, trace, &dir.join("out"))?;
                best[i] = best[i].min(secs);
            }
        }
        Ok((best[0], best[1]))
    };
    let result = run();
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    match result {
        Ok((one, spread)) => {
            println!(
                "flood of {packets} SYNs: one pair {one:.3} s, spread {spread:.3} s, ratio {:.2} (target <= 2)",
                one / spread
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("flood: {e}");
            ExitCode::FAILURE
        }
    }
}
