//! Per-host features (thesis §8.4, docs/reference/algorithms.md §9.4) and volumes.
//!
//! A connection is *initiated* by its originator (Zeek's notion, after
//! Zeek's own direction fixes) and *accepted* by its responder when the
//! responder answered: a TCP SYN/ACK (history `h`), or for a connection seen
//! mid-stream (no SYN) or a non-TCP one, any packet from the responder.
//! incnx, dportin and fan-in count accepted connections, so a port scan
//! does not turn its targets into servers; outcnx, dportout and fan-out count
//! every connection a host initiated. A host is a *server* if it accepted at
//! least one TCP connection by a SYN/ACK, answered UDP on one port to at
//! least [`UDP_SERVER_MIN_PEERS`] distinct peer endpoints, or is listed in
//! `--servers`.
//!
//! The UDP rule: UDP has no handshake to say who listens, but a server
//! answers on its one well-known port whoever asks, while a client asks from
//! a new ephemeral port each time (or, like NTP's fixed port 123, asks
//! rather than answers). So a host that answered UDP connections on one
//! port to two or more distinct (address, port) peers is a server: a
//! resolver answering one client's lookups from several ports counts, a
//! peer answering a single flow does not.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use tracelab_decode::{ip_proto, Addr};
use tracelab_flow::{ConnRecord, TableBuild};

use crate::scope::{Locality, Servers};

/// Distinct (address, port) peers a host must have answered UDP
/// connections from, on one port, to be a UDP server (module docs).
pub const UDP_SERVER_MIN_PEERS: u32 = 2;

#[derive(Clone, Debug, Default)]
pub struct HostStats {
    pub incnx: u64,
    pub outcnx: u64,
    /// Distinct destination ports of accepted / initiated connections and
    /// distinct peers that connected / were connected to: counted when
    /// [`HostTable`]'s flat sets first see the (host, port or peer) pair.
    dportin: u64,
    dportout: u64,
    fan_in: u64,
    fan_out: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub pkts_in: u64,
    pub pkts_out: u64,
    /// Bytes (both directions) exchanged with local / remote peers.
    pub bytes_internal: u64,
    pub bytes_external: u64,
    /// Accepted a TCP connection with a SYN/ACK.
    pub accepted_tcp: bool,
    /// Answered UDP on one port to [`UDP_SERVER_MIN_PEERS`] peer endpoints.
    pub udp_server: bool,
}

impl HostStats {
    /// One connection's traffic as this host saw it: bytes and packets it
    /// sent and received, all its bytes internal or external by the peer.
    fn add_traffic(
        &mut self,
        bytes_sent: u64,
        bytes_received: u64,
        pkts_sent: u64,
        pkts_received: u64,
        peer_local: bool,
    ) {
        self.bytes_out += bytes_sent;
        self.bytes_in += bytes_received;
        self.pkts_out += pkts_sent;
        self.pkts_in += pkts_received;
        let total = bytes_sent + bytes_received;
        if peer_local {
            self.bytes_internal += total;
        } else {
            self.bytes_external += total;
        }
    }
    pub fn dportin(&self) -> u64 {
        self.dportin
    }
    pub fn dportout(&self) -> u64 {
        self.dportout
    }
    pub fn fan_in(&self) -> u64 {
        self.fan_in
    }
    pub fn fan_out(&self) -> u64 {
        self.fan_out
    }
}

/// One more connection in one direction of a host: `[connections,
/// distinct ports, distinct peers]`, the last two counted when the flat
/// set saw the (host, port) or (host, peer) key first.
fn count_connection([connections, ports, peers]: [&mut u64; 3], new_port: bool, new_peer: bool) {
    *connections += 1;
    *ports += u64::from(new_port);
    *peers += u64::from(new_peer);
}

/// Whether the responder answered the connection (see module docs).
pub fn accepted(c: &ConnRecord) -> bool {
    if c.ip_proto == ip_proto::TCP && c.history.contains(['S', 's']) {
        c.history.contains('h')
    } else {
        c.resp_pkts > 0
    }
}

/// Hosts numbered in order of appearance, and the distinct (host, port)
/// and (originator, responder) pairs behind the four distinct counts, each
/// kind in one flat set of `u64` keys: four small hash sets per host cost
/// an allocation each and more hashing than the rest of the accounting.
#[derive(Default)]
pub struct HostTable {
    index: HashMap<Addr, u32, TableBuild>,
    hosts: Vec<(Addr, HostStats)>,
    /// `host << 16 | port`: destination ports per host, initiated / accepted.
    ports_out: HashSet<u64, TableBuild>,
    ports_in: HashSet<u64, TableBuild>,
    /// `orig << 32 | resp`: every connection's pair, true once one of the
    /// pair's connections was accepted. One entry serves both distinct
    /// counts (an accepted pair is always an initiated one): one hash probe
    /// where two sets took two, each a likely cache miss. Callgrind
    /// `--cache-sim=yes`, tcpmix 300 k packets: 767.7 M -> 765.6 M
    /// instructions, LL misses 893 k -> 869 k (cb88d44;
    /// docs/performance-history.md, analyzer step 33).
    pairs: HashMap<u64, bool, TableBuild>,
    /// Answered UDP: (`host << 16 | port`, `peer << 16 | peer port`) pairs,
    /// and the number of distinct peer endpoints per `host << 16 | port`.
    udp_peers: HashSet<(u64, u64), TableBuild>,
    udp_answered: HashMap<u64, u32, TableBuild>,
}

impl HostTable {
    /// The number of `a`, added on first sight.
    fn id(&mut self, a: Addr) -> u32 {
        let next = self.hosts.len();
        *self.index.entry(a).or_insert_with(|| {
            self.hosts.push((a, HostStats::default()));
            // More than 2^32 hosts cannot fit in memory first.
            u32::try_from(next).expect("fewer than 2^32 hosts")
        })
    }

    pub fn add(&mut self, c: &ConnRecord, ends: Locality) {
        let acc = accepted(c);
        let (orig_local, resp_local) = (ends.orig, ends.resp);
        let (oi, ri) = (self.id(c.orig_h), self.id(c.resp_h));
        let port = u64::from(oi) << 16 | u64::from(c.resp_p);
        let pair = u64::from(oi) << 32 | u64::from(ri);
        let pair_accepted = {
            let o = &mut self.hosts[oi as usize].1;
            let (new_port, pair) = (self.ports_out.insert(port), self.pairs.entry(pair));
            let new_peer = matches!(pair, Entry::Vacant(_));
            count_connection([&mut o.outcnx, &mut o.dportout, &mut o.fan_out], new_port, new_peer);
            o.add_traffic(c.orig_ip_bytes, c.resp_ip_bytes, c.orig_pkts, c.resp_pkts, resp_local);
            pair.or_insert(false)
        };
        if acc {
            let port = u64::from(ri) << 16 | u64::from(c.resp_p);
            let r = &mut self.hosts[ri as usize].1;
            let (new_port, new_peer) = (self.ports_in.insert(port), !std::mem::replace(pair_accepted, true));
            count_connection([&mut r.incnx, &mut r.dportin, &mut r.fan_in], new_port, new_peer);
            if c.ip_proto == ip_proto::TCP && c.history.contains('h') {
                r.accepted_tcp = true;
            }
            if c.ip_proto == ip_proto::UDP {
                let peer = u64::from(oi) << 16 | u64::from(c.orig_p);
                if self.udp_peers.insert((port, peer)) {
                    let n = self.udp_answered.entry(port).or_default();
                    *n += 1;
                    r.udp_server |= *n >= UDP_SERVER_MIN_PEERS;
                }
            }
        }
        let r = &mut self.hosts[ri as usize].1;
        r.add_traffic(c.resp_ip_bytes, c.orig_ip_bytes, c.resp_pkts, c.orig_pkts, orig_local);
    }

    /// Servers learned from the trace, plus the given ones.
    pub fn servers(&self, extra: &[Addr]) -> Servers {
        let mut s: HashSet<Addr, TableBuild> =
            self.hosts.iter().filter(|(_, h)| h.accepted_tcp || h.udp_server).map(|(a, _)| *a).collect();
        s.extend(extra.iter().copied());
        Servers(s)
    }

    /// Hosts in address order (deterministic output). Sorted as (address
    /// as a big-endian u128, which is `Addr`'s order; index) pairs by the
    /// address alone: one integer comparison each, no byte swap per
    /// comparison. Callgrind, tcpmix 300 k packets: the sort 2.97 M ->
    /// 2.61 M instructions (7f2c5c5; docs/performance-history.md, analyzer
    /// step 24).
    pub fn sorted(&self) -> Vec<(Addr, &HostStats)> {
        let mut keys: Vec<(u128, u32)> =
            self.hosts.iter().enumerate().map(|(i, (a, _))| (u128::from_be_bytes(a.0), i as u32)).collect();
        keys.sort_unstable_by_key(|&(k, _)| k);
        keys.into_iter().map(|(_, i)| (self.hosts[i as usize].0, &self.hosts[i as usize].1)).collect()
    }

    pub fn addrs(&self) -> impl Iterator<Item = &Addr> {
        self.hosts.iter().map(|(a, _)| a)
    }

    pub fn len(&self) -> usize {
        self.hosts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::LocalNets;
    use std::collections::{BTreeMap, BTreeSet};
    use tracelab_flow::{ConnState, Uid};

    /// A record with what [`HostTable::add`] reads: the two endpoints, the
    /// protocol, the history and each side's (packets, IP bytes); the other
    /// fields empty.
    fn record(
        (orig_h, orig_p): (Addr, u16),
        (resp_h, resp_p): (Addr, u16),
        ip_proto: u8,
        history: &str,
        (orig_pkts, orig_ip_bytes): (u64, u64),
        (resp_pkts, resp_ip_bytes): (u64, u64),
    ) -> ConnRecord {
        ConnRecord {
            ts_ns: 0,
            uid: Uid::parse("C0123456789abcdefg").unwrap(),
            orig_h,
            orig_p,
            resp_h,
            resp_p,
            ip_proto,
            service: None,
            duration_ns: None,
            orig_bytes: None,
            resp_bytes: None,
            conn_state: ConnState::OTH,
            missed_bytes: 0,
            history: history.to_string(),
            orig_pkts,
            orig_ip_bytes,
            resp_pkts,
            resp_ip_bytes,
            last_ts_ns: 0,
            handshake_complete: false,
            closed: false,
            rtt: Default::default(),
            transfer: None,
            well_behaved: false,
            load_bins: Default::default(),
        }
    }

    /// The flat sets count what the definition counts: per host, the sets
    /// of destination ports and peers of its initiated and accepted
    /// connections (kept here as four sets per host, the plain reading).
    #[test]
    fn flat_sets_equal_per_host_sets() {
        let mut x: u64 = 99;
        let mut next = |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let addrs: Vec<Addr> =
            (0..14u8).map(|i| if i % 5 == 0 { Addr::v6([i; 16]) } else { Addr::v4([10, 0, i / 7, i]) }).collect();
        let histories = ["ShADadFf", "S", "Dd", "^hADad", "D", "sH", "ShR", "-"];
        let local = LocalNets(vec!["10.0.0.0/8".parse().unwrap()]);
        let mut table = HostTable::default();
        #[derive(Default)]
        struct Want {
            stats: HostStats,
            ports_in: BTreeSet<u16>,
            ports_out: BTreeSet<u16>,
            peers_in: BTreeSet<Addr>,
            peers_out: BTreeSet<Addr>,
            /// Per port answered over UDP: the peer endpoints.
            udp_answered: BTreeMap<u16, BTreeSet<(Addr, u16)>>,
        }
        let mut want: BTreeMap<Addr, Want> = BTreeMap::new();
        for _ in 0..3000 {
            let c = record(
                (addrs[next(14) as usize], 40000 + next(3) as u16),
                (addrs[next(14) as usize], [22, 53, 80, 443, 8080][next(5) as usize]),
                [ip_proto::TCP, ip_proto::UDP][next(2) as usize],
                histories[next(8) as usize],
                (next(5), next(5000)),
                (next(3), next(5000)),
            );
            table.add(&c, Locality::of(&local, &c.orig_h, &c.resp_h));
            let o = want.entry(c.orig_h).or_default();
            o.stats.outcnx += 1;
            o.ports_out.insert(c.resp_p);
            o.peers_out.insert(c.resp_h);
            let r = want.entry(c.resp_h).or_default();
            if accepted(&c) {
                r.stats.incnx += 1;
                r.ports_in.insert(c.resp_p);
                r.peers_in.insert(c.orig_h);
                r.stats.accepted_tcp |= c.ip_proto == ip_proto::TCP && c.history.contains('h');
                if c.ip_proto == ip_proto::UDP {
                    r.udp_answered.entry(c.resp_p).or_default().insert((c.orig_h, c.orig_p));
                }
            }
            // Each end's traffic: (host, peer, bytes and packets sent, received).
            let ends = [
                (c.orig_h, c.resp_h, c.orig_ip_bytes, c.resp_ip_bytes, c.orig_pkts, c.resp_pkts),
                (c.resp_h, c.orig_h, c.resp_ip_bytes, c.orig_ip_bytes, c.resp_pkts, c.orig_pkts),
            ];
            for (host, peer, bytes_sent, bytes_received, pkts_sent, pkts_received) in ends {
                let s = &mut want.entry(host).or_default().stats;
                s.bytes_out += bytes_sent;
                s.bytes_in += bytes_received;
                s.pkts_out += pkts_sent;
                s.pkts_in += pkts_received;
                let by_locality = if local.is_local(&peer) { &mut s.bytes_internal } else { &mut s.bytes_external };
                *by_locality += bytes_sent + bytes_received;
            }
        }
        let got = table.sorted();
        assert_eq!(got.len(), want.len());
        let features = |h: &HostStats| {
            [h.incnx, h.outcnx, h.bytes_in, h.bytes_out, h.pkts_in, h.pkts_out, h.bytes_internal, h.bytes_external]
        };
        for ((addr, h), (waddr, w)) in got.iter().zip(&want) {
            assert_eq!(addr, waddr);
            assert_eq!(features(h), features(&w.stats), "{addr}");
            assert_eq!(h.accepted_tcp, w.stats.accepted_tcp, "{addr}");
            let udp_server = w.udp_answered.values().any(|p| p.len() >= UDP_SERVER_MIN_PEERS as usize);
            assert_eq!(h.udp_server, udp_server, "{addr}");
            let distinct = [w.ports_in.len(), w.ports_out.len(), w.peers_in.len(), w.peers_out.len()];
            assert_eq!([h.dportin(), h.dportout(), h.fan_in(), h.fan_out()], distinct.map(|n| n as u64), "{addr}");
        }
        // The mix must make the distinct counts differ from the connection
        // counts, and make UDP servers (the hand-built cases below show
        // hosts that are not).
        assert!(got.iter().any(|(_, h)| h.dportout() < h.outcnx && h.fan_in() > 1));
        assert!(got.iter().any(|(_, h)| h.udp_server));
    }

    /// The UDP server rule on hand-built cases: a resolver answering one
    /// client's lookups from two ports is a server; a host answering one
    /// flow, or a second flow on another port, is not; an NTP client asking
    /// two servers from its fixed port 123 is not, nor are unanswered
    /// targets.
    #[test]
    fn udp_servers_answer_one_port_to_several_peers() {
        let local = LocalNets(vec!["10.0.0.0/8".parse().unwrap()]);
        let (client, resolver, peer, ntp, ntp1, ntp2, dark) = (
            Addr::v4([10, 0, 0, 1]),
            Addr::v4([10, 0, 0, 53]),
            Addr::v4([10, 0, 0, 7]),
            Addr::v4([10, 0, 0, 9]),
            Addr::v4([192, 0, 2, 1]),
            Addr::v4([192, 0, 2, 2]),
            Addr::v4([192, 0, 2, 3]),
        );
        let udp = |orig_h, orig_p, resp_h, resp_p, resp_pkts| {
            let history = if resp_pkts > 0 { "Dd" } else { "D" };
            record((orig_h, orig_p), (resp_h, resp_p), ip_proto::UDP, history, (1, 58), (resp_pkts, 118 * resp_pkts))
        };
        let mut table = HostTable::default();
        for c in [
            udp(client, 40001, resolver, 53, 1),
            udp(client, 40002, resolver, 53, 1),
            udp(client, 40003, peer, 5000, 1),
            udp(client, 40003, peer, 5001, 1),
            udp(ntp, 123, ntp1, 123, 1),
            udp(ntp, 123, ntp2, 123, 1),
            udp(client, 40004, dark, 53, 0),
            udp(client, 40005, dark, 53, 0),
        ] {
            table.add(&c, Locality::of(&local, &c.orig_h, &c.resp_h));
        }
        let servers = table.servers(&[]);
        let is_server: Vec<bool> =
            [client, resolver, peer, ntp, ntp1, ntp2, dark].iter().map(|a| servers.is_server(a)).collect();
        assert_eq!(is_server, [false, true, false, false, false, false, false]);
    }

    /// `sorted` orders hosts as `Addr`'s own `Ord` does, IPv4 and IPv6
    /// mixed, with each host's own statistics.
    #[test]
    fn sorted_is_addr_order() {
        let mut t = HostTable::default();
        let mut x = 0x1234_5678_9abc_def1u64;
        for k in 0..3000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = if k % 3 == 0 {
                Addr::v6((u128::from(x) << 64 | u128::from(x >> 7)).to_be_bytes())
            } else {
                Addr::v4((x as u32).to_be_bytes())
            };
            let i = t.id(a);
            t.hosts[i as usize].1.incnx = u64::from(k);
        }
        let mut want: Vec<(Addr, u64)> = t.hosts.iter().map(|(a, h)| (*a, h.incnx)).collect();
        want.sort_by_key(|&(a, _)| a);
        let got: Vec<(Addr, u64)> = t.sorted().into_iter().map(|(a, h)| (a, h.incnx)).collect();
        assert_eq!(got, want);
    }
}
