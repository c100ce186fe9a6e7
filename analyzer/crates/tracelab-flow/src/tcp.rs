//! Zeek's TCP connection model, ported statement by statement from
//! `TCPSessionAdapter.cc`, `TCP_Endpoint.{h,cc}` and the gap accounting of
//! `TCP_Reassembler.cc`/`Reassem.cc` (zeek/zeek a13de64f). Function names
//! follow Zeek's so the two can be read side by side.
//!
//! Endpoints live in *slots*: slot 0 sent the connection's first packet.
//! Zeek swaps its `orig`/`resp` pointers when it flips roles; we keep the
//! slots and move `Common::orig_slot` instead, so per-endpoint counters never
//! need swapping.
//!
//! The per-packet helpers are `#[inline]`: each has one caller, and calls
//! with ten arguments cost a measurable share of the packet's work.
//!
//! Not reproduced (see `docs/zeek-differences.md`): checksum validation
//! ('C'/'c'), the 'I'/'Q' storms and weirds, window-recision weirds,
//! `tcp_excessive_data_without_further_acks`, deferred closes while the
//! reassembler still holds data, and timers whose Zeek event has no handler
//! in the base scripts (partial-close, reset).

use tracelab_decode::tcp_flags as F;

use crate::common::Common;
use crate::TrackerConfig;

const TOO_LARGE_SEQ_DELTA: i32 = 1_048_576;
/// Gap bookkeeping keeps at most this many out-of-order blocks per
/// endpoint; beyond it the oldest-above-hole block is merged (bounded
/// memory on hostile traces).
const MAX_BLOCKS: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EpState {
    Inactive,
    SynSent,
    SynAckSent,
    Partial,
    Established,
    Closed,
    Reset,
}

fn is_handshake(s: EpState) -> bool {
    matches!(s, EpState::Inactive | EpState::SynSent | EpState::SynAckSent)
}

// TCP_Endpoint::HistoryMasks
const HIST_SYN_PKT: u32 = 0x1;
const HIST_FIN_PKT: u32 = 0x2;
const HIST_RST_PKT: u32 = 0x4;
const HIST_FIN_RST_PKT: u32 = 0x8;
const HIST_DATA_PKT: u32 = 0x10;
const HIST_ACK_PKT: u32 = 0x20;
const HIST_MULTI_FLAG_PKT: u32 = 0x40;

/// A timer that is not armed (Zeek's timers lie far below it).
const UNARMED: i64 = i64::MAX;

fn seq_delta(a: u32, b: u32) -> i32 {
    a.wrapping_sub(b) as i32
}

fn seq_between(a: u32, low: u32, high: u32) -> bool {
    seq_delta(a, low) >= 0 && seq_delta(a, high) <= 0
}

#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    pub state: EpState,
    pub prev_state: EpState,
    start_seq: i64,
    last_seq: u32,
    ack_seq: u32,
    seq_wraps: u32,
    ack_wraps: u32,
    pub fin_cnt: u32,
    fin_seq: u64,
    pub did_close: bool,
    rxmt_cnt: u32,
    rxmt_thresh: u32,
    win0_cnt: u32,
    win0_thresh: u32,
    gap_cnt: u32,
    gap_thresh: u32,
    hist_last_syn: u64,
    hist_last_fin: u64,
    hist_last_rst: u64,
    // Reassembler state (relative sequence space): what was delivered
    // in order, what was trimmed by ACKs, and undelivered blocks above a
    // hole, sorted and disjoint.
    last_reassem: u64,
    trim_seq: u64,
    blocks: Vec<(u64, u64)>,
    skip_deliveries: bool,
}

impl Endpoint {
    fn new() -> Endpoint {
        Endpoint {
            state: EpState::Inactive,
            prev_state: EpState::Inactive,
            start_seq: 0,
            last_seq: 0,
            ack_seq: 0,
            seq_wraps: 0,
            ack_wraps: 0,
            fin_cnt: 0,
            fin_seq: 0,
            did_close: false,
            rxmt_cnt: 0,
            rxmt_thresh: 1,
            win0_cnt: 0,
            win0_thresh: 1,
            gap_cnt: 0,
            gap_thresh: 1,
            hist_last_syn: 0,
            hist_last_fin: 0,
            hist_last_rst: 0,
            last_reassem: 1,
            trim_seq: 1,
            blocks: Vec::new(),
            skip_deliveries: false,
        }
    }

    fn full(seq: u32, wraps: u32) -> u64 {
        ((wraps as u64) << 32) + seq as u64
    }

    fn to_relative(&self, seq: u32, wraps: u32) -> u64 {
        Self::full(seq, wraps).wrapping_sub(self.start_seq as u64)
    }

    fn init_seqs(&mut self, start: u32, ack: u32, last: u32) {
        self.start_seq = start as i64;
        self.ack_seq = ack;
        self.last_seq = last;
    }

    fn update_last_seq_raw(&mut self, seq: u32) {
        if seq < self.last_seq {
            self.seq_wraps += 1;
        }
        self.last_seq = seq;
    }

    fn update_ack_seq_raw(&mut self, seq: u32) {
        if seq < self.ack_seq {
            self.ack_wraps += 1;
        }
        self.ack_seq = seq;
    }

    fn no_data_acked(&self) -> bool {
        let ack = Self::full(self.ack_seq, self.ack_wraps);
        let start = self.start_seq as u64;
        ack == start || ack == start + 1
    }

    /// Payload bytes from sequence numbers (TCP_Endpoint::Size).
    fn size(&self, peer_state: EpState) -> u64 {
        if self.prev_state == EpState::SynSent
            && self.state == EpState::Reset
            && peer_state == EpState::Inactive
            && !self.no_data_acked()
        {
            return 0;
        }
        let last = Self::full(self.last_seq, self.seq_wraps);
        let ack = Self::full(self.ack_seq, self.ack_wraps);
        let top = if last > ack { last } else { ack };
        let mut size = top.wrapping_sub(self.start_seq as u64).saturating_sub(1);
        if self.fin_cnt > 0 && size != 0 {
            size -= 1; // don't include the FIN octet
        }
        size
    }
}

/// Per-connection TCP state.
#[derive(Clone, Debug)]
pub(crate) struct Tcp {
    pub ep: [Endpoint; 2],
    is_active: bool,
    is_partial: bool,
    first_packet_seen: [bool; 2],
    /// Zeek's analyzer timers (absolute ns; [`UNARMED`] = not armed).
    /// Plain integers rather than `Option`s: their minimum is taken after
    /// every packet, and `i64::MAX` is already what "no timer" means there.
    /// Callgrind, tcpmix 300 k packets: -17 instructions per packet
    /// (6a46b6d; docs/performance-history.md, analyzer step 26).
    attempt_at: i64,
    expire: [i64; 3],
    delete_at: i64,
    /// Their minimum ([`Tcp::earliest`]), asked after every packet and
    /// changed on few: stored again wherever a timer is written. Callgrind,
    /// tcpmix 300 k packets: -13 instructions per packet (0a7561b;
    /// docs/performance-history.md, analyzer step 28).
    next: i64,
}

/// What the tracker needs back from one packet.
pub(crate) struct TcpOutcome {
    /// The responder's SYN/ACK established the connection this packet
    /// (Zeek's `connection_established` event).
    pub established: bool,
}

impl Tcp {
    pub fn new(start_ns: i64, cfg: &TrackerConfig) -> Tcp {
        Tcp {
            ep: [Endpoint::new(), Endpoint::new()],
            is_active: true,
            is_partial: false,
            first_packet_seen: [false; 2],
            attempt_at: UNARMED,
            // The constructor arms ExpireTimer at tcp_SYN_timeout.
            expire: [start_ns.saturating_add(cfg.tcp_syn_timeout_ns), UNARMED, UNARMED],
            delete_at: UNARMED,
            next: start_ns.saturating_add(cfg.tcp_syn_timeout_ns),
        }
    }

    pub fn size(&self, c: &Common, orig: bool) -> u64 {
        let slot = if orig { c.orig_slot } else { c.orig_slot ^ 1 };
        self.ep[slot].size(self.ep[slot ^ 1].state)
    }

    /// The earliest armed analyzer timer ([`UNARMED`]: none). Asked after
    /// every packet: one load (was five loads and four minimums).
    #[inline]
    pub fn next_timer(&self) -> i64 {
        self.next
    }

    /// The definition of [`Tcp::next_timer`].
    fn earliest(&self) -> i64 {
        let [e0, e1, e2] = self.expire;
        self.attempt_at.min(self.delete_at).min(e0).min(e1).min(e2)
    }

    /// Runs the analyzer timers due at or before `now` in time order (Zeek
    /// expires timers before dispatching the packet that advanced network
    /// time). Returns true when a timer removed the connection.
    pub fn run_timers(&mut self, c: &Common, now: i64, cfg: &TrackerConfig) -> bool {
        loop {
            // Every timer written below is followed by this line or by a
            // removal of the connection.
            self.next = self.earliest();
            let t = self.next;
            if t == UNARMED || t > now {
                return false;
            }
            if self.delete_at == t {
                return true; // DeleteTimer / ConnDeleteTimer
            }
            if self.attempt_at == t {
                self.attempt_at = UNARMED;
                let (o, r) = (self.ep[c.orig_slot].state, self.ep[c.orig_slot ^ 1].state);
                if self.is_active && matches!(o, EpState::SynSent | EpState::SynAckSent) && r == EpState::Inactive {
                    return true; // AttemptTimer: connection_attempt
                }
                continue;
            }
            let i = self.expire.iter().position(|&e| e == t).expect("timer t is armed");
            self.expire[i] = UNARMED;
            if self.expire_timer(c, t, cfg) {
                return true;
            }
            if self.is_active {
                self.expire[i] = t.saturating_add(cfg.tcp_session_timer_ns);
            }
        }
    }

    /// TCPSessionAdapter::ExpireTimer; true = remove the connection.
    fn expire_timer(&self, c: &Common, t: i64, cfg: &TrackerConfig) -> bool {
        if !self.is_active {
            return false;
        }
        let (o, r) = (&self.ep[c.orig_slot], &self.ep[c.orig_slot ^ 1]);
        if c.last_ns.saturating_add(cfg.tcp_connection_linger_ns) < t {
            if (o.did_close || r.did_close)
                && ((o.did_close && r.did_close)
                    || o.state == EpState::Reset
                    || r.state == EpState::Reset
                    || o.state == EpState::Inactive
                    || r.state == EpState::Inactive)
            {
                return true;
            }
            if r.state == EpState::Inactive && o.state == EpState::Inactive {
                return true;
            }
        }
        false
    }

    fn cancel_timers(&mut self) {
        self.attempt_at = UNARMED;
        self.expire = [UNARMED; 3];
        self.delete_at = UNARMED;
    }

    fn add_expire(&mut self, t: i64) {
        if let Some(slot) = self.expire.iter_mut().find(|e| **e == UNARMED) {
            *slot = t;
        } else {
            // Zeek can hold more chains; all test the same condition, so
            // keeping the earliest three changes nothing observable.
            let latest = self.expire.iter_mut().max().expect("three chains");
            if t < *latest {
                *latest = t;
            }
        }
    }

    fn set_state(&mut self, c: &mut Common, slot: usize, new: EpState, cfg: &TrackerConfig) {
        let peer_state = self.ep[slot ^ 1].state;
        let ep = &mut self.ep[slot];
        if new != ep.state {
            if !is_handshake(new) && is_handshake(ep.state) && is_handshake(peer_state) {
                c.set_inactivity(cfg.tcp_inactivity_timeout_ns);
            }
            ep.prev_state = ep.state;
            ep.state = new;
        }
    }

    /// Conn::FlipRoles + TCPSessionAdapter::FlipRoles.
    fn flip_roles(&mut self, c: &mut Common) {
        c.flip();
        self.is_partial = false;
    }

    fn set_first_packet_seen(&mut self, c: &Common, is_orig: bool) {
        let slot = if is_orig { c.orig_slot } else { c.orig_slot ^ 1 };
        self.first_packet_seen[slot] = true;
    }

    /// TCP_Endpoint::CheckHistory, including the "H then A/D" flip.
    #[inline]
    fn check_history(&mut self, c: &mut Common, slot: usize, mask: u32, code: char) -> bool {
        if (code == 'A' || code == 'D') && c.history == "H" {
            self.flip_roles(c);
            c.history.clear();
            c.history.push_str("^h");
            self.set_first_packet_seen(c, true);
        }
        if slot == c.orig_slot {
            c.check_history(mask, code)
        } else {
            c.check_history(mask << 16, code.to_ascii_lowercase())
        }
    }

    fn add_history(&self, c: &mut Common, slot: usize, code: char) {
        c.history.push(if slot == c.orig_slot { code } else { code.to_ascii_lowercase() });
    }

    fn scaled(c: &mut Common, code: char, counter: &mut u32, thresh: &mut u32) {
        *counter += 1;
        if *counter == *thresh {
            c.history.push(code);
            match thresh.checked_mul(10) {
                Some(n) => *thresh = n,
                None => *counter = 0,
            }
        }
    }

    fn did_rxmit(&mut self, c: &mut Common, slot: usize) {
        let code = if slot == c.orig_slot { 'T' } else { 't' };
        let ep = &mut self.ep[slot];
        Self::scaled(c, code, &mut ep.rxmt_cnt, &mut ep.rxmt_thresh);
    }

    fn zero_window(&mut self, c: &mut Common, slot: usize) {
        let code = if slot == c.orig_slot { 'W' } else { 'w' };
        let ep = &mut self.ep[slot];
        Self::scaled(c, code, &mut ep.win0_cnt, &mut ep.win0_thresh);
    }

    /// Whether [`Tcp::process_established`] gives exactly what
    /// the general steps of [`Tcp::process`] would: flags ACK or ACK|PSH, both endpoints
    /// Established and neither closed, the sender seen before, and a
    /// non-zero window.
    #[inline]
    fn is_plain_established(&self, slot: usize, flags: u8, window: u16) -> bool {
        let (ep, peer) = (&self.ep[slot], &self.ep[slot ^ 1]);
        flags & !F::PSH == F::ACK
            && window != 0
            && self.first_packet_seen[slot]
            && ep.state == EpState::Established
            && peer.state == EpState::Established
            && !ep.did_close
            && !peer.did_close
    }

    /// The general path's steps that change something for a packet that
    /// [`Tcp::is_plain_established`] admits, in the same order. The steps
    /// left out are no-ops for it: set_partial_status (sender already
    /// seen), init_endpoint (Established, no SYN), the zero-window test
    /// (window non-zero), FIN bookkeeping, update_state_machine (its
    /// Established arm acts on SYN/FIN/RST only) and connection_closed
    /// (never asked). Of update_history only the 'D' (data) or 'A' letter
    /// is left, asked only while its bit is unset: once per role and
    /// letter (the packets that first carry them, ~12 % of the TCP
    /// packets of the 300 k-packet tcpmix trace, take this path too).
    /// The test `fast_path_equals_general_path` checks the claim.
    // Each argument is a packet field or flag; the per-packet path builds no struct.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn process_established(
        &mut self,
        c: &mut Common,
        slot: usize,
        base_seq: u32,
        ack_seq: u32,
        len: u32,
        captured_all: bool,
        ts: i64,
    ) {
        let peer = slot ^ 1;
        let ep = &self.ep[slot];
        let (rel_seq, seq_underflow) = get_relative_seq(ep, base_seq, ep.last_seq, ep.seq_wraps);
        // update_history: the packet's letter, new once per role.
        let (mask, code) = if len > 0 { (HIST_DATA_PKT, 'D') } else { (HIST_ACK_PKT, 'A') };
        let role_mask = if slot == c.orig_slot { mask } else { mask << 16 };
        if c.hist_seen & role_mask == 0 {
            self.check_history(c, slot, mask, code);
        }
        c.last_ns = ts;
        let rel_ack = self.ack_seen(peer, ack_seq, false);
        self.update_last_seq(c, slot, base_seq.wrapping_add(len), false, false, false, len);
        self.ack_received(c, peer, rel_ack);
        if len > 0 && !seq_underflow && captured_all {
            self.data_sent(slot, rel_seq, len as u64);
        }
    }

    /// TCPSessionAdapter::Process for one packet from `slot`. With
    /// `FAST_PATH` (the tracker's call) the common established packet goes
    /// through [`Tcp::process_established`]; without it every packet takes
    /// the general steps below, the one definition, which
    /// `fast_path_equals_general_path` holds the fast path to.
    // Each argument is a packet field or flag; the per-packet path builds no struct.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn process<const FAST_PATH: bool>(
        &mut self,
        c: &mut Common,
        slot: usize,
        flags: u8,
        base_seq: u32,
        ack_seq: u32,
        window: u16,
        len: u32,
        captured_all: bool,
        ts: i64,
        cfg: &TrackerConfig,
    ) -> TcpOutcome {
        if FAST_PATH && self.is_plain_established(slot, flags, window) {
            self.process_established(c, slot, base_seq, ack_seq, len, captured_all, ts);
            return TcpOutcome { established: false };
        }
        let (syn, fin, rst, ack) = (flags & F::SYN != 0, flags & F::FIN != 0, flags & F::RST != 0, flags & F::ACK != 0);
        let peer = slot ^ 1;
        let len_i = len as i64;

        self.set_partial_status(c, slot, syn, ack);

        // get_segment_len
        let mut seg_len = len_i + syn as i64 + fin as i64;
        if rst {
            seg_len -= len_i;
        }
        let seq_one_past = base_seq.wrapping_add(seg_len as u32);

        self.init_endpoint(slot, syn, base_seq, seq_one_past);

        let ep = &self.ep[slot];
        let (rel_seq, seq_underflow) = get_relative_seq(ep, base_seq, ep.last_seq, ep.seq_wraps);

        self.update_history(c, slot, syn, fin, rst, ack, rel_seq, len as u64);

        // update_window: only the zero-window test matters to conn.log.
        if window == 0 && !rst && self.ep[peer].state != EpState::Closed && self.ep[slot].state != EpState::Reset {
            self.zero_window(c, slot);
        }

        if !self.ep[c.orig_slot].did_close || !self.ep[c.orig_slot ^ 1].did_close {
            c.last_ns = ts;
        }

        if fin {
            let ep = &mut self.ep[slot];
            ep.fin_cnt += 1;
            ep.fin_seq = rel_seq.wrapping_add(seg_len as u64);
        }

        let rel_ack = if ack { self.ack_seen(peer, ack_seq, rst) } else { 0 };

        let delta_last = self.update_last_seq(c, slot, seq_one_past, syn, fin, rst, len);

        let (do_close, gen_event, established) =
            self.update_state_machine(c, slot, base_seq, ack_seq, len, delta_last, syn, fin, rst, ack, ts, cfg);

        if ack {
            self.ack_received(c, peer, rel_ack);
        }

        let rel_data_seq = if syn { rel_seq.wrapping_add(1) } else { rel_seq };
        if len > 0 && !rst && !seq_underflow && captured_all {
            // A snaplen-cut payload never reaches Zeek's reassembler
            // ("truncated_tcp_payload"); a later ACK then reveals a gap.
            self.data_sent(slot, rel_data_seq, len as u64);
        }

        if do_close {
            self.connection_closed(c, slot, gen_event, cfg);
        }
        TcpOutcome { established }
    }

    /// An ACK for the endpoint in `peer`: its relative ack (0 on
    /// underflow), initialising the peer when it was inactive and moving
    /// its ack_seq forward (not on a RST: acks in RSTs are not trusted).
    #[inline]
    fn ack_seen(&mut self, peer: usize, ack_seq: u32, rst: bool) -> u64 {
        if self.ep[peer].state == EpState::Inactive {
            // init_peer
            let a = ack_seq.wrapping_sub(1);
            self.ep[peer].init_seqs(a, a, a);
            return 1;
        }
        let p = &self.ep[peer];
        let (rel_ack, underflow) = get_relative_seq(p, ack_seq, p.ack_seq, p.ack_wraps);
        if underflow {
            return 0;
        }
        if !rst {
            // update_ack_seq
            let p = &mut self.ep[peer];
            let d = seq_delta(ack_seq, p.ack_seq);
            if !(ack_seq == 0 && d > TOO_LARGE_SEQ_DELTA) && d > 0 {
                p.update_ack_seq_raw(ack_seq);
            }
        }
        rel_ack
    }

    #[inline]
    fn set_partial_status(&mut self, c: &Common, slot: usize, syn: bool, ack: bool) {
        if slot == c.orig_slot {
            if !self.first_packet_seen[slot] {
                self.is_partial = !syn || ack;
            }
        } else if !self.first_packet_seen[slot] && !self.is_partial {
            self.is_partial = !syn;
        }
        // CheckPIA_FirstPacket marks the sender seen once it is processed;
        // nothing between here and there reads it for this slot.
        self.first_packet_seen[slot] = true;
    }

    #[inline]
    fn init_endpoint(&mut self, slot: usize, syn: bool, first_seg_seq: u32, last_seq: u32) {
        let ep = &mut self.ep[slot];
        match ep.state {
            EpState::Inactive => {
                if syn {
                    ep.init_seqs(first_seg_seq, first_seg_seq, last_seq);
                } else {
                    // Partial connection: number as though a SYN was seen,
                    // and don't mark the first packet a duplicate.
                    let s = first_seg_seq.wrapping_sub(1);
                    ep.init_seqs(s, s, first_seg_seq);
                }
            }
            EpState::SynSent | EpState::SynAckSent => {
                if syn && first_seg_seq != ep.start_seq as u32 {
                    ep.init_seqs(first_seg_seq, first_seg_seq, last_seq);
                }
            }
            EpState::Established | EpState::Partial => {
                if syn {
                    ep.init_seqs(first_seg_seq, first_seg_seq, last_seq);
                }
            }
            EpState::Reset => {
                if syn && ep.prev_state == EpState::Inactive {
                    ep.init_seqs(first_seg_seq, first_seg_seq, last_seq);
                }
            }
            EpState::Closed => {}
        }
    }

    // Each argument is a packet field or flag; the per-packet path builds no struct.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn update_history(
        &mut self,
        c: &mut Common,
        slot: usize,
        syn: bool,
        fin: bool,
        rst: bool,
        ack: bool,
        rel_seq: u64,
        len: u64,
    ) {
        let bits = syn as u8 + fin as u8 + rst as u8;
        if bits > 1 {
            if fin && rst {
                self.check_history(c, slot, HIST_FIN_RST_PKT, 'I');
            } else {
                self.check_history(c, slot, HIST_MULTI_FLAG_PKT, 'Q');
            }
        } else if bits == 1 {
            if syn {
                let code = if ack { 'H' } else { 'S' };
                if self.check_history(c, slot, HIST_SYN_PKT, code) && rel_seq != self.ep[slot].hist_last_syn {
                    self.add_history(c, slot, code);
                }
                self.ep[slot].hist_last_syn = rel_seq;
            }
            if fin {
                // A FIN's sequence number sits after the data it carries.
                let fin_at = rel_seq.wrapping_add(len);
                if self.check_history(c, slot, HIST_FIN_PKT, 'F') && fin_at != self.ep[slot].hist_last_fin {
                    self.add_history(c, slot, 'F');
                }
                self.ep[slot].hist_last_fin = fin_at;
            }
            if rst {
                if self.check_history(c, slot, HIST_RST_PKT, 'R') && rel_seq != self.ep[slot].hist_last_rst {
                    self.add_history(c, slot, 'R');
                }
                self.ep[slot].hist_last_rst = rel_seq;
            }
        } else if len > 0 {
            self.check_history(c, slot, HIST_DATA_PKT, 'D');
        } else if ack {
            self.check_history(c, slot, HIST_ACK_PKT, 'A');
        }
    }

    // Each argument is a packet field or flag; the per-packet path builds no struct.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn update_last_seq(
        &mut self,
        c: &mut Common,
        slot: usize,
        last_seq: u32,
        syn: bool,
        fin: bool,
        rst: bool,
        len: u32,
    ) -> i32 {
        let ep = &mut self.ep[slot];
        let delta_last = seq_delta(last_seq, ep.last_seq);
        if (syn || rst) && !(-TOO_LARGE_SEQ_DELTA..=TOO_LARGE_SEQ_DELTA).contains(&delta_last) {
            // Outlandish SYN/RST sequence numbers are not trusted.
        } else if fin && ep.last_seq == (ep.start_seq as u32).wrapping_add(1) {
            // > 2 GB connections where only SYN and FIN were seen.
            ep.update_last_seq_raw(last_seq);
        } else if ep.state == EpState::Reset {
            // Don't trust sequence numbers after a RST.
        } else if delta_last > 0 {
            ep.update_last_seq_raw(last_seq);
        } else if len > 0 {
            self.did_rxmit(c, slot);
        }
        delta_last
    }

    /// A FIN where it simply ends the endpoint (Established, SynSent,
    /// SynAckSent): the endpoint is Closed and the connection closes with
    /// its event. Returns (do_close, gen_event) for update_state_machine.
    fn close_on_fin(&mut self, c: &mut Common, slot: usize, cfg: &TrackerConfig) -> (bool, bool) {
        self.set_state(c, slot, EpState::Closed, cfg);
        (true, true)
    }

    // Each argument is a packet field or flag; the per-packet path builds no struct.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn update_state_machine(
        &mut self,
        c: &mut Common,
        slot: usize,
        base_seq: u32,
        ack_seq: u32,
        len: u32,
        delta_last: i32,
        syn: bool,
        fin: bool,
        rst: bool,
        ack: bool,
        ts: i64,
        cfg: &TrackerConfig,
    ) -> (bool, bool, bool) {
        let mut do_close = false;
        let mut gen_event = false;
        let mut established = false;
        let peer = slot ^ 1;
        let is_orig = slot == c.orig_slot;
        match self.ep[slot].state {
            EpState::Inactive => {
                if syn {
                    if is_orig {
                        let s = if ack { EpState::SynAckSent } else { EpState::SynSent };
                        self.set_state(c, slot, s, cfg);
                        if cfg.tcp_attempt_delay_ns != 0 {
                            self.attempt_at = ts.saturating_add(cfg.tcp_attempt_delay_ns);
                            self.next = self.earliest();
                        }
                    } else {
                        if ack {
                            // bad_SYN_ack weird only.
                            let _ = seq_between(ack_seq, self.ep[peer].start_seq as u32, self.ep[peer].last_seq);
                        } else if self.ep[peer].state == EpState::SynAckSent
                            && base_seq == self.ep[slot].start_seq as u32
                        {
                            // SYN/SYN-ACK reversal: flip and establish.
                            self.is_partial = false;
                            self.flip_roles(c);
                            self.set_state(c, peer, EpState::Established, cfg);
                            self.set_first_packet_seen(c, true);
                        }
                        if self.ep[peer].state == EpState::SynSent {
                            self.set_state(c, peer, EpState::Established, cfg);
                        }
                        self.set_state(c, slot, EpState::Established, cfg);
                        if self.ep[peer].state != EpState::Partial {
                            established = true;
                        }
                    }
                }
                if fin {
                    (do_close, gen_event) = self.close_on_fin(c, slot, cfg);
                }
                if rst {
                    self.set_state(c, slot, EpState::Reset, cfg);
                    let is_reject = if slot == c.orig_slot {
                        self.ep[peer].state == EpState::Established
                    } else {
                        matches!(self.ep[peer].state, EpState::SynSent | EpState::SynAckSent)
                    };
                    do_close = true;
                    gen_event = !is_reject;
                }
                if self.ep[slot].state == EpState::Inactive {
                    let is_orig = slot == c.orig_slot;
                    if !is_orig && len == 0 && self.ep[c.orig_slot].state == EpState::SynSent {
                        // An ACK of the SYN before the SYN/ACK: not partial.
                    } else if ack && self.ep[peer].state == EpState::Established {
                        // Missed the SYN, saw SYN/ACK, now the ACK.
                        self.set_state(c, slot, EpState::Established, cfg);
                        self.is_partial = false;
                        self.set_first_packet_seen(c, is_orig);
                    } else {
                        self.set_state(c, slot, EpState::Partial, cfg);
                    }
                }
            }
            EpState::SynSent | EpState::SynAckSent => {
                if fin {
                    (do_close, gen_event) = self.close_on_fin(c, slot, cfg);
                }
                if rst {
                    self.set_state(c, slot, EpState::Reset, cfg);
                    self.is_active = false; // ConnectionReset
                    do_close = true;
                }
            }
            EpState::Established | EpState::Partial => {
                if syn && self.ep[slot].state == EpState::Partial && self.ep[peer].state == EpState::Inactive && !ack {
                    self.set_state(c, slot, EpState::SynSent, cfg);
                }
                if fin && !rst {
                    self.set_state(c, slot, EpState::Closed, cfg);
                    if self.ep[peer].state == EpState::Reset && self.ep[peer].prev_state == EpState::Closed {
                        // FIN followed by RST from the peer was a normal close.
                        self.set_state(c, peer, EpState::Closed, cfg);
                    }
                    do_close = true;
                    gen_event = true;
                }
                if rst {
                    self.set_state(c, slot, EpState::Reset, cfg);
                    do_close = true;
                    if self.ep[peer].state != EpState::Reset || self.ep[peer].prev_state != EpState::Established {
                        self.is_active = false; // ConnectionReset
                    }
                }
            }
            EpState::Closed => {
                let _ = delta_last; // FIN_advanced_last_seq weird only
                if rst && self.ep[peer].state != EpState::Closed {
                    self.set_state(c, slot, EpState::Reset, cfg);
                    if !self.ep[slot].did_close {
                        do_close = true;
                    }
                    // ResetTimer is armed only if `connection_reset` has
                    // a handler; the base scripts define none.
                }
            }
            EpState::Reset => {}
        }
        (do_close, gen_event, established)
    }

    /// TCPSessionAdapter::ConnectionClosed.
    fn connection_closed(&mut self, c: &mut Common, slot: usize, gen_event: bool, cfg: &TrackerConfig) {
        let peer = slot ^ 1;
        if self.ep[slot].did_close {
            return;
        }
        self.ep[slot].did_close = true;
        let close_complete = self.ep[slot].state == EpState::Reset
            || self.ep[peer].did_close
            || self.ep[peer].state == EpState::Inactive;
        if close_complete {
            if (self.ep[slot].prev_state != EpState::Inactive || self.ep[peer].state != EpState::Inactive) && gen_event
            {
                self.is_active = false; // ConnectionFinished
            }
            self.cancel_timers();
            self.delete_at = c.last_ns.saturating_add(cfg.tcp_close_delay_ns);
        } else if self.ep[slot].prev_state != EpState::Inactive {
            self.add_expire(c.last_ns.saturating_add(cfg.tcp_session_timer_ns));
        }
        // else: PartialCloseTimer, armed only with a handler (none in base).
        self.next = self.earliest();
    }

    /// TCP_Reassembler::DataSent + Reassembler::NewBlock, gap-relevant part.
    #[inline]
    fn data_sent(&mut self, slot: usize, seq: u64, len: u64) {
        let ep = &mut self.ep[slot];
        if ep.skip_deliveries {
            return;
        }
        let mut seq = seq;
        let upper = seq + len;
        let acked = ep.to_relative(ep.ack_seq, ep.ack_wraps);
        if seq < acked {
            if upper <= acked {
                return;
            }
            seq = acked;
        }
        if upper <= ep.trim_seq {
            return;
        }
        seq = seq.max(ep.trim_seq);
        if seq <= ep.last_reassem {
            if upper > ep.last_reassem {
                ep.last_reassem = upper;
                deliver_contiguous(ep);
            }
        } else {
            insert_block(&mut ep.blocks, seq, upper);
        }
        if ep.no_data_acked() && undelivered(ep) > MAX_ABOVE_HOLE_WITHOUT_ACKS {
            ep.blocks.clear();
            ep.skip_deliveries = true;
        }
    }

    /// TCP_Reassembler::AckReceived for the endpoint in `slot` (the data
    /// sender), with Trim/Undelivered/Gap. Always inlined: most ACKs end
    /// at the trim point or find nothing undelivered. Callgrind, tcpmix
    /// 300 k packets, with the drain's one reservation per epoch: tracker
    /// thread 260.3 M -> 258.4 M instructions (3a35bb1;
    /// docs/performance-history.md, analyzer step 16).
    #[inline(always)]
    fn ack_received(&mut self, c: &mut Common, slot: usize, rel_ack: u64) {
        let mut seq = rel_ack;
        let ep = &self.ep[slot];
        if ep.fin_cnt > 0 && seq >= ep.fin_seq {
            seq = ep.fin_seq.wrapping_sub(1);
        }
        if seq <= ep.trim_seq {
            return;
        }
        if seq > ep.last_reassem && !(seq <= 2 && self.is_partial) && !ep.skip_deliveries {
            self.undelivered(c, slot, seq);
        }
        let ep = &mut self.ep[slot];
        if seq > ep.last_reassem {
            ep.last_reassem = seq;
        }
        if !ep.blocks.is_empty() {
            ep.blocks.retain(|&(_, up)| up > seq);
        }
        ep.trim_seq = seq;
    }

    /// Reassembler::Undelivered(seq): every hole below `seq` is a content
    /// gap (frequent in header-only captures, where no data is delivered:
    /// a third of the ACKs of the 300 k-packet tcpmix trace come here).
    #[inline(always)]
    fn undelivered(&mut self, c: &mut Common, slot: usize, seq: u64) {
        loop {
            let ep = &self.ep[slot];
            let Some(&(bseq, bup)) = ep.blocks.first() else {
                break;
            };
            if bseq >= seq {
                break;
            }
            let (at, glen) = (ep.last_reassem, bseq.saturating_sub(ep.last_reassem));
            if glen > 0 {
                self.gap(c, slot, at, glen);
            }
            let ep = &mut self.ep[slot];
            ep.blocks.remove(0);
            ep.last_reassem = ep.last_reassem.max(bup);
            deliver_contiguous(ep);
        }
        let ep = &self.ep[slot];
        if seq > ep.last_reassem {
            let (at, glen) = (ep.last_reassem, seq - ep.last_reassem);
            self.gap(c, slot, at, glen);
        }
    }

    fn gap(&mut self, c: &mut Common, slot: usize, _at: u64, len: u64) {
        let clean = |e: &Endpoint| {
            e.state == EpState::Established || (e.state == EpState::Closed && e.prev_state == EpState::Established)
        };
        if clean(&self.ep[slot]) && clean(&self.ep[slot ^ 1]) {
            let code = if slot == c.orig_slot { 'G' } else { 'g' };
            let ep = &mut self.ep[slot];
            Self::scaled(c, code, &mut ep.gap_cnt, &mut ep.gap_thresh);
            c.missed_bytes += len;
        }
    }
}

/// Zeek's `tcp_max_above_hole_without_any_acks` default: past it, Zeek
/// stops reassembling (and reporting gaps for) that endpoint.
const MAX_ABOVE_HOLE_WITHOUT_ACKS: u64 = 16384;

fn undelivered(ep: &Endpoint) -> u64 {
    ep.blocks.iter().map(|(s, u)| u - s).sum()
}

/// Moves `last_reassem` over buffered blocks that became contiguous.
fn deliver_contiguous(ep: &mut Endpoint) {
    while let Some(&(s, u)) = ep.blocks.first() {
        if s > ep.last_reassem {
            break;
        }
        ep.last_reassem = ep.last_reassem.max(u);
        ep.blocks.remove(0);
    }
}

/// Inserts [s, u) into a sorted disjoint block list, merging overlaps.
fn insert_block(blocks: &mut Vec<(u64, u64)>, s: u64, u: u64) {
    let mut s = s;
    let mut u = u;
    let mut i = 0;
    while i < blocks.len() {
        let (bs, bu) = blocks[i];
        if bu < s {
            i += 1;
            continue;
        }
        if bs > u {
            break;
        }
        s = s.min(bs);
        u = u.max(bu);
        blocks.remove(i);
    }
    blocks.insert(i, (s, u));
    if blocks.len() > MAX_BLOCKS {
        // Merge the two highest blocks: the hole between them is then
        // treated as received (under-reports missed bytes, never panics).
        let (_, hu) = blocks.pop().expect("len > MAX_BLOCKS");
        let last = blocks.last_mut().expect("len > 1");
        last.1 = hu;
    }
}

/// TCPSessionAdapter::get_relative_seq; returns (relative seq, underflow).
fn get_relative_seq(ep: &Endpoint, cur_base: u32, last: u32, wraps: u32) -> (u64, bool) {
    let delta = seq_delta(cur_base, last);
    let mut wraps = wraps;
    if delta < 0 {
        if wraps > 0 && cur_base > last {
            wraps -= 1;
        }
    } else if delta > 0 && cur_base < last {
        wraps += 1;
    }
    if wraps == 0 {
        let d = seq_delta(cur_base, ep.start_seq as u32);
        // C++ returns the int32 delta as uint64 (sign-extended).
        return (d as i64 as u64, d < 0);
    }
    (ep.to_relative(cur_base, wraps), false)
}

impl Tcp {
    /// The initial sequence number Zeek recorded for the endpoint in `slot`.
    pub fn start_seq(&self, slot: usize) -> u32 {
        self.ep[slot].start_seq as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: a seeded, dependency-free source for the packet mix.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn common() -> Common {
        Common { history: String::new(), hist_seen: 0, orig_slot: 0, last_ns: 0, inactivity_ns: 0, missed_bytes: 0 }
    }

    /// Random connections (handshake or not, sequence numbers near the
    /// wrap, in-order data, retransmissions, gaps, old and future acks,
    /// zero windows, cut payloads, stray SYN/FIN/RST/URG) fed packet by
    /// packet to `process` with and without the fast path from equal states: the
    /// states (endpoints, timers, history, missed bytes) and outcomes must
    /// stay equal, and the fast path must have been taken often.
    #[test]
    fn fast_path_equals_general_path() {
        let cfg = TrackerConfig::default();
        let mut rng = Rng(0x007e_570f_fa57);
        let (mut fast_taken, mut packets) = (0u32, 0u32);
        for _ in 0..400 {
            let mut a = (Tcp::new(0, &cfg), common());
            let isn = [rng.next() as u32 | 0xffff_0000, rng.next() as u32];
            let mut next = isn;
            let mut ts = 0i64;
            let handshake = rng.below(4) != 0;
            for i in 0..200 {
                let mut slot = rng.below(2) as usize;
                let mut flags = match rng.below(300) {
                    0 => F::SYN,
                    1 => F::FIN | F::ACK,
                    2 => F::RST,
                    3 => F::ACK | F::URG,
                    4 => F::SYN | F::ACK,
                    5 => 0,
                    6..=100 => F::ACK | F::PSH,
                    _ => F::ACK,
                };
                if handshake && i < 3 {
                    (slot, flags) = [(0, F::SYN), (1, F::SYN | F::ACK), (0, F::ACK)][i];
                }
                let len = [0u32, 0, 1, 100, 1460][rng.below(5) as usize];
                let seq = match rng.below(10) {
                    0 => next[slot].wrapping_sub(rng.below(3000) as u32),
                    1 => next[slot].wrapping_add(rng.below(3000) as u32),
                    _ => next[slot],
                };
                let ack = match rng.below(10) {
                    0 => next[slot ^ 1].wrapping_sub(rng.below(3000) as u32),
                    1 => next[slot ^ 1].wrapping_add(rng.below(3000) as u32),
                    _ => next[slot ^ 1],
                };
                let window = if rng.below(20) == 0 { 0 } else { 512 };
                let captured_all = rng.below(30) != 0;
                ts += rng.below(1_000_000) as i64;
                next[slot] = seq.wrapping_add(len + u32::from(flags & (F::SYN | F::FIN) != 0));

                let mut b = a.clone();
                if a.0.is_plain_established(slot, flags, window) {
                    fast_taken += 1;
                }
                packets += 1;
                let oa = a.0.process::<true>(&mut a.1, slot, flags, seq, ack, window, len, captured_all, ts, &cfg);
                let ob = b.0.process::<false>(&mut b.1, slot, flags, seq, ack, window, len, captured_all, ts, &cfg);
                assert_eq!(oa.established, ob.established);
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "packet {i}");
            }
        }
        // The mix must exercise the fast path, not only the general one.
        assert!(fast_taken > packets / 4, "fast path taken {fast_taken} of {packets}");
    }

    /// The stored `next_timer` equals its definition, the minimum of the
    /// five timers, after every packet and every timer run (SYNs arm the
    /// attempt timer, FIN/RST the expire and delete timers, runs disarm
    /// and re-arm them); each kind of change must have happened.
    #[test]
    fn next_timer_is_the_minimum_of_the_timers() {
        let cfg = TrackerConfig::default();
        let mut rng = Rng(0x0071_3e55);
        let (mut changes, mut runs_fired) = (0u32, 0u32);
        for _ in 0..300 {
            let (mut t, mut c) = (Tcp::new(0, &cfg), common());
            let mut ts = 0i64;
            for _ in 0..60 {
                let slot = rng.below(2) as usize;
                let flags =
                    [F::SYN, F::SYN | F::ACK, F::ACK, F::ACK | F::PSH, F::FIN | F::ACK, F::RST][rng.below(6) as usize];
                let (seq, ack) = (rng.below(4000) as u32, rng.below(4000) as u32);
                ts += rng.below(cfg.tcp_attempt_delay_ns.max(1) as u64 * 2) as i64;
                c.last_ns = ts;
                let before = t.next_timer();
                t.process::<true>(&mut c, slot, flags, seq, ack, 512, rng.below(2) as u32 * 100, true, ts, &cfg);
                assert_eq!(t.next_timer(), t.earliest());
                changes += u32::from(t.next_timer() != before);
                if rng.below(4) == 0 {
                    let now = ts + rng.below(cfg.tcp_close_delay_ns.max(1) as u64 * 3) as i64;
                    let before = t.next_timer();
                    let removed = t.run_timers(&c, now, &cfg);
                    if removed {
                        break;
                    }
                    assert_eq!(t.next_timer(), t.earliest());
                    runs_fired += u32::from(t.next_timer() != before);
                }
            }
        }
        assert!(changes > 200 && runs_fired > 100, "changes {changes}, runs that fired {runs_fired}");
    }
}
