//! Per-host features (thesis §8.4, ALGORITHMS.md §9.4) and volumes.
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
use tracelab_flow::{ConnRecord, MixBuild};

use crate::scope::{LocalNets, Servers};

#[derive(Clone, Debug, Default)]
pub struct HostStats {
    pub incnx: u64,
    pub outcnx: u64,
    dports_in: HashSet<u16, MixBuild>,
    dports_out: HashSet<u16, MixBuild>,
    peers_in: HashSet<Addr, MixBuild>,
    peers_out: HashSet<Addr, MixBuild>,
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
        self.dports_in.len() as u64
    }
    pub fn dportout(&self) -> u64 {
        self.dports_out.len() as u64
    }
    pub fn fan_in(&self) -> u64 {
        self.peers_in.len() as u64
    }
    pub fn fan_out(&self) -> u64 {
        self.peers_out.len() as u64
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

#[derive(Default)]
pub struct HostTable {
    hosts: HashMap<Addr, HostStats, MixBuild>,
}

impl HostTable {
    pub fn add(&mut self, c: &ConnRecord, local: &LocalNets) {
        let acc = accepted(c);
        let orig_local = local.is_local(&c.orig_h);
        let resp_local = local.is_local(&c.resp_h);
        let total = c.orig_ip_bytes + c.resp_ip_bytes;
        {
            let o = self.hosts.entry(c.orig_h).or_default();
            o.outcnx += 1;
            o.dports_out.insert(c.resp_p);
            o.peers_out.insert(c.resp_h);
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
        let r = self.hosts.entry(c.resp_h).or_default();
        if acc {
            r.incnx += 1;
            r.dports_in.insert(c.resp_p);
            r.peers_in.insert(c.orig_h);
            if c.ip_proto == ip_proto::TCP && c.history.contains('h') {
                r.accepted_tcp = true;
            }
        }
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
        let mut s: HashSet<Addr, MixBuild> =
            self.hosts.iter().filter(|(_, h)| h.accepted_tcp).map(|(a, _)| *a).collect();
        s.extend(extra.iter().copied());
        Servers(s)
    }

    /// Hosts in address order (deterministic output).
    pub fn sorted(&self) -> Vec<(Addr, &HostStats)> {
        let mut v: Vec<_> = self.hosts.iter().map(|(a, h)| (*a, h)).collect();
        v.sort_unstable_by_key(|(a, _)| *a);
        v
    }

    pub fn addrs(&self) -> impl Iterator<Item = &Addr> {
        self.hosts.keys()
    }

    pub fn len(&self) -> usize {
        self.hosts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }
}
