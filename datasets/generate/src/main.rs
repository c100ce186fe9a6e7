//! tcpmix: writes a large, TCP-rich enterprise trace for the analyzer
//! benchmark. See README.md for the model and its limits.

mod model;
mod pcap;
mod rng;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;
use std::str::FromStr;
use std::time::Instant;

use model::{Conn, End, Hosts, Kind};

const USAGE: &str = "\
usage: tcpmix [--packets N] [--seed S] [--rate CONNS_PER_S] [--snaplen B] OUT.pcap

Writes a synthetic enterprise-edge trace (pcap, microseconds, Ethernet):
TCP connections with handshakes, slow-start data trains both ways with
delayed ACKs, losses seen as retransmissions, FIN/RST teardowns, rejected
and unanswered SYNs, intranet and internet peers, and DNS over UDP. The
trace is a pure function of the options. Prints a JSON summary on stdout.

  --packets N   stop opening connections once N packets are scheduled
                (the trace then holds a little more: their tails) [6000000]
  --seed S      random seed [1]
  --rate R      connection arrivals per second (Poisson) [500]
  --snaplen B   bytes captured per frame, 66..=65535 [96]

example: tcpmix --packets 6000000 build/bench/tcpmix-6M.pcap";

struct Options {
    packets: u64,
    seed: u64,
    rate: f64,
    snaplen: u32,
    out: String,
}

/// Why the command line was not run (`Help` is not an error: it asks for
/// the usage). Written by hand: the crate has no dependencies.
#[derive(Debug)]
enum UsageError {
    Help,
    NoValue(&'static str),
    BadValue { option: &'static str, reason: String },
    UnknownOption(String),
    UnexpectedArgument(String),
    MissingOut,
    Snaplen,
    Rate,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::Help => Ok(()),
            UsageError::NoValue(option) => write!(f, "{option} needs a value"),
            UsageError::BadValue { option, reason } => write!(f, "{option}: {reason}"),
            UsageError::UnknownOption(s) => write!(f, "unknown option {s}"),
            UsageError::UnexpectedArgument(s) => write!(f, "unexpected argument {s}"),
            UsageError::MissingOut => f.write_str("missing OUT.pcap"),
            UsageError::Snaplen => {
                f.write_str("--snaplen must be within 66..=65535 (the longest header stack is 66 bytes)")
            }
            UsageError::Rate => f.write_str("--rate must be a positive number"),
        }
    }
}

impl std::error::Error for UsageError {}

/// The value of `option`, parsed.
fn parse_value<T: FromStr>(option: &'static str, value: Option<String>) -> Result<T, UsageError>
where
    T::Err: fmt::Display,
{
    let value = value.ok_or(UsageError::NoValue(option))?;
    value.parse().map_err(|e: T::Err| UsageError::BadValue {
        option,
        reason: e.to_string(),
    })
}

fn parse() -> Result<Options, UsageError> {
    let mut o = Options {
        packets: 6_000_000,
        seed: 1,
        rate: 500.0,
        snaplen: 96,
        out: String::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--packets" => o.packets = parse_value("--packets", args.next())?,
            "--seed" => o.seed = parse_value("--seed", args.next())?,
            "--rate" => o.rate = parse_value("--rate", args.next())?,
            "--snaplen" => o.snaplen = parse_value("--snaplen", args.next())?,
            "-h" | "--help" => return Err(UsageError::Help),
            s if s.starts_with('-') => return Err(UsageError::UnknownOption(s.to_string())),
            s if o.out.is_empty() => o.out = s.to_string(),
            s => return Err(UsageError::UnexpectedArgument(s.to_string())),
        }
    }
    if o.out.is_empty() {
        return Err(UsageError::MissingOut);
    }
    if !(66..=65535).contains(&o.snaplen) {
        return Err(UsageError::Snaplen);
    }
    if !(o.rate > 0.0 && o.rate.is_finite()) {
        return Err(UsageError::Rate);
    }
    Ok(o)
}

#[derive(Default)]
struct Counts {
    packets: u64,
    tcp_packets: u64,
    udp_packets: u64,
    connections: u64,
    retransmissions: u64,
    by_kind: [u64; 4],
    by_end: [u64; 7],
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(UsageError::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tcpmix: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcpmix: {}: {e}", o.out);
            ExitCode::FAILURE
        }
    }
}

fn run(o: &Options) -> std::io::Result<()> {
    let started = Instant::now();
    let mut rng = rng::Rng::new(o.seed);
    let mut hosts = Hosts::new(&mut rng);
    let file = BufWriter::with_capacity(8 << 20, File::create(&o.out)?);
    let mut w = pcap::PcapWriter::new(file, o.snaplen)?;

    // Open connections in a slab, merged by (next packet time, arrival
    // number): the arrival number breaks ties, so the order is fixed.
    let mut slab: Vec<Option<(Conn, usize)>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut heap: BinaryHeap<Reverse<(i64, u64, usize)>> = BinaryHeap::new();
    const START_NS: i64 = 1_700_000_000_000_000_000; // 2023-11-14 22:13:20 UTC
    let mut next_open = START_NS;
    let mut serial = 0u64;
    let mut scheduled = 0u64;
    let mut n = Counts::default();
    let mut last_ts = START_NS;

    loop {
        while scheduled < o.packets && heap.peek().is_none_or(|Reverse((t, _, _))| next_open <= *t) {
            let c = model::connection(&mut rng, &mut hosts, next_open);
            scheduled += c.pkts.len() as u64;
            n.connections += 1;
            n.retransmissions += c.retransmissions as u64;
            n.by_kind[c.kind as usize] += 1;
            n.by_end[c.end as usize] += 1;
            let first = c.pkts[0].ts;
            let slot = free.pop().unwrap_or_else(|| {
                slab.push(None);
                slab.len() - 1
            });
            slab[slot] = Some((c, 0));
            heap.push(Reverse((first, serial, slot)));
            serial += 1;
            next_open += (rng.exp(1.0 / o.rate) * 1e9) as i64;
        }
        let Some(Reverse((_, id, slot))) = heap.pop() else {
            break;
        };
        let (c, i) = slab[slot].as_mut().expect("a queued connection is open");
        let p = c.pkts[*i];
        w.write(c, &p)?;
        last_ts = p.ts;
        n.packets += 1;
        if c.proto == model::TCP {
            n.tcp_packets += 1;
        } else {
            n.udp_packets += 1;
        }
        *i += 1;
        if let Some(next) = c.pkts.get(*i) {
            heap.push(Reverse((next.ts, id, slot)));
        } else {
            slab[slot] = None;
            free.push(slot);
        }
    }
    w.into_inner().flush()?;
    let secs = started.elapsed().as_secs_f64();
    let fmt = |names: Vec<String>, counts: &[u64]| {
        names
            .iter()
            .zip(counts)
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "{{\"generator\": \"tcpmix\", \"version\": \"{}\", \"out\": \"{}\", \"seed\": {}, \"rate\": {}, \"snaplen\": {}, \
         \"packets\": {}, \"tcp_packets\": {}, \"udp_packets\": {}, \"connections\": {}, \"retransmissions\": {}, \
         \"duration_s\": {:.3}, \"by_kind\": {{{}}}, \"by_end\": {{{}}}, \"wall_s\": {:.2}}}",
        env!("CARGO_PKG_VERSION"),
        o.out.replace('\\', "\\\\").replace('"', "\\\""),
        o.seed,
        o.rate,
        o.snaplen,
        n.packets,
        n.tcp_packets,
        n.udp_packets,
        n.connections,
        n.retransmissions,
        (last_ts - START_NS) as f64 / 1e9,
        fmt(Kind::ALL.iter().map(|k| format!("{k:?}")).collect(), &n.by_kind),
        fmt(End::ALL.iter().map(|k| format!("{k:?}")).collect(), &n.by_end),
        secs
    );
    Ok(())
}
