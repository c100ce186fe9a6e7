//! The finished-connection contract between the tracker and the outputs.
//! Changing a field here is a contract change: update `docs/analyzer.md`.

use std::fmt;

use tracelab_decode::Addr;

use crate::service::Service;

pub use crate::small::List;

/// Zeek's `conn_state` values (base/protocols/conn/main.zeek).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConnState {
    S0,
    S1,
    SF,
    REJ,
    S2,
    S3,
    RSTO,
    RSTR,
    RSTOS0,
    RSTRH,
    SH,
    SHR,
    OTH,
}

impl ConnState {
    pub fn name(&self) -> &'static str {
        match self {
            ConnState::S0 => "S0",
            ConnState::S1 => "S1",
            ConnState::SF => "SF",
            ConnState::REJ => "REJ",
            ConnState::S2 => "S2",
            ConnState::S3 => "S3",
            ConnState::RSTO => "RSTO",
            ConnState::RSTR => "RSTR",
            ConnState::RSTOS0 => "RSTOS0",
            ConnState::RSTRH => "RSTRH",
            ConnState::SH => "SH",
            ConnState::SHR => "SHR",
            ConnState::OTH => "OTH",
        }
    }
}

/// Summary of a set of time samples (nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleStats {
    pub count: u32,
    pub min_ns: i64,
    pub median_ns: i64,
    pub mean_ns: f64,
    pub max_ns: i64,
}

/// One DATA-ACK sample as `samples/rtt.parquet` keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttSample {
    pub rtt_ns: i64,
    /// The receiver held the ACK (a delayed ACK, see `docs/analyzer.md`):
    /// kept in the samples, left out of [`RttRecord`]'s statistics.
    pub delayed_ack: bool,
}

/// Round-trip times seen at the capture point (docs/reference/algorithms.md §9.3).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RttRecord {
    /// SYN -> SYN/ACK (the responder side of the monitor).
    pub syn_synack_ns: Option<i64>,
    /// SYN/ACK -> first ACK of the originator (the originator side).
    pub synack_ack_ns: Option<i64>,
    /// Sum of the two: RTT by handshake.
    pub handshake_ns: Option<i64>,
    /// DATA->ACK samples for data sent by the originator (ACKed by the
    /// responder: monitor-to-responder component), tcptrace's rules
    /// (Karn's included), delayed ACKs left out.
    pub data_ack_orig: SampleStats,
    /// DATA->ACK samples for data sent by the responder.
    pub data_ack_resp: SampleStats,
    /// Every DATA->ACK sample per side, delayed ACKs flagged, for `samples/`.
    pub data_ack_orig_samples: List<RttSample, 8>,
    pub data_ack_resp_samples: List<RttSample, 8>,
}

/// Per-party figures of the data-transfer decomposition (§9.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideTransfer {
    /// Data packets sent (retransmissions included) and distinct ones.
    pub data_pkts: u64,
    pub distinct_data_pkts: u64,
    pub retransmissions: u64,
    /// Number of trains and each train's size in data packets.
    pub trains: u32,
    pub train_sizes: List<u32, 4>,
    /// Warm-up of every train of this party, in order (0 for the very first
    /// train of the connection).
    pub warmups_ns: List<i64, 4>,
    pub actual_ns: i64,
    pub warmup_ns: i64,
    pub theory_ns: i64,
    pub pacing_ns: i64,
    /// pacing / data packets (0 when no data packet).
    pub pacing_per_pkt_ns: f64,
}

/// Phases and per-side decomposition of a TCP connection (§9.2). Present
/// only for TCP connections with at least one data packet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decomposition {
    pub setup_ns: i64,
    pub transfer_ns: i64,
    pub teardown_ns: i64,
    /// A = originator, B = responder.
    pub orig: SideTransfer,
    pub resp: SideTransfer,
}

/// Volume of one connection in one load bin (bin = floor(ts / bin width)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadBin {
    pub bin: i64,
    pub orig_ip_bytes: u64,
    pub resp_ip_bytes: u64,
    pub orig_pkts: u64,
    pub resp_pkts: u64,
}

/// A connection's uid: "C" and 17 base62 digits, inline (no allocation
/// per record); ordered as its text. Callgrind, tcpmix 300 k packets, with
/// the inline sample lists: 815.2 M -> 779.2 M instructions (9e52192;
/// docs/performance-history.md, analyzer step 9).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uid([u8; 18]);

impl Uid {
    /// `text` must be "C" and 17 ASCII alphanumerics.
    pub fn parse(text: &str) -> Option<Uid> {
        let b: [u8; 18] = text.as_bytes().try_into().ok()?;
        (b[0] == b'C' && b[1..].iter().all(u8::is_ascii_alphanumeric)).then_some(Uid(b))
    }

    pub(crate) fn from_ascii(b: [u8; 18]) -> Uid {
        debug_assert!(b.is_ascii());
        Uid(b)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("uids are ASCII")
    }

    /// The uid's text as bytes (no UTF-8 check: written once per
    /// connection to conn.log and Parquet).
    pub fn as_bytes(&self) -> &[u8; 18] {
        &self.0
    }
}

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// One finished connection: Zeek conn.log fields plus tracelab metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnRecord {
    /// First packet, ns since epoch.
    pub ts_ns: i64,
    /// Zeek-style uid ("C" + base62), a keyed hash of (ts, 5-tuple): the same
    /// for the same input whatever the thread count.
    pub uid: Uid,
    pub orig_h: Addr,
    pub orig_p: u16,
    pub resp_h: Addr,
    pub resp_p: u16,
    pub ip_proto: u8,
    /// Zeek's `service`, detected from the payload (`service.rs`); `None`
    /// is conn.log's `-`.
    pub service: Option<Service>,
    /// Zeek: unset ("-") when the connection has a single packet time.
    pub duration_ns: Option<i64>,
    /// Payload bytes per side (TCP: from sequence numbers, as Zeek).
    pub orig_bytes: Option<u64>,
    pub resp_bytes: Option<u64>,
    pub conn_state: ConnState,
    pub missed_bytes: u64,
    pub history: String,
    pub orig_pkts: u64,
    pub orig_ip_bytes: u64,
    pub resp_pkts: u64,
    pub resp_ip_bytes: u64,
    /// Time of the last packet, ns since epoch.
    pub last_ts_ns: i64,
    /// SYN seen from the originator, SYN/ACK from the responder, final ACK
    /// of the handshake from the originator.
    pub handshake_complete: bool,
    /// Any FIN or RST seen.
    pub closed: bool,
    pub rtt: RttRecord,
    pub transfer: Option<Decomposition>,
    /// §9.1: complete handshake, >= 1 data packet each way, FIN or RST at end.
    pub well_behaved: bool,
    /// Usually one (a connection within one bin).
    pub load_bins: List<LoadBin, 1>,
}
