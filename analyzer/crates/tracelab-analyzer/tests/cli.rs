//! End-to-end tests of the `tracelab-analyzer` binary: the outputs against
//! Zeek's own conn.log, determinism across thread counts and readers, frame
//! accounting on every public trace, and truncated input.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

#[path = "../../../test-support/public_datasets.rs"]
mod public_datasets;

#[path = "../../../test-support/pcap_build.rs"]
mod pcap_build;

fn public() -> PathBuf {
    public_datasets::datasets()
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn analyze(trace: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracelab-analyzer"))
        .arg(trace)
        .arg("-o")
        .arg(out)
        .args(["--quiet", "--no-progress"])
        .args(extra)
        .output()
        .expect("run tracelab-analyzer")
}

fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    ParquetRecordBatchReaderBuilder::try_new(fs::File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// What must never be negative in a profile: every time column of
/// connections.parquet (durations, RTTs, warm-ups, phases; not `ts`, and not
/// pacing, a difference that may be) and every warm-up and RTT sample.
/// Returns "file:column" for each column holding a negative value.
fn negative_times(dir: &Path) -> Vec<String> {
    let conn_time = |n: &str| (n == "duration" || n.ends_with("_s")) && !n.contains("pacing");
    let mut bad = Vec::new();
    for (file, is_time) in [
        ("connections.parquet", &conn_time as &dyn Fn(&str) -> bool),
        ("samples/warmups.parquet", &|n: &str| n == "warmup_s"),
        ("samples/rtt.parquet", &|n: &str| n == "rtt_s"),
    ] {
        for b in read_parquet(&dir.join(file)) {
            for (field, col) in b.schema().fields().iter().zip(b.columns()) {
                let Some(v) = col.as_primitive_opt::<Float64Type>() else {
                    continue;
                };
                if is_time(field.name()) && v.iter().flatten().any(|x| x < 0.0) {
                    bad.push(format!("{file}:{}", field.name()));
                }
            }
        }
    }
    bad.sort();
    bad.dedup();
    bad
}

/// The uids of connections.parquet that occur more than once, with their counts.
fn duplicate_uids(dir: &Path) -> Vec<(String, usize)> {
    let mut seen = BTreeMap::<String, usize>::new();
    for b in read_parquet(&dir.join("connections.parquet")) {
        for u in b.column_by_name("uid").unwrap().as_string::<i32>().iter().flatten() {
            *seen.entry(u.to_string()).or_default() += 1;
        }
    }
    seen.into_iter().filter(|&(_, n)| n > 1).collect()
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// Zeek conn.log rows as maps of the uid-free fields.
fn conn_log_rows(text: &str) -> Vec<BTreeMap<String, String>> {
    let fields: Vec<String> = text
        .lines()
        .find_map(|l| l.strip_prefix("#fields\t"))
        .expect("#fields line")
        .split('\t')
        .map(String::from)
        .collect();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            fields
                .iter()
                .zip(l.split('\t'))
                .filter(|(f, _)| !matches!(f.as_str(), "ts" | "uid" | "service" | "local_orig" | "local_resp"))
                .map(|(f, v)| (f.clone(), v.to_string()))
                .collect()
        })
        .collect()
}

/// btest style: our conn.log for the bundled wikipedia trace is Zeek's own
/// (`zeek -C -r wikipedia.pcap`) on every uid-free field but `service` (we
/// do no protocol detection) and `local_*` (no --local given; Zeek's
/// defaults count private space as local), as a set of rows.
#[test]
fn conn_log_matches_zeek_on_bundled_trace() {
    let out = tmp("wikipedia");
    let o = analyze(&repo().join("datasets/real/zeek-wikipedia.pcap"), &out, &["--threads", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut ours = conn_log_rows(&fs::read_to_string(out.join("conn.log")).unwrap());
    let mut zeek =
        conn_log_rows(&fs::read_to_string(repo().join("datasets/real/baselines/zeek-wikipedia.conn.log")).unwrap());
    assert_eq!(zeek.len(), 34);
    ours.sort();
    zeek.sort();
    for (a, b) in ours.iter().zip(&zeek) {
        assert_eq!(a, b);
    }
    assert_eq!(ours.len(), zeek.len());
}

fn files_under(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            for (k, v) in files_under(&p) {
                out.insert(format!("{}/{k}", p.file_name().unwrap().to_string_lossy()), v);
            }
        } else {
            out.insert(p.file_name().unwrap().to_string_lossy().into_owned(), fs::read(&p).unwrap());
        }
    }
    out
}

/// Outputs are byte-identical whatever the thread count and the reader
/// (apart from summary.json's `reader` field).
#[test]
fn outputs_identical_across_threads_and_readers() {
    let trace = repo().join("datasets/real/pcapplusplus-example.pcap");
    let mut runs = Vec::new();
    for (name, args) in [
        ("t1", vec!["--threads", "1"]),
        ("t2", vec!["--threads", "2"]),
        ("t3", vec!["--threads", "3"]),
        ("libpcap", vec!["--threads", "2", "--reader", "libpcap"]),
    ] {
        let out = tmp(&format!("det-{name}"));
        let mut a = vec!["--local", "10.0.0.0/8"];
        a.extend(args);
        let o = analyze(&trace, &out, &a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut files = files_under(&out);
        let s = String::from_utf8(files.remove("summary.json").unwrap()).unwrap();
        files.insert("summary.json".into(), s.replace("\"libpcap\"", "\"native\"").into_bytes());
        runs.push((name, files));
    }
    let (first_name, first) = &runs[0];
    assert!(first.len() >= 9, "expected every output file, got {:?}", first.keys());
    for (name, files) in &runs[1..] {
        assert_eq!(first.keys().collect::<Vec<_>>(), files.keys().collect::<Vec<_>>());
        for (k, v) in first {
            assert!(v == &files[k], "{k} differs between {first_name} and {name}");
        }
    }
}

/// Every frame read is decoded or skipped under a named reason, on every
/// trace of datasets/public; no trace makes the analyzer crash.
#[test]
fn every_public_trace_is_accounted_for() {
    let traces = public_datasets::traces(&public());
    assert!(traces.len() > 100, "found only {} traces under {}", traces.len(), public().display());
    let mut cut_traces = 0;
    for (i, t) in traces.iter().enumerate() {
        let out = tmp(&format!("acct-{i}"));
        let o = analyze(t, &out, &["--local", "10.0.0.0/8,192.168.0.0/16", "--threads", "2"]);
        let code = o.status.code();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(code, Some(0) | Some(3)), "{}: exit {code:?}: {err}", t.display());
        if code == Some(3) {
            // A corrupt capture: one line naming it and where, no outputs.
            assert!(err.contains(&t.display().to_string()) && err.contains("offset"), "{}: {err}", t.display());
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            // (`out` is the empty directory tmp() made: left as it was.)
            assert_eq!(fs::read_dir(&out).unwrap().count(), 0, "{}: outputs of a corrupt capture", t.display());
            continue;
        }
        let s = summary(&out);
        let p = &s["packets"];
        let skipped: u64 = p["skipped"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(p["read"].as_u64().unwrap(), p["decoded"].as_u64().unwrap() + skipped, "{}", t.display());
        assert_eq!(skipped, p["skipped_total"].as_u64().unwrap());
        let cuts = s["truncated_tails"].as_array().unwrap();
        if !cuts.is_empty() {
            cut_traces += 1;
            assert!(cuts[0]["offset"].is_u64());
            assert!(err.contains("warning") && err.contains(&t.display().to_string()), "{}: {err}", t.display());
        }
        // Connections account for every decoded packet: Zeek's packet counts
        // cover every IP packet the tracker saw.
        let conns = read_parquet(&out.join("connections.parquet"));
        let pkts: i64 = conns
            .iter()
            .map(|b| {
                let o = b.column_by_name("orig_pkts").unwrap().as_primitive::<Int64Type>();
                let r = b.column_by_name("resp_pkts").unwrap().as_primitive::<Int64Type>();
                (0..b.num_rows()).map(|i| o.value(i) + r.value(i)).sum::<i64>()
            })
            .sum();
        assert_eq!(pkts as u64, p["decoded"].as_u64().unwrap(), "{}", t.display());
        // Time: whatever order the packets came in, no negative time and
        // one uid per connection.
        assert_eq!(negative_times(&out), Vec::<String>::new(), "{}", t.display());
        assert_eq!(duplicate_uids(&out), vec![], "{}", t.display());
    }
    // The MANIFEST lists truncated traces among the public ones.
    assert!(cut_traces > 0, "expected some truncated traces among {}", traces.len());
}

/// Packets that go back in time are counted (`packets.out_of_order`) and
/// taken at network time: no negative RTT or warm-up (an ACK stamped
/// before the data it acknowledges, a data packet before the train it
/// follows), and a 5-tuple reused within one timestamp gets a uid of its own.
#[test]
fn packets_going_backwards_are_counted_and_never_negative() {
    use pcap_build::*;
    let (c, s, c2) = ([10, 0, 0, 1], [10, 0, 0, 2], [10, 0, 0, 3]);
    let t0: u64 = 1_700_000_000_000_000_000;
    let ms = 1_000_000;
    let frames = vec![
        tcp(t0, c, 40000, s, 80, SYN, 100, 0, 0),
        tcp(t0 + 10 * ms, s, 80, c, 40000, SYN | ACK, 500, 101, 0),
        tcp(t0 + 20 * ms, c, 40000, s, 80, ACK, 101, 501, 0),
        tcp(t0 + 30 * ms, c, 40000, s, 80, PSH | ACK, 101, 501, 100),
        // Acknowledges the data above, stamped before it.
        tcp(t0 + 25 * ms, s, 80, c, 40000, ACK, 501, 201, 0),
        tcp(t0 + 40 * ms, s, 80, c, 40000, PSH | ACK, 501, 201, 100),
        // The originator's next train, stamped before the responder's.
        tcp(t0 + 35 * ms, c, 40000, s, 80, PSH | ACK, 201, 601, 100),
        tcp(t0 + 50 * ms, c, 40000, s, 80, FIN | ACK, 301, 601, 0),
        tcp(t0 + 60 * ms, s, 80, c, 40000, FIN | ACK, 601, 302, 0),
        tcp(t0 + 70 * ms, c, 40000, s, 80, ACK, 302, 602, 0),
        // The same 5-tuple started twice at one instant.
        tcp(t0 + 1000 * ms, c2, 40001, s, 80, SYN, 1, 0, 0),
        tcp(t0 + 1000 * ms, c2, 40001, s, 80, SYN, 9000, 0, 0),
    ];
    let dir = tmp("backwards");
    let trace = dir.join("backwards.pcap");
    write_pcap(&mut fs::File::create(&trace).unwrap(), frames).unwrap();
    let out = dir.join("out");
    let o = analyze(&trace, &out, &["--threads", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let sm = summary(&out);
    assert_eq!(sm["packets"]["decoded"], 12);
    assert_eq!(sm["packets"]["out_of_order"], 2);
    assert_eq!(sm["connections"]["total"], 3);
    assert_eq!(negative_times(&out), Vec::<String>::new());
    assert_eq!(duplicate_uids(&out), vec![]);
    // The same run on two threads: the same outputs.
    let out2 = dir.join("out2");
    assert_eq!(analyze(&trace, &out2, &["--threads", "2"]).status.code(), Some(0));
    assert_eq!(files_under(&out), files_under(&out2));
}

/// Timestamps at the top of the i64 nanosecond range: no arithmetic
/// overflows (the debug build checks), and a time the reader cannot
/// represent (clamped to i64::MAX) is skipped as `timestamp_out_of_range`.
#[test]
fn extreme_timestamps_do_not_overflow() {
    use pcap_build::*;
    let (c, s) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    // pcapng microseconds, 2 s below the largest representable time.
    let top = (i64::MAX as u64) / 1000 - 2_000_000;
    let frames = vec![
        tcp(top, c, 40000, s, 80, SYN, 100, 0, 0),
        tcp(top + 1000, s, 80, c, 40000, SYN | ACK, 500, 101, 0),
        tcp(top + 2000, c, 40000, s, 80, ACK, 101, 501, 0),
        tcp(top + 3000, c, 40000, s, 80, PSH | ACK, 101, 501, 100),
        tcp(top + 4000, s, 80, c, 40000, ACK, 501, 201, 0),
        // Past 2262-04-11: not representable.
        udp(u64::MAX, c, 5000, s, 53, 20),
        tcp(top + 1_500_000, s, 80, c, 40000, PSH | ACK, 501, 201, 100),
        udp(top + 1_600_000, c, 5000, s, 53, 20),
        tcp(top + 1_900_000, c, 40000, s, 80, FIN | ACK, 201, 601, 0),
    ];
    let dir = tmp("extreme");
    let trace = dir.join("extreme.pcapng");
    write_pcapng(&mut fs::File::create(&trace).unwrap(), frames).unwrap();
    let out = dir.join("out");
    let o = analyze(&trace, &out, &["--threads", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let sm = summary(&out);
    assert_eq!(sm["packets"]["read"], 9);
    assert_eq!(sm["packets"]["decoded"], 8);
    assert_eq!(sm["packets"]["skipped"]["timestamp_out_of_range"], 1);
    assert_eq!(sm["connections"]["total"], 2);
    assert_eq!(negative_times(&out), Vec::<String>::new());
    let conns = read_parquet(&out.join("connections.parquet"));
    let dur = conns[0].column_by_name("duration").unwrap().as_primitive::<Float64Type>();
    assert!(dur.iter().flatten().all(|d| (0.0..2.0).contains(&d)), "{dur:?}");
}

/// Count the whole records of a classic pcap by walking its headers: the
/// oracle for a truncated file.
fn whole_records(bytes: &[u8]) -> u64 {
    let mut off = 24;
    let mut n = 0;
    while off + 16 <= bytes.len() {
        let incl = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().unwrap()) as usize;
        if off + 16 + incl > bytes.len() {
            break;
        }
        off += 16 + incl;
        n += 1;
    }
    n
}

/// A file cut in the middle of a record (still being written, or cut
/// short): the outputs hold every whole record before the cut, summary.json
/// and one warning line name the file and the offset, exit 0.
#[test]
fn truncated_trace_keeps_results_and_names_the_offset() {
    let full = fs::read(repo().join("datasets/real/pcapplusplus-example.pcap")).unwrap();
    let dir = tmp("truncated");
    let cut = dir.join("cut.pcap");
    let at = full.len() / 2 + 7;
    fs::write(&cut, &full[..at]).unwrap();
    let expected = whole_records(&full[..at]);
    assert!(expected > 1000);
    let out = dir.join("out");
    let o = analyze(&cut, &out, &["--local", "10.0.0.0/8"]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning") && err.contains("cut.pcap") && err.contains("offset"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let s = summary(&out);
    assert_eq!(s["packets"]["read"].as_u64().unwrap(), expected);
    let cuts = s["truncated_tails"].as_array().unwrap();
    assert_eq!(cuts.len(), 1);
    assert!(cuts[0]["file"].as_str().unwrap().ends_with("cut.pcap"));
    assert!(cuts[0]["offset"].as_u64().unwrap() <= at as u64);
    let rows: usize = read_parquet(&out.join("connections.parquet")).iter().map(|b| b.num_rows()).sum();
    assert!(rows > 10);
    assert!(fs::read_to_string(out.join("conn.log")).unwrap().ends_with('\n'));
}

/// The toolkit's exit statuses (replay/tracelab/errors.py), each failure
/// one line naming its cause: 2 bad arguments, 3 input data (missing or
/// invalid trace, unreadable --roles model), 4 output (DIR cannot be
/// written); a failed run leaves no partial directory and a previous DIR
/// as it was.
#[test]
fn exit_statuses_follow_the_toolkit() {
    let dir = tmp("bad");
    let one_line = |o: &Output, needle: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    };
    let o = analyze(Path::new("/nonexistent/trace.pcap"), &dir.join("o"), &[]);
    assert_eq!(o.status.code(), Some(3));
    one_line(&o, "/nonexistent/trace.pcap");
    let not_pcap = dir.join("notes.txt");
    fs::write(&not_pcap, b"this is not a capture file at all").unwrap();
    let o = analyze(&not_pcap, &dir.join("o"), &[]);
    assert_eq!(o.status.code(), Some(3));
    one_line(&o, "notes.txt");
    let wiki = repo().join("datasets/real/zeek-wikipedia.pcap");
    let o = analyze(&wiki, &dir.join("o"), &["--local", "10.0.0.0/33"]);
    assert_eq!(o.status.code(), Some(2));
    one_line(&o, "10.0.0.0/33");
    let o = analyze(&wiki, &dir.join("o"), &["--roles", dir.join("no-model.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    one_line(&o, "no-model.json");
    assert_eq!(analyze(&wiki, &dir.join("o"), &["--no-such-option"]).status.code(), Some(2));
    // Output: DIR under a regular file, or a regular file itself.
    let blocker = dir.join("file");
    fs::write(&blocker, b"x").unwrap();
    let o = analyze(&wiki, &blocker.join("out"), &[]);
    assert_eq!(o.status.code(), Some(4));
    one_line(&o, "file/out");
    let o = analyze(&wiki, &blocker, &[]);
    assert_eq!(o.status.code(), Some(4));
    one_line(&o, "file");
    assert_eq!(fs::read(&blocker).unwrap(), b"x");
    // A directory of other files is not a profile to replace.
    let notes = dir.join("notes");
    fs::create_dir_all(&notes).unwrap();
    fs::write(notes.join("keep.txt"), b"mine").unwrap();
    let o = analyze(&wiki, &notes, &[]);
    assert_eq!(o.status.code(), Some(4));
    one_line(&o, "not a profile");
    assert_eq!(fs::read(notes.join("keep.txt")).unwrap(), b"mine");
    assert!(!dir.join("o").exists());
    assert_eq!(partials(&dir), Vec::<String>::new());
}

/// The `.NAME.partial-*` directories in `dir`.
fn partials(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n.contains(".partial-"))
        .collect();
    v.sort();
    v
}

/// A generated trace big enough to take a few seconds in the debug build
/// (600,000 packets: 75,000 short TCP connections, 1 ms apart), written
/// once per test run.
fn big_trace() -> &'static Path {
    use pcap_build::*;
    static TRACE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    TRACE.get_or_init(|| {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("big-600k.pcap");
        let t0: u64 = 1_700_000_000_000_000_000;
        let frames = (0..75_000u64).flat_map(|i| {
            let ms = 1_000_000;
            let t = t0 + i * ms;
            let c = [10, 1, (i >> 8) as u8, i as u8];
            let s = [10, 2, 0, (i % 50) as u8];
            let p = 1024 + (i % 60_000) as u16;
            [
                tcp(t, c, p, s, 80, SYN, 1, 0, 0),
                tcp(t + 10_000, s, 80, c, p, SYN | ACK, 9, 2, 0),
                tcp(t + 20_000, c, p, s, 80, ACK, 2, 10, 0),
                tcp(t + 30_000, c, p, s, 80, PSH | ACK, 2, 10, 300),
                tcp(t + 40_000, s, 80, c, p, PSH | ACK, 10, 302, 1200),
                tcp(t + 50_000, c, p, s, 80, FIN | ACK, 302, 1210, 0),
                tcp(t + 60_000, s, 80, c, p, FIN | ACK, 1210, 303, 0),
                tcp(t + 70_000, c, p, s, 80, ACK, 303, 1211, 0),
            ]
        });
        let tmp = path.with_extension("tmp");
        let mut w = std::io::BufWriter::new(fs::File::create(&tmp).unwrap());
        write_pcap(&mut w, frames).unwrap();
        std::io::Write::flush(&mut w).unwrap();
        drop(w);
        fs::rename(&tmp, &path).unwrap();
        path
    })
}

/// SIGTERM and SIGINT mid-run remove the partial outputs and leave the
/// previous profile byte for byte; the process ends by the signal. A run
/// killed with SIGKILL leaves its partial directory, which the next run
/// for the same DIR removes.
#[test]
fn signals_leave_the_previous_profile_intact() {
    use std::os::unix::process::ExitStatusExt;
    let big = big_trace();
    let dir = tmp("signals");
    let out = dir.join("p");
    let wiki = repo().join("datasets/real/zeek-wikipedia.pcap");
    assert_eq!(analyze(&wiki, &out, &[]).status.code(), Some(0));
    let before = files_under(&out);
    assert!(before.contains_key("summary.json"));
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGKILL] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tracelab-analyzer"))
            .arg(big)
            .arg("-o")
            .arg(&out)
            .args(["--quiet", "--no-progress", "--threads", "2"])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Mid-run: the partial directory has connections in its conn.log.
        let log = dir.join(format!(".p.partial-{}", child.id())).join("conn.log");
        let started = std::time::Instant::now();
        while fs::metadata(&log).map_or(0, |m| m.len()) < 100_000 {
            assert!(started.elapsed().as_secs() < 60, "no partial conn.log grew at {}", log.display());
            assert!(child.try_wait().unwrap().is_none(), "the run ended before the signal");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // SAFETY: signalling our own child.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(signal), "{status:?}");
        assert_eq!(files_under(&out), before, "signal {signal}");
        let left = partials(&dir);
        if signal == libc::SIGKILL {
            assert_eq!(left.len(), 1, "{left:?}");
        } else {
            assert_eq!(left, Vec::<String>::new(), "signal {signal}");
        }
    }
    // The next run removes the killed run's partial directory and replaces
    // the profile.
    let bro = repo().join("datasets/real/zeek-bro.org.pcap");
    assert_eq!(analyze(&bro, &out, &[]).status.code(), Some(0));
    assert_eq!(partials(&dir), Vec::<String>::new());
    assert!(summary(&out)["trace"]["path"].as_str().unwrap().ends_with("zeek-bro.org.pcap"));
}

/// A full disk (a 1 MiB tmpfs where `mount` works, else a file-size limit:
/// EFBIG) is an output error: exit 4, one line naming DIR, the previous
/// profile untouched and no partial directory left.
#[test]
fn a_full_disk_exits_4_and_keeps_the_previous_profile() {
    struct Mount(PathBuf);
    impl Drop for Mount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let big = big_trace();
    let dir = tmp("full-disk");
    let mnt = dir.join("mnt");
    fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _unmount = mounted.then(|| Mount(mnt.clone()));
    let out = mnt.join("p");
    let wiki = repo().join("datasets/real/zeek-wikipedia.pcap");
    assert_eq!(analyze(&wiki, &out, &[]).status.code(), Some(0));
    let before = files_under(&out);
    let o = if mounted {
        analyze(big, &out, &[])
    } else {
        // 256 KiB per file (bash counts KiB).
        Command::new("bash")
            .args(["-c", "ulimit -f 256 && exec \"$@\"", "limit"])
            .arg(env!("CARGO_BIN_EXE_tracelab-analyzer"))
            .arg(big)
            .arg("-o")
            .arg(&out)
            .args(["--quiet", "--no-progress"])
            .output()
            .unwrap()
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "mounted {mounted}: {err}");
    assert!(err.contains(&out.display().to_string()), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(files_under(&out), before);
    assert_eq!(partials(&mnt), Vec::<String>::new());
}

/// Host features against an independent count from Zeek's own conn.log of
/// the FTP trace (Zeek baseline): outcnx/fan-out/dportout per originator,
/// incnx/fan-in/dportin per responder that answered.
#[test]
fn host_features_match_counts_from_zeek_conn_log() {
    let dir = public().join("zeek-baselines/ftp-ipv4");
    let out = tmp("ftp-hosts");
    let o = analyze(&dir.join("ipv4.pcap"), &out, &["--threads", "1"]);
    assert!(o.status.success());
    let zeek =
        conn_log_rows(&fs::read_to_string(dir.join("baseline/scripts.base.protocols.ftp.ftp-ipv4/conn.log")).unwrap());
    #[derive(Default, Debug, PartialEq)]
    struct F {
        incnx: i64,
        outcnx: i64,
        dportin: std::collections::BTreeSet<String>,
        dportout: std::collections::BTreeSet<String>,
        fan_in: std::collections::BTreeSet<String>,
        fan_out: std::collections::BTreeSet<String>,
    }
    let mut expect: BTreeMap<String, F> = BTreeMap::new();
    for r in &zeek {
        let (o, p, h) = (&r["id.orig_h"], &r["id.resp_p"], &r["id.resp_h"]);
        let f = expect.entry(o.clone()).or_default();
        f.outcnx += 1;
        f.dportout.insert(p.clone());
        f.fan_out.insert(h.clone());
        let answered = r["history"].contains('h') || (!r["history"].contains(['S', 's']) && r["resp_pkts"] != "0");
        let g = expect.entry(h.clone()).or_default();
        if answered {
            g.incnx += 1;
            g.dportin.insert(p.clone());
            g.fan_in.insert(o.clone());
        }
    }
    let hosts = read_parquet(&out.join("hosts.parquet"));
    let b = &hosts[0];
    let host = b.column_by_name("host").unwrap().as_string::<i32>();
    let get = |n: &str, i: usize| b.column_by_name(n).unwrap().as_primitive::<Int64Type>().value(i);
    assert_eq!(b.num_rows(), expect.len());
    for i in 0..b.num_rows() {
        let f = &expect[host.value(i)];
        assert_eq!(get("incnx", i), f.incnx, "{}", host.value(i));
        assert_eq!(get("outcnx", i), f.outcnx);
        assert_eq!(get("dportin", i), f.dportin.len() as i64);
        assert_eq!(get("dportout", i), f.dportout.len() as i64);
        assert_eq!(get("fan_in", i), f.fan_in.len() as i64);
        assert_eq!(get("fan_out", i), f.fan_out.len() as i64);
    }
    assert!(b.column_by_name("server").unwrap().null_count() == 0);
}

/// samples/*.parquet name their connection by `conn`, its row in
/// connections.parquet: each connection's DATA-ACK sample count per side
/// (a column of connections.parquet, computed by the tracker, delayed ACKs
/// left out) equals the number of rtt.parquet rows pointing at it that are
/// not flagged `delayed_ack`, and each connection's train count the rows
/// of trains.parquet and warmups.parquet.
#[test]
fn samples_join_connections_by_row() {
    let out = tmp("samples-join");
    let o = analyze(&repo().join("datasets/real/zeek-wikipedia.pcap"), &out, &["--threads", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let conns = concat(&read_parquet(&out.join("connections.parquet")));
    let n = conns.num_rows();
    // (table, value column naming the side's expected count in connections.parquet)
    for (table, counts) in
        [("rtt", "rtt_data_ack_{side}_count"), ("trains", "{side}_trains"), ("warmups", "{side}_trains")]
    {
        let t = concat(&read_parquet(&out.join(format!("samples/{table}.parquet"))));
        assert!(t.num_rows() > 0, "{table}: no samples on this trace");
        let conn = t.column_by_name("conn").unwrap().as_primitive::<Int64Type>();
        let side = t.column_by_name("side").unwrap().as_string::<i32>();
        let delayed = t.column_by_name("delayed_ack").map(|c| c.as_boolean().clone());
        let mut seen: BTreeMap<(i64, String), i64> = BTreeMap::new();
        for i in 0..t.num_rows() {
            assert!((0..n as i64).contains(&conn.value(i)), "{table}: conn {} outside 0..{n}", conn.value(i));
            if delayed.as_ref().is_some_and(|d| d.value(i)) {
                continue;
            }
            *seen.entry((conn.value(i), side.value(i).to_string())).or_default() += 1;
        }
        assert_eq!(delayed.is_some(), table == "rtt", "{table}: a delayed_ack column only in rtt.parquet");
        for s in ["orig", "resp"] {
            let col = conns.column_by_name(&counts.replace("{side}", s)).unwrap().as_primitive::<Int64Type>();
            for row in 0..n {
                let expect = if col.is_null(row) { 0 } else { col.value(row) };
                assert_eq!(
                    seen.get(&(row as i64, s.to_string())).copied().unwrap_or(0),
                    expect,
                    "{table} {s} row {row}"
                );
            }
        }
    }
}

fn concat(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).unwrap()
}

/// `--compression` changes how pages are stored, not what they hold; the
/// default writes ZSTD pages.
#[test]
fn compression_changes_codec_not_values() {
    use parquet::basic::Compression;
    let trace = repo().join("datasets/real/pcapplusplus-example.pcap");
    let (default, plain, snappy) = (tmp("codec-default"), tmp("codec-none"), tmp("codec-snappy"));
    assert!(analyze(&trace, &default, &[]).status.success());
    assert!(analyze(&trace, &plain, &["--compression", "none"]).status.success());
    assert!(analyze(&trace, &snappy, &["--compression", "snappy"]).status.success());
    for f in
        ["connections.parquet", "hosts.parquet", "load.parquet", "samples/rtt.parquet", "samples/packet_sizes.parquet"]
    {
        for (dir, codec) in [
            (&default, Compression::ZSTD(Default::default())),
            (&plain, Compression::UNCOMPRESSED),
            (&snappy, Compression::SNAPPY),
        ] {
            let meta = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(dir.join(f)).unwrap())
                .unwrap()
                .metadata()
                .clone();
            for rg in meta.row_groups() {
                assert!(rg.columns().iter().all(|c| c.compression() == codec), "{f}: expected {codec:?}");
            }
        }
        assert_eq!(read_parquet(&plain.join(f)), read_parquet(&snappy.join(f)), "{f}");
        assert_eq!(read_parquet(&plain.join(f)), read_parquet(&default.join(f)), "{f}");
    }
    assert_eq!(summary(&default)["config"]["parquet_compression"], "zstd");
    assert_eq!(summary(&snappy)["config"]["parquet_compression"], "snappy");
    assert_eq!(summary(&plain)["config"]["parquet_compression"], "none");
}
