//! The traffic model: who talks to whom, and each connection's packets as a
//! capture point at the enterprise edge sees them.
//!
//! Every connection is built whole when it opens (packets with their times
//! at the monitor), then the writer merges open connections by time. Times
//! follow from one-way delays monitor<->client and monitor<->server: a packet
//! the monitor sees at t from one side is answered, as the monitor sees it,
//! at t + 2 * (delay to the other side) + that side's processing time.

use crate::rng::Rng;

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

pub const TCP: u8 = 6;
pub const UDP: u8 = 17;

const US: i64 = 1_000;
const MS: i64 = 1_000_000;
const SEC: i64 = 1_000_000_000;
const MSS: u64 = 1460;
/// Receivers ACK every second segment, or after this delayed-ACK timer.
const DELACK: i64 = 40 * MS;
/// Linux's minimum retransmission timeout.
const MIN_RTO: i64 = 200 * MS;

const C: usize = 0; // client side (sent the first packet)
const S: usize = 1; // server side

/// One packet as the monitor sees it.
#[derive(Clone, Copy, Debug)]
pub struct Pkt {
    pub ts: i64,
    pub from_client: bool,
    pub flags: u8,
    /// TCP sequence number; for DNS over UDP the message id.
    pub seq: u32,
    pub ack: u32,
    /// Transport payload bytes (on the wire; the capture holds zeros).
    pub len: u16,
    pub win: u16,
}

/// Where the two ends are, as the thesis's categories name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Local client, remote (internet) server.
    LcRs,
    /// Local client, local server (intranet).
    LcLs,
    /// Remote client, local server.
    RcLs,
    /// A DNS lookup over UDP (local client to a local or remote resolver).
    Dns,
}

/// How a TCP connection ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// SYN never answered (Zeek S0).
    Unanswered,
    /// SYN answered by RST (Zeek REJ).
    Rejected,
    ClientFin,
    ServerFin,
    ClientRst,
    ServerRst,
    /// DNS: the only kind of UDP here.
    Datagram,
}

impl Kind {
    /// Every kind, in the order of the generator's summary.
    pub const ALL: [Kind; 4] = [Kind::LcRs, Kind::LcLs, Kind::RcLs, Kind::Dns];
}

impl End {
    /// Every ending, in the order of the generator's summary; the TCP
    /// endings first, so `End::ALL[i]` for i < 6 is a TCP one.
    pub const ALL: [End; 7] = [
        End::Unanswered,
        End::Rejected,
        End::ClientFin,
        End::ServerFin,
        End::ClientRst,
        End::ServerRst,
        End::Datagram,
    ];
}

pub struct Conn {
    pub client: [u8; 4],
    pub server: [u8; 4],
    pub cport: u16,
    pub sport: u16,
    pub proto: u8,
    pub kind: Kind,
    pub end: End,
    /// IP TTL and the next IP id of each side.
    pub ttl: [u8; 2],
    pub ip_id: [u16; 2],
    pub pkts: Vec<Pkt>,
    /// Data segments sent again (what the analyzer should count).
    pub retransmissions: u32,
}

/// The address plan: an enterprise in 10.0.0.0/8 and a pool of internet
/// hosts on public /8s.
pub struct Hosts {
    local_clients: Vec<[u8; 4]>,
    local_servers: Vec<([u8; 4], u16)>,
    remote_servers: Vec<[u8; 4]>,
    remote_clients: Vec<[u8; 4]>,
    /// Next ephemeral port per local client (remote clients draw one).
    next_port: Vec<u16>,
}

pub const RESOLVER: [u8; 4] = [10, 2, 0, 53];
const PUBLIC_OCTETS: [u8; 16] = [23, 31, 45, 52, 54, 64, 66, 72, 93, 104, 142, 151, 157, 185, 203, 216];
const LOCAL_SERVICES: [u16; 8] = [445, 80, 443, 3306, 389, 22, 8080, 25];

fn public_addr(rng: &mut Rng) -> [u8; 4] {
    let a = PUBLIC_OCTETS[rng.below(PUBLIC_OCTETS.len() as u64) as usize];
    let r = rng.u32();
    [a, (r >> 16) as u8, (r >> 8) as u8, (r as u8).max(1)]
}

impl Hosts {
    pub fn new(rng: &mut Rng) -> Hosts {
        // 4,000 desktops in 10.1.0.0/20, 48 servers in 10.2.1.0/24.
        let local_clients: Vec<[u8; 4]> = (0..4000u32)
            .map(|i| [10, 1, (i / 250) as u8, (i % 250 + 1) as u8])
            .collect();
        let local_servers = (0..48u8)
            .map(|i| ([10, 2, 1, i + 1], LOCAL_SERVICES[i as usize % 8]))
            .collect();
        let remote_servers = (0..20_000).map(|_| public_addr(rng)).collect();
        let remote_clients = (0..5_000).map(|_| public_addr(rng)).collect();
        let next_port = (0..local_clients.len())
            .map(|_| 32768 + rng.below(28_000) as u16)
            .collect();
        Hosts {
            local_clients,
            local_servers,
            remote_servers,
            remote_clients,
            next_port,
        }
    }

    fn local_client(&mut self, rng: &mut Rng) -> ([u8; 4], u16) {
        // A few busy desktops: squaring a uniform skews towards low indices.
        let u = rng.unit();
        let i = ((u * u) * self.local_clients.len() as f64) as usize % self.local_clients.len();
        let p = self.next_port[i];
        self.next_port[i] = if p >= 60999 { 32768 } else { p + 1 };
        (self.local_clients[i], p)
    }

    fn remote_server(&mut self, rng: &mut Rng) -> ([u8; 4], u16) {
        let u = rng.unit();
        let i = ((u * u * u) * self.remote_servers.len() as f64) as usize % self.remote_servers.len();
        let port = [443, 443, 443, 443, 443, 80, 80, 22, 25, 993, 8080][rng.below(11) as usize];
        (self.remote_servers[i], port)
    }
}

/// A TCP connection under construction.
struct Tcp<'r> {
    rng: &'r mut Rng,
    pkts: Vec<Pkt>,
    /// One-way delay monitor <-> each side.
    d: [i64; 2],
    /// Next sequence number each side sends, and the cumulative ACK it sends
    /// (everything received in order).
    next: [u32; 2],
    rcv: [u32; 2],
    /// Last time a packet of each side passed the monitor.
    last: [i64; 2],
    /// Serialisation time per byte at the bottleneck, ns.
    ns_per_byte: f64,
    iw: u32,
    rwnd: u32,
    loss: f64,
    retransmissions: u32,
}

impl Tcp<'_> {
    /// Records a packet. A side's packets leave in order, so a time earlier
    /// than that side's previous packet is moved up to it.
    fn push(&mut self, ts: i64, side: usize, flags: u8, seq: u32, ack: u32, len: u32) -> i64 {
        let ts = ts.max(self.last[side]);
        self.last[side] = ts;
        let win = match (flags & SYN != 0, side) {
            (true, C) => 64240,
            (true, _) => 65160,
            _ => 502, // scaled by 2^7 from the SYN's window-scale option
        };
        self.pkts.push(Pkt {
            ts,
            from_client: side == C,
            flags,
            seq,
            ack,
            len: len as u16,
            win,
        });
        ts
    }

    fn gap(&self, len: u32) -> i64 {
        // Ethernet + IP + TCP headers, preamble and inter-frame gap.
        ((len as f64 + 78.0) * self.ns_per_byte) as i64
    }

    fn rtt(&self) -> i64 {
        2 * (self.d[C] + self.d[S])
    }

    /// A pure ACK from `side`.
    fn ack(&mut self, ts: i64, side: usize) -> i64 {
        self.push(ts, side, ACK, self.next[side], self.rcv[side], 0)
    }

    /// `bytes` from side `s`, starting at the monitor at `start`, in
    /// slow-start rounds clocked by the receiver's ACKs (every second
    /// segment; a lone last segment after the delayed-ACK timer, unless the
    /// receiver answers with data at once: `piggyback`). A lost segment
    /// (dropped after the monitor, so seen twice) is resent after three
    /// duplicate ACKs, or after the RTO, and halves the window. Returns the
    /// time the last data segment passed the monitor.
    fn bulk(&mut self, start: i64, s: usize, bytes: u64, piggyback: bool) -> i64 {
        let r = s ^ 1;
        let mut remaining = bytes;
        let mut cwnd = self.iw;
        let mut t = start;
        let mut end = start;
        let mut pending = 0u32;
        while remaining > 0 {
            let n = (cwnd as u64).min(remaining.div_ceil(MSS));
            let mut first_ack: Option<i64> = None;
            let mut lost: Option<(u32, u32, i64)> = None;
            let mut dupacks: Vec<i64> = Vec::new();
            for i in 0..n {
                let len = remaining.min(MSS) as u32;
                remaining -= len as u64;
                let seq = self.next[s];
                self.next[s] = seq.wrapping_add(len);
                let flags = if remaining == 0 || i + 1 == n { ACK | PSH } else { ACK };
                let ts = self.push(t, s, flags, seq, self.rcv[s], len);
                end = ts;
                t = ts + self.gap(len);
                let at_receiver = ts + 2 * self.d[r];
                if lost.is_none() && self.rng.chance(self.loss) {
                    lost = Some((seq, len, ts));
                    pending = 0; // out-of-order arrivals are ACKed at once
                } else if lost.is_some() {
                    let a = self.ack(at_receiver, r); // duplicate ACK
                    dupacks.push(a);
                    first_ack.get_or_insert(a);
                } else {
                    self.rcv[r] = seq.wrapping_add(len);
                    pending += 1;
                    if pending == 2 {
                        first_ack.get_or_insert(self.ack(at_receiver, r));
                        pending = 0;
                    }
                }
            }
            if let Some((seq, len, ts)) = lost {
                let resend = if dupacks.len() >= 3 {
                    dupacks[2] + 2 * self.d[s]
                } else {
                    ts + MIN_RTO.max(2 * self.rtt())
                };
                let rts = self.push(resend, s, ACK | PSH, seq, self.rcv[s], len);
                self.retransmissions += 1;
                end = end.max(rts);
                self.rcv[r] = self.next[s];
                let a = self.ack(rts + 2 * self.d[r], r);
                pending = 0;
                cwnd = (cwnd / 2).max(2);
                t = t.max(a + 2 * self.d[s]);
                continue;
            }
            if pending == 1 && (first_ack.is_none() || remaining == 0) && !(remaining == 0 && piggyback) {
                first_ack.get_or_insert(self.ack(end + 2 * self.d[r] + DELACK, r));
                pending = 0;
            }
            cwnd = (cwnd + n as u32).min(self.rwnd);
            if remaining > 0 {
                t = t.max(first_ack.unwrap_or(end) + 2 * self.d[s]);
            }
        }
        end
    }

    /// SYN (possibly resent once), SYN/ACK, ACK. Returns the ACK's time.
    fn handshake(&mut self, t0: i64) -> i64 {
        let (ic, is) = (self.next[C], self.next[S]);
        let mut t = self.push(t0, C, SYN, ic, 0, 0);
        if self.rng.chance(0.01) {
            t = self.push(t + SEC, C, SYN, ic, 0, 0); // the first SYN was lost beyond the monitor
        }
        self.next[C] = ic.wrapping_add(1);
        self.rcv[S] = self.next[C];
        let sa = self.push(t + 2 * self.d[S], S, SYN | ACK, is, self.rcv[S], 0);
        self.next[S] = is.wrapping_add(1);
        self.rcv[C] = self.next[S];
        self.ack(sa + 2 * self.d[C], C)
    }

    fn fin(&mut self, ts: i64, side: usize) -> i64 {
        let seq = self.next[side];
        self.next[side] = seq.wrapping_add(1);
        self.push(ts, side, FIN | ACK, seq, self.rcv[side], 0)
    }

    /// The peer's view of a FIN: it consumed one sequence number.
    fn saw_fin(&mut self, side: usize) {
        self.rcv[side] = self.next[side ^ 1];
    }
}

fn internet_delay(rng: &mut Rng) -> i64 {
    (rng.lognormal(15.0, 0.9, 1.0, 300.0) * MS as f64) as i64
}

fn lan_delay(rng: &mut Rng) -> i64 {
    (rng.uniform(30.0, 400.0) * US as f64) as i64
}

/// Builds the next connection, opening at `t0`.
pub fn connection(rng: &mut Rng, hosts: &mut Hosts, t0: i64) -> Conn {
    let kind = Kind::ALL[rng.pick(&[0.42, 0.60, 0.70, 1.0])];
    if kind == Kind::Dns {
        return dns(rng, hosts, t0);
    }
    let ((client, cport), (server, sport), d) = match kind {
        Kind::LcRs => {
            let c = hosts.local_client(rng);
            (c, hosts.remote_server(rng), [lan_delay(rng), internet_delay(rng)])
        }
        Kind::LcLs => {
            let c = hosts.local_client(rng);
            let s = hosts.local_servers[rng.below(hosts.local_servers.len() as u64) as usize];
            (c, s, [lan_delay(rng), lan_delay(rng)])
        }
        _ => {
            let c = hosts.remote_clients[rng.below(hosts.remote_clients.len() as u64) as usize];
            let port = 1024 + rng.below(64_000) as u16;
            let s = hosts.local_servers[rng.below(8) as usize]; // the public-facing ones
            ((c, port), s, [internet_delay(rng), lan_delay(rng)])
        }
    };
    let internet = kind != Kind::LcLs;
    let mbps = if internet {
        rng.lognormal(40.0, 1.0, 2.0, 1000.0)
    } else {
        [100.0, 1000.0][rng.below(2) as usize]
    };
    let loss = match rng.pick(&[0.70, 0.95, 1.0]) {
        0 => 0.0,
        1 => rng.uniform(0.002, 0.02),
        _ => rng.uniform(0.02, 0.08),
    };
    let mut tcp = Tcp {
        pkts: Vec::new(),
        d,
        next: [rng.u32(), rng.u32()],
        rcv: [0, 0],
        last: [t0, t0],
        ns_per_byte: 8_000.0 / mbps,
        iw: [10, 4, 2][rng.pick(&[0.7, 0.9, 1.0])],
        rwnd: [44, 128, 512][rng.pick(&[0.3, 0.7, 1.0])],
        loss,
        retransmissions: 0,
        rng,
    };
    // Six cumulative weights: the pick is one of the TCP endings.
    let end = End::ALL[tcp.rng.pick(&[0.03, 0.06, 0.58, 0.88, 0.96, 1.0])];
    match end {
        End::Unanswered => {
            // The SYN and its two retries (1 s, then 2 s later).
            let seq = tcp.next[C];
            for dt in [0, SEC, 3 * SEC] {
                tcp.push(t0 + dt, C, SYN, seq, 0, 0);
            }
        }
        End::Rejected => {
            let seq = tcp.next[C];
            let t = tcp.push(t0, C, SYN, seq, 0, 0);
            tcp.push(t + 2 * d[S], S, RST | ACK, 0, seq.wrapping_add(1), 0);
        }
        _ => converse(&mut tcp, t0, end),
    }
    let retransmissions = tcp.retransmissions;
    let mut pkts = tcp.pkts;
    pkts.sort_by_key(|p| p.ts); // stable: equal times keep causal order
    Conn {
        client,
        server,
        cport,
        sport,
        proto: TCP,
        kind,
        end,
        ttl: if kind == Kind::RcLs {
            [49, 63]
        } else if internet {
            [63, 52]
        } else {
            [63, 63]
        },
        ip_id: [rng.u32() as u16, rng.u32() as u16],
        pkts,
        retransmissions,
    }
}

/// Handshake, request/response rounds, teardown.
fn converse(tcp: &mut Tcp, t0: i64, end: End) {
    let mut t = tcp.handshake(t0) + (tcp.rng.uniform(0.0, 200.0) * US as f64) as i64;
    let rounds = 1 + (tcp.rng.exp(2.0) as u32).min(30);
    let mut last = t;
    for round in 0..rounds {
        // Mostly downloads (small request, heavy-tailed response); some uploads.
        let upload = tcp.rng.chance(0.15);
        let big = tcp.rng.pareto(1000.0, 1.1, 20e6) as u64;
        let small = tcp.rng.lognormal(400.0, 0.8, 40.0, 4000.0) as u64;
        let (req, resp) = if upload { (big, small) } else { (small, big) };
        let server_think = (tcp.rng.lognormal(2.0, 1.2, 0.05, 500.0) * MS as f64) as i64;
        let client_think = if round + 1 < rounds {
            (tcp.rng.exp(0.8) * SEC as f64) as i64
        } else {
            SEC
        };
        let req_end = tcp.bulk(t, C, req, server_think < DELACK);
        let resp_start = req_end + 2 * tcp.d[S] + server_think;
        last = tcp.bulk(resp_start, S, resp, client_think < DELACK);
        t = last + 2 * tcp.d[C] + client_think;
    }
    let (dc, ds) = (tcp.d[C], tcp.d[S]);
    match end {
        End::ClientFin => {
            let wait = (tcp.rng.exp(0.2) * SEC as f64) as i64;
            let f = tcp.fin(last + 2 * dc + wait, C);
            tcp.saw_fin(S);
            let f2 = tcp.fin(f + 2 * ds, S);
            tcp.saw_fin(C);
            tcp.ack(f2 + 2 * dc, C);
        }
        End::ServerFin => {
            let wait = (tcp.rng.uniform(0.0, 1.0) * MS as f64) as i64;
            let f = tcp.fin(last + wait, S);
            tcp.saw_fin(C);
            let f2 = tcp.fin(f + 2 * dc, C);
            tcp.saw_fin(S);
            tcp.ack(f2 + 2 * ds, S);
        }
        End::ClientRst => {
            let seq = tcp.next[C];
            let ack = tcp.rcv[C];
            tcp.push(last + 2 * dc + 5 * MS, C, RST | ACK, seq, ack, 0);
        }
        _ => {
            let seq = tcp.next[S];
            let ack = tcp.rcv[S];
            tcp.push(last + MS, S, RST | ACK, seq, ack, 0);
        }
    }
}

fn dns(rng: &mut Rng, hosts: &mut Hosts, t0: i64) -> Conn {
    let (client, cport) = hosts.local_client(rng);
    // Most lookups go to the site resolver; some clients ask a public one.
    let (server, d) = if rng.chance(0.85) {
        (RESOLVER, lan_delay(rng))
    } else {
        (
            [8, 8, (rng.below(2) * 4) as u8, (rng.below(2) * 4 + 4) as u8],
            internet_delay(rng),
        )
    };
    let lookup = if rng.chance(0.7) {
        rng.uniform(0.05, 0.3)
    } else {
        rng.lognormal(30.0, 1.0, 2.0, 2000.0)
    };
    let id = rng.u32() >> 16; // the DNS message id, carried in `seq`
    let q = Pkt {
        ts: t0,
        from_client: true,
        flags: 0,
        seq: id,
        ack: 0,
        len: rng.lognormal(35.0, 0.3, 17.0, 255.0) as u16,
        win: 0,
    };
    let mut pkts = vec![q];
    if rng.chance(0.97) {
        let ts = t0 + 2 * d + (lookup * MS as f64) as i64;
        pkts.push(Pkt {
            ts,
            from_client: false,
            len: rng.lognormal(120.0, 0.6, 30.0, 1400.0) as u16,
            ..q
        });
    }
    Conn {
        client,
        server,
        cport,
        sport: 53,
        proto: UDP,
        kind: Kind::Dns,
        end: End::Datagram,
        ttl: [63, if server == RESOLVER { 63 } else { 54 }],
        ip_id: [rng.u32() as u16, rng.u32() as u16],
        pkts,
        retransmissions: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp_for_test(rng: &mut Rng, loss: f64, iw: u32) -> Tcp<'_> {
        Tcp {
            pkts: Vec::new(),
            d: [100 * US, 10 * MS],
            next: [1000, u32::MAX - 3000], // the server's sequence space wraps
            rcv: [0, 0],
            last: [0, 0],
            ns_per_byte: 8.0, // 1 Gb/s
            iw,
            rwnd: 64,
            loss,
            retransmissions: 0,
            rng,
        }
    }

    #[test]
    fn handshake_then_lossless_transfer_acks_every_byte() {
        let mut rng = Rng::new(1);
        let mut tcp = tcp_for_test(&mut rng, 0.0, 2);
        let t = tcp.handshake(0);
        // SYN/ACK 2 * 10 ms after the (last) SYN, ACK 2 * 0.1 ms later.
        let syn = tcp.pkts.iter().rfind(|p| p.flags == SYN).unwrap().ts;
        assert_eq!(t, syn + 20 * MS + 200 * US);
        let isn_s = u32::MAX - 3000;
        let end = tcp.bulk(t, S, 10 * MSS + 100, false);
        let data: Vec<&Pkt> = tcp.pkts.iter().filter(|p| !p.from_client && p.len > 0).collect();
        assert_eq!(data.len(), 11);
        assert_eq!(data.iter().map(|p| p.len as u64).sum::<u64>(), 10 * MSS + 100);
        assert_eq!(data[0].seq, isn_s.wrapping_add(1));
        assert_eq!(end, data[10].ts);
        // The client's last ACK acknowledges the whole response (across the wrap).
        let last_ack = tcp.pkts.iter().rfind(|p| p.from_client).map(|p| p.ack).unwrap();
        assert_eq!(last_ack, isn_s.wrapping_add(1).wrapping_add(10 * MSS as u32 + 100));
        // Slow start from IW 2: rounds of 2, 4, then the last 5 segments.
        // The second round starts one RTT (20.2 ms) after the first ACK left.
        let first_ack = tcp
            .pkts
            .iter()
            .filter(|p| p.from_client && p.ts > t)
            .map(|p| p.ts)
            .next()
            .unwrap();
        assert_eq!(first_ack, data[1].ts + 200 * US);
        assert_eq!(data[2].ts, first_ack + 20 * MS);
        assert_eq!(tcp.retransmissions, 0);
    }

    #[test]
    fn a_lost_segment_is_seen_twice_and_delays_the_cumulative_ack() {
        let mut rng = Rng::new(1);
        let mut tcp = tcp_for_test(&mut rng, 1.0, 8); // the first segment of each round is lost
        let t = tcp.handshake(0);
        tcp.bulk(t, C, 8 * MSS, false);
        let data: Vec<&Pkt> = tcp.pkts.iter().filter(|p| p.from_client && p.len > 0).collect();
        // 8 segments, the first resent after 7 duplicate ACKs (fast retransmit).
        assert_eq!(data.len(), 9);
        assert_eq!(data[8].seq, data[0].seq);
        assert_eq!(tcp.retransmissions, 1);
        let acks: Vec<&Pkt> = tcp.pkts.iter().filter(|p| !p.from_client && p.ts > t).collect();
        assert_eq!(acks.len(), 8);
        assert!(
            acks[..7].iter().all(|a| a.ack == data[0].seq),
            "duplicate ACKs point at the hole"
        );
        assert_eq!(acks[7].ack, data[7].seq.wrapping_add(MSS as u32));
        // Resent when the third duplicate ACK reached the sender.
        assert_eq!(data[8].ts, acks[2].ts + 2 * 100 * US);
    }

    #[test]
    fn connections_are_time_ordered_and_deterministic() {
        let build = |seed| {
            let mut rng = Rng::new(seed);
            let mut hosts = Hosts::new(&mut rng);
            (0..300)
                .map(|i| connection(&mut rng, &mut hosts, i * MS))
                .collect::<Vec<_>>()
        };
        let (a, b) = (build(5), build(5));
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.pkts.len(), y.pkts.len());
            assert!(x.pkts.iter().zip(&y.pkts).all(|(p, q)| p.ts == q.ts && p.seq == q.seq));
            assert!(x.pkts.windows(2).all(|w| w[0].ts <= w[1].ts));
        }
        assert!(a.iter().any(|c| c.kind == Kind::Dns) && a.iter().any(|c| c.end == End::Rejected));
    }
}
