//! Per-host features (thesis §8.4, docs/reference/algorithms.md §9.4) and volumes.
//!
//! A connection is *initiated* by its originator (Zeek's notion, after
//! Zeek's own direction fixes) and *accepted* by its responder when the
//! responder answered: a TCP SYN/ACK (history `h`), or for a connection seen
//! mid-stream (no SYN) or a non-TCP one, any packet from the responder.
//! incnx, dportin and fan-in count accepted connections, so a port scan
//! does not turn its targets into servers; outcnx, dportout and fan-out count
//! every connection a host initiated. A host is a *server* if it accepted at
//! least one TCP connection by a SYN/ACK, or is listed in `--servers`.

use std::collections::{HashMap, HashSet};

use tracelab_decode::{ip_proto, Addr};
use tracelab_flow::{ConnRecord, TableBuild};

use crate::scope::{Locality, Servers};

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
}

impl HostStats {
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
    /// `orig << 32 | resp`: every connection's pair, and accepted ones'.
    pairs_out: HashSet<u64, TableBuild>,
    pairs_in: HashSet<u64, TableBuild>,
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
        let total = c.orig_ip_bytes + c.resp_ip_bytes;
        let (oi, ri) = (self.id(c.orig_h), self.id(c.resp_h));
        let port = u64::from(oi) << 16 | u64::from(c.resp_p);
        let pair = u64::from(oi) << 32 | u64::from(ri);
        let new_port_out = self.ports_out.insert(port);
        let new_peer_out = self.pairs_out.insert(pair);
        {
            let o = &mut self.hosts[oi as usize].1;
            o.outcnx += 1;
            o.dportout += u64::from(new_port_out);
            o.fan_out += u64::from(new_peer_out);
            o.bytes_out += c.orig_ip_bytes;
            o.bytes_in += c.resp_ip_bytes;
            o.pkts_out += c.orig_pkts;
            o.pkts_in += c.resp_pkts;
            if resp_local {
                o.bytes_internal += total;
            } else {
                o.bytes_external += total;
            }
        }
        if acc {
            let port = u64::from(ri) << 16 | u64::from(c.resp_p);
            let new_port_in = self.ports_in.insert(port);
            let new_peer_in = self.pairs_in.insert(pair);
            let r = &mut self.hosts[ri as usize].1;
            r.incnx += 1;
            r.dportin += u64::from(new_port_in);
            r.fan_in += u64::from(new_peer_in);
            if c.ip_proto == ip_proto::TCP && c.history.contains('h') {
                r.accepted_tcp = true;
            }
        }
        let r = &mut self.hosts[ri as usize].1;
        r.bytes_in += c.orig_ip_bytes;
        r.bytes_out += c.resp_ip_bytes;
        r.pkts_in += c.orig_pkts;
        r.pkts_out += c.resp_pkts;
        if orig_local {
            r.bytes_internal += total;
        } else {
            r.bytes_external += total;
        }
    }

    /// Servers learned from the trace, plus the given ones.
    pub fn servers(&self, extra: &[Addr]) -> Servers {
        let mut s: HashSet<Addr, TableBuild> =
            self.hosts.iter().filter(|(_, h)| h.accepted_tcp).map(|(a, _)| *a).collect();
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
        }
        let mut want: BTreeMap<Addr, Want> = BTreeMap::new();
        for i in 0..3000u32 {
            let c = ConnRecord {
                ts_ns: i64::from(i),
                uid: Uid::parse("C0123456789abcdefg").unwrap(),
                orig_h: addrs[next(14) as usize],
                orig_p: 40000 + next(3) as u16,
                resp_h: addrs[next(14) as usize],
                resp_p: [22, 53, 80, 443, 8080][next(5) as usize],
                ip_proto: [ip_proto::TCP, ip_proto::UDP][next(2) as usize],
                service: None,
                duration_ns: None,
                orig_bytes: None,
                resp_bytes: None,
                conn_state: ConnState::OTH,
                missed_bytes: 0,
                history: histories[next(8) as usize].to_string(),
                orig_pkts: next(5),
                orig_ip_bytes: next(5000),
                resp_pkts: next(3),
                resp_ip_bytes: next(5000),
                last_ts_ns: i64::from(i),
                handshake_complete: false,
                closed: false,
                rtt: Default::default(),
                transfer: None,
                well_behaved: false,
                load_bins: Default::default(),
            };
            table.add(&c, Locality::of(&local, &c.orig_h, &c.resp_h));
            let total = c.orig_ip_bytes + c.resp_ip_bytes;
            let o = want.entry(c.orig_h).or_default();
            o.stats.outcnx += 1;
            o.ports_out.insert(c.resp_p);
            o.peers_out.insert(c.resp_h);
            o.stats.bytes_out += c.orig_ip_bytes;
            o.stats.bytes_in += c.resp_ip_bytes;
            o.stats.pkts_out += c.orig_pkts;
            o.stats.pkts_in += c.resp_pkts;
            if local.is_local(&c.resp_h) {
                o.stats.bytes_internal += total;
            } else {
                o.stats.bytes_external += total;
            }
            let r = want.entry(c.resp_h).or_default();
            if accepted(&c) {
                r.stats.incnx += 1;
                r.ports_in.insert(c.resp_p);
                r.peers_in.insert(c.orig_h);
                r.stats.accepted_tcp |= c.ip_proto == ip_proto::TCP && c.history.contains('h');
            }
            r.stats.bytes_in += c.orig_ip_bytes;
            r.stats.bytes_out += c.resp_ip_bytes;
            r.stats.pkts_in += c.orig_pkts;
            r.stats.pkts_out += c.resp_pkts;
            if local.is_local(&c.orig_h) {
                r.stats.bytes_internal += total;
            } else {
                r.stats.bytes_external += total;
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
            let distinct = [w.ports_in.len(), w.ports_out.len(), w.peers_in.len(), w.peers_out.len()];
            assert_eq!([h.dportin(), h.dportout(), h.fan_in(), h.fan_out()], distinct.map(|n| n as u64), "{addr}");
        }
        // The mix must make the distinct counts differ from the connection counts.
        assert!(got.iter().any(|(_, h)| h.dportout() < h.outcnx && h.fan_in() > 1));
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
