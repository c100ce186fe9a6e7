//! The connection table: `connections.parquet` (Zeek conn.log columns with
//! Zeek's names and semantics, then tracelab's metrics) and the Zeek-format
//! `conn.log`. Column meanings are documented in docs/analyzer.md.

use std::io::{self, Write};

use tracelab_decode::ip_proto;
use tracelab_flow::{ConnRecord, SampleStats, SideTransfer};

use crate::table::{Kind, TableBuilder};

/// What the analyzer adds to a record from its configuration.
#[derive(Clone, Copy, Debug)]
pub struct ConnContext {
    pub scope: &'static str,
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
    ("uid", Kind::Id),
    ("id.orig_h", Kind::Id),
    ("id.orig_p", Kind::I32),
    ("id.resp_h", Kind::Id),
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

/// `text` holds the record's addresses, formatted once by `ConnText::fill`.
pub fn push_conn(t: &mut TableBuilder, c: &ConnRecord, ctx: &ConnContext, text: &ConnText) {
    t.f64(Some(secs(c.ts_ns)))
        .id(Some(c.uid.as_str().as_bytes()))
        .id(Some(text.orig_h.as_bytes()))
        .i32(Some(c.orig_p as i32))
        .id(Some(text.resp_h.as_bytes()))
        .i32(Some(c.resp_p as i32))
        .label(Some(proto_name(c.ip_proto)))
        .i32(Some(c.ip_proto as i32))
        .f64(opt_secs(c.duration_ns))
        .i64(c.orig_bytes.map(|b| b as i64))
        .i64(c.resp_bytes.map(|b| b as i64))
        .label(Some(c.conn_state.name()))
        .bool(ctx.local_orig)
        .bool(ctx.local_resp)
        .i64(Some(c.missed_bytes as i64))
        .str(Some(&c.history))
        .i64(Some(c.orig_pkts as i64))
        .i64(Some(c.orig_ip_bytes as i64))
        .i64(Some(c.resp_pkts as i64))
        .i64(Some(c.resp_ip_bytes as i64))
        .label(Some(ctx.scope))
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
    let mut out = Vec::new();
    push_zeek_time(&mut out, ns);
    String::from_utf8(out).expect("digits are ASCII")
}

/// Appends `ns` rounded to microseconds as Zeek prints it (`1.000435`).
fn push_zeek_time(out: &mut Vec<u8>, ns: i64) {
    if ns < 0 {
        out.push(b'-');
    }
    let us = (ns.unsigned_abs() + 500) / 1000;
    out.extend_from_slice(itoa::Buffer::new().format(us / 1_000_000).as_bytes());
    out.push(b'.');
    let frac = us % 1_000_000;
    let mut digits = [b'0'; 6];
    let mut rest = frac;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    out.extend_from_slice(&digits);
}

fn push_count(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn zeek_bool(b: Option<bool>) -> &'static [u8] {
    match b {
        Some(true) => b"T",
        Some(false) => b"F",
        None => b"-",
    }
}

/// Writes an address (replacing `out`) in the RFC 5952 form Zeek prints. IPv4 (nearly every
/// address in practice) is written digit by digit (ASCII chars pushed
/// as they are: no formatting machinery, no UTF-8 validation); IPv6 goes
/// through `Display`, which already implements the zero-run compression
/// rules.
pub fn push_addr(out: &mut String, a: &tracelab_decode::Addr) {
    out.clear();
    if a.is_v4() {
        let digit = |d: u8| char::from(b'0' + d);
        for (i, &o) in a.0[12..].iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            if o >= 100 {
                out.push(digit(o / 100));
            }
            if o >= 10 {
                out.push(digit(o / 10 % 10));
            }
            out.push(digit(o % 10));
        }
    } else {
        use std::fmt::Write as _;
        write!(out, "{a}").expect("writing to a String cannot fail");
    }
}

/// The text of one connection, formatted once and shared by conn.log and
/// the Parquet row: its two addresses and its conn.log line. The buffers are
/// reused from one connection to the next, so formatting allocates nothing
/// once they have grown to the longest line.
#[derive(Default)]
pub struct ConnText {
    pub orig_h: String,
    pub resp_h: String,
    /// The conn.log line, newline included.
    pub line: Vec<u8>,
}

impl ConnText {
    /// Formats `c`'s addresses and its conn.log line. `service` is `-`:
    /// tracelab does no application-layer protocol detection (see
    /// docs/analyzer.md).
    pub fn fill(&mut self, c: &ConnRecord, ctx: &ConnContext) {
        push_addr(&mut self.orig_h, &c.orig_h);
        push_addr(&mut self.resp_h, &c.resp_h);
        let l = &mut self.line;
        l.clear();
        let tab = |l: &mut Vec<u8>| l.push(b'\t');
        push_zeek_time(l, c.ts_ns);
        tab(l);
        l.extend_from_slice(c.uid.as_str().as_bytes());
        tab(l);
        l.extend_from_slice(self.orig_h.as_bytes());
        tab(l);
        push_count(l, c.orig_p.into());
        tab(l);
        l.extend_from_slice(self.resp_h.as_bytes());
        tab(l);
        push_count(l, c.resp_p.into());
        tab(l);
        l.extend_from_slice(proto_name(c.ip_proto).as_bytes());
        l.extend_from_slice(b"\t-\t");
        match c.duration_ns {
            Some(ns) => push_zeek_time(l, ns),
            None => l.push(b'-'),
        }
        for v in [c.orig_bytes, c.resp_bytes] {
            tab(l);
            match v {
                Some(v) => push_count(l, v),
                None => l.push(b'-'),
            }
        }
        tab(l);
        l.extend_from_slice(c.conn_state.name().as_bytes());
        tab(l);
        l.extend_from_slice(zeek_bool(ctx.local_orig));
        tab(l);
        l.extend_from_slice(zeek_bool(ctx.local_resp));
        tab(l);
        push_count(l, c.missed_bytes);
        tab(l);
        l.extend_from_slice(if c.history.is_empty() { b"-" } else { c.history.as_bytes() });
        for v in [c.orig_pkts, c.orig_ip_bytes, c.resp_pkts, c.resp_ip_bytes] {
            tab(l);
            push_count(l, v);
        }
        l.extend_from_slice(b"\t-\t");
        push_count(l, c.ip_proto.into());
        l.push(b'\n');
    }
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
    use tracelab_decode::Addr;
    use tracelab_flow::{ConnState, Uid};

    #[test]
    fn zeek_time_rounds_to_microseconds() {
        assert_eq!(zeek_time(1_300_475_167_096_535_000), "1300475167.096535");
        assert_eq!(zeek_time(435_499), "0.000435");
        assert_eq!(zeek_time(435_500), "0.000436");
        assert_eq!(zeek_time(0), "0.000000");
    }

    fn record(orig_h: Addr, resp_h: Addr) -> ConnRecord {
        ConnRecord {
            ts_ns: 1_300_475_167_096_535_000,
            uid: Uid::parse("CHhAvVGS1DHFjwGM9a").unwrap(),
            orig_h,
            orig_p: 54_321,
            resp_h,
            resp_p: 80,
            ip_proto: 6,
            duration_ns: None,
            orig_bytes: None,
            resp_bytes: Some(0),
            conn_state: ConnState::S0,
            missed_bytes: 0,
            history: String::new(),
            orig_pkts: 1,
            orig_ip_bytes: 60,
            resp_pkts: 0,
            resp_ip_bytes: 0,
            last_ts_ns: 1_300_475_167_096_535_000,
            handshake_complete: false,
            closed: false,
            rtt: Default::default(),
            transfer: None,
            well_behaved: false,
            load_bins: Default::default(),
        }
    }

    /// Lines written out by hand in Zeek's format: unset fields as `-`,
    /// IPv6 in RFC 5952 form, the reused buffers leaving nothing behind.
    #[test]
    fn conn_log_lines_by_hand() {
        let ctx = ConnContext { scope: "internet", local_orig: Some(true), local_resp: None };
        let mut text = ConnText::default();
        let mut v6 = [0u8; 16];
        v6[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        v6[15] = 1;
        text.fill(&record(Addr::v6(v6), Addr::v4([192, 168, 0, 255])), &ctx);
        assert_eq!(
            String::from_utf8(text.line.clone()).unwrap(),
            "1300475167.096535\tCHhAvVGS1DHFjwGM9a\t2001:db8::1\t54321\t192.168.0.255\t80\ttcp\t-\t-\t-\t0\tS0\tT\t-\t0\t-\t1\t60\t0\t0\t-\t6\n"
        );
        let mut c = record(Addr::v4([10, 0, 0, 1]), Addr::v4([8, 8, 8, 8]));
        c.duration_ns = Some(1_000_500);
        c.orig_bytes = Some(12);
        c.history = "ShADadfF".into();
        text.fill(&c, &ConnContext { local_orig: Some(false), ..ctx });
        assert_eq!((text.orig_h.as_str(), text.resp_h.as_str()), ("10.0.0.1", "8.8.8.8"));
        for (octets, want) in [([0, 9, 10, 99], "0.9.10.99"), ([100, 199, 200, 255], "100.199.200.255")] {
            let mut t = String::from("left over");
            push_addr(&mut t, &Addr::v4(octets));
            assert_eq!(t, want);
        }
        assert_eq!(
            String::from_utf8(text.line.clone()).unwrap(),
            "1300475167.096535\tCHhAvVGS1DHFjwGM9a\t10.0.0.1\t54321\t8.8.8.8\t80\ttcp\t-\t0.001001\t12\t0\tS0\tF\t-\t0\tShADadfF\t1\t60\t0\t0\t-\t6\n"
        );
    }

    #[test]
    fn stamps_are_utc_calendar_dates() {
        // 2011-03-18 19:06:07 UTC (wikipedia.pcap's first packet, per tshark).
        assert_eq!(zeek_stamp(1_300_475_167_096_535_000), "2011-03-18-19-06-07");
        assert_eq!(zeek_stamp(0), "1970-01-01-00-00-00");
        assert_eq!(zeek_stamp(951_782_400 * 1_000_000_000), "2000-02-29-00-00-00");
    }
}
