//! End-to-end tests of the `tracelab-analyzer` binary: the outputs against
//! Zeek's own conn.log, determinism across thread counts and readers, frame
//! accounting on every public trace, and truncated input.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

#[path = "../../../test-support/public_datasets.rs"]
mod public_datasets;

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
    let mut read_errors = 0;
    for (i, t) in traces.iter().enumerate() {
        let out = tmp(&format!("acct-{i}"));
        let o = analyze(t, &out, &["--local", "10.0.0.0/8,192.168.0.0/16", "--threads", "2"]);
        let code = o.status.code();
        assert!(
            matches!(code, Some(0) | Some(1)),
            "{}: exit {code:?}: {}",
            t.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let s = summary(&out);
        let p = &s["packets"];
        let skipped: u64 = p["skipped"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(p["read"].as_u64().unwrap(), p["decoded"].as_u64().unwrap() + skipped, "{}", t.display());
        assert_eq!(skipped, p["skipped_total"].as_u64().unwrap());
        if code == Some(1) {
            read_errors += 1;
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(&t.display().to_string()) && err.contains("offset"), "{}: {err}", t.display());
            assert!(s["read_error"]["offset"].is_u64());
        } else {
            assert!(s["read_error"].is_null());
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
    }
    // The MANIFEST lists truncated traces among the public ones.
    assert!(read_errors > 0, "expected some truncated traces among {}", traces.len());
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

/// A file cut in the middle of a record: the outputs hold every whole
/// record before the cut, the error names the file and the offset, exit 1.
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
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cut.pcap") && err.contains("offset"), "{err}");
    let s = summary(&out);
    assert_eq!(s["packets"]["read"].as_u64().unwrap(), expected);
    assert!(s["read_error"]["offset"].as_u64().unwrap() <= at as u64);
    let rows: usize = read_parquet(&out.join("connections.parquet")).iter().map(|b| b.num_rows()).sum();
    assert!(rows > 10);
    assert!(fs::read_to_string(out.join("conn.log")).unwrap().ends_with('\n'));
}

/// Bad arguments and unreadable input exit 2 with a message naming the cause.
#[test]
fn bad_input_exits_2_with_a_clear_error() {
    let out = tmp("bad");
    let o = analyze(Path::new("/nonexistent/trace.pcap"), &out, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/trace.pcap"));
    let not_pcap = out.join("notes.txt");
    fs::write(&not_pcap, b"this is not a capture file at all").unwrap();
    let o = analyze(&not_pcap, &out.join("o"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("notes.txt"));
    let o = analyze(&repo().join("datasets/real/zeek-wikipedia.pcap"), &out.join("o2"), &["--local", "10.0.0.0/33"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("10.0.0.0/33"));
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
/// (a column of connections.parquet, computed by the tracker) equals the
/// number of rtt.parquet rows pointing at it, and each connection's train
/// count the rows of trains.parquet and warmups.parquet.
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
        let mut seen: BTreeMap<(i64, String), i64> = BTreeMap::new();
        for i in 0..t.num_rows() {
            assert!((0..n as i64).contains(&conn.value(i)), "{table}: conn {} outside 0..{n}", conn.value(i));
            *seen.entry((conn.value(i), side.value(i).to_string())).or_default() += 1;
        }
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

/// `--compression snappy` changes how pages are stored, not what they hold;
/// the default writes them uncompressed.
#[test]
fn compression_changes_codec_not_values() {
    let trace = repo().join("datasets/real/pcapplusplus-example.pcap");
    let (plain, snappy) = (tmp("codec-none"), tmp("codec-snappy"));
    assert!(analyze(&trace, &plain, &[]).status.success());
    assert!(analyze(&trace, &snappy, &["--compression", "snappy"]).status.success());
    for f in
        ["connections.parquet", "hosts.parquet", "load.parquet", "samples/rtt.parquet", "samples/packet_sizes.parquet"]
    {
        for (dir, codec) in
            [(&plain, parquet::basic::Compression::UNCOMPRESSED), (&snappy, parquet::basic::Compression::SNAPPY)]
        {
            let meta = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(dir.join(f)).unwrap())
                .unwrap()
                .metadata()
                .clone();
            for rg in meta.row_groups() {
                assert!(rg.columns().iter().all(|c| c.compression() == codec), "{f}: expected {codec:?}");
            }
        }
        assert_eq!(read_parquet(&plain.join(f)), read_parquet(&snappy.join(f)), "{f}");
    }
    assert_eq!(summary(&snappy)["config"]["parquet_compression"], "snappy");
    assert_eq!(summary(&plain)["config"]["parquet_compression"], "none");
}
