// Just enough packet decoding for replay: the IP-level length, the 5-tuple
// hashes, DSCP, addresses and ports for class rules, and the TCP fields the
// ACK-aware cores read. Link types: Ethernet (with 802.1Q/802.1ad tags),
// raw IPv4/IPv6, BSD loopback (NULL/LOOP), Linux cooked SLL and SLL2.
//
// Not implemented: MPLS, PPP/PPPoE and tunnels (GRE, VXLAN, Teredo) — such
// frames are counted as `non_ip` and not replayed; IPv6 extension headers
// other than hop-by-hop, routing, fragment and destination options.
#pragma once

#include <cstdint>

namespace tracelab::engine {

enum class DecodeResult : uint8_t { kOk, kNonIp, kTruncated, kBadIpHeader };
const char* decode_result_name(DecodeResult r);

struct Decoded {
  uint32_t ip_length = 0;  // IP total length (header + payload)
  uint8_t ip_version = 0;
  uint8_t dscp = 0;
  uint8_t proto = 0;
  uint8_t tcp_flags = 0;   // raw TCP flag byte
  bool has_ports = false;  // TCP/UDP first fragment
  uint16_t sport = 0, dport = 0;
  uint32_t tcp_seq = 0, tcp_ack = 0;
  uint32_t tcp_payload = 0;
  uint8_t src[16] = {0}, dst[16] = {0};  // IPv4 in the first 4 bytes
  uint64_t flow_hash = 0;                // direction-dependent 5-tuple hash
  uint64_t conn_hash = 0;                // the same in both directions
};

// Decodes one captured frame of `linktype`; `wire_len` is the frame's length
// on the wire (used when the IP length field is 0, e.g. BIG TCP).
DecodeResult decode_frame(int linktype, const uint8_t* data, uint32_t caplen, uint32_t wire_len, Decoded& out);

bool linktype_supported(int linktype);

}  // namespace tracelab::engine
