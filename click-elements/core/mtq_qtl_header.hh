// tracelab queueing cores: the MTQ / QTL fields in real header bytes
// (docs/reference/algorithms.md §7; [004 §1]: "an additional header field in IP or UDP
// packets (e.g. an IPv6 optional header)").
//
// One 8-byte option, the same payload in IPv4 and IPv6:
//   type u8 | len u8 | MTQ u16 (microseconds) | QTL u32 (nanoseconds)
// MTQ = 0xFFFF means "not set" (max 65.534 ms: the seed's values are
// 1.8-16 ms); QTL = 0xFFFFFFFF means "not set" (max 4.29 s).
// * IPv4: an IP option, type 0x9E = copy 1, class 0, number 30: RFC 4727's
//   experimental option (RFC 3692 style), copied into fragments so every
//   fragment carries its budget. len = 8 (a multiple of 4: no padding).
// * IPv6: a Destination Options header (Next Header 60) right after the
//   fixed header (after a Hop-by-Hop header if there is one), 16 bytes:
//   next header, hdr ext len 1, the option (type 0x3E: RFC 4727
//   experimental, "skip if unrecognized" (00), "may change en route" (1)
//   because QTL decreases hop by hop; opt data len 6), then PadN(4).
//   A Hop-by-Hop option would be the standards-pure place for per-router
//   processing; routers handle HBH on slow paths, and the seed names an
//   "optional header": the destination option is the choice the project
//   asked for, and every node of this toolkit parses it.
// Packet::mtq carries MTQ in microseconds, Packet::budget carries QTL in
// picoseconds (kFlagHasMtq / kFlagHasQtl say which are set). A QTL written
// back is rounded down to the nanosecond (never extends a budget).
//
// Every function checks bounds before reading or writing; errors are
// returned, the buffer is then unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "chunk_format.hh"
#include "queue_core.hh"

namespace tracelab {
namespace mq {

constexpr uint8_t kIpv4OptionType = 0x9E;
constexpr uint8_t kIpv6OptionType = 0x3E;
constexpr uint8_t kIpv6DestOpts = 60;
constexpr size_t kOptionSize = 8;
constexpr size_t kIpv6ExtSize = 16;
constexpr uint16_t kMtqAbsent = 0xFFFF;
constexpr uint32_t kQtlAbsent = 0xFFFFFFFF;

struct Fields {
  uint16_t mtq_us = kMtqAbsent;
  uint32_t qtl_ns = kQtlAbsent;
  bool has_mtq() const { return mtq_us != kMtqAbsent; }
  bool has_qtl() const { return qtl_ns != kQtlAbsent; }
};

enum class HeaderError : uint8_t {
  kOk = 0,
  kAbsent,         // decode: no MTQ/QTL option in the packet
  kTruncated,      // buffer shorter than the headers it announces
  kNotIp,          // version is neither 4 nor 6
  kBadOption,      // an option or extension header with an impossible length
  kNoOptionSpace,  // IPv4: IHL would exceed 15 words
  kNoRoom,         // buffer capacity too small for the insertion
};

inline const char* header_error_name(HeaderError e) {
  switch (e) {
    case HeaderError::kOk:
      return "ok";
    case HeaderError::kAbsent:
      return "absent";
    case HeaderError::kTruncated:
      return "truncated";
    case HeaderError::kNotIp:
      return "not_ip";
    case HeaderError::kBadOption:
      return "bad_option";
    case HeaderError::kNoOptionSpace:
      return "no_option_space";
    case HeaderError::kNoRoom:
      return "no_room";
  }
  return "unknown";
}

inline void put_fields(uint8_t* o, uint8_t type, const Fields& f) {
  o[0] = type;
  o[1] = type == kIpv4OptionType ? 8 : 6;
  jg::wr16(o + 2, f.mtq_us);
  jg::wr16(o + 4, static_cast<uint16_t>(f.qtl_ns >> 16));
  jg::wr16(o + 6, static_cast<uint16_t>(f.qtl_ns));
}
inline Fields get_fields(const uint8_t* o) {
  Fields f;
  f.mtq_us = jg::rd16(o + 2);
  f.qtl_ns = static_cast<uint32_t>(jg::rd16(o + 4)) << 16 | jg::rd16(o + 6);
  return f;
}

// ---- IPv4 -------------------------------------------------------------------

inline void ipv4_fix_checksum(uint8_t* ip) {
  const size_t ihl = (ip[0] & 0x0F) * 4u;
  jg::wr16(ip + 10, 0);
  jg::wr16(ip + 10, jg::internet_checksum(ip, ihl));
}

// Offset of our option inside the IPv4 header, or an error.
inline HeaderError ipv4_find(const uint8_t* ip, size_t len, size_t& off) {
  if (len < 20) return HeaderError::kTruncated;
  if ((ip[0] >> 4) != 4) return HeaderError::kNotIp;
  const size_t ihl = (ip[0] & 0x0F) * 4u;
  if (ihl < 20) return HeaderError::kBadOption;
  if (len < ihl) return HeaderError::kTruncated;
  for (size_t i = 20; i < ihl;) {
    const uint8_t t = ip[i];
    if (t == 0) break;  // End of Option List
    if (t == 1) {
      ++i;
      continue;
    }  // No-Operation
    if (i + 1 >= ihl) return HeaderError::kBadOption;
    const uint8_t l = ip[i + 1];
    if (l < 2 || i + l > ihl) return HeaderError::kBadOption;
    if (t == kIpv4OptionType) {
      if (l != kOptionSize) return HeaderError::kBadOption;
      off = i;
      return HeaderError::kOk;
    }
    i += l;
  }
  return HeaderError::kAbsent;
}

// ---- IPv6 -------------------------------------------------------------------

// Walk Hop-by-Hop (0), Routing (43) and Destination Options (60) headers;
// report our option's offset, or where a new header would go (after HBH).
inline HeaderError ipv6_find(const uint8_t* ip, size_t len, size_t& off, size_t& insert_at, size_t& prev_next_hdr) {
  if (len < 40) return HeaderError::kTruncated;
  if ((ip[0] >> 4) != 6) return HeaderError::kNotIp;
  size_t pos = 40;
  insert_at = 40;
  prev_next_hdr = 6;
  uint8_t nh = ip[6];
  while (nh == 0 || nh == 43 || nh == kIpv6DestOpts) {
    if (pos + 2 > len) return HeaderError::kTruncated;
    const size_t ext = (ip[pos + 1] + 1u) * 8u;
    if (pos + ext > len) return HeaderError::kTruncated;
    if (nh == kIpv6DestOpts) {
      for (size_t i = pos + 2; i < pos + ext;) {
        const uint8_t t = ip[i];
        if (t == 0) {
          ++i;
          continue;
        }  // Pad1
        if (i + 1 >= pos + ext) return HeaderError::kBadOption;
        const uint8_t l = ip[i + 1];
        if (i + 2 + l > pos + ext) return HeaderError::kBadOption;
        if (t == kIpv6OptionType) {
          if (l != 6) return HeaderError::kBadOption;
          off = i;
          return HeaderError::kOk;
        }
        i += 2u + l;
      }
    }
    if (nh == 0) {  // a new header goes after Hop-by-Hop (RFC 8200 §4.1)
      insert_at = pos + ext;
      prev_next_hdr = pos;
    }
    nh = ip[pos];
    pos += ext;
  }
  return HeaderError::kAbsent;
}

// ---- both ---------------------------------------------------------------------

inline HeaderError decode(const uint8_t* ip, size_t len, Fields& f) {
  if (len < 1) return HeaderError::kTruncated;
  size_t off = 0, ins, prev;
  HeaderError e = (ip[0] >> 4) == 4   ? ipv4_find(ip, len, off)
                  : (ip[0] >> 4) == 6 ? ipv6_find(ip, len, off, ins, prev)
                                      : HeaderError::kNotIp;
  if (e == HeaderError::kOk) f = get_fields(ip + off);
  return e;
}

// Write `f` into the packet `ip[0..len)` (buffer capacity `cap`): update the
// option in place if present, insert it otherwise. `new_len` gets the length.
inline HeaderError mark(uint8_t* ip, size_t len, size_t cap, const Fields& f, size_t& new_len) {
  new_len = len;
  if (len < 1) return HeaderError::kTruncated;
  size_t off = 0;
  if ((ip[0] >> 4) == 4) {
    HeaderError e = ipv4_find(ip, len, off);
    if (e == HeaderError::kOk) {
      put_fields(ip + off, kIpv4OptionType, f);
      ipv4_fix_checksum(ip);
      return e;
    }
    if (e != HeaderError::kAbsent) return e;
    const size_t ihl = (ip[0] & 0x0F) * 4u;
    if (ihl + kOptionSize > 60) return HeaderError::kNoOptionSpace;
    if (len + kOptionSize > cap) return HeaderError::kNoRoom;
    const uint16_t total = jg::rd16(ip + 2);
    if (total < ihl || total > len) return HeaderError::kTruncated;
    std::memmove(ip + ihl + kOptionSize, ip + ihl, len - ihl);
    put_fields(ip + ihl, kIpv4OptionType, f);
    ip[0] = static_cast<uint8_t>(0x40 | ((ihl + kOptionSize) / 4));
    jg::wr16(ip + 2, static_cast<uint16_t>(total + kOptionSize));
    ipv4_fix_checksum(ip);
    new_len = len + kOptionSize;
    return HeaderError::kOk;
  }
  if ((ip[0] >> 4) == 6) {
    size_t ins = 0, prev = 0;
    HeaderError e = ipv6_find(ip, len, off, ins, prev);
    if (e == HeaderError::kOk) {
      put_fields(ip + off, kIpv6OptionType, f);
      return e;
    }
    if (e != HeaderError::kAbsent) return e;
    if (len + kIpv6ExtSize > cap) return HeaderError::kNoRoom;
    const uint16_t plen = jg::rd16(ip + 4);
    if (plen + 40u > len || plen + kIpv6ExtSize > 0xFFFF) return HeaderError::kTruncated;
    std::memmove(ip + ins + kIpv6ExtSize, ip + ins, len - ins);
    uint8_t* h = ip + ins;
    h[0] = ip[prev];  // the new header takes over the chain
    h[1] = 1;         // (1 + 1) * 8 = 16 bytes
    put_fields(h + 2, kIpv6OptionType, f);
    h[10] = 1;  // PadN, 4 bytes of zeros
    h[11] = 4;
    std::memset(h + 12, 0, 4);
    ip[prev] = kIpv6DestOpts;
    jg::wr16(ip + 4, static_cast<uint16_t>(plen + kIpv6ExtSize));
    new_len = len + kIpv6ExtSize;
    return HeaderError::kOk;
  }
  return HeaderError::kNotIp;
}

// Packet metadata <-> fields (units: MTQ us, QTL ns on the wire; ps inside).
inline void to_packet(const Fields& f, Packet& p) {
  p.flags = static_cast<uint8_t>(p.flags & ~(kFlagHasMtq | kFlagHasQtl));
  if (f.has_mtq()) {
    p.mtq = f.mtq_us;
    p.flags |= kFlagHasMtq;
  }
  if (f.has_qtl()) {
    p.budget = static_cast<Time>(f.qtl_ns) * kNanosecond;
    p.flags |= kFlagHasQtl;
  }
}
inline Fields from_packet(const Packet& p) {
  Fields f;
  if (p.flags & kFlagHasMtq) f.mtq_us = p.mtq == kMtqAbsent ? kMtqAbsent - 1 : p.mtq;
  if (p.flags & kFlagHasQtl) {
    const Time ns = p.budget / kNanosecond;
    f.qtl_ns = ns >= static_cast<Time>(kQtlAbsent) ? kQtlAbsent - 1 : static_cast<uint32_t>(ns);
  }
  return f;
}

}  // namespace mq
}  // namespace tracelab
