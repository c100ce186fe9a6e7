//! summary.json (machine-readable: counts, accounting, composition, what was
//! skipped and why) and the human summary printed on stdout: the dataset
//! characteristics and traffic composition tables of thesis Tables 8.1/8.2.

use std::io::{self, Write};
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::driver::{all_skip_reasons, relative, Profile, ProfileConfig};
use crate::scope::{Category, Scope};
use crate::writers::CompositionCell;

pub const SUMMARY_VERSION: u32 = 1;

fn secs(ns: Option<i64>) -> Value {
    ns.map_or(Value::Null, |v| json!(v as f64 / 1e9))
}

/// The summary; identical for identical input and configuration (no wall
/// clock, no thread count in it).
pub fn summary_json(cfg: &ProfileConfig, p: &Profile, tracker_config: Value) -> Value {
    let acc = &p.accounting;
    let mut skipped = Map::new();
    for reason in all_skip_reasons() {
        skipped.insert(reason.into(), json!(acc.skipped.get(reason).copied().unwrap_or(0)));
    }
    let mut composition = Map::new();
    for scope in Scope::ALL {
        let mut cats = Map::new();
        for cat in Category::ALL {
            if let Some(c) = p.composition.cells.get(&(scope, cat)) {
                cats.insert(
                    cat.name().into(),
                    json!({"cnxs": c.cnxs, "bytes": c.bytes, "packets": c.pkts,
                           "upload_bytes": c.upload_bytes, "download_bytes": c.download_bytes}),
                );
            }
        }
        if !cats.is_empty() {
            composition.insert(scope.name().into(), Value::Object(cats));
        }
    }
    let files: Vec<String> = p.files.iter().map(|f| relative(&cfg.out_dir, f)).collect();
    json!({
        "summary_version": SUMMARY_VERSION,
        "tool": {"name": "tracelab-analyzer", "version": env!("CARGO_PKG_VERSION")},
        "trace": {
            "path": cfg.trace.display().to_string(),
            "size_bytes": std::fs::metadata(&cfg.trace).map(|m| m.len()).ok(),
            "first_ts": secs(acc.first_ts_ns),
            "last_ts": secs(acc.last_ts_ns),
            "duration_s": match (acc.first_ts_ns, acc.last_ts_ns) {
                // Network time: never before the first packet.
                (Some(a), Some(b)) => json!(b.saturating_sub(a) as f64 / 1e9),
                _ => Value::Null,
            },
        },
        "config": {
            "local": cfg.local.0.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            "servers": cfg.servers.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            "load_bin_s": cfg.bin_ns as f64 / 1e9,
            "reader": match cfg.reader {
                crate::driver::ReaderKind::Native => "native",
                crate::driver::ReaderKind::Libpcap => "libpcap",
            },
            "parquet_compression": cfg.compression.name(),
            "tracker": tracker_config,
            "roles_model": cfg.roles_path.as_ref().map(|p| p.display().to_string()),
        },
        "packets": {
            "read": acc.frames,
            "captured_bytes": acc.bytes,
            "decoded": acc.decoded,
            "decoded_by_proto": acc.decoded_by_proto,
            "skipped_total": acc.skipped_total(),
            "skipped": skipped,
            "out_of_order": acc.out_of_order,
        },
        // Files that end in a cut record, each read up to the cut.
        "truncated_tails": acc.truncated_tails.iter().map(|e| json!({
            "file": e.file.display().to_string(), "offset": e.offset, "reason": e.reason,
        })).collect::<Vec<_>>(),
        "connections": {"total": p.connections, "by_proto": p.by_proto, "by_state": p.by_state},
        "hosts": {"total": p.hosts, "local": p.local_hosts, "servers": p.servers},
        "composition": composition,
        "outputs": files,
    })
}

pub fn write_summary(dir: &Path, v: &Value) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(v).map_err(io::Error::other)?;
    text.push('\n');
    std::fs::write(dir.join("summary.json"), text)
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}", 100.0 * part as f64 / whole as f64)
    }
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
}

/// The human summary: dataset characteristics (Table 8.1), traffic
/// composition by category (Table 8.2) and the upload/download split.
pub fn print_human(w: &mut impl Write, cfg: &ProfileConfig, p: &Profile) -> io::Result<()> {
    let acc = &p.accounting;
    let dur = match (acc.first_ts_ns, acc.last_ts_ns) {
        (Some(a), Some(b)) => format!("{:.3} s", b.saturating_sub(a) as f64 / 1e9),
        _ => "-".into(),
    };
    writeln!(w, "Trace {}", cfg.trace.display())?;
    writeln!(w, "  duration      {dur}")?;
    writeln!(w, "  # cnxs        {}", p.connections)?;
    writeln!(w, "  bytes         {} ({} captured)", human_bytes(acc.bytes), acc.bytes)?;
    writeln!(w, "  # packets     {} read, {} decoded, {} skipped", acc.frames, acc.decoded, acc.skipped_total())?;
    for (reason, n) in &acc.skipped {
        writeln!(w, "                  {n} {reason}")?;
    }
    if acc.out_of_order > 0 {
        writeln!(w, "                  ({} out of order: taken at network time)", acc.out_of_order)?;
    }
    for cut in &acc.truncated_tails {
        writeln!(w, "  truncated     {} (read up to it)", cut)?;
    }
    writeln!(w, "  # hosts       {} ({} local, {} servers)", p.hosts, p.local_hosts, p.servers)?;
    if cfg.local.is_empty() {
        writeln!(w, "\n(no --local networks given: every connection is `external`; pass --local CIDR for the composition tables)")?;
        return Ok(());
    }
    writeln!(w, "\nTraffic composition")?;
    let cols: [(Scope, Category); 4] = [
        (Scope::Internet, Category::LcRp),
        (Scope::Internet, Category::LsRp),
        (Scope::Intranet, Category::LcLs),
        (Scope::Intranet, Category::LsLs),
    ];
    let cell = |s: Scope, c: Category| p.composition.cells.get(&(s, c)).copied().unwrap_or_default();
    // One count of a cell: connections, bytes or packets.
    type Count = fn(&CompositionCell) -> u64;
    let scope_total =
        |s: Scope, f: Count| p.composition.cells.iter().filter(|((sc, _), _)| *sc == s).map(|(_, c)| f(c)).sum::<u64>();
    writeln!(w, "  {:<12}{:>16}{:>16}{:>16}{:>16}", "", "External", "", "Internal", "")?;
    writeln!(w, "  {:<12}{:>16}{:>16}{:>16}{:>16}", "category", "lc-rp", "ls-rp", "lc-ls", "ls-ls")?;
    let rows: [(&str, Count); 3] = [("# cnxs", |c| c.cnxs), ("bytes", |c| c.bytes), ("packets", |c| c.pkts)];
    for (name, f) in rows {
        write!(w, "  {name:<12}")?;
        for (s, c) in cols {
            write!(w, "{:>16}", f(&cell(s, c)))?;
        }
        writeln!(w)?;
        write!(w, "  {:<12}", format!("{name}(%)"))?;
        for (s, c) in cols {
            write!(w, "{:>16}", pct(f(&cell(s, c)), scope_total(s, f)))?;
        }
        writeln!(w)?;
    }
    let other_intranet = cell(Scope::Intranet, Category::Other);
    let external =
        p.composition.cells.iter().filter(|((s, _), _)| *s == Scope::External).map(|(_, c)| c.cnxs).sum::<u64>();
    writeln!(
        w,
        "  (percentages within External / Internal; also {} intranet client-client and {} transit cnxs)",
        other_intranet.cnxs, external
    )?;
    writeln!(w, "\nUploads and downloads (mature transfers, IP bytes)")?;
    for (label, s, cats) in [
        ("external", Scope::Internet, &[Category::LcRp, Category::LsRp][..]),
        ("internal", Scope::Intranet, &[Category::LcLs, Category::LsLs][..]),
    ] {
        let up: u64 = cats.iter().map(|c| cell(s, *c).upload_bytes).sum();
        let down: u64 = cats.iter().map(|c| cell(s, *c).download_bytes).sum();
        writeln!(
            w,
            "  {label:<9} upload {:>12}  download {:>12}  download share {}%",
            human_bytes(up),
            human_bytes(down),
            pct(down, up + down)
        )?;
    }
    Ok(())
}
