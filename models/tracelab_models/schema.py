"""Column names of the analyzer's Parquet outputs, in one place so a rename is one edit.

The analyzer (Rust) writes these tables under a profile directory; see
docs/reference/architecture.md "Data contracts" and the analyzer's output crate.
"""

CONNECTIONS = "connections.parquet"
HOSTS = "hosts.parquet"
SUMMARY = "summary.json"
WARMUPS = "samples/warmups.parquet"
TRAINS = "samples/trains.parquet"
RTT_SAMPLES = "samples/rtt.parquet"
PACKET_SIZES = "samples/packet_sizes.parquet"

# connections.parquet (Zeek conn.log names plus tracelab's per-connection metrics)
TS = "ts"
UID = "uid"
ORIG_H = "id.orig_h"
ORIG_P = "id.orig_p"
RESP_H = "id.resp_h"
RESP_P = "id.resp_p"
PROTO = "proto"
DURATION = "duration"
ORIG_BYTES = "orig_bytes"
RESP_BYTES = "resp_bytes"
CONN_STATE = "conn_state"
HISTORY = "history"
LOCAL_ORIG = "local_orig"
LOCAL_RESP = "local_resp"
ORIG_PKTS = "orig_pkts"
RESP_PKTS = "resp_pkts"
ORIG_IP_BYTES = "orig_ip_bytes"
RESP_IP_BYTES = "resp_ip_bytes"
SCOPE = "scope"  # intranet | internet | external
CATEGORY = "category"  # lc-rp | ls-rp | lc-ls | ls-ls | other
WELL_BEHAVED = "well_behaved"
RTT_HANDSHAKE = "rtt_handshake_s"
RTT_DATA_ACK = "rtt_data_ack_s"
SIDES = ("orig", "resp")  # orig = initiator (party A), resp = remote party (B)


def side_col(side: str, metric: str) -> str:
    """Per-side column, e.g. side_col('orig', 'pacing_per_pkt_s') -> 'orig_pacing_per_pkt_s'."""
    return f"{side}_{metric}"


DATA_PKTS = "data_pkts"
PACING_PER_PKT = "pacing_per_pkt_s"
WARMUP_TOTAL = "warmup_s"

SCOPE_INTRANET = "intranet"
SCOPE_INTERNET = "internet"

# hosts.parquet
HOST = "host"
LOCAL = "local"
SERVER = "server"
ROLE_FEATURES = ("incnx", "outcnx", "dportin", "dportout", "fan_in", "fan_out")

# samples/*.parquet (warmups, trains, rtt): `conn` is the sample's connection as its
# row number in connections.parquet (0-based), so `scope[conn]` joins by position.
CONN = "conn"
SIDE = "side"
TRAIN = "train"
WARMUP_S = "warmup_s"
SIZE_PKTS = "size_pkts"
RTT_S = "rtt_s"
IP_LEN = "ip_len"
COUNT = "count"
