//! The connection table: `connections.parquet` (Zeek conn.log columns with
//! Zeek's names and semantics, then tracelab's metrics) and the Zeek-format
//! `conn.log`. Column meanings are documented in docs/analyzer.md.

use std::io::{self, Write};

use tracelab_decode::ip_proto;
use tracelab_flow::{ConnRecord, SampleStats, SideTransfer};

use crate::table::{Kind, TableBuilder};

/// What the analyzer adds to a record from its configuration.
#[derive(Clone, Copy, Debug)]
pub struct ConnContext<'a> {
    pub scope: &'a str,
    /// `None` when no `--local` networks were given (Zeek prints `-`... we
    /// print `-` too, rather than guess).
    pub local_orig: Option<bool>,
    pub local_resp: Option<bool>,
}

pub fn proto_name(p: u8) -> &'static str {
    match p {
        ip_proto::TCP => "tcp",
        ip_proto::UDP => "udp",
        ip_proto::ICMP | ip_proto::ICMPV6 => "icmp",
        _ => "unknown_transport",
    }
}

fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

fn opt_secs(ns: Option<i64>) -> Option<f64> {
    ns.map(secs)
}

/// Columns written before the analyzer's phase-2 columns (`category`,
/// `orig_is_client`), which are appended once all servers are known.
pub const CONN_COLUMNS: &[(&str, Kind)] = &[
    ("ts", Kind::F64),
    ("uid", Kind::Str),
    ("id.orig_h", Kind::Str),
    ("id.orig_p", Kind::I32),
    ("id.resp_h", Kind::Str),
    ("id.resp_p", Kind::I32),
    ("proto", Kind::Str),
    ("ip_proto", Kind::I32),
    ("duration", Kind::F64),
    ("orig_bytes", Kind::I64),
    ("resp_bytes", Kind::I64),
    ("conn_state", Kind::Str),
    ("local_orig", Kind::Bool),
    ("local_resp", Kind::Bool),
    ("missed_bytes", Kind::I64),
    ("history", Kind::Str),
    ("orig_pkts", Kind::I64),
    ("orig_ip_bytes", Kind::I64),
    ("resp_pkts", Kind::I64),
    ("resp_ip_bytes", Kind::I64),
    ("scope", Kind::Str),
    ("well_behaved", Kind::Bool),
    ("rtt_syn_synack_s", Kind::F64),
    ("rtt_synack_ack_s", Kind::F64),
    ("rtt_handshake_s", Kind::F64),
    ("rtt_data_ack_orig_count", Kind::I64),
    ("rtt_data_ack_orig_min_s", Kind::F64),
    ("rtt_data_ack_orig_median_s", Kind::F64),
    ("rtt_data_ack_orig_mean_s", Kind::F64),
    ("rtt_data_ack_orig_max_s", Kind::F64),
    ("rtt_data_ack_resp_count", Kind::I64),
    ("rtt_data_ack_resp_min_s", Kind::F64),
    ("rtt_data_ack_resp_median_s", Kind::F64),
    ("rtt_data_ack_resp_mean_s", Kind::F64),
    ("rtt_data_ack_resp_max_s", Kind::F64),
    ("rtt_data_ack_s", Kind::F64),
    ("setup_s", Kind::F64),
    ("transfer_s", Kind::F64),
    ("teardown_s", Kind::F64),
    ("orig_data_pkts", Kind::I64),
    ("orig_distinct_data_pkts", Kind::I64),
    ("orig_retransmissions", Kind::I64),
    ("orig_trains", Kind::I64),
    ("orig_warmup_s", Kind::F64),
    ("orig_actual_s", Kind::F64),
    ("orig_theory_s", Kind::F64),
    ("orig_pacing_s", Kind::F64),
    ("orig_pacing_per_pkt_s", Kind::F64),
    ("resp_data_pkts", Kind::I64),
    ("resp_distinct_data_pkts", Kind::I64),
    ("resp_retransmissions", Kind::I64),
    ("resp_trains", Kind::I64),
    ("resp_warmup_s", Kind::F64),
    ("resp_actual_s", Kind::F64),
    ("resp_theory_s", Kind::F64),
    ("resp_pacing_s", Kind::F64),
    ("resp_pacing_per_pkt_s", Kind::F64),
];

/// Columns appended in phase 2.
pub const CONN_FINAL_COLUMNS: &[(&str, Kind)] =
    &[("category", Kind::Str), ("orig_is_client", Kind::Bool)];

fn push_stats(t: &mut TableBuilder, s: &SampleStats) {
    let some = s.count > 0;
    t.i64(Some(s.count as i64))
        .f64(some.then(|| secs(s.min_ns)))
        .f64(some.then(|| secs(s.median_ns)))
        .f64(some.then(|| s.mean_ns / 1e9))
        .f64(some.then(|| secs(s.max_ns)));
}

fn push_side(t: &mut TableBuilder, s: Option<&SideTransfer>) {
    t.i64(s.map(|s| s.data_pkts as i64))
        .i64(s.map(|s| s.distinct_data_pkts as i64))
        .i64(s.map(|s| s.retransmissions as i64))
        .i64(s.map(|s| s.trains as i64))
        .f64(s.map(|s| secs(s.warmup_ns)))
        .f64(s.map(|s| secs(s.actual_ns)))
        .f64(s.map(|s| secs(s.theory_ns)))
        .f64(s.map(|s| secs(s.pacing_ns)))
        .f64(s.map(|s| s.pacing_per_pkt_ns / 1e9));
}

/// RTT_A-B (§9.3, ⚠AMB-31): the sum of the two sides' DATA-ACK means when
/// both sides have samples.
pub fn rtt_data_ack_ns(c: &ConnRecord) -> Option<f64> {
    let (o, r) = (&c.rtt.data_ack_orig, &c.rtt.data_ack_resp);
    (o.count > 0 && r.count > 0).then(|| o.mean_ns + r.mean_ns)
}

pub fn push_conn(t: &mut TableBuilder, c: &ConnRecord, ctx: &ConnContext) {
    let orig_h = c.orig_h.to_string();
    let resp_h = c.resp_h.to_string();
    t.f64(Some(secs(c.ts_ns)))
        .str(Some(&c.uid))
        .str(Some(&orig_h))
        .i32(Some(c.orig_p as i32))
        .str(Some(&resp_h))
        .i32(Some(c.resp_p as i32))
        .str(Some(proto_name(c.ip_proto)))
        .i32(Some(c.ip_proto as i32))
        .f64(opt_secs(c.duration_ns))
        .i64(c.orig_bytes.map(|b| b as i64))
        .i64(c.resp_bytes.map(|b| b as i64))
        .str(Some(c.conn_state.name()))
        .bool(ctx.local_orig)
        .bool(ctx.local_resp)
        .i64(Some(c.missed_bytes as i64))
        .str(Some(&c.history))
        .i64(Some(c.orig_pkts as i64))
        .i64(Some(c.orig_ip_bytes as i64))
        .i64(Some(c.resp_pkts as i64))
        .i64(Some(c.resp_ip_bytes as i64))
        .str(Some(ctx.scope))
        .bool(Some(c.well_behaved))
        .f64(opt_secs(c.rtt.syn_synack_ns))
        .f64(opt_secs(c.rtt.synack_ack_ns))
        .f64(opt_secs(c.rtt.handshake_ns));
    push_stats(t, &c.rtt.data_ack_orig);
    push_stats(t, &c.rtt.data_ack_resp);
    t.f64(rtt_data_ack_ns(c).map(|ns| ns / 1e9));
    let tr = c.transfer.as_ref();
    t.f64(tr.map(|d| secs(d.setup_ns)))
        .f64(tr.map(|d| secs(d.transfer_ns)))
        .f64(tr.map(|d| secs(d.teardown_ns)));
    push_side(t, tr.map(|d| &d.orig));
    push_side(t, tr.map(|d| &d.resp));
}

/// Zeek's conn.log header lines up to and including `#types`. `open` is the
/// `#open` stamp: the time of the trace's first packet (Zeek prints the wall
/// clock; we keep outputs identical across runs).
pub fn write_conn_log_header(w: &mut impl Write, open: &str) -> io::Result<()> {
    writeln!(w, "#separator \\x09")?;
    writeln!(w, "#set_separator\t,")?;
    writeln!(w, "#empty_field\t(empty)")?;
    writeln!(w, "#unset_field\t-")?;
    writeln!(w, "#path\tconn")?;
    writeln!(w, "#open\t{open}")?;
    writeln!(w, "#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tservice\tduration\torig_bytes\tresp_bytes\tconn_state\tlocal_orig\tlocal_resp\tmissed_bytes\thistory\torig_pkts\torig_ip_bytes\tresp_pkts\tresp_ip_bytes\ttunnel_parents\tip_proto")?;
    writeln!(w, "#types\ttime\tstring\taddr\tport\taddr\tport\tenum\tstring\tinterval\tcount\tcount\tstring\tbool\tbool\tcount\tstring\tcount\tcount\tcount\tcount\tset[string]\tcount")
}

/// Zeek's `time`/`interval` format: seconds with 6 decimals.
pub fn zeek_time(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let us = (ns.unsigned_abs() + 500) / 1000;
    format!("{sign}{}.{:06}", us / 1_000_000, us % 1_000_000)
}

fn zeek_bool(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "T",
        Some(false) => "F",
        None => "-",
    }
}

fn zeek_count(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// One conn.log line. `service` is `-`: tracelab does no application-layer
/// protocol detection (see docs/analyzer.md).
pub fn write_conn_log_line(w: &mut impl Write, c: &ConnRecord, ctx: &ConnContext) -> io::Result<()> {
    let history = if c.history.is_empty() { "-" } else { c.history.as_str() };
    writeln!(
        w,
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t-\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t-\t{}",
        zeek_time(c.ts_ns),
        c.uid,
        c.orig_h,
        c.orig_p,
        c.resp_h,
        c.resp_p,
        proto_name(c.ip_proto),
        c.duration_ns.map_or_else(|| "-".to_string(), zeek_time),
        zeek_count(c.orig_bytes),
        zeek_count(c.resp_bytes),
        c.conn_state.name(),
        zeek_bool(ctx.local_orig),
        zeek_bool(ctx.local_resp),
        c.missed_bytes,
        history,
        c.orig_pkts,
        c.orig_ip_bytes,
        c.resp_pkts,
        c.resp_ip_bytes,
        c.ip_proto,
    )
}

pub fn write_conn_log_close(w: &mut impl Write, close: &str) -> io::Result<()> {
    writeln!(w, "#close\t{close}")
}

/// Zeek's `#open`/`#close` stamp format for a time in ns since the epoch (UTC).
pub fn zeek_stamp(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}-{:02}-{:02}-{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Gregorian date from days since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeek_time_rounds_to_microseconds() {
        assert_eq!(zeek_time(1_300_475_167_096_535_000), "1300475167.096535");
        assert_eq!(zeek_time(435_499), "0.000435");
        assert_eq!(zeek_time(435_500), "0.000436");
        assert_eq!(zeek_time(0), "0.000000");
    }

    #[test]
    fn stamps_are_utc_calendar_dates() {
        // 2011-03-18 19:06:07 UTC (wikipedia.pcap's first packet, per tshark).
        assert_eq!(zeek_stamp(1_300_475_167_096_535_000), "2011-03-18-19-06-07");
        assert_eq!(zeek_stamp(0), "1970-01-01-00-00-00");
        assert_eq!(zeek_stamp(951_782_400 * 1_000_000_000), "2000-02-29-00-00-00");
    }
}
