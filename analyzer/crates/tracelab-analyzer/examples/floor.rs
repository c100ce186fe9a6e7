//! The analyzer benchmark's floor (`make bench-analyzer` runs it beside the
//! full profile): the least work any per-connection profile of a trace does,
//! with the analyzer's own reader, decoder, flow key, hash and allocator,
//! and nothing else. Its rate bounds what the full profile can reach on
//! the machine it runs on. Each stage includes the ones before it:
//!
//!   read    every frame of the file (tracelab-pcap)
//!   decode  each frame to addresses, ports and lengths (tracelab-decode)
//!   count   packets and IP bytes per side of each connection key (the
//!           tracker's: the bidirectional 5-tuple with Zeek's ICMP "ports"),
//!           in a hash table that drops a flow idle for 5 s of trace time
//!           (no Zeek timer the tracker follows is shorter, so its table is
//!           no smaller than this one)
//!
//! What the full profile does beyond `count` (TCP state and history, RTT,
//! trains, warm-up, pacing, hosts, load, and the outputs) is not here.
//!
//! Usage: floor TRACE read|decode|count
//! Prints one line of totals; a read error exits 1, bad arguments 2.

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

use tracelab_decode::{decode_into, PacketMeta};
use tracelab_flow::{zeek_ports, FlowKey, TableBuild};
use tracelab_pcap::FrameSource;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const IDLE_NS: i64 = 5_000_000_000;
const SWEEP_NS: i64 = 1_000_000_000;

#[derive(Clone, Copy)]
struct Counts {
    packets: [u64; 2],
    ip_bytes: [u64; 2],
    last_ns: i64,
}

#[derive(Default)]
struct Totals {
    frames: u64,
    decoded: u64,
    skipped: u64,
    /// Flow records: dropped when idle, or open at the end.
    flows: u64,
    /// Packets and IP bytes of the flow records, summed as each one ends
    /// (the packets must equal `decoded`: a check that every packet was counted).
    flow_packets: u64,
    flow_ip_bytes: u64,
}

impl Totals {
    fn end_flow(&mut self, c: &Counts) {
        self.flows += 1;
        self.flow_packets += c.packets[0] + c.packets[1];
        self.flow_ip_bytes += c.ip_bytes[0] + c.ip_bytes[1];
    }
}

const USAGE: &str = "\
usage: floor TRACE read|decode|count
The analyzer benchmark's floor: read, decode, and count packets per 5-tuple
(each stage includes the ones before), and nothing else; prints one line of
totals. Run by `make bench-analyzer` beside the full profile.
Example: analyzer/target/release/examples/floor datasets/real/zeek-bro.org.pcap count";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let stage = args.get(2).map(String::as_str);
    let (Some(trace), Some(stage @ ("read" | "decode" | "count")), None) = (args.get(1), stage, args.get(3)) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    // The profile's allocator settings (the same pages as the profile).
    tracelab_analyzer::driver::without_huge_pages();
    let mut source = match tracelab_pcap::open(Path::new(trace)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("floor: {e}");
            return ExitCode::from(2);
        }
    };
    let mut table: HashMap<FlowKey, Counts, TableBuild> = HashMap::default();
    let mut totals = Totals::default();
    let mut meta = PacketMeta::default();
    let mut next_sweep = i64::MIN;
    let end = loop {
        let frame = match source.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        totals.frames += 1;
        if stage == "read" {
            continue;
        }
        if decode_into(frame.link_type, frame.data, frame.ts_ns, frame.wire_len, frame.interface, &mut meta).is_err() {
            totals.skipped += 1;
            continue;
        }
        totals.decoded += 1;
        if stage == "decode" {
            continue;
        }
        let now = meta.ts_ns;
        if now >= next_sweep {
            table.retain(|_, c| {
                let open = now - c.last_ns < IDLE_NS;
                if !open {
                    totals.end_flow(c);
                }
                open
            });
            next_sweep = now.saturating_add(SWEEP_NS);
        }
        let (key, swapped) = FlowKey::oriented(&meta, zeek_ports(&meta));
        let c = table.entry(key).or_insert(Counts { packets: [0; 2], ip_bytes: [0; 2], last_ns: now });
        c.packets[swapped as usize] += 1;
        c.ip_bytes[swapped as usize] += u64::from(meta.ip_len);
        c.last_ns = now;
    };
    for c in table.values() {
        totals.end_flow(c);
    }
    println!(
        "stage {stage} frames {} decoded {} skipped {} flows {} flow_packets {} flow_ip_bytes {}",
        totals.frames, totals.decoded, totals.skipped, totals.flows, totals.flow_packets, totals.flow_ip_bytes
    );
    match end {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floor: {e}");
            ExitCode::from(1)
        }
    }
}
