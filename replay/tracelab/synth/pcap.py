"""Classic libpcap files (microsecond timestamps, little-endian, Ethernet) rendered from
packet arrays with numpy: one structured header block per packet, checksums computed
over whole columns, zero payloads but for a service's first bytes (payloads.py),
written in chunks so memory stays bounded.

Payload bytes are zeros after those first bytes, so the TCP/UDP checksum of the whole
packet is the checksum of the pseudo-header, the transport header and the first bytes
alone: the checksums verify even when `snaplen` cuts the payload from the file.
"""

from __future__ import annotations

import numpy as np

from . import payloads

LINKTYPE_ETHERNET = 1
PCAP_MAGIC_US = 0xA1B2C3D4
ETH_LEN, IP_LEN, TCP_LEN, UDP_LEN = 14, 20, 20, 8
ETH_MIN_FRAME = 60  # without FCS: shorter frames are padded on the wire, and so here
MIN_SNAPLEN = ETH_LEN + IP_LEN + TCP_LEN  # the headers are always captured whole
CHUNK = 16384  # packets rendered at once (index arrays of CHUNK x header bytes)

TCP, UDP = 6, 17
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

_REC = [
    ("ts_sec", "<u4"),
    ("ts_usec", "<u4"),
    ("incl_len", "<u4"),
    ("orig_len", "<u4"),
    ("eth_dst", "u1", 6),
    ("eth_src", "u1", 6),
    ("ethertype", ">u2"),
    ("ver_ihl", "u1"),
    ("tos", "u1"),
    ("ip_len", ">u2"),
    ("ip_id", ">u2"),
    ("frag", ">u2"),
    ("ttl", "u1"),
    ("proto", "u1"),
    ("ip_sum", ">u2"),
    ("src", ">u4"),
    ("dst", ">u4"),
    ("sport", ">u2"),
    ("dport", ">u2"),
]
TCP_HDR = np.dtype(
    [
        *_REC,
        ("seq", ">u4"),
        ("ack", ">u4"),
        ("off", "u1"),
        ("flags", "u1"),
        ("win", ">u2"),
        ("l4_sum", ">u2"),
        ("urg", ">u2"),
    ]
)
UDP_HDR = np.dtype([*_REC, ("udp_len", ">u2"), ("l4_sum", ">u2")])
PCAP_REC = 16
IP_AT = PCAP_REC + ETH_LEN


def file_header(snaplen: int) -> bytes:
    return np.array(
        [(PCAP_MAGIC_US, 2, 4, 0, 0, snaplen, LINKTYPE_ETHERNET)],
        dtype=[
            ("magic", "<u4"),
            ("major", "<u2"),
            ("minor", "<u2"),
            ("zone", "<i4"),
            ("sigfigs", "<u4"),
            ("snaplen", "<u4"),
            ("link", "<u4"),
        ],
    ).tobytes()


def _fold(s: np.ndarray) -> np.ndarray:
    """One's-complement sum of 16-bit words (given as their plain sum) -> checksum."""
    s = s.astype(np.uint64)
    while (s >> 16).any():
        s = (s & 0xFFFF) + (s >> 16)
    return (~s & 0xFFFF).astype(np.uint16)


def _words(block: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Sum of the big-endian 16-bit words of bytes [start, stop) of every row."""
    b = block[:, start:stop].astype(np.uint32)
    return (b[:, 0::2] << 8).sum(axis=1, dtype=np.uint64) + b[:, 1::2].sum(axis=1, dtype=np.uint64)


def _mac(ip: np.ndarray) -> np.ndarray:
    """02:00:a:b:c:d, a locally administered address made of the IPv4 address."""
    out = np.zeros((len(ip), 6), dtype=np.uint8)
    out[:, 0] = 0x02
    for i in range(4):
        out[:, 2 + i] = (ip >> (24 - 8 * i)) & 0xFF
    return out


def _headers(p: dict, tcp: bool) -> np.ndarray:
    """Header blocks (pcap record header + Ethernet + IPv4 + TCP or UDP) of packets of
    one protocol given as columns: time_us, src, dst, sport, dport, ip_len, ip_id, and
    for TCP seq, ack, flags; optionally payload (a payloads.TABLE index); checksums
    filled in."""
    n = len(p["time_us"])
    h = np.zeros(n, dtype=TCP_HDR if tcp else UDP_HDR)
    ip_len = p["ip_len"].astype(np.int64)
    frame = np.maximum(ip_len + ETH_LEN, ETH_MIN_FRAME)
    h["ts_sec"] = p["time_us"] // 1_000_000
    h["ts_usec"] = p["time_us"] % 1_000_000
    h["incl_len"] = p["incl_len"]
    h["orig_len"] = frame
    h["eth_dst"] = _mac(p["dst"])
    h["eth_src"] = _mac(p["src"])
    h["ethertype"] = 0x0800
    h["ver_ihl"] = 0x45
    h["ip_len"] = ip_len
    h["ip_id"] = p["ip_id"]
    h["frag"] = 0x4000  # DF
    h["ttl"] = 64
    h["proto"] = TCP if tcp else UDP
    h["src"] = p["src"]
    h["dst"] = p["dst"]
    h["sport"] = p["sport"]
    h["dport"] = p["dport"]
    l4_len = (ip_len - IP_LEN).astype(np.uint64)
    if tcp:
        h["seq"] = p["seq"]
        h["ack"] = p["ack"]
        h["off"] = (TCP_LEN // 4) << 4
        h["flags"] = p["flags"]
        h["win"] = 65535
    else:
        h["udp_len"] = l4_len
    raw = h.view(np.uint8).reshape(n, h.dtype.itemsize)
    h["ip_sum"] = _fold(_words(raw, IP_AT, IP_AT + IP_LEN))
    # Pseudo-header (source, destination, protocol, transport length), then the header.
    pseudo = _words(raw, IP_AT + 12, IP_AT + 20) + np.uint64(TCP if tcp else UDP) + l4_len
    if "payload" in p:
        pseudo = pseudo + payloads.WORDS[p["payload"]]
    l4 = _fold(pseudo + _words(raw, IP_AT + IP_LEN, h.dtype.itemsize))
    if not tcp:
        l4 = np.where(l4 == 0, 0xFFFF, l4).astype(np.uint16)  # UDP sends a computed 0 as all ones
    h["l4_sum"] = l4
    return h.view(np.uint8).reshape(n, h.dtype.itemsize)


def render(p: dict, snaplen: int) -> bytes:
    """pcap records of time-ordered packets (columns as in `_headers`, plus proto)."""
    frame = np.maximum(p["ip_len"].astype(np.int64) + ETH_LEN, ETH_MIN_FRAME)
    incl = np.minimum(frame, snaplen)
    size = PCAP_REC + incl
    starts = np.concatenate(([0], np.cumsum(size)[:-1]))
    out = np.zeros(int(size.sum()), dtype=np.uint8)  # payload and padding stay zero
    for proto in (TCP, UDP):
        idx = np.flatnonzero(p["proto"] == proto)
        if len(idx):
            raw = _headers({**{k: v[idx] for k, v in p.items()}, "incl_len": incl[idx]}, proto == TCP)
            out[(starts[idx, None] + np.arange(raw.shape[1])).ravel()] = raw.ravel()
            if "payload" not in p:
                continue
            # A service's first bytes, as far as the snaplen keeps them.
            for sig in np.unique(p["payload"][idx]):
                if sig == 0:
                    continue
                at = idx[p["payload"][idx] == sig]
                body = np.frombuffer(payloads.TABLE[sig], dtype=np.uint8)
                room = PCAP_REC + incl[at] - raw.shape[1]
                for j, i in enumerate(at.tolist()):
                    k = min(len(body), int(room[j]))
                    out[starts[i] + raw.shape[1] : starts[i] + raw.shape[1] + k] = body[:k]
    return out.tobytes()


def write(fh, packets: dict, snaplen: int) -> None:
    """Writes time-ordered packets in chunks of CHUNK (bounded memory)."""
    n = len(packets["time_us"])
    for lo in range(0, n, CHUNK):
        fh.write(render({k: v[lo : lo + CHUNK] for k, v in packets.items()}, snaplen))
