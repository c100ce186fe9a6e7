//! The connection table: `connections.parquet` (Zeek conn.log columns with
//! Zeek's names and semantics, then tracelab's metrics) and the Zeek-format
//! `conn.log`. Column meanings are documented in docs/analyzer.md.

use std::io::{self, Write};

use tracelab_decode::ip_proto;
use tracelab_flow::{ConnRecord, SampleStats, Service, SideTransfer};

use crate::table::{ColumnDef, Kind, Row};

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
/// `orig_is_client`), which are appended once all servers are known. The
/// descriptions go into the file (the Arrow schema's field metadata);
/// docs/analyzer.md has the full meanings.
pub const CONN_COLUMNS: &[ColumnDef] = &[
    ("ts", Kind::Time, "the connection's first packet (UTC, microseconds)"),
    ("uid", Kind::Id, "the connection's unique id (Zeek's form); the samples tables' `uid`"),
    ("id.orig_h", Kind::Id, "originator's IP address"),
    ("id.orig_p", Kind::I32, "originator's port (ICMP: type)"),
    ("id.resp_h", Kind::Id, "responder's IP address"),
    ("id.resp_p", Kind::I32, "responder's port (ICMP: code)"),
    ("proto", Kind::Str, "transport protocol: tcp, udp, icmp or unknown_transport"),
    ("service", Kind::Str, "application protocol detected from the payload, Zeek's name; null when none"),
    ("ip_proto", Kind::I32, "IP protocol number"),
    ("duration", Kind::F64, "last packet's time minus first packet's, seconds; null when Zeek prints -"),
    ("orig_bytes", Kind::I64, "payload bytes sent by the originator (TCP: from sequence numbers)"),
    ("resp_bytes", Kind::I64, "payload bytes sent by the responder (TCP: from sequence numbers)"),
    ("conn_state", Kind::Str, "Zeek's connection state (S0, SF, REJ, ...)"),
    ("local_orig", Kind::Bool, "the originator is in --local; null without --local"),
    ("local_resp", Kind::Bool, "the responder is in --local; null without --local"),
    ("missed_bytes", Kind::I64, "bytes missed in content gaps (TCP)"),
    ("history", Kind::Str, "Zeek's connection history letters"),
    ("orig_pkts", Kind::I64, "packets sent by the originator"),
    ("orig_ip_bytes", Kind::I64, "IP bytes sent by the originator"),
    ("resp_pkts", Kind::I64, "packets sent by the responder"),
    ("resp_ip_bytes", Kind::I64, "IP bytes sent by the responder"),
    ("scope", Kind::Str, "intranet (both ends in --local), internet (one end) or external (neither)"),
    ("well_behaved", Kind::Bool, "complete handshake, data both ways, FIN or RST at the end"),
    ("rtt_syn_synack_s", Kind::F64, "SYN to SYN/ACK at the monitor (monitor-responder RTT), seconds"),
    ("rtt_synack_ack_s", Kind::F64, "SYN/ACK to ACK at the monitor (monitor-originator RTT), seconds"),
    ("rtt_handshake_s", Kind::F64, "the two handshake RTTs summed, seconds"),
    ("rtt_data_ack_orig_count", Kind::I64, "DATA-ACK RTT samples of data sent by the originator"),
    ("rtt_data_ack_orig_min_s", Kind::F64, "their minimum, seconds"),
    ("rtt_data_ack_orig_median_s", Kind::F64, "their median, seconds"),
    ("rtt_data_ack_orig_mean_s", Kind::F64, "their mean, seconds"),
    ("rtt_data_ack_orig_max_s", Kind::F64, "their maximum, seconds"),
    ("rtt_data_ack_resp_count", Kind::I64, "DATA-ACK RTT samples of data sent by the responder"),
    ("rtt_data_ack_resp_min_s", Kind::F64, "their minimum, seconds"),
    ("rtt_data_ack_resp_median_s", Kind::F64, "their median, seconds"),
    ("rtt_data_ack_resp_mean_s", Kind::F64, "their mean, seconds"),
    ("rtt_data_ack_resp_max_s", Kind::F64, "their maximum, seconds"),
    ("rtt_data_ack_s", Kind::F64, "RTT_A-B: both sides' DATA-ACK means summed, seconds; null unless both have any"),
    ("setup_s", Kind::F64, "first packet to first data packet, seconds"),
    ("transfer_s", Kind::F64, "first to last data packet, seconds"),
    ("teardown_s", Kind::F64, "last data packet to last packet, seconds"),
    ("orig_data_pkts", Kind::I64, "data packets sent by the originator, retransmissions included"),
    ("orig_distinct_data_pkts", Kind::I64, "distinct data packets sent by the originator"),
    ("orig_retransmissions", Kind::I64, "retransmitted data packets of the originator"),
    ("orig_trains", Kind::I64, "packet trains of the originator"),
    ("orig_warmup_s", Kind::F64, "the originator's total warm-up, seconds"),
    ("orig_actual_s", Kind::F64, "Actual(X) of the originator, seconds"),
    ("orig_theory_s", Kind::F64, "T_theory(X) of the originator, seconds"),
    ("orig_pacing_s", Kind::F64, "Pacing(X) = Actual - WarmUp - T_theory of the originator, seconds"),
    ("orig_pacing_per_pkt_s", Kind::F64, "the originator's pacing per data packet, seconds"),
    ("resp_data_pkts", Kind::I64, "data packets sent by the responder, retransmissions included"),
    ("resp_distinct_data_pkts", Kind::I64, "distinct data packets sent by the responder"),
    ("resp_retransmissions", Kind::I64, "retransmitted data packets of the responder"),
    ("resp_trains", Kind::I64, "packet trains of the responder"),
    ("resp_warmup_s", Kind::F64, "the responder's total warm-up, seconds"),
    ("resp_actual_s", Kind::F64, "Actual(X) of the responder, seconds"),
    ("resp_theory_s", Kind::F64, "T_theory(X) of the responder, seconds"),
    ("resp_pacing_s", Kind::F64, "Pacing(X) = Actual - WarmUp - T_theory of the responder, seconds"),
    ("resp_pacing_per_pkt_s", Kind::F64, "the responder's pacing per data packet, seconds"),
];

/// Columns appended in phase 2.
pub const CONN_FINAL_COLUMNS: &[ColumnDef] = &[
    ("category", Kind::Str, "lc-rp, ls-rp, lc-ls, ls-ls (client/server, local/remote) or other"),
    ("orig_is_client", Kind::Bool, "the originator is the client side"),
];

#[inline(always)]
fn push_stats<'a>(t: Row<'a>, s: &SampleStats) -> Row<'a> {
    let some = s.count > 0;
    t.i64(Some(s.count as i64))
        .f64(some.then(|| secs(s.min_ns)))
        .f64(some.then(|| secs(s.median_ns)))
        .f64(some.then(|| s.mean_ns / 1e9))
        .f64(some.then(|| secs(s.max_ns)))
}

#[inline(always)]
fn push_side<'a>(t: Row<'a>, s: Option<&SideTransfer>) -> Row<'a> {
    t.i64(s.map(|s| s.data_pkts as i64))
        .i64(s.map(|s| s.distinct_data_pkts as i64))
        .i64(s.map(|s| s.retransmissions as i64))
        .i64(s.map(|s| s.trains as i64))
        .f64(s.map(|s| secs(s.warmup_ns)))
        .f64(s.map(|s| secs(s.actual_ns)))
        .f64(s.map(|s| secs(s.theory_ns)))
        .f64(s.map(|s| secs(s.pacing_ns)))
        .f64(s.map(|s| s.pacing_per_pkt_ns / 1e9))
}

/// RTT_A-B (§9.3, ⚠AMB-31): the sum of the two sides' DATA-ACK means when
/// both sides have samples.
pub fn rtt_data_ack_ns(c: &ConnRecord) -> Option<f64> {
    let (o, r) = (&c.rtt.data_ack_orig, &c.rtt.data_ack_resp);
    (o.count > 0 && r.count > 0).then_some(o.mean_ns + r.mean_ns)
}

/// `text` holds the record's addresses, formatted once by `ConnText::fill`;
/// `uid` is `c.uid`'s text. Always inlined, so that `t`'s cursor is known
/// (a fresh row's) and every column's position a constant.
#[inline(always)]
pub fn push_conn(t: Row<'_>, c: &ConnRecord, uid: &str, ctx: &ConnContext, text: &ConnText) {
    let t = t
        .time_ns(Some(c.ts_ns))
        .id(Some(uid))
        .id(Some(text.orig_h.as_str()))
        .i32(Some(c.orig_p as i32))
        .id(Some(text.resp_h.as_str()))
        .i32(Some(c.resp_p as i32))
        .str(Some(proto_name(c.ip_proto)))
        .str(c.service.map(Service::name))
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
    let t = push_stats(t, &c.rtt.data_ack_orig);
    let t = push_stats(t, &c.rtt.data_ack_resp).f64(rtt_data_ack_ns(c).map(|ns| ns / 1e9));
    let tr = c.transfer.as_ref();
    let t =
        t.f64(tr.map(|d| secs(d.setup_ns))).f64(tr.map(|d| secs(d.transfer_ns))).f64(tr.map(|d| secs(d.teardown_ns)));
    let t = push_side(t, tr.map(|d| &d.orig));
    push_side(t, tr.map(|d| &d.resp)).end();
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
    let mut b = [0u8; TIME_MAX + 20];
    let mut w = Cursor { b: &mut b, at: 0 };
    w.time(ns);
    let n = w.at;
    String::from_utf8(b[..n].to_vec()).expect("digits are ASCII")
}

/// Two-digit groups "00".."99", for writing numbers two digits at a time.
/// Callgrind, tcpmix 300 k packets: the line written by index with counts and
/// times two digits at a time, with addresses and the uid formatted once,
/// 483.9 M -> 481.0 M instructions (d457f74; docs/performance-history.md,
/// analyzer step 24).
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The longest `Cursor::time`: a sign, 20 digits of seconds, the point and
/// 6 decimals.
const TIME_MAX: usize = 28;

/// Writes a conn.log line into a buffer sized beforehand for its longest
/// form, by index: no capacity check or formatting machinery per field.
struct Cursor<'a> {
    b: &'a mut [u8],
    at: usize,
}

impl Cursor<'_> {
    #[inline]
    fn byte(&mut self, x: u8) {
        self.b[self.at] = x;
        self.at += 1;
    }
    #[inline]
    fn bytes(&mut self, s: &[u8]) {
        self.b[self.at..self.at + s.len()].copy_from_slice(s);
        self.at += s.len();
    }
    /// `v` in decimal. One or two digits (most packet counts, a zero
    /// `missed_bytes`, `ip_proto`) inline; longer numbers in `long`.
    /// Callgrind, tcpmix 300 k: 463.8 M -> 462.0 M instructions (a9d2a37; analyzer step 24).
    #[inline(always)]
    fn count(&mut self, v: u64) {
        if v < 10 {
            self.byte(b'0' + v as u8);
        } else if v < 100 {
            let p = v as usize * 2;
            self.bytes(&PAIRS[p..p + 2]);
        } else {
            self.long(v);
        }
    }
    /// `v` two digits at a time from the right into a scratch array, then
    /// copied as a fixed 20 bytes (the longest u64), so no digit count is
    /// needed first; `LINE_MAX` leaves room for the over-copy, which later
    /// fields overwrite. Callgrind, tcpmix 300 k, with the octet table of
    /// `AddrText::new`: 470.5 M -> 465.4 M instructions (2ed9cc4; analyzer step 24).
    #[inline(never)]
    fn long(&mut self, v: u64) {
        let mut digits = [0u8; 40];
        let mut i = 20;
        let mut v = v;
        while v >= 100 {
            let p = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
        }
        if v >= 10 {
            i -= 2;
            digits[i..i + 2].copy_from_slice(&PAIRS[v as usize * 2..v as usize * 2 + 2]);
        } else {
            i -= 1;
            digits[i] = b'0' + v as u8;
        }
        self.b[self.at..self.at + 20].copy_from_slice(&digits[i..i + 20]);
        self.at += 20 - i;
    }
    /// `ns` rounded to microseconds as Zeek prints it (`1.000435`).
    #[inline]
    fn time(&mut self, ns: i64) {
        if ns < 0 {
            self.byte(b'-');
        }
        let us = (ns.unsigned_abs() + 500) / 1000;
        self.count(us / 1_000_000);
        self.byte(b'.');
        let frac = (us % 1_000_000) as usize;
        let at = self.at;
        for (k, p) in [frac / 10_000, frac / 100 % 100, frac % 100].into_iter().enumerate() {
            self.b[at + 2 * k..at + 2 * k + 2].copy_from_slice(&PAIRS[p * 2..p * 2 + 2]);
        }
        self.at += 6;
    }
    fn tab(&mut self) {
        self.byte(b'\t');
    }
}

fn zeek_bool(b: Option<bool>) -> u8 {
    match b {
        Some(true) => b'T',
        Some(false) => b'F',
        None => b'-',
    }
}

/// An address as the text Zeek prints (RFC 5952), in a fixed buffer: the
/// longest form, full IPv6, is 39 bytes.
#[derive(Clone, Copy)]
pub struct AddrText {
    buf: [u8; 40],
    len: u8,
}

impl AddrText {
    /// IPv4 (nearly every address in practice) is written digit by digit;
    /// IPv6 goes through `Display`, which already implements the zero-run
    /// compression rules.
    pub fn new(a: &tracelab_decode::Addr) -> AddrText {
        let mut t = AddrText { buf: [0; 40], len: 0 };
        if a.is_v4() {
            // Each octet's digits and a dot from a table, four bytes at a
            // time, the cursor advanced by the digits' count plus one.
            // Callgrind, tcpmix 300 k: AddrText::new 130 -> 67 instructions per
            // address (2ed9cc4; docs/performance-history.md, analyzer step 24).
            let mut at = 0;
            for &o in &a.0[12..] {
                let (text, len) = OCTETS[usize::from(o)];
                t.buf[at..at + 4].copy_from_slice(&text);
                at += len;
            }
            t.len = at as u8 - 1;
        } else {
            use std::fmt::Write as _;
            write!(t, "{a}").expect("an IPv6 address is at most 39 bytes of text");
        }
        t
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("an address's text is ASCII")
    }
}

/// Every byte's decimal text followed by a dot, and that text's length:
/// `OCTETS[7] = (*b"7.\0\0", 2)`.
const OCTETS: [([u8; 4], usize); 256] = {
    let mut t = [([0u8; 4], 0usize); 256];
    let mut o = 0;
    while o < 256 {
        let (d, mut k) = ([(o / 100) as u8, (o / 10 % 10) as u8, (o % 10) as u8], 0);
        let first = if o >= 100 {
            0
        } else if o >= 10 {
            1
        } else {
            2
        };
        let mut j = first;
        while j < 3 {
            t[o].0[k] = b'0' + d[j];
            k += 1;
            j += 1;
        }
        t[o].0[k] = b'.';
        t[o].1 = k + 1;
        o += 1;
    }
    t
};

impl std::fmt::Write for AddrText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let at = usize::from(self.len);
        let to = self.buf.get_mut(at..at + s.len()).ok_or(std::fmt::Error)?;
        to.copy_from_slice(s.as_bytes());
        self.len += s.len() as u8;
        Ok(())
    }
}

/// The longest conn.log line without its history: 21 tabs and a newline,
/// ts and duration (`TIME_MAX`), uid 18, two addresses 39, two ports 5,
/// proto 17, service 4, seven counts 20, conn_state 6, two bools 1,
/// tunnel_parents 1, ip_proto 3; and 20 bytes after the last count for
/// `Cursor::count`'s fixed-size copy.
const LINE_MAX: usize = 22 + 2 * TIME_MAX + 18 + 2 * 39 + 2 * 5 + 17 + 4 + 7 * 20 + 6 + 2 + 1 + 3 + 20;

/// The text of one connection, formatted once and shared by conn.log and
/// the Parquet row: its two addresses and its conn.log line. The line's
/// buffer is reused from one connection to the next, so formatting
/// allocates nothing once it has grown to the longest history.
pub struct ConnText {
    pub orig_h: AddrText,
    pub resp_h: AddrText,
    /// The buffer the line is written into (longer than the line), and the
    /// line's length.
    buf: Vec<u8>,
    len: usize,
}

impl Default for ConnText {
    fn default() -> Self {
        let none = AddrText { buf: [0; 40], len: 0 };
        ConnText { orig_h: none, resp_h: none, buf: vec![0; LINE_MAX], len: 0 }
    }
}

impl ConnText {
    /// The conn.log line, newline included.
    pub fn line(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Formats `c`'s addresses and its conn.log line (`service` as
    /// detected from the payload, `-` when none was). `uid` is `c.uid`'s
    /// text.
    pub fn fill(&mut self, c: &ConnRecord, uid: &[u8], ctx: &ConnContext) {
        self.orig_h = AddrText::new(&c.orig_h);
        self.resp_h = AddrText::new(&c.resp_h);
        if self.buf.len() < LINE_MAX + c.history.len() {
            self.buf.resize(LINE_MAX + c.history.len(), 0);
        }
        let mut w = Cursor { b: &mut self.buf, at: 0 };
        w.time(c.ts_ns);
        w.tab();
        w.bytes(uid);
        w.tab();
        w.bytes(self.orig_h.as_bytes());
        w.tab();
        w.count(c.orig_p.into());
        w.tab();
        w.bytes(self.resp_h.as_bytes());
        w.tab();
        w.count(c.resp_p.into());
        w.tab();
        w.bytes(proto_name(c.ip_proto).as_bytes());
        w.tab();
        w.bytes(c.service.map_or(b"-", |s| s.name().as_bytes()));
        w.tab();
        match c.duration_ns {
            Some(ns) => w.time(ns),
            None => w.byte(b'-'),
        }
        for v in [c.orig_bytes, c.resp_bytes] {
            w.tab();
            match v {
                Some(v) => w.count(v),
                None => w.byte(b'-'),
            }
        }
        w.tab();
        w.bytes(c.conn_state.name().as_bytes());
        w.tab();
        w.byte(zeek_bool(ctx.local_orig));
        w.tab();
        w.byte(zeek_bool(ctx.local_resp));
        w.tab();
        w.count(c.missed_bytes);
        w.tab();
        w.bytes(if c.history.is_empty() { b"-" } else { c.history.as_bytes() });
        for v in [c.orig_pkts, c.orig_ip_bytes, c.resp_pkts, c.resp_ip_bytes] {
            w.tab();
            w.count(v);
        }
        w.bytes(b"\t-\t");
        w.count(c.ip_proto.into());
        w.byte(b'\n');
        self.len = w.at;
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
            service: None,
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
        let uid = b"CHhAvVGS1DHFjwGM9a";
        text.fill(&record(Addr::v6(v6), Addr::v4([192, 168, 0, 255])), uid, &ctx);
        assert_eq!(
            String::from_utf8(text.line().to_vec()).unwrap(),
            "1300475167.096535\tCHhAvVGS1DHFjwGM9a\t2001:db8::1\t54321\t192.168.0.255\t80\ttcp\t-\t-\t-\t0\tS0\tT\t-\t0\t-\t1\t60\t0\t0\t-\t6\n"
        );
        let mut c = record(Addr::v4([10, 0, 0, 1]), Addr::v4([8, 8, 8, 8]));
        c.service = Some(Service::Http);
        c.duration_ns = Some(1_000_500);
        c.orig_bytes = Some(12);
        c.history = "ShADadfF".into();
        text.fill(&c, uid, &ConnContext { local_orig: Some(false), ..ctx });
        assert_eq!((text.orig_h.as_bytes(), text.resp_h.as_bytes()), (&b"10.0.0.1"[..], &b"8.8.8.8"[..]));
        for (octets, want) in [([0, 9, 10, 99], "0.9.10.99"), ([100, 199, 200, 255], "100.199.200.255")] {
            assert_eq!(AddrText::new(&Addr::v4(octets)).as_bytes(), want.as_bytes());
        }
        assert_eq!(
            String::from_utf8(text.line().to_vec()).unwrap(),
            "1300475167.096535\tCHhAvVGS1DHFjwGM9a\t10.0.0.1\t54321\t8.8.8.8\t80\ttcp\thttp\t0.001001\t12\t0\tS0\tF\t-\t0\tShADadfF\t1\t60\t0\t0\t-\t6\n"
        );
    }

    /// Counts, times and addresses written by hand checked against
    /// independent writers: itoa, `format!`, and std's `Ipv4Addr`/`Ipv6Addr`
    /// `Display`, over every digit count and random values.
    #[test]
    fn numbers_and_addresses_match_independent_writers() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut b = [0u8; 64];
        let mut values: Vec<u64> = (0..20).flat_map(|k| [10u64.pow(k) - 1, 10u64.pow(k)]).collect();
        values.extend([u64::MAX, 0]);
        values.extend((0..2000).map(|k| next() >> (k % 64)));
        for v in values {
            let mut w = Cursor { b: &mut b, at: 3 };
            w.count(v);
            let at = w.at;
            assert_eq!(&b[3..at], itoa::Buffer::new().format(v).as_bytes());
            // Times of every magnitude, from 0 to 2^63 ns, of both signs.
            let ns = (next() >> (v % 63 + 1)) as i64 * if v % 2 == 0 { 1 } else { -1 };
            let us = (ns.unsigned_abs() + 500) / 1000;
            let want = format!("{}{}.{:06}", if ns < 0 { "-" } else { "" }, us / 1_000_000, us % 1_000_000);
            assert_eq!(zeek_time(ns), want);
            let r = next();
            let v4 = (r as u32).to_be_bytes();
            assert_eq!(AddrText::new(&Addr::v4(v4)).as_bytes(), std::net::Ipv4Addr::from(v4).to_string().as_bytes());
            // IPv6 with zero runs of every length, and the longest form.
            let mut v6 = (u128::from(r) << 64 | u128::from(next())).to_be_bytes();
            let zeros = (r >> 40) as usize % 17;
            let from = (r >> 50) as usize % (17 - zeros);
            v6[from..from + zeros].fill(0);
            if v6[..12] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] {
                continue; // Addr reads IPv4-mapped addresses as IPv4
            }
            assert_eq!(AddrText::new(&Addr::v6(v6)).as_bytes(), std::net::Ipv6Addr::from(v6).to_string().as_bytes());
        }
        let longest = [0xab; 16];
        assert_eq!(AddrText::new(&Addr::v6(longest)).as_bytes().len(), 39);
    }

    #[test]
    fn stamps_are_utc_calendar_dates() {
        // 2011-03-18 19:06:07 UTC (wikipedia.pcap's first packet, per tshark).
        assert_eq!(zeek_stamp(1_300_475_167_096_535_000), "2011-03-18-19-06-07");
        assert_eq!(zeek_stamp(0), "1970-01-01-00-00-00");
        assert_eq!(zeek_stamp(951_782_400 * 1_000_000_000), "2000-02-29-00-00-00");
    }
}
