//! The connection table: packets in, finished [`ConnRecord`]s out.
//!
//! Timers: every connection has a *deadline*, the earliest time at which
//! one of its Zeek timers (inactivity, attempt, expire, delete) can fire.
//! [`Tracker::advance`] visits only connections whose deadline has passed,
//! found through a lazy timer wheel: a connection is (re)registered only
//! when its deadline moves earlier than where it is registered, so the
//! common packet (which pushes the inactivity deadline later) costs no
//! wheel work, and an early registration that fires finds the connection
//! not yet due and registers it again at its real deadline.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use tracelab_decode::{ip_proto, Addr, PacketMeta};

use crate::common::Common;
use crate::key::{splitmix64, uid, zeek_ports, FlowKey, TableBuild};
use crate::metrics::TcpMetrics;
use crate::record::{ConnRecord, ConnState, LoadBin, RttRecord};
use crate::service::{self, LOOK_PKTS};
use crate::tcp::{EpState, Tcp};
use crate::TrackerConfig;

/// A TCP connection's state, boxed: most of a connection's size, and
/// only TCP has it.
type TcpState = Box<(Tcp, TcpMetrics)>;

/// Finished connections' TCP states kept for new ones (with the
/// allocations of their outstanding-segment queues): a box and two queues
/// per connection were allocated and freed otherwise. Bounded, so a burst
/// of finishes does not hold memory for good.
struct Spares(Vec<TcpState>);

const MAX_SPARES: usize = 1024;

impl Spares {
    /// A fresh state for a connection starting at `start_ns`.
    fn take(&mut self, start_ns: i64, cfg: &TrackerConfig) -> TcpState {
        match self.0.pop() {
            Some(mut t) => {
                t.0 = Tcp::new(start_ns, cfg);
                t.1.reuse();
                t
            }
            None => Box::new((Tcp::new(start_ns, cfg), TcpMetrics::default())),
        }
    }

    fn give(&mut self, t: TcpState) {
        if self.0.len() < MAX_SPARES {
            self.0.push(t);
        }
    }
}

#[derive(Clone, Debug)]
enum Kind {
    Tcp(TcpState),
    /// UDP/ICMP payload bytes per slot; -1 = nothing sent (Zeek's
    /// UDP_INACTIVE).
    Datagram([i64; 2]),
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Bin {
    bin: i64,
    ip_bytes: [u64; 2],
    pkts: [u64; 2],
}

#[derive(Clone, Debug)]
struct Conn {
    key: FlowKey,
    /// Address and (Zeek) port of each slot.
    ends: [(Addr, u16); 2],
    proto: u8,
    start_ns: i64,
    c: Common,
    pkts: [u64; 2],
    ip_bytes: [u64; 2],
    kind: Kind,
    /// The load bin of the latest packet; `past_bins` the earlier ones, in
    /// order (most connections live in one bin and never allocate here).
    bin: Bin,
    past_bins: Vec<Bin>,
    /// The times `[start, end)` of `bin`: a packet inside them is in the
    /// same bin without a division (empty if the bounds overflow i64).
    bin_span: (i64, i64),
    /// The deadline this connection is registered at in the wheel
    /// (`i64::MAX`: not registered). Never later than its real deadline.
    armed: i64,
    /// [`Conn::deadline`] as of the last change of the timers: a packet
    /// before it need not run [`Conn::expired`].
    due: i64,
    /// Whether the first packet's key was swapped ([`FlowKey::oriented`]):
    /// a packet with the same flag comes from slot 0.
    first_swapped: bool,
    /// The caller's byte ([`Seen::tag`]).
    tag: u8,
    /// Service detection per slot: the clues of the payloads read
    /// ([`service::clues`]) and how many were read.
    clues: [u32; 2],
    looked: [u8; 2],
    /// How many connections on this key started at this connection's
    /// first timestamp before it (a SYN reusing the 5-tuple at the same
    /// instant): 0 but for those, it keeps their uids apart.
    uid_seq: u32,
}

/// What [`Tracker::process`] tells about a packet's connection.
pub struct Seen<'a> {
    /// The packet came from the connection's originator (as oriented after
    /// this packet; a later role flip is not reflected).
    pub from_orig: bool,
    /// One byte the caller keeps per connection, [`Seen::NEW`] until it
    /// writes it: a cache for what it derives from the connection's
    /// endpoints, asked for every packet (the analyzer's scope).
    pub tag: &'a mut u8,
}

impl Seen<'_> {
    /// The tag of a connection the caller has not tagged yet.
    pub const NEW: u8 = u8::MAX;
}

/// Wheel slots of one second each; deadlines further ahead share slots
/// and wait their turn (an entry is taken only once it is due).
const WHEEL_SLOTS: usize = 1024;
const WHEEL_SEC: i64 = 1_000_000_000;

/// Lazy timer wheel of (key, deadline) registrations.
struct Wheel {
    slots: Vec<Vec<(FlowKey, i64)>>,
    /// Seconds up to this one were fully drained; `None` before the first
    /// registration.
    drained: Option<i64>,
    /// Registrations held, stale ones included.
    len: usize,
}

impl Wheel {
    fn new() -> Wheel {
        Wheel { slots: (0..WHEEL_SLOTS).map(|_| Vec::new()).collect(), drained: None, len: 0 }
    }

    /// Registers `key` at `deadline`; `now` (network time) starts the
    /// wheel's clock on the first registration.
    fn insert(&mut self, key: FlowKey, deadline: i64, now: i64) {
        let sec = deadline.div_euclid(WHEEL_SEC);
        let drained = *self.drained.get_or_insert(now.div_euclid(WHEEL_SEC) - 1);
        // Already past (time went backwards): the next advance takes it.
        let sec = sec.max(drained + 1);
        self.slots[sec.rem_euclid(WHEEL_SLOTS as i64) as usize].push((key, deadline));
        self.len += 1;
    }

    /// Drops every registration `live` rejects and the slots' spare
    /// capacity, keeping the order of the others.
    fn compact(&mut self, mut live: impl FnMut(&FlowKey, i64) -> bool) {
        self.len = 0;
        for slot in &mut self.slots {
            slot.retain(|&(k, d)| live(&k, d));
            slot.shrink_to(slot.len() * 2);
            self.len += slot.len();
        }
    }

    /// Moves every registration due at `now` into `due`.
    fn take_due(&mut self, now: i64, due: &mut Vec<(FlowKey, i64)>) {
        let Some(drained) = self.drained else {
            return;
        };
        let now_sec = now.div_euclid(WHEEL_SEC);
        if now_sec <= drained {
            return;
        }
        // A jump longer than the wheel visits each slot once.
        let first = drained + 1;
        let first = first.max(now_sec - WHEEL_SLOTS as i64 + 1);
        let before = due.len();
        for sec in first..=now_sec {
            let slot = &mut self.slots[sec.rem_euclid(WHEEL_SLOTS as i64) as usize];
            slot.retain(|&(k, d)| {
                if d <= now {
                    due.push((k, d));
                    false
                } else {
                    true
                }
            });
            // A drained slot gives its memory back: kept, every slot the
            // trace had reached held the capacity of its busiest second,
            // so the wheel grew with the trace's duration (to 1,024
            // seconds' worth), not with its connections.
            if slot.is_empty() {
                *slot = Vec::new();
            }
        }
        self.len -= due.len() - before;
        // `now`'s own second may still hold later deadlines.
        self.drained = Some(now_sec - 1);
    }
}

/// `TrackerConfig::likely_server_ports` as one bit per (protocol, port),
/// built once: asked for every new connection.
struct ServerPorts {
    tcp: Box<[u64; 1024]>,
    udp: Box<[u64; 1024]>,
}

impl ServerPorts {
    fn new(cfg: &TrackerConfig) -> ServerPorts {
        let mut sp = ServerPorts { tcp: Box::new([0; 1024]), udp: Box::new([0; 1024]) };
        for &(proto, port) in &cfg.likely_server_ports {
            let bits = match proto {
                ip_proto::TCP => &mut sp.tcp,
                ip_proto::UDP => &mut sp.udp,
                _ => continue,
            };
            bits[usize::from(port >> 6)] |= 1 << (port & 63);
        }
        sp
    }

    /// Whether `port` is a likely server port of `proto`, TCP or UDP (the
    /// only protocols asked about).
    fn has(&self, proto: u8, port: u16) -> bool {
        let bits = if proto == ip_proto::TCP { &self.tcp } else { &self.udp };
        bits[usize::from(port >> 6)] & 1 << (port & 63) != 0
    }
}

/// Streaming connection tracker (one per shard).
pub struct Tracker {
    cfg: TrackerConfig,
    ports: ServerPorts,
    table: HashMap<FlowKey, Conn, TableBuild>,
    wheel: Wheel,
    /// Scratch for [`Tracker::advance`], kept to reuse its allocation.
    due: Vec<(FlowKey, i64)>,
    /// Scratch for the RTT medians of finishing connections.
    scratch: Vec<i64>,
    spares: Spares,
}

impl Tracker {
    pub fn new(cfg: TrackerConfig) -> Tracker {
        let table = HashMap::with_capacity_and_hasher(cfg.capacity_hint, TableBuild::default());
        Tracker {
            ports: ServerPorts::new(&cfg),
            cfg,
            table,
            wheel: Wheel::new(),
            due: Vec::new(),
            scratch: Vec::new(),
            spares: Spares(Vec::new()),
        }
    }

    /// Connections currently tracked.
    pub fn active(&self) -> usize {
        self.table.len()
    }

    /// Timer registrations held, stale ones included: at most
    /// `2 * active() + 1024` after every [`Tracker::advance`] (memory
    /// accounting; tests).
    pub fn timer_registrations(&self) -> usize {
        self.wheel.len
    }

    /// The registrations the timer wheel has room for (its memory, in
    /// entries of 48 bytes): those of the seconds still ahead (memory
    /// accounting; tests).
    pub fn timer_capacity(&self) -> usize {
        self.wheel.slots.iter().map(Vec::capacity).sum()
    }

    /// Keeps the wheel bounded by the connections: a registration goes
    /// stale when its connection registers earlier (a FIN moves the
    /// deadline from inactivity to the close delay) or ends otherwise, and
    /// stays until its second comes, up to the 300 s inactivity timeout
    /// later, so without this the wheel held ~(connection rate x 300 s)
    /// entries whatever the number of open connections. A pass costs one
    /// table lookup per registration and leaves at most `active()`, so it
    /// runs at most once per `active() + 1024` registrations. Run at each
    /// advance (once per epoch of network time).
    fn bound_wheel(&mut self) {
        if self.wheel.len > 2 * self.table.len() + 1024 {
            let table = &self.table;
            self.wheel.compact(|k, d| table.get(k).is_some_and(|c| c.armed == d));
        }
    }

    /// Direction-independent shard of a packet's connection: both ways of a
    /// 5-tuple, and every ICMP message between two hosts (whose type/code
    /// "ports" differ by direction), land on the same shard. Outputs do not
    /// depend on it (only the load balance does), so it is a symmetric mix
    /// of the raw fields (XOR) rather than the connection key's hash: the
    /// key cost ~90 instructions per packet here. Callgrind, tcpmix 300 k
    /// packets, --threads 2: 464.7 M -> 448.3 M instructions (780102c;
    /// docs/performance-history.md, analyzer step 27).
    pub fn shard_of(p: &PacketMeta, shards: usize) -> usize {
        let fold = |a: &Addr| {
            let v = u128::from_ne_bytes(a.0);
            v as u64 ^ (v >> 64) as u64
        };
        let ports = match p.ip_proto {
            ip_proto::ICMP | ip_proto::ICMPV6 => 0,
            _ => u64::from(p.sport ^ p.dport),
        };
        let h = splitmix64(fold(&p.src) ^ fold(&p.dst) ^ ports << 8 ^ u64::from(p.ip_proto));
        // The high word of h * shards: uniform in 0..shards without a division.
        ((u128::from(h) * shards.max(1) as u128) >> 64) as usize
    }

    /// Feeds one packet. Only this packet's own connection can finish here
    /// (its timers expired, or Zeek would treat the SYN as a new
    /// connection on the same 5-tuple); everything else waits for
    /// [`Tracker::advance`], so output does not depend on sharding.
    ///
    /// Packets come in time order: a caller takes a packet stamped before
    /// the latest time it fed at that time, as the analyzer's driver does
    /// (a late packet would give negative RTTs, warm-ups and durations; the
    /// check and copy cost ~16 instructions per packet here).
    pub fn process(&mut self, p: &PacketMeta, out: &mut Vec<ConnRecord>) -> Seen<'_> {
        let ports = zeek_ports(p);
        let (key, swapped) = FlowKey::oriented(p, ports);
        let cfg = &self.cfg;
        let sp = &self.ports;
        // One table lookup per packet: the entry serves the expiry test, the
        // replacement of a finished connection and the update.
        let conn = match self.table.entry(key) {
            Entry::Occupied(e) => {
                let conn = e.into_mut();
                // Before its deadline no timer can fire: expired() would
                // change nothing.
                if (p.ts_ns >= conn.due && conn.expired(p.ts_ns, cfg)) || conn.is_reuse(p) {
                    let seq = if conn.start_ns == p.ts_ns { conn.uid_seq + 1 } else { 0 };
                    let old = std::mem::replace(conn, Conn::new(key, swapped, ports, p, cfg, sp, &mut self.spares));
                    conn.uid_seq = seq;
                    old.finish(out, &mut self.scratch, &mut self.spares);
                }
                conn
            }
            Entry::Vacant(e) => e.insert(Conn::new(key, swapped, ports, p, cfg, sp, &mut self.spares)),
        };
        let slot = conn.slot_of(p, swapped);
        conn.packet(p, slot, cfg, sp);
        let deadline = conn.deadline();
        conn.due = deadline;
        if deadline < conn.armed {
            conn.armed = deadline;
            self.wheel.insert(key, deadline, p.ts_ns);
        }
        Seen { from_orig: slot == conn.c.orig_slot, tag: &mut conn.tag }
    }

    /// Network time reached `now_ns`: connections whose Zeek timers
    /// (inactivity, attempt, expire, close/delete) fired by then finish.
    /// Records come out sorted by (start time, key).
    pub fn advance(&mut self, now_ns: i64, out: &mut Vec<ConnRecord>) {
        let cfg = &self.cfg;
        let mut due = std::mem::take(&mut self.due);
        self.wheel.take_due(now_ns, &mut due);
        let mut done: Vec<(i64, FlowKey)> = Vec::new();
        for (key, at) in due.drain(..) {
            // A registration is stale when the connection was registered
            // again since (earlier) or replaced by a new one on its 5-tuple.
            let Some(conn) = self.table.get_mut(&key) else {
                continue;
            };
            if conn.armed != at {
                continue;
            }
            conn.armed = i64::MAX;
            // Not due yet (its deadline moved on): expired() is then a no-op.
            if conn.expired(now_ns, cfg) {
                done.push((conn.start_ns, key));
            } else {
                conn.armed = conn.deadline();
                conn.due = conn.armed;
                self.wheel.insert(key, conn.armed, now_ns);
            }
        }
        self.due = due;
        self.drain(done, out);
        self.bound_wheel();
    }

    /// End of input: every connection finishes.
    pub fn finish(&mut self, out: &mut Vec<ConnRecord>) {
        let done = self.table.iter().map(|(k, c)| (c.start_ns, *k)).collect();
        self.drain(done, out);
        self.wheel = Wheel::new();
    }

    fn drain(&mut self, mut keys: Vec<(i64, FlowKey)>, out: &mut Vec<ConnRecord>) {
        keys.sort_unstable();
        // One allocation, not a doubling (each a copy of every record so far).
        out.reserve(keys.len());
        for (_, k) in keys {
            let conn = self.table.remove(&k).expect("listed");
            conn.finish(out, &mut self.scratch, &mut self.spares);
        }
    }
}

impl Conn {
    fn new(
        key: FlowKey,
        swapped: bool,
        (sp, dp, _): (u16, u16, bool),
        p: &PacketMeta,
        cfg: &TrackerConfig,
        ports: &ServerPorts,
        spares: &mut Spares,
    ) -> Conn {
        let (kind, inactivity, flip) = match p.ip_proto {
            ip_proto::TCP => {
                // TCPAnalyzer::WantConnection: a first packet that is not
                // a pure SYN, coming from a likely server port, is
                // probably the responder talking.
                let f = p.tcp.flags;
                let syn = f & tracelab_decode::tcp_flags::SYN != 0;
                let ack = f & tracelab_decode::tcp_flags::ACK != 0;
                let mut flip = false;
                if (!syn || ack) && ports.has(ip_proto::TCP, sp) {
                    flip = if ports.has(ip_proto::TCP, dp) { !syn && sp < dp } else { true };
                }
                // The TCP adapter starts with the UDP timeout; leaving the
                // handshake switches to tcp_inactivity_timeout.
                (Kind::Tcp(spares.take(p.ts_ns, cfg)), cfg.udp_inactivity_timeout_ns, flip)
            }
            ip_proto::UDP => {
                let flip = ports.has(ip_proto::UDP, sp) && !ports.has(ip_proto::UDP, dp);
                (Kind::Datagram([-1, -1]), cfg.udp_inactivity_timeout_ns, flip)
            }
            ip_proto::ICMP | ip_proto::ICMPV6 => (Kind::Datagram([-1, -1]), cfg.icmp_inactivity_timeout_ns, false),
            _ => (Kind::Other, cfg.unknown_ip_inactivity_timeout_ns, false),
        };
        let (sp, dp) = if matches!(kind, Kind::Other) { (0, 0) } else { (sp, dp) };
        let mut c = Common {
            history: String::with_capacity(16),
            hist_seen: 0,
            orig_slot: 0,
            last_ns: p.ts_ns,
            inactivity_ns: inactivity,
            missed_bytes: 0,
        };
        // Zeek does not flip towards a broadcast responder.
        if flip && !is_broadcast(&p.src) {
            c.flip();
        }
        let bin = p.ts_ns.div_euclid(cfg.load_bin_ns.max(1));
        Conn {
            key,
            ends: [(p.src, sp), (p.dst, dp)],
            proto: p.ip_proto,
            start_ns: p.ts_ns,
            c,
            pkts: [0; 2],
            ip_bytes: [0; 2],
            kind,
            bin: Bin { bin, ip_bytes: [0; 2], pkts: [0; 2] },
            past_bins: Vec::new(),
            bin_span: bin_span(bin, cfg.load_bin_ns.max(1)),
            armed: i64::MAX,
            due: i64::MIN,
            first_swapped: swapped,
            tag: Seen::NEW,
            clues: [0; 2],
            looked: [0; 2],
            uid_seq: 0,
        }
    }

    /// The earliest time a timer of this connection can fire: before it,
    /// [`Conn::expired`] changes nothing and returns false.
    fn deadline(&self) -> i64 {
        let inactive_at =
            if self.c.inactivity_ns > 0 { self.c.last_ns.saturating_add(self.c.inactivity_ns) } else { i64::MAX };
        match &self.kind {
            Kind::Tcp(t) => inactive_at.min(t.0.next_timer()),
            _ => inactive_at,
        }
    }

    /// The slot `p` came from; `swapped` is its key's flag.
    fn slot_of(&self, p: &PacketMeta, swapped: bool) -> usize {
        if matches!(self.kind, Kind::Other) {
            // Ports are not part of these endpoints: the address decides
            // (and the key's order, which includes ports, may not).
            return usize::from(p.src != self.ends[0].0);
        }
        usize::from(swapped != self.first_swapped)
    }

    /// Runs this connection's timers up to `now`; true = Zeek removed it.
    fn expired(&mut self, now: i64, cfg: &TrackerConfig) -> bool {
        let inactive_at =
            if self.c.inactivity_ns > 0 { self.c.last_ns.saturating_add(self.c.inactivity_ns) } else { i64::MAX };
        if let Kind::Tcp(t) = &mut self.kind {
            if t.0.run_timers(&self.c, now.min(inactive_at), cfg) {
                return true;
            }
        }
        inactive_at <= now
    }

    /// TCPSessionAdapter::IsReuse: a SYN that starts a new connection on
    /// this 5-tuple.
    fn is_reuse(&self, p: &PacketMeta) -> bool {
        let Kind::Tcp(t) = &self.kind else {
            return false;
        };
        let tcp = &t.0;
        let f = p.tcp.flags;
        if f & tracelab_decode::tcp_flags::SYN == 0 {
            return false;
        }
        let orig = self.c.orig_slot;
        let mut conn_orig = orig;
        if f & tracelab_decode::tcp_flags::ACK != 0 {
            if tcp.ep[orig].state != EpState::Inactive {
                return false;
            }
            conn_orig = orig ^ 1;
        }
        let closed = tcp.ep[0].did_close || tcp.ep[1].did_close;
        if !closed {
            if p.tcp.seq == tcp.start_seq(conn_orig) {
                return false;
            }
            if f & tracelab_decode::tcp_flags::ACK == 0
                && tcp.ep[conn_orig].state == EpState::SynAckSent
                && tcp.ep[orig ^ 1].state == EpState::Inactive
                && p.tcp.seq == tcp.start_seq(orig ^ 1)
            {
                return false;
            }
        }
        true
    }

    fn packet(&mut self, p: &PacketMeta, slot: usize, cfg: &TrackerConfig, ports: &ServerPorts) {
        self.pkts[slot] += 1;
        self.ip_bytes[slot] += p.ip_len as u64;
        if p.ts_ns < self.bin_span.0 || p.ts_ns >= self.bin_span.1 {
            self.enter_bin(p.ts_ns, cfg.load_bin_ns.max(1));
        }
        let b = &mut self.bin;
        b.ip_bytes[slot] += p.ip_len as u64;
        b.pkts[slot] += 1;
        if p.payload_len > 0 && self.looked[slot] < LOOK_PKTS {
            self.look(p, slot);
        }

        match &mut self.kind {
            Kind::Tcp(t) => {
                let (tcp, m) = &mut **t;
                let h = &p.tcp;
                let out = tcp.process::<true>(
                    &mut self.c,
                    slot,
                    h.flags,
                    h.seq,
                    h.ack,
                    h.window,
                    p.payload_len,
                    p.payload_captured >= p.payload_len,
                    p.ts_ns,
                    cfg,
                );
                m.packet(slot, h.flags, h.seq, h.ack, p.payload_len, p.ts_ns, cfg.max_rtt_samples_per_conn);
                if out.established {
                    // base/protocols/conn/inactivity.zeek: per-port timeouts.
                    let orig = self.c.orig_slot;
                    let (op, rp) = (self.ends[orig].1, self.ends[orig ^ 1].1);
                    let mut service = rp;
                    if tcp.ep[orig].state == EpState::Inactive
                        && !ports.has(ip_proto::TCP, rp)
                        && ports.has(ip_proto::TCP, op)
                    {
                        service = op;
                    }
                    if let Some(&(_, t)) = cfg.tcp_port_inactivity_ns.iter().find(|(port, _)| *port == service) {
                        self.c.set_inactivity(t);
                    }
                }
            }
            Kind::Datagram(len) => {
                self.c.last_ns = p.ts_ns;
                if self.proto == ip_proto::UDP {
                    let is_orig = slot == self.c.orig_slot;
                    if is_orig {
                        self.c.check_history(0x1, 'D');
                    } else {
                        self.c.check_history(0x2, 'd');
                    }
                }
                // UDP: payload after the 8-byte header; ICMP: after the
                // 8-byte ICMP header (the decoder's payload_len).
                let l = &mut len[slot];
                *l = (*l).max(0) + p.payload_len as i64;
            }
            Kind::Other => self.c.last_ns = p.ts_ns,
        }
    }

    /// One of the first payload packets of `slot`: its clues. Out of line:
    /// most packets of a connection come later and skip it.
    #[inline(never)]
    fn look(&mut self, p: &PacketMeta, slot: usize) {
        self.looked[slot] += 1;
        let head = &p.payload_head[..(p.payload_captured as usize).min(p.payload_head.len())];
        self.clues[slot] |= service::clues(p.ip_proto, p.sport, p.dport, head, p.payload_len);
    }

    /// A packet at `ts` fell outside the current bin's span: moves to its
    /// bin (`width` ns wide). Rare: most connections live in one bin.
    #[cold]
    #[inline(never)]
    fn enter_bin(&mut self, ts: i64, width: i64) {
        let bin = ts.div_euclid(width);
        if self.bin.bin != bin {
            let next = Bin { bin, ip_bytes: [0; 2], pkts: [0; 2] };
            self.past_bins.push(std::mem::replace(&mut self.bin, next));
        }
        self.bin_span = bin_span(bin, width);
    }

    fn conn_state(&self) -> ConnState {
        let orig = self.c.orig_slot;
        match &self.kind {
            Kind::Tcp(t) => {
                let tcp = &t.0;
                tcp_conn_state(
                    tcp.ep[orig].state,
                    tcp.ep[orig ^ 1].state,
                    tcp.size(&self.c, true),
                    tcp.size(&self.c, false),
                    &self.c.history,
                )
            }
            Kind::Datagram(len) if self.proto == ip_proto::UDP => match (len[orig] >= 0, len[orig ^ 1] >= 0) {
                (true, true) => ConnState::SF,
                (true, false) => ConnState::S0,
                (false, true) => ConnState::SHR,
                (false, false) => ConnState::OTH,
            },
            _ => ConnState::OTH,
        }
    }

    /// Appends this connection's record to `out`. `scratch`: reused for
    /// the RTT medians; the TCP state goes to `spares`.
    fn finish(self, out: &mut Vec<ConnRecord>, scratch: &mut Vec<i64>, spares: &mut Spares) {
        let state = self.conn_state();
        let orig = self.c.orig_slot;
        let resp = orig ^ 1;
        let duration = self.c.last_ns.saturating_sub(self.start_ns);
        let (sizes, hs, closed, each_way) = match &self.kind {
            Kind::Tcp(t) => {
                let (tcp, m) = &**t;
                let sizes = (tcp.size(&self.c, true), tcp.size(&self.c, false));
                (sizes, m.handshake_complete(orig), m.fin_or_rst, m.data_each_way())
            }
            Kind::Datagram(len) => ((len[orig].max(0) as u64, len[resp].max(0) as u64), false, false, false),
            Kind::Other => ((0, 0), false, false, false),
        };
        let has_duration = duration > 0;
        let (mut rtt, mut transfer) = (RttRecord::default(), None);
        if let Kind::Tcp(mut t) = self.kind {
            t.1.finish(orig, self.start_ns, scratch, &mut rtt, &mut transfer);
            spares.give(t);
        }
        // Written straight into the vector's free slot: `push` takes the
        // record as a value, assembled on the stack and then copied (976
        // bytes). The TCP parts above are computed first for the same
        // reason: filled in place after the write, they were assembled
        // in stack temporaries and copied twice. Callgrind, tcpmix 300 k:
        // memcpy 1,688 -> 712 bytes per connection, Conn::finish 27.75 M ->
        // 25.25 M instructions (7c321db; docs/performance-history.md, analyzer step 23).
        out.reserve(1);
        out.spare_capacity_mut()[0].write(ConnRecord {
            ts_ns: self.start_ns,
            uid: uid(self.start_ns, &self.key, self.uid_seq),
            orig_h: self.ends[orig].0,
            orig_p: self.ends[orig].1,
            resp_h: self.ends[resp].0,
            resp_p: self.ends[resp].1,
            ip_proto: self.proto,
            service: if self.proto == ip_proto::TCP && !self.c.history.contains(['S', 'H', 's', 'h']) {
                // Picked up mid-stream: Zeek names no service (service.rs).
                None
            } else {
                service::confirm(self.clues[orig], self.clues[resp])
            },
            // Zeek sets duration and byte counts only when duration > 0.
            duration_ns: has_duration.then_some(duration),
            orig_bytes: has_duration.then_some(sizes.0),
            resp_bytes: has_duration.then_some(sizes.1),
            conn_state: state,
            missed_bytes: self.c.missed_bytes,
            history: self.c.history,
            orig_pkts: self.pkts[orig],
            orig_ip_bytes: self.ip_bytes[orig],
            resp_pkts: self.pkts[resp],
            resp_ip_bytes: self.ip_bytes[resp],
            last_ts_ns: self.c.last_ns,
            handshake_complete: hs,
            closed,
            rtt,
            transfer,
            well_behaved: hs && each_way && closed,
            load_bins: self
                .past_bins
                .iter()
                .chain([&self.bin])
                .map(|b| LoadBin {
                    bin: b.bin,
                    orig_ip_bytes: b.ip_bytes[orig],
                    resp_ip_bytes: b.ip_bytes[resp],
                    orig_pkts: b.pkts[orig],
                    resp_pkts: b.pkts[resp],
                })
                .collect(),
        });
        // SAFETY: the slot at `len` (within capacity) was written above.
        unsafe { out.set_len(out.len() + 1) };
    }
}

/// The times `[start, end)` of load bin `bin` of `width` ns; empty when
/// they do not fit an i64 (every packet then takes the division).
fn bin_span(bin: i64, width: i64) -> (i64, i64) {
    bin.checked_mul(width).and_then(|s| Some((s, s.checked_add(width)?))).unwrap_or((i64::MAX, i64::MIN))
}

fn is_broadcast(a: &Addr) -> bool {
    a.is_v4() && a.0[12..] == [255, 255, 255, 255]
}

/// base/protocols/conn/main.zeek `conn_state` for TCP.
pub(crate) fn tcp_conn_state(os: EpState, rs: EpState, osize: u64, rsize: u64, history: &str) -> ConnState {
    use EpState::*;
    let o_inactive = matches!(os, Inactive | Partial);
    let r_inactive = matches!(rs, Inactive | Partial);
    if rs == Reset {
        if matches!(os, SynSent | SynAckSent) || (os == Reset && osize == 0 && rsize == 0) {
            ConnState::REJ
        } else if o_inactive {
            ConnState::RSTRH
        } else {
            ConnState::RSTR
        }
    } else if os == Reset {
        if r_inactive {
            if rstos0_history(history) {
                ConnState::RSTOS0
            } else {
                ConnState::OTH
            }
        } else {
            ConnState::RSTO
        }
    } else if rs == Closed && os == Closed {
        ConnState::SF
    } else if os == Closed {
        if r_inactive {
            ConnState::SH
        } else {
            ConnState::S2
        }
    } else if rs == Closed {
        if o_inactive {
            ConnState::SHR
        } else {
            ConnState::S3
        }
    } else if os == SynSent && rs == Inactive {
        ConnState::S0
    } else if os == Established && rs == Established {
        ConnState::S1
    } else {
        ConnState::OTH
    }
}

/// `/\^?S[^HAFGIQ]*R.*/ == history` (a full match).
fn rstos0_history(h: &str) -> bool {
    let h = h.strip_prefix('^').unwrap_or(h);
    let Some(rest) = h.strip_prefix('S') else {
        return false;
    };
    for ch in rest.chars() {
        if ch == 'R' {
            return true;
        }
        if "HAFGIQ".contains(ch) {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u16) -> FlowKey {
        FlowKey::new(Addr::v4([10, 0, 0, 1]), i, Addr::v4([10, 0, 0, 2]), 80, 6, false)
    }

    /// A time is inside a bin's span exactly when its division gives that
    /// bin: spans tile the line, around zero, at the i64 ends (where the
    /// span is empty and the division decides) and for odd widths.
    #[test]
    fn bin_span_is_the_division() {
        let mut x: u64 = 11;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x
        };
        for width in [1, 7, 1_000_000_007, 300_000_000_000, i64::MAX / 3, i64::MAX] {
            let mut times = vec![0, -1, 1, i64::MIN, i64::MIN + 1, i64::MAX, i64::MAX - 1];
            times.extend((0..2000).map(|i| match i % 3 {
                0 => next() as i64,
                1 => (next() % 4_000_000_000_000_000_000) as i64,
                _ => (next() % 2_000) as i64 - 1_000,
            }));
            for &t in &times {
                let bin = t.div_euclid(width);
                let (lo, hi) = bin_span(bin, width);
                if lo <= hi {
                    assert!(lo <= t && t < hi, "t {t} width {width}");
                }
                for &u in &times {
                    let inside = lo <= u && u < hi;
                    if inside {
                        assert_eq!(u.div_euclid(width), bin, "u {u} t {t} width {width}");
                    }
                }
            }
        }
    }

    /// The wheel hands out exactly the registrations a full scan would: each
    /// once, at the first advance at or after its deadline, across deadlines
    /// in the past, within the current second, and beyond the wheel's span.
    #[test]
    fn wheel_matches_a_full_scan() {
        let mut wheel = Wheel::new();
        let mut pending: Vec<(FlowKey, i64)> = Vec::new();
        let mut x: u64 = 12345;
        let mut next = || {
            // A fixed LCG: deterministic without a dependency.
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as i64
        };
        let mut now = 1_700_000_000 * WHEEL_SEC;
        for step in 0..400u16 {
            for j in 0..5u16 {
                let ahead = match next() % 4 {
                    0 => -(next() % (3 * WHEEL_SEC)),                   // already past
                    1 => next() % WHEEL_SEC,                            // this second
                    2 => next() % (30 * WHEEL_SEC),                     // soon
                    _ => next() % (3 * WHEEL_SLOTS as i64 * WHEEL_SEC), // beyond the span
                };
                let k = key(step * 5 + j);
                wheel.insert(k, now + ahead, now);
                pending.push((k, now + ahead));
            }
            // Mostly one-second epochs, sometimes a long gap in the trace.
            now += if step % 97 == 96 { 5000 * WHEEL_SEC } else { WHEEL_SEC / 2 + next() % WHEEL_SEC };
            let mut got = Vec::new();
            wheel.take_due(now, &mut got);
            let mut want: Vec<(FlowKey, i64)> = pending.iter().copied().filter(|&(_, d)| d <= now).collect();
            pending.retain(|&(_, d)| d > now);
            got.sort();
            want.sort();
            assert_eq!(got, want, "step {step}");
        }
    }
}
