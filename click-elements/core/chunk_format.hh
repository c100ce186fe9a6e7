// tracelab queueing cores: the one on-wire format for aggregates — the
// JumboGram of JumboGen (docs/reference/algorithms.md §5.2, [002 §2.1]), also used as the
// chunk shim of packet chunking (§6).
//
// Layout (all fields big-endian), ⚠AMB-15 resolved as follows:
//
//   offset 0  QTime  u16  span over which the packets were collected, in
//                         time units (saturating at 65535)
//   offset 2  N      u16  number of encapsulated packets (never rewritten)
//   offset 4  Chksm  u16  Internet checksum (RFC 1071 ones' complement) over
//                         the fixed header and the table, Chksm taken as 0
//   offset 6  table  N x { pktLen u16, pQTime u16 }  -- a table after the
//                         fixed header (not interleaved with the packets), so
//                         a router reads or rewrites all lengths in one place
//   then      the N packets' bytes, concatenated in table order.
//
// Overhead is 6 + 4N bytes (the seed's figure). pktLen = 0 marks a packet
// removed by a partial drop; its bytes are no longer in the payload. Packets
// are removed only from the end, so the payload stays contiguous.
//
// Time unit of QTime/pQTime: not carried in the header (the seed's header
// has no room); both ends of a tunnel agree on it. Defaults: 1 us for
// JumboGen (the ⚠AMB-15 suggestion; 65 ms span), 10 ns for chunking (its
// budgets are 50-200 us; 655 us span).
//
// Every decoder path checks bounds before it reads; malformed input yields a
// FormatError, never a read past the buffer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "queue_core.hh"

namespace tracelab {
namespace jg {

constexpr size_t kFixedHeader = 6;
constexpr size_t kEntrySize = 4;
constexpr size_t header_size(size_t n) { return kFixedHeader + kEntrySize * n; }

enum class FormatError : uint8_t {
  kOk = 0,
  kTruncated,  // buffer shorter than the header or table it announces
  kBadChecksum,
  kLengthMismatch,  // sum of pktLen differs from the payload length
  kEmptyPacket,     // encode: a packet of 0 bytes cannot be represented
  kPacketTooLong,   // encode: a packet longer than 65535 bytes
  kTooManyPackets,  // encode: more than 65535 packets
  kNoRoom,          // encode: output buffer too small
};

inline const char* format_error_name(FormatError e) {
  switch (e) {
    case FormatError::kOk:
      return "ok";
    case FormatError::kTruncated:
      return "truncated";
    case FormatError::kBadChecksum:
      return "bad_checksum";
    case FormatError::kLengthMismatch:
      return "length_mismatch";
    case FormatError::kEmptyPacket:
      return "empty_packet";
    case FormatError::kPacketTooLong:
      return "packet_too_long";
    case FormatError::kTooManyPackets:
      return "too_many_packets";
    case FormatError::kNoRoom:
      return "no_room";
  }
  return "unknown";
}

inline uint16_t rd16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline void wr16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// RFC 1071 checksum of `len` bytes, an odd last byte counting as a word's high
// half: the one C++ copy (cores, Click elements, the engine's benchmark).
inline uint16_t internet_checksum(const uint8_t* p, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += rd16(p + i);
  if (len & 1) sum += static_cast<uint32_t>(p[len - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// A time difference in header units, saturating at 65535 (negative -> 0).
inline uint16_t to_units(Time dt, Time unit) {
  if (dt <= 0) return 0;
  Time u = dt / unit;
  return u > 0xFFFF ? 0xFFFF : static_cast<uint16_t>(u);
}

// One packet handed to the encoder.
struct PacketRef {
  const uint8_t* data;
  size_t length;
  Time arrival;  // its queueing instant at the ingress, for pQTime
};

// Encodes `n` packets collected from pkts[0].arrival until `release` into
// `out`. Returns the number of bytes written, or 0 with `err` set.
inline size_t encode(const PacketRef* pkts, size_t n, Time release, Time unit, uint8_t* out, size_t cap,
                     FormatError& err) {
  err = FormatError::kOk;
  if (n > 0xFFFF) {
    err = FormatError::kTooManyPackets;
    return 0;
  }
  size_t total = header_size(n);
  for (size_t i = 0; i < n; ++i) {
    if (pkts[i].length == 0) {
      err = FormatError::kEmptyPacket;
      return 0;
    }
    if (pkts[i].length > 0xFFFF) {
      err = FormatError::kPacketTooLong;
      return 0;
    }
    total += pkts[i].length;
  }
  if (total > cap) {
    err = FormatError::kNoRoom;
    return 0;
  }
  const Time t0 = n ? pkts[0].arrival : release;
  wr16(out, to_units(release - t0, unit));
  wr16(out + 2, static_cast<uint16_t>(n));
  wr16(out + 4, 0);
  uint8_t* payload = out + header_size(n);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* e = out + kFixedHeader + kEntrySize * i;
    wr16(e, static_cast<uint16_t>(pkts[i].length));
    wr16(e + 2, to_units(pkts[i].arrival - t0, unit));
    for (size_t b = 0; b < pkts[i].length; ++b) payload[b] = pkts[i].data[b];
    payload += pkts[i].length;
  }
  wr16(out + 4, internet_checksum(out, header_size(n)));
  return total;
}

// A validated JumboGram in a caller's buffer.
struct View {
  const uint8_t* base = nullptr;
  uint16_t qtime = 0;
  uint16_t n = 0;
  size_t length = 0;  // whole JumboGram
  uint16_t pkt_len(size_t i) const { return rd16(base + kFixedHeader + kEntrySize * i); }
  uint16_t pq_time(size_t i) const { return rd16(base + kFixedHeader + kEntrySize * i + 2); }
  const uint8_t* payload() const { return base + header_size(n); }
  // Trailing entries already emptied by partial drops on the way.
  uint16_t dropped() const {
    uint16_t d = 0;
    while (d < n && pkt_len(n - 1 - d) == 0) ++d;
    return d;
  }
};

inline FormatError parse(const uint8_t* buf, size_t len, View& v) {
  if (len < kFixedHeader) return FormatError::kTruncated;
  const uint16_t n = rd16(buf + 2);
  if (len < header_size(n)) return FormatError::kTruncated;
  // A correct checksum field makes the ones' complement sum 0xFFFF, whose
  // complement is 0.
  if (internet_checksum(buf, header_size(n)) != 0) return FormatError::kBadChecksum;
  size_t payload = 0;
  for (size_t i = 0; i < n; ++i) payload += rd16(buf + kFixedHeader + kEntrySize * i);
  if (header_size(n) + payload != len) return FormatError::kLengthMismatch;
  v.base = buf;
  v.qtime = rd16(buf);
  v.n = n;
  v.length = len;
  return FormatError::kOk;
}

// JumboGen partial drop ([002 §2.3]): make `requested` trailing packets
// dropped in total. Drops are not cumulative along a path: only
// max(0, requested - already dropped) more packets go. Removes their bytes
// from the end, zeroes their pktLen, refreshes the checksum (N unchanged).
// Returns the new length through `new_len` and how many packets this call
// removed.
inline FormatError partial_drop(uint8_t* buf, size_t len, uint16_t requested, size_t& new_len, uint16_t& removed) {
  View v;
  removed = 0;
  new_len = len;
  FormatError e = parse(buf, len, v);
  if (e != FormatError::kOk) return e;
  if (requested > v.n) requested = v.n;
  const uint16_t already = v.dropped();
  size_t cut = 0;
  for (uint16_t k = already; k < requested; ++k) {
    uint8_t* entry = buf + kFixedHeader + kEntrySize * (v.n - 1 - k);
    cut += rd16(entry);
    wr16(entry, 0);
    ++removed;
  }
  if (removed) {
    wr16(buf + 4, 0);
    wr16(buf + 4, internet_checksum(buf, header_size(v.n)));
  }
  new_len = len - cut;
  return FormatError::kOk;
}

// The bytes JumboGen adds and saves ([002 §2.1]): cost of sending N packets
// as one JumboGram instead of separately, with an outer IP header `h_ip`
// and per-frame physical overhead `h_p` (Ethernet: IFG 12 + preamble 8 +
// MAC 14 + FCS 4 = 38). Negative = bytes saved.
constexpr long net_cost_bytes(long n, long h_ip = 20, long h_p = 38) {
  return h_ip + static_cast<long>(kFixedHeader) + 4 * n - h_p * (n - 1);
}

}  // namespace jg
}  // namespace tracelab
