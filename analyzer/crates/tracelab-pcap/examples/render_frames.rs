//! Packets given as text on stdin, written as a classic pcap (microseconds,
//! Ethernet) on stdout through `tracelab_pcap::write`: the Rust side of
//! `tests/test_pcap_writers.py`, which feeds the same packets to the Python
//! writer (`replay/tracelab/synth/pcap.py`) and compares the bytes.
//!
//! Usage: `render_frames SNAPLEN < packets.txt > out.pcap`. One packet per
//! line, fields separated by blanks, in the Python writer's column names:
//! `time_us proto src dst sport dport ip_len ip_id seq ack flags` (addresses
//! as 32-bit numbers; seq, ack and flags are ignored for UDP). TTL 64,
//! window 65,535, no TCP options and zero payloads, as the Python writer
//! writes them.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use tracelab_pcap::write::{Ipv4Frame, PcapWriter, Resolution, Transport, LINKTYPE_ETHERNET};

const USAGE: &str = "usage: render_frames SNAPLEN < packets.txt > out.pcap";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(snaplen) = args.first().and_then(|s| s.parse::<u32>().ok()).filter(|_| args.len() == 1) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match run(snaplen) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("render_frames: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(snaplen: u32) -> Result<(), String> {
    let stdout = BufWriter::new(io::stdout().lock());
    let mut file =
        PcapWriter::new(stdout, Resolution::Micro, snaplen, LINKTYPE_ETHERNET).map_err(|e| format!("stdout: {e}"))?;
    let mut frame = Vec::new();
    for (n, line) in io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .map(|f| f.parse::<u64>().map_err(|_| format!("line {}: '{f}' is not a number", n + 1)))
            .collect::<Result<_, _>>()?;
        let [time_us, proto, src, dst, sport, dport, ip_len, ip_id, seq, ack, flags] = fields[..] else {
            return Err(format!("line {}: {} fields, expected 11", n + 1, fields.len()));
        };
        let (transport, header_len) = match proto {
            6 => (
                Transport::Tcp { seq: seq as u32, ack: ack as u32, flags: flags as u8, window: 65_535, options: &[] },
                40,
            ),
            17 => (Transport::Udp, 28),
            _ => return Err(format!("line {}: protocol {proto} is neither TCP (6) nor UDP (17)", n + 1)),
        };
        let Some(payload_len) = (ip_len as usize).checked_sub(header_len) else {
            return Err(format!("line {}: IP length {ip_len} is shorter than the headers", n + 1));
        };
        let packet = Ipv4Frame {
            src: (src as u32).to_be_bytes(),
            dst: (dst as u32).to_be_bytes(),
            sport: sport as u16,
            dport: dport as u16,
            ttl: 64,
            ip_id: ip_id as u16,
            transport,
            payload_len,
            payload_head: &[],
        };
        packet.render(snaplen as usize, &mut frame);
        file.write_record(time_us as i64 * 1_000, &frame, packet.wire_len() as u32)
            .map_err(|e| format!("stdout: {e}"))?;
    }
    file.into_inner().flush().map_err(|e| format!("stdout: {e}"))
}
