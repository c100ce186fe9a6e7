// tracelab queueing cores: the packet metadata every adapter derives from an
// IPv4 header (docs/reference/algorithms.md §0: a flow is the directional 5-tuple).
//
// One function so that the Click elements and the cross-check driver
// (tests/click_crosscheck.cc) hand the cores byte-identical Packets:
// length = IP total length (link padding excluded), flow_hash = a hash of
// the directional 5-tuple (tuple_hash), conn_hash = the same with the two endpoints
// ordered (both directions alike), TCP flags, seq and ack. Ports are read
// only from first fragments; a later fragment is a flow of its own tuple
// with ports 0.
//
// Not implemented: IPv6 (describe_ipv4 returns false and sets only the
// length: the packet is then one flow of hash 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "queue_core.hh"
#include "rng.hh"

namespace tracelab {

// The tuple as it lies in the header (addresses and ports in network byte
// order, loaded as host integers, so any adapter on any host gets the same
// hash from the same bytes), packed into two words and mixed with
// SplitMix64's mix64 (rng.hh). mix64 is a bijection, so two tuples share a
// hash only by a 64-bit accident, as with the FNV-1a over the tuple's bytes
// this replaces: four multiplies instead of FNV's chain of 24 were half of
// TLEfdQueue's push (click/bench.sh; figures in click/README.md).
inline uint64_t tuple_hash(uint32_t a, uint16_t pa, uint32_t b, uint16_t pb, uint8_t proto) {
  const uint64_t addresses = uint64_t(a) << 32 | b;
  const uint64_t ports_proto = (uint64_t(pa) << 16 | pb) << 8 | proto;
  return mix64(addresses ^ mix64(ports_proto + 0x9e3779b97f4a7c15ULL));
}

// Fill `p` from the IPv4 packet ip[0..len). Returns false (and sets only
// p.length = len) when it is not a complete IPv4 header.
inline bool describe_ipv4(const uint8_t* ip, size_t len, Packet& p) {
  p.length = static_cast<uint32_t>(len);
  if (len < 20 || (ip[0] >> 4) != 4) return false;
  const size_t hl = (ip[0] & 0x0F) * 4u;
  if (hl < 20 || hl > len) return false;
  p.length = static_cast<uint32_t>(ip[2] << 8 | ip[3]);
  uint32_t src, dst;
  std::memcpy(&src, ip + 12, 4);
  std::memcpy(&dst, ip + 16, 4);
  const uint8_t proto = ip[9];
  const bool first_fragment = ((ip[6] & 0x1F) << 8 | ip[7]) == 0;
  uint16_t sport = 0, dport = 0;
  const uint8_t* l4 = ip + hl;
  const size_t l4len = len - hl;
  if (proto == 6 && first_fragment && l4len >= 20) {
    std::memcpy(&sport, l4, 2);
    std::memcpy(&dport, l4 + 2, 2);
    p.flags |= kFlagTcp;
    p.tcp_seq = uint32_t(l4[4]) << 24 | uint32_t(l4[5]) << 16 | uint32_t(l4[6]) << 8 | l4[7];
    p.tcp_ack = uint32_t(l4[8]) << 24 | uint32_t(l4[9]) << 16 | uint32_t(l4[10]) << 8 | l4[11];
    const uint8_t f = l4[13];  // FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10
    if (f & 0x02) p.flags |= kFlagSyn;
    if (f & 0x01) p.flags |= kFlagFin;
    const int payload = int(p.length) - int(hl) - int((l4[12] >> 4) * 4);
    if ((f & 0x10) && payload <= 0 && !(f & 0x07)) p.flags |= kFlagPureAck;
  } else if (proto == 17 && first_fragment && l4len >= 4) {
    std::memcpy(&sport, l4, 2);
    std::memcpy(&dport, l4 + 2, 2);
  }
  p.flow_hash = tuple_hash(src, sport, dst, dport, proto);
  const bool forward = src < dst || (src == dst && sport <= dport);
  p.conn_hash = forward ? p.flow_hash : tuple_hash(dst, dport, src, sport, proto);
  return true;
}

}  // namespace tracelab
