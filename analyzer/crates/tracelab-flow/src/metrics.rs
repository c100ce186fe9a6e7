//! Per-connection TCP metrics of docs/reference/algorithms.md §9.2–9.3: handshake and
//! DATA-ACK RTTs, retransmissions, trains, warm-ups, theoretical time and
//! pacing. Kept per *slot* (sender) and mapped to orig/resp at the end,
//! because Zeek may flip roles mid-connection.
//!
//! DATA-ACK samples follow tcptrace's `ack_in`/`rtt_ackin` (tcptrace 6.6.7,
//! rexmit.c): an ACK gives at most one sample, for the segment whose last
//! byte it acknowledges exactly (segments it covers cumulatively give
//! none), and none when that segment or any data below it was (re)sent
//! after it (Karn's rule and tcptrace's "intervening transmissions").
//! A sample is flagged `delayed_ack` when the receiver held the ACK: see
//! [`held_ack`].

use std::collections::VecDeque;

use tracelab_decode::tcp_flags as F;

use crate::record::{Decomposition, RttRecord, RttSample, SampleStats, SideTransfer};
use crate::small::List;

/// Unacked data segments remembered per side for DATA-ACK matching; past
/// it the oldest is forgotten (no sample), bounding memory per connection.
const MAX_OUTSTANDING: usize = 512;
/// The outstanding-segment queue's first capacity.
const OUTSTANDING_START: usize = 16;
/// Holes in a side's sequence space remembered to tell a late (reordered)
/// segment from a retransmission.
const MAX_HOLES: usize = 8;
/// A held pure ACK is a delayed one when it comes later than the side's
/// reference RTT by more than this and more than a quarter of the
/// reference (see [`held_ack`]).
const DELAYED_ACK_MIN_EXCESS_NS: i64 = 1_000_000;

fn seq_delta(a: u32, b: u32) -> i32 {
    a.wrapping_sub(b) as i32
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    start: u32,
    end: u32,
    ts: i64,
    /// No sample from this segment: its range was (re)sent more than once
    /// (Karn: whichever copy the ACK answers is unknown), or data below it
    /// was sent after it (a retransmission or a hole filled: the ACK then
    /// waited for that data, tcptrace's "intervening transmissions").
    ambiguous: bool,
}

/// Whether a sample of `rtt_ns` comes from an ACK the receiver held (a
/// delayed ACK). RFC 1122 §4.2.3.2 and RFC 5681 §4.2 oblige a receiver to
/// acknowledge at least every second full-sized segment at once and let it
/// hold any other ACK (up to 500 ms) until its delayed-ACK timer fires
/// (Linux 40 ms at least, Windows 200 ms) or it has data to send with it.
/// So a sample is flagged when
///
/// * the ACK is one the receiver could hold: it newly acknowledges
///   `covered_bytes` < 2 full-sized segments (`full_size`, the largest
///   payload the sender has sent); and
/// * the receiver did hold it: the ACK came with the receiver's data
///   (`with_data`: the ACK waited for the application's answer), or it
///   came late, more than max(1 ms, reference / 4) after the reference:
///   the smaller of the side's handshake component (the same path: SYN to
///   SYN/ACK for the originator's data, SYN/ACK to ACK for the
///   responder's) and the side's smallest sample so far. Without either
///   (the first pure ACK of a connection seen mid-stream) it is not
///   flagged.
///
/// tcptrace and tshark flag nothing (Zeek measures no RTT); the receiver
/// model is the one Jaiswal et al. use (IMC 2004, "Inferring TCP connection
/// characteristics through passive measurements": every second segment
/// ACKed at once, others after the delayed-ACK timer). Limit: a pure
/// delayed ACK later by less than the margin (a 40 ms timer on a path of
/// more than 160 ms) is not recognised.
pub(crate) fn held_ack(
    rtt_ns: i64,
    covered_bytes: u64,
    full_size: u32,
    with_data: bool,
    reference_ns: Option<i64>,
) -> bool {
    if covered_bytes >= 2 * u64::from(full_size) {
        return false;
    }
    with_data || reference_ns.is_some_and(|r| rtt_ns.saturating_sub(r) > DELAYED_ACK_MIN_EXCESS_NS.max(r / 4))
}

#[derive(Clone, Debug, Default)]
struct Side {
    data_pkts: u64,
    retransmissions: u64,
    snd_max: Option<u32>,
    holes: Vec<(u32, u32)>,
    outstanding: VecDeque<Outstanding>,
    /// The queue's segment ends rise strictly from front to back, all
    /// within 2^31 of the front's (each pushed end after both the back's
    /// and the front's): an ACK that leaves the front and the back
    /// outstanding then leaves every segment between them too. Skipping the
    /// scan then, callgrind, tcpmix 300 k packets: -7 instructions per
    /// packet (d9d0f4b; docs/performance-history.md, analyzer step 26).
    ends_rising: bool,
    /// The largest payload sent (the full-sized segment of [`held_ack`]).
    full_size: u32,
    samples: List<RttSample, 8>,
    /// Statistics of the samples not flagged `delayed_ack`; `min_all` of
    /// all of them (the reference of [`held_ack`]).
    min_all: Option<i64>,
    n: u32,
    sum: i128,
    min: i64,
    max: i64,
    train_sizes: List<u32, 4>,
    warmups: List<i64, 4>,
    actual: i64,
    warmup: i64,
}

impl Side {
    /// Classifies a data segment [s, e): returns true if it is a
    /// retransmission (some of its bytes were already seen). Inlined into
    /// the per-packet path; a segment below the highest byte seen goes to
    /// [`Side::below_max`]. With `sample` inlined too, callgrind, tcpmix
    /// 300 k packets: tracker thread 254.8 M -> 247.5 M instructions
    /// (47ab2b9; docs/performance-history.md, analyzer step 16).
    #[inline(always)]
    fn classify(&mut self, s: u32, e: u32) -> bool {
        let Some(max) = self.snd_max else {
            self.snd_max = Some(e);
            return false;
        };
        if seq_delta(s, max) >= 0 {
            if s != max {
                if self.holes.len() == MAX_HOLES {
                    self.holes.remove(0); // forget the oldest: it counts as seen
                }
                self.holes.push((max, s));
            }
            self.snd_max = Some(e);
            return false;
        }
        self.below_max(s, e, max)
    }

    /// [`Side::classify`] for a segment starting below `max`, the highest
    /// byte seen: new only if it fits a hole (reordering), else a
    /// retransmission.
    #[cold]
    fn below_max(&mut self, s: u32, e: u32, max: u32) -> bool {
        if let Some(i) = self.holes.iter().position(|&(hs, he)| seq_delta(s, hs) >= 0 && seq_delta(e, he) <= 0) {
            let (hs, he) = self.holes.remove(i);
            if seq_delta(e, he) < 0 {
                self.holes.insert(i, (e, he));
            }
            if seq_delta(s, hs) > 0 {
                self.holes.insert(i, (hs, s));
            }
            return false;
        }
        if seq_delta(e, max) > 0 {
            self.snd_max = Some(e);
        }
        true
    }

    /// A data segment [s, e) sent at `ts` and not a retransmission:
    /// queued for its DATA-ACK sample.
    #[inline(always)]
    fn sent(&mut self, s: u32, e: u32, ts: i64) {
        let q = &mut self.outstanding;
        if q.len() == MAX_OUTSTANDING {
            q.pop_front();
        } else if q.capacity() == 0 {
            // One allocation for a typical window instead of growing
            // through 4 and 8 (sides without data allocate nothing).
            q.reserve_exact(OUTSTANDING_START);
        }
        self.ends_rising = match (q.front(), q.back()) {
            (Some(f), Some(b)) => self.ends_rising && seq_delta(e, b.end) > 0 && seq_delta(e, f.end) > 0,
            _ => true,
        };
        q.push_back(Outstanding { start: s, end: e, ts, ambiguous: false });
    }

    /// An ACK for `ack` from the peer at `ts`: every queued segment that
    /// ends at or before it leaves the queue; the one ending exactly at it
    /// gives a sample unless ambiguous. Returns that sample's value and the
    /// payload bytes the ACK newly covers (of the queued segments).
    #[inline(always)]
    fn acked(&mut self, ack: u32) -> (Option<i64>, u64) {
        let (mut exact, mut covered) = (None, 0u64);
        let mut take = |o: Outstanding| {
            covered += u64::from(o.end.wrapping_sub(o.start));
            if o.end == ack && !o.ambiguous {
                exact = Some(o.ts);
            }
        };
        // Segments are queued in send order, so the acked ones usually
        // lead the queue.
        while let Some(&o) = self.outstanding.front() {
            if seq_delta(o.end, ack) > 0 {
                break;
            }
            self.outstanding.pop_front();
            take(o);
        }
        // The front is not acked; with rising ends and the back not acked
        // either, none between is (see `ends_rising`). Otherwise any other
        // may be (a segment that filled a hole ends below later ones).
        let scan = match self.outstanding.back() {
            None => false,
            Some(b) => !(self.ends_rising && seq_delta(b.end, ack) > 0),
        };
        if scan {
            let mut i = 1;
            while i < self.outstanding.len() {
                let o = self.outstanding[i];
                if seq_delta(o.end, ack) <= 0 {
                    self.outstanding.remove(i);
                    take(o);
                } else {
                    i += 1;
                }
            }
        }
        (exact, covered)
    }

    /// The ACK at `ts` (`with_data`: on a segment with payload) that newly
    /// covered `covered` bytes, for a segment sent at `sent`: a sample,
    /// flagged per [`held_ack`] against the smaller of `handshake_ns` and
    /// the side's smallest sample.
    // Each argument is a packet field or a figure of it; no struct per sample.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn ack_sample(&mut self, sent: i64, ts: i64, covered: u64, with_data: bool, handshake_ns: Option<i64>, cap: usize) {
        let v = ts.saturating_sub(sent);
        let reference = match (handshake_ns, self.min_all) {
            (Some(h), Some(m)) => Some(h.min(m)),
            (h, m) => h.or(m),
        };
        let delayed_ack = held_ack(v, covered, self.full_size, with_data, reference);
        self.min_all = Some(self.min_all.map_or(v, |m| m.min(v)));
        if !delayed_ack {
            self.sample(v);
        }
        if self.samples.len() < cap {
            self.samples.push(RttSample { rtt_ns: v, delayed_ack });
        }
    }

    // Always inlined with `classify`: tracker thread 254.8 M -> 247.5 M
    // instructions (callgrind, tcpmix 300 k; 47ab2b9, analyzer step 16).
    #[inline(always)]
    fn sample(&mut self, v: i64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        }
        self.n += 1;
        self.sum += v as i128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// `scratch` is reused across connections (no allocation per call).
    fn stats(&self, scratch: &mut Vec<i64>) -> SampleStats {
        if self.n == 0 {
            return SampleStats::default();
        }
        // The sum fits an i64 in any real trace; converting from i64 gives
        // the same f64 (both casts round the same exact value) without
        // the i128 conversion routine, kept out of line so that it is not
        // run anyway and the result selected.
        #[cold]
        #[inline(never)]
        fn wide(sum: i128) -> f64 {
            sum as f64
        }
        let sum = match i64::try_from(self.sum) {
            Ok(s) => s as f64,
            Err(_) => wide(self.sum),
        };
        scratch.clear();
        scratch.extend(self.samples.iter().filter(|s| !s.delayed_ack).map(|s| s.rtt_ns));
        SampleStats {
            count: self.n,
            min_ns: self.min,
            // Of the kept samples: exact while every sample is kept.
            median_ns: lower_median(scratch),
            mean_ns: sum / self.n as f64,
            max_ns: self.max,
        }
    }
}

/// The element a sort of `v` would put at `(len - 1) / 2` (`v` is
/// reordered); 0 for none. Most sides have one to three samples: those are
/// read directly, the rest selected. Callgrind, tcpmix 300 k packets, with
/// the i64 sum and the 4N list reservation: tracker thread 231.1 M ->
/// 225.6 M instructions (86255d9; docs/performance-history.md, analyzer
/// step 23).
fn lower_median(v: &mut [i64]) -> i64 {
    match *v {
        [] => 0,
        [a] => a,
        [a, b] => a.min(b),
        [a, b, c] => a.min(b).max(a.max(b).min(c)),
        _ => {
            let mid = (v.len() - 1) / 2;
            *v.select_nth_unstable(mid).1
        }
    }
}

/// A train being built: sender slot, start, end, packets.
#[derive(Clone, Copy, Debug)]
struct Train {
    slot: usize,
    start: i64,
    end: i64,
    pkts: u32,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct TcpMetrics {
    side: [Side; 2],
    syn_slot: Option<usize>,
    t_syn: Option<i64>,
    t_synack: Option<i64>,
    synack_seq: u32,
    t_ack: Option<i64>,
    first_data: Option<i64>,
    last_data: i64,
    last_ctrl: Option<i64>,
    train: Option<Train>,
    /// End of the previous train (start of the next segment).
    seg_start: i64,
    pub fin_or_rst: bool,
}

impl TcpMetrics {
    /// Inlined into the tracker's per-packet path (its only caller; a
    /// plain `#[inline]` left it a call with seven arguments to spill).
    /// Callgrind, tcpmix 300 k packets, with `Addr`'s u128 order: tracker
    /// thread 276.4 M -> 266.9 M instructions (cbb7fe5;
    /// docs/performance-history.md, analyzer step 16).
    #[inline(always)]
    // Each argument is a packet field; the per-packet path builds no struct.
    #[allow(clippy::too_many_arguments)]
    pub fn packet(&mut self, slot: usize, flags: u8, seq: u32, ack: u32, payload: u32, ts: i64, cap: usize) {
        let (syn, fin, rst, ackf) =
            (flags & F::SYN != 0, flags & F::FIN != 0, flags & F::RST != 0, flags & F::ACK != 0);
        // Handshake RTT: the last SYN before the SYN/ACK (the one most
        // likely answered), the last SYN/ACK before the final ACK.
        // (After the handshake the common packet tests two flags here.)
        if syn {
            if !ackf && self.t_synack.is_none() {
                self.syn_slot = Some(slot);
                self.t_syn = Some(ts);
            } else if ackf && self.syn_slot == Some(slot ^ 1) && self.t_ack.is_none() {
                self.t_synack = Some(ts);
                self.synack_seq = seq;
            }
            if self.side[slot].snd_max.is_none() {
                // The stream starts after the SYN: data after a hole at the
                // start is then recognised as reordered, not retransmitted.
                self.side[slot].snd_max = Some(seq.wrapping_add(1));
            }
        } else if self.t_ack.is_none()
            && !rst
            && ackf
            && self.syn_slot == Some(slot)
            && self.t_synack.is_some()
            && ack == self.synack_seq.wrapping_add(1)
        {
            self.t_ack = Some(ts);
        }
        if fin || rst {
            self.fin_or_rst = true;
            self.last_ctrl = Some(ts);
        }

        // DATA-ACK: this packet's ACK covers the other side's segments.
        if ackf && !rst {
            let peer = &mut self.side[slot ^ 1];
            if let (Some(sent), covered) = peer.acked(ack) {
                let handshake = self.handshake_component(slot ^ 1);
                self.side[slot ^ 1].ack_sample(sent, ts, covered, payload > 0, handshake, cap);
            }
        }

        // A RST's payload is not stream data (Zeek's seg_len agrees).
        if payload == 0 || rst {
            return;
        }
        let s = if syn { seq.wrapping_add(1) } else { seq };
        let e = s.wrapping_add(payload);
        let me = &mut self.side[slot];
        me.data_pkts += 1;
        me.full_size = me.full_size.max(payload);
        let below_max = me.snd_max.is_some_and(|max| seq_delta(s, max) < 0);
        let resent = me.classify(s, e);
        if below_max {
            // A retransmission, or a segment filling a hole: every queued
            // segment it overlaps or precedes (sent earlier) gives no
            // sample (Karn; tcptrace's intervening transmissions).
            for o in me.outstanding.iter_mut() {
                if seq_delta(o.end, s) > 0 {
                    o.ambiguous = true;
                }
            }
        }
        if resent {
            me.retransmissions += 1;
        } else {
            // A FIN with the data takes the next sequence number: the ACK
            // of the segment then ends after it.
            me.sent(s, if fin { e.wrapping_add(1) } else { e }, ts);
        }

        // Trains (§9.2): consecutive data packets in one direction.
        if self.first_data.is_none() {
            self.first_data = Some(ts);
            self.seg_start = ts;
        }
        self.last_data = ts;
        match &mut self.train {
            Some(t) if t.slot == slot => {
                t.pkts += 1;
                t.end = ts;
            }
            _ => {
                let warmup = match self.train.take() {
                    Some(t) => {
                        self.close_train(t);
                        ts.saturating_sub(t.end)
                    }
                    None => 0,
                };
                let me = &mut self.side[slot];
                me.warmups.push(warmup);
                me.warmup = me.warmup.saturating_add(warmup);
                self.train = Some(Train { slot, start: ts, end: ts, pkts: 1 });
            }
        }
    }

    /// The state of a new connection ([`Default`]), keeping the
    /// allocations of the outstanding-segment queues.
    pub fn reuse(&mut self) {
        let queues = self.side.each_mut().map(|s| {
            let mut q = std::mem::take(&mut s.outstanding);
            q.clear();
            q
        });
        *self = TcpMetrics::default();
        for (s, q) in self.side.iter_mut().zip(queues) {
            s.outstanding = q;
        }
    }

    /// Train k owns segment [end(k-1), end(k)] (the first: from its start).
    fn close_train(&mut self, t: Train) {
        let side = &mut self.side[t.slot];
        side.train_sizes.push(t.pkts);
        side.actual = side.actual.saturating_add(t.end.saturating_sub(self.seg_start));
        self.seg_start = t.end;
        let _ = t.start;
    }

    /// The handshake's RTT component on the path of `slot`'s data (monitor
    /// to the receiver and back): SYN -> SYN/ACK for the SYN sender's data,
    /// SYN/ACK -> ACK for the other side's.
    #[inline(always)]
    fn handshake_component(&self, slot: usize) -> Option<i64> {
        let synack = self.t_synack?;
        if self.syn_slot == Some(slot) {
            self.t_syn.map(|s| synack.saturating_sub(s))
        } else {
            self.t_ack.map(|a| a.saturating_sub(synack))
        }
    }

    pub fn handshake_complete(&self, orig_slot: usize) -> bool {
        self.syn_slot == Some(orig_slot) && self.t_ack.is_some()
    }

    pub fn data_each_way(&self) -> bool {
        self.side[0].data_pkts > 0 && self.side[1].data_pkts > 0
    }

    /// Finishes the metrics with `orig_slot` as A (the initiator) into
    /// `rtt` (default on entry) and `transfer` (`None` on entry).
    pub fn finish(
        &mut self,
        orig_slot: usize,
        first_ts: i64,
        scratch: &mut Vec<i64>,
        rtt: &mut RttRecord,
        transfer: &mut Option<Decomposition>,
    ) {
        if let Some(t) = self.train.take() {
            self.close_train(t);
        }
        let (a, b) = (orig_slot, orig_slot ^ 1);
        let syn_synack = self.t_syn.zip(self.t_synack).map(|(s, sa)| sa.saturating_sub(s));
        let synack_ack = self.t_synack.zip(self.t_ack).map(|(sa, ac)| ac.saturating_sub(sa));
        rtt.syn_synack_ns = syn_synack;
        rtt.synack_ack_ns = synack_ack;
        rtt.handshake_ns = syn_synack.zip(synack_ack).map(|(x, y)| x.saturating_add(y));
        rtt.data_ack_orig = self.side[a].stats(scratch);
        rtt.data_ack_resp = self.side[b].stats(scratch);
        rtt.data_ack_orig_samples = std::mem::take(&mut self.side[a].samples);
        rtt.data_ack_resp_samples = std::mem::take(&mut self.side[b].samples);
        let Some(first_data) = self.first_data else {
            return;
        };
        let rtt_ab = rtt_a_b(rtt);
        let side = |s: &mut Side| {
            let distinct = s.data_pkts - s.retransmissions;
            let theory = theory_ns(distinct, rtt_ab);
            let pacing = s.actual.saturating_sub(s.warmup).saturating_sub(theory);
            SideTransfer {
                data_pkts: s.data_pkts,
                distinct_data_pkts: distinct,
                retransmissions: s.retransmissions,
                trains: s.train_sizes.len() as u32,
                train_sizes: std::mem::take(&mut s.train_sizes),
                warmups_ns: std::mem::take(&mut s.warmups),
                actual_ns: s.actual,
                warmup_ns: s.warmup,
                theory_ns: theory,
                pacing_ns: pacing,
                pacing_per_pkt_ns: if s.data_pkts == 0 { 0.0 } else { pacing as f64 / s.data_pkts as f64 },
            }
        };
        let orig = side(&mut self.side[a]);
        let resp = side(&mut self.side[b]);
        *transfer = Some(Decomposition {
            setup_ns: first_data.saturating_sub(first_ts),
            transfer_ns: self.last_data.saturating_sub(first_data),
            teardown_ns: self.last_ctrl.map_or(0, |t| t.saturating_sub(self.last_data).max(0)),
            orig,
            resp,
        });
    }
}

/// RTT_A-B (⚠AMB-31): sum of the mean DATA-ACK RTTs of both sides (monitor
/// to B from A's data, monitor to A from B's data); if either side has no
/// sample, the handshake RTT; if neither, 0 (theoretical time then 0).
pub fn rtt_a_b(r: &RttRecord) -> i64 {
    if r.data_ack_orig.count > 0 && r.data_ack_resp.count > 0 {
        (r.data_ack_orig.mean_ns + r.data_ack_resp.mean_ns).round() as i64
    } else {
        r.handshake_ns.unwrap_or(0)
    }
}

/// Eq. 5.10 of the thesis (slow start with delayed ACKs):
/// w_n = floor(2^((n-1)/2) + 2^((n-2)/2)), computed exactly with integer
/// square roots: 1, 2, 3, 4, 6, 9, 13, 19, 27, 38, 54, ...
pub const fn flight(n: u32) -> u128 {
    debug_assert!(n >= 1);
    let n = if n > 120 { 120 } else { n }; // beyond any u64 packet count
    if n % 2 == 1 {
        // n = 2k+1: 2^k + floor(sqrt(2^(2k-1))) (the 2^(-1/2) term is < 1 for k = 0)
        let k = (n - 1) / 2;
        let root = if k == 0 { 0 } else { (1u128 << (2 * k - 1)).isqrt() };
        (1u128 << k) + root
    } else {
        // n = 2k: floor(sqrt(2^(2k-1))) + 2^(k-1)
        let k = n / 2;
        (1u128 << (2 * k - 1)).isqrt() + (1u128 << (k - 1))
    }
}

/// T_theory = (r - 1) * RTT (⚠AMB-30, the spec's recommendation), r the
/// smallest number of flights of Eq. 5.10 (uncapped, initial window 1)
/// carrying `n` packets; 0 for n = 0.
pub fn theory_ns(n: u64, rtt_ns: i64) -> i64 {
    if n == 0 {
        return 0;
    }
    // FLIGHTS_SENT[r] = packets carried by the first r flights; flights
    // past the 120th all equal flight(120) (see `flight`).
    let n = n as u128;
    let r = match FLIGHTS_SENT.iter().position(|&sent| sent >= n) {
        Some(r) => r as u128,
        None => {
            let last = FLIGHTS_SENT.len() as u128 - 1;
            last + (n - FLIGHTS_SENT[last as usize]).div_ceil(flight(120))
        }
    };
    (r as i64 - 1).saturating_mul(rtt_ns)
}

/// Cumulative packets of the first r flights of Eq. 5.10, r = 0..=120,
/// computed once at compile time (an integer square root per flight cost
/// more than the rest of a connection's metrics).
const FLIGHTS_SENT: [u128; 121] = {
    let mut t = [0u128; 121];
    let mut r = 1;
    while r <= 120 {
        t[r] = t[r - 1] + flight(r as u32);
        r += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A reused state is a new connection's state (only the queues'
    /// allocations are kept), whatever the old connection went through.
    #[test]
    fn reuse_gives_the_default_state() {
        let mut m = TcpMetrics::default();
        let mut x: u64 = 5;
        // The end of each side's last segment: ACKed exactly at times.
        let mut ends = [0u32; 2];
        for i in 0..2000i64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let slot = (x >> 40) as usize & 1;
            let flags = [F::SYN, F::SYN | F::ACK, F::ACK, F::ACK | F::PSH, F::FIN | F::ACK][(x >> 50) as usize % 5];
            let seq = (i as u32).wrapping_mul(700).wrapping_sub((x >> 20) as u32 % 3000);
            let ack = if (x >> 45).is_multiple_of(2) { ends[slot ^ 1] } else { (i as u32).wrapping_mul(650) };
            let len = (x >> 30) as u32 % 1400;
            m.packet(slot, flags, seq, ack, len, i * 1000, 64);
            ends[slot] = seq.wrapping_add(len);
        }
        assert!(m.side.iter().any(|s| s.outstanding.capacity() > 0 && s.n > 0 && s.min_all.is_some()));
        let kept = m.side.each_ref().map(|s| s.outstanding.capacity());
        m.reuse();
        assert_eq!(format!("{m:?}"), format!("{:?}", TcpMetrics::default()));
        assert_eq!(m.side.each_ref().map(|s| s.outstanding.capacity()), kept);
    }

    /// DATA-ACK matching equals its definition (every queued segment that
    /// an ACK covers leaves the queue in order; the one ending exactly at
    /// the ACK gives its send time unless ambiguous; the covered payload is
    /// summed), taken on a plain vector with a full scan per ACK:
    /// segments in order, reordered, retransmitted and far off (±2^31
    /// jumps, wrap-around), ACKs behind, ahead and wild; the skipped scan
    /// is taken for most ACKs.
    #[test]
    fn data_ack_matching_equals_a_full_scan() {
        let mut x: u64 = 3;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 16
        };
        let (mut skipped, mut acks, mut samples) = (0, 0, 0);
        for round in 0..200u32 {
            let mut side = Side::default();
            let mut reference: Vec<Outstanding> = Vec::new();
            let mut seq = round.wrapping_mul(0x9e37_79b9);
            for ts in 0..600i64 {
                let r = next();
                if r % 2 != 0 {
                    let len = 1 + (r >> 8) as u32 % 1460;
                    let s = match (r >> 20) % 64 {
                        0 => seq.wrapping_sub((r >> 24) as u32 % 20_000), // back (reordered/resent)
                        1 => seq.wrapping_add(1 << 31),                   // far off
                        3 => seq.wrapping_add(3 << 29),                   // far, still after
                        2 => seq.wrapping_add((r >> 24) as u32 % 5_000),  // ahead, a hole
                        _ => seq,
                    };
                    if seq_delta(s.wrapping_add(len), seq) > 0 {
                        seq = s.wrapping_add(len);
                    }
                    let o = Outstanding { start: s, end: s.wrapping_add(len), ts, ambiguous: (r >> 40) % 7 == 0 };
                    side.sent(o.start, o.end, ts);
                    side.outstanding.back_mut().unwrap().ambiguous = o.ambiguous;
                    if reference.len() == MAX_OUTSTANDING {
                        reference.remove(0);
                    }
                    reference.push(o);
                } else {
                    let ack = match (r >> 20) % 32 {
                        0 => (r >> 24) as u32,                                                                  // wild
                        1 => seq.wrapping_sub((r >> 24) as u32 % 30_000), // behind
                        2 => seq.wrapping_add(1 << 31).wrapping_sub((r >> 30) as u32 % 3), // half-way round
                        3..=15 if !reference.is_empty() => reference[(r >> 30) as usize % reference.len()].end, // exact
                        _ => seq.wrapping_sub((r >> 24) as u32 % 3_000),
                    };
                    let scan =
                        !(side.ends_rising && side.outstanding.back().is_some_and(|b| seq_delta(b.end, ack) > 0));
                    let got = side.acked(ack);
                    let (mut exact, mut bytes) = (None, 0u64);
                    reference.retain(|o| {
                        let covered = seq_delta(o.end, ack) <= 0;
                        if covered {
                            bytes += u64::from(o.end.wrapping_sub(o.start));
                            if o.end == ack && !o.ambiguous {
                                exact = Some(o.ts);
                            }
                        }
                        !covered
                    });
                    assert_eq!(got, (exact, bytes), "round {round} ts {ts}");
                    samples += usize::from(exact.is_some());
                    acks += 1;
                    skipped += usize::from(!scan);
                }
                let left: Vec<_> = side.outstanding.iter().map(|o| (o.start, o.end, o.ts, o.ambiguous)).collect();
                let want: Vec<_> = reference.iter().map(|o| (o.start, o.end, o.ts, o.ambiguous)).collect();
                assert_eq!(left, want, "round {round} ts {ts}");
            }
        }
        assert!(skipped * 3 > acks, "scan skipped for {skipped} of {acks} ACKs");
        assert!(samples * 4 > acks, "{samples} exact matches of {acks} ACKs");
    }

    /// The median read directly (up to three samples) or selected is the
    /// sorted slice's element at (len - 1) / 2, for every order of small
    /// lists with ties and for longer random ones.
    #[test]
    fn lower_median_is_the_sorted_middle() {
        let mut x: u64 = 11;
        for len in 1..=12usize {
            for _ in 0..3000 {
                let v: Vec<i64> = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        (x >> 60) as i64 - 8 // few values: ties are common
                    })
                    .collect();
                let mut sorted = v.clone();
                sorted.sort();
                let mut v = v;
                assert_eq!(lower_median(&mut v), sorted[(len - 1) / 2], "{v:?}");
            }
        }
        assert_eq!(lower_median(&mut []), 0);
    }

    /// The table gives what summing the flights one by one gives (the
    /// definition), below, at and beyond the table's 120 flights.
    #[test]
    fn theory_ns_matches_the_flight_sum() {
        let by_sum = |n: u64, rtt: i64| {
            if n == 0 {
                return 0;
            }
            let (mut sent, mut r) = (0u128, 0u32);
            while sent < n as u128 {
                r += 1;
                sent += flight(r);
            }
            (r as i64 - 1) * rtt
        };
        let mut ns: Vec<u64> = (0..5000).collect();
        for &s in &FLIGHTS_SENT[1..121] {
            let s = s as u64;
            ns.extend([s.saturating_sub(1), s, s.saturating_add(1)]);
        }
        ns.extend([u64::MAX, u64::MAX - 1, 1 << 63]);
        for n in ns {
            assert_eq!(theory_ns(n, 7), by_sum(n, 7), "n = {n}");
        }
        assert_eq!(FLIGHTS_SENT[..6], [0, 1, 3, 6, 10, 16]);
    }
}
