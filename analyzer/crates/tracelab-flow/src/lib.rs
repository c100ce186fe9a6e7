//! Connection tracking: [`PacketMeta`](tracelab_decode::PacketMeta) in,
//! finished [`ConnRecord`]s out, with Zeek conn.log semantics and the
//! per-connection TCP metrics of docs/reference/algorithms.md §9.
//!
//! * Zeek semantics (originator, `conn_state`, `history`, sizes from
//!   sequence numbers, `missed_bytes`, inactivity and TCP timers) are a port
//!   of zeek/zeek a13de64f; `tcp.rs` names each function it follows, and
//!   `analyzer/docs/zeek-differences.md` lists what is not reproduced.
//! * Metrics (`metrics.rs`): handshake and DATA-ACK RTTs (Karn's rule),
//!   retransmissions, trains, warm-ups, theoretical time (Eq. 5.10 of the
//!   thesis, (r-1) RTTs) and pacing, load bins.
//! * Service (`service.rs`): Zeek's service names, detected from the first
//!   bytes of the first payload packets of each direction.
//!
//! Determinism: the table hash is keyed at random per run ([`TableBuild`]),
//! but nothing leaves in table order: records leave [`Tracker::advance`]
//! and [`Tracker::finish`] sorted by (start time, key), and uids are a pure
//! function of (first timestamp, 5-tuple).

mod common;
mod key;
mod metrics;
mod record;
pub mod service;
mod small;
pub use small::List;
mod tcp;
mod tracker;

pub use key::{zeek_ports, FlowKey, TableBuild, TableHasher};
pub use metrics::{flight, rtt_a_b, theory_ns};
pub use record::*;
pub use service::Service;
pub use tracker::{Seen, Tracker};

use tracelab_decode::ip_proto;

const SEC: i64 = 1_000_000_000;

/// Tracker settings. Defaults are Zeek's (init-bare.zeek and
/// base/protocols/conn/inactivity.zeek).
#[derive(Clone, Debug)]
pub struct TrackerConfig {
    /// `tcp_inactivity_timeout` (5 min): established TCP.
    pub tcp_inactivity_timeout_ns: i64,
    /// `udp_inactivity_timeout` (1 min); also TCP until it leaves the
    /// handshake, as in Zeek.
    pub udp_inactivity_timeout_ns: i64,
    /// `icmp_inactivity_timeout` (1 min).
    pub icmp_inactivity_timeout_ns: i64,
    /// `unknown_ip_inactivity_timeout` (1 min): other IP protocols.
    pub unknown_ip_inactivity_timeout_ns: i64,
    /// `tcp_SYN_timeout` (5 s): first ExpireTimer.
    pub tcp_syn_timeout_ns: i64,
    /// `tcp_session_timer` (6 s): ExpireTimer period.
    pub tcp_session_timer_ns: i64,
    /// `tcp_connection_linger` (5 s).
    pub tcp_connection_linger_ns: i64,
    /// `tcp_attempt_delay` (5 s): an unanswered SYN ends its connection.
    pub tcp_attempt_delay_ns: i64,
    /// `tcp_close_delay` (5 s): a closed connection lingers this long.
    pub tcp_close_delay_ns: i64,
    /// `Conn::port_inactivity_timeouts` (21, 22, 23, 513/tcp: 1 h), applied
    /// when the connection is established.
    pub tcp_port_inactivity_ns: Vec<(u16, i64)>,
    /// Zeek's `likely_server_ports` as (IP protocol, port); drives the
    /// originator flip of connections first seen mid-stream. The default is
    /// what a non-bare Zeek registers; a `zeek -b` run registers only the
    /// ports of the scripts it loads (see [`zeek_server_ports`]).
    pub likely_server_ports: Vec<(u8, u16)>,
    /// Load bin width (default 300 s, docs/reference/algorithms.md §9.1).
    pub load_bin_ns: i64,
    /// DATA-ACK samples kept per side and connection (statistics still
    /// cover every sample; the median is exact while count <= this).
    pub max_rtt_samples_per_conn: usize,
    /// Initial flow-table capacity; the table grows as connections do.
    /// Small by default: the memory of a pre-sized table is touched (and
    /// zeroed by the kernel) whether or not a trace ever fills it, and a
    /// page touched first costs more CPU here than the table's few rehashes.
    pub capacity_hint: usize,
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig {
            tcp_inactivity_timeout_ns: 300 * SEC,
            udp_inactivity_timeout_ns: 60 * SEC,
            icmp_inactivity_timeout_ns: 60 * SEC,
            unknown_ip_inactivity_timeout_ns: 60 * SEC,
            tcp_syn_timeout_ns: 5 * SEC,
            tcp_session_timer_ns: 6 * SEC,
            tcp_connection_linger_ns: 5 * SEC,
            tcp_attempt_delay_ns: 5 * SEC,
            tcp_close_delay_ns: 5 * SEC,
            tcp_port_inactivity_ns: [21, 22, 23, 513].iter().map(|&p| (p, 3600 * SEC)).collect(),
            likely_server_ports: zeek_server_ports(ZEEK_ALL_SCRIPTS),
            load_bin_ns: 300 * SEC,
            max_rtt_samples_per_conn: 4096,
            // Was 1 << 16: peak RSS 162 -> 124 MB on the 300 k-packet tcpmix trace,
            // +0.3 % instructions (callgrind; 7219e99, docs/performance-history.md, analyzer step 29).
            capacity_hint: 1 << 12,
        }
    }
}

const T: u8 = ip_proto::TCP;
const U: u8 = ip_proto::UDP;

/// Server ports registered by each Zeek script (`Analyzer::register_for_ports`
/// in base/protocols/*/main.zeek); "packet-protocols" is always loaded.
const ZEEK_PORTS: &[(&str, &[(u8, u16)])] = &[
    ("packet-protocols", &[(U, 5072), (U, 6081), (U, 4754), (U, 2152), (U, 2123), (U, 3544), (U, 4789)]),
    ("dce-rpc", &[(T, 135)]),
    ("dhcp", &[(U, 67), (U, 4011)]),
    ("dnp3", &[(T, 20000), (U, 20000)]),
    ("dns", &[(U, 53), (T, 53), (U, 137), (U, 5353), (U, 5355)]),
    ("finger", &[(T, 79)]),
    ("ftp", &[(T, 21), (T, 2811)]),
    ("http", &[(T, 80), (T, 81), (T, 631), (T, 1080), (T, 3128), (T, 8000), (T, 8080), (T, 8888)]),
    ("imap", &[(T, 143)]),
    ("irc", &[(T, 6666), (T, 6667), (T, 6668), (T, 6669)]),
    ("krb", &[(U, 88), (T, 88)]),
    ("ldap", &[(T, 389), (T, 3268), (U, 389)]),
    ("modbus", &[(T, 502)]),
    ("mqtt", &[(T, 1883)]),
    ("mysql", &[(T, 1434), (T, 3306)]),
    ("ntp", &[(U, 123)]),
    ("postgresql", &[(T, 5432)]),
    ("quic", &[(U, 443)]),
    ("radius", &[(U, 1812)]),
    ("rdp", &[(T, 3389), (U, 3389)]),
    ("redis", &[(T, 6379)]),
    ("sip", &[(U, 5060)]),
    ("smb", &[(T, 139), (T, 445)]),
    ("smtp", &[(T, 25), (T, 587)]),
    ("snmp", &[(U, 161), (U, 162)]),
    ("socks", &[(T, 1080)]),
    ("ssh", &[(T, 22)]),
    (
        "ssl",
        &[
            (T, 443),
            (T, 465),
            (T, 563),
            (T, 585),
            (T, 614),
            (T, 636),
            (T, 989),
            (T, 990),
            (T, 992),
            (T, 993),
            (T, 995),
            (T, 5223),
            (U, 443),
        ],
    ),
    ("syslog", &[(U, 514), (T, 514)]),
    ("xmpp", &[(T, 5222), (T, 5269)]),
];

/// Every base protocol script: what `zeek` without `-b` loads.
pub const ZEEK_ALL_SCRIPTS: &[&str] = &[
    "dce-rpc",
    "dhcp",
    "dnp3",
    "dns",
    "finger",
    "ftp",
    "http",
    "imap",
    "irc",
    "krb",
    "ldap",
    "modbus",
    "mqtt",
    "mysql",
    "ntp",
    "postgresql",
    "quic",
    "radius",
    "rdp",
    "redis",
    "sip",
    "smb",
    "smtp",
    "snmp",
    "socks",
    "ssh",
    "ssl",
    "syslog",
    "xmpp",
];

/// Zeek's `likely_server_ports` when the given base/protocols scripts are
/// loaded (plus the always-loaded packet protocols). Unknown names are
/// ignored.
pub fn zeek_server_ports(scripts: &[&str]) -> Vec<(u8, u16)> {
    let mut v: Vec<(u8, u16)> = ZEEK_PORTS
        .iter()
        .filter(|(name, _)| *name == "packet-protocols" || scripts.contains(name))
        .flat_map(|(_, ports)| ports.iter().copied())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}
