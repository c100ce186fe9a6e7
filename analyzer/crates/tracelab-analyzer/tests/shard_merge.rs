//! The parallel profile's two phases (`--shard I/N`, then `--merge`) on the
//! real captures of datasets/real: the merged profile is the serial one,
//! byte for byte, whatever the number of shards and the tracker threads
//! inside each shard.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const OUTPUTS: [&str; 9] = [
    "conn.log",
    "connections.parquet",
    "hosts.parquet",
    "load.parquet",
    "samples/rtt.parquet",
    "samples/trains.parquet",
    "samples/warmups.parquet",
    "samples/packet_sizes.parquet",
    "summary.json",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the analyzer on `trace` into `out`; it must succeed.
fn analyze(trace: &Path, out: &Path, extra: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_tracelab-analyzer"))
        .arg(trace)
        .args(["--local", "10.0.0.0/8,192.168.0.0/16,172.16.0.0/12", "--quiet", "--no-progress", "-o"])
        .arg(out)
        .args(extra)
        .output()
        .expect("run tracelab-analyzer");
    assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn merged_shards_are_the_serial_profile_on_real_captures() {
    for name in ["zeek-wikipedia.pcap", "zeek-bro.org.pcap", "pcapplusplus-example.pcap"] {
        let trace = repo().join("datasets/real").join(name);
        let dir = tmp(&format!("shard-merge-{name}"));
        let serial = dir.join("serial");
        analyze(&trace, &serial, &["--threads", "1"]);
        for count in [2usize, 3] {
            let mut merge = Vec::new();
            for i in 0..count {
                let shard = dir.join(format!("s{count}-{i}"));
                analyze(&trace, &shard, &["--shard", &format!("{i}/{count}"), "--threads", "2"]);
                merge.push("--merge".to_string());
                merge.push(shard.display().to_string());
            }
            let merged = dir.join(format!("merged-{count}"));
            analyze(&trace, &merged, &merge.iter().map(String::as_str).collect::<Vec<_>>());
            for output in OUTPUTS {
                assert!(
                    fs::read(merged.join(output)).unwrap() == fs::read(serial.join(output)).unwrap(),
                    "{name}, {count} shards: {output} differs from the serial profile"
                );
            }
        }
    }
}
