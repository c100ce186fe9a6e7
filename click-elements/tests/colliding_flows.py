"""Writes a pcap of flows whose flow keys collide in a flow table under one
table seed, for the adapters' table-seed tests.

The tables index by flow_table_hash(key, seed) = mix64(key ^ seed), its top
bits (core/efd_flow_table.hh). Click and ns-3 key an IPv4 packet by
core/ipv4_meta.hh's tuple_hash (the addresses and ports as the header holds
them, loaded little-endian); the replay engine keys any packet by
engine/src/decode.cc's hash_tuple (16-byte addresses, IPv4 in the first 4),
which only an IPv6 source address can steer. mix64 is a bijection, so the
flows are built backwards: hashes sharing their top 20 bits (one bucket, or
one home slot, in any table of up to 2^20), their keys under the seed, and
the addresses that give each key. Under another seed the same flows spread.

usage: colliding_flows.py OUT.pcap SEED [FLOWS] [--engine]
  (SEED decimal or 0x hex; --engine: IPv6 flows for the replay engine)
"""

from __future__ import annotations

import struct
import sys

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
C1, C2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * C1) & MASK
    z = ((z ^ (z >> 27)) * C2) & MASK
    return z ^ (z >> 31)


def unxorshift(y: int, s: int) -> int:
    x, k = y, s
    while k < 64:
        x ^= y >> k
        k += s
    return x


def unmix64(z: int) -> int:
    z = (unxorshift(z, 31) * pow(C2, -1, 1 << 64)) & MASK
    z = (unxorshift(z, 27) * pow(C1, -1, 1 << 64)) & MASK
    return unxorshift(z, 30)


def tuple_hash(src: int, sport: int, dst: int, dport: int, proto: int) -> int:
    """core/ipv4_meta.hh's, on the fields as loaded little-endian."""
    ports_proto = ((sport << 16 | dport) << 8) | proto
    return mix64(((src << 32) | dst) ^ mix64((ports_proto + GOLDEN) & MASK))


def colliding_keys(seed: int, flows: int) -> list[int]:
    return [unmix64((0xABCDE << 44) | (i * 0x9E3779B97 + 1)) ^ seed for i in range(flows)]


def checksum(header: bytes) -> int:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def packets(seed: int, flows: int, ip_len: int = 1000) -> list[bytes]:
    """One Ethernet frame per flow: IPv4/UDP, `ip_len` bytes of IP."""
    sport, dport, proto = 0x3930, 0x5000, 17  # as loaded: ports 12345 and 80
    frames = []
    for i, key in enumerate(colliding_keys(seed, flows)):
        addresses = unmix64(key) ^ mix64((((sport << 16 | dport) << 8 | proto) + GOLDEN) & MASK)
        src, dst = addresses >> 32, addresses & 0xFFFFFFFF
        assert tuple_hash(src, sport, dst, dport, proto) == key
        header = bytearray(struct.pack("!BBHHHBBH", 0x45, 0, ip_len, i, 0, 64, proto, 0))
        header += struct.pack("<II", src, dst)
        struct.pack_into("!H", header, 10, checksum(bytes(header)))
        udp = struct.pack("<HH", sport, dport) + struct.pack("!HH", ip_len - 20, 0)
        ip = bytes(header) + udp + bytes(ip_len - 28)
        frames.append(b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip)
    return frames


def endpoint_key(address: bytes, port: int) -> int:
    """decode.cc's: an address (16 bytes) and port folded to a word."""
    lo, hi = struct.unpack("<QQ", address)
    return mix64(lo ^ mix64(hi ^ port))


def engine_packets(seed: int, flows: int, ip_len: int = 1000) -> list[bytes]:
    """One Ethernet frame per flow, IPv6/UDP, keyed as the replay engine keys
    it (decode.cc: flow_hash = mix64(a ^ mix64(b + proto)), a and b the
    endpoints' keys): the first 8 bytes of the source address make `a`. The
    destination port is the first whose `b` exceeds every `a`, so that the
    connection hash (the smaller endpoint key first) is the flow hash and
    the ACK-aware elements' keys collide too."""
    sport, proto, high = 12345, 17, 0x2001_0DB8
    dst = bytes.fromhex("20010db8000000000000000000000002")
    keys = colliding_keys(seed, flows)
    for dport in range(1, 1 << 16):
        b = endpoint_key(dst, dport)
        ends = [unmix64(key) ^ mix64((b + proto) & MASK) for key in keys]
        if max(ends) < b:
            break
    else:
        raise AssertionError("no destination port keys the connections as the flows")
    frames = []
    for key, a in zip(keys, ends, strict=True):
        lo = unmix64(a) ^ mix64(high ^ sport)
        src = struct.pack("<QQ", lo, high)
        assert mix64(endpoint_key(src, sport) ^ mix64((b + proto) & MASK)) == key
        header = struct.pack("!IHBB", 6 << 28, ip_len - 40, proto, 64) + src + dst
        udp = struct.pack("!HHHH", sport, dport, ip_len - 40, 0)
        frames.append(b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x86\xdd" + header + udp + bytes(ip_len - 48))
    return frames


def write_pcap(path: str, frames: list[bytes]) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for frame in frames:
            f.write(struct.pack("<IIII", 1, 0, len(frame), len(frame)) + frame)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--engine"]
    build = engine_packets if "--engine" in sys.argv else packets
    write_pcap(args[0], build(int(args[1], 0), int(args[2]) if len(args) > 2 else 16))
