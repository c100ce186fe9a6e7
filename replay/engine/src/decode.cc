#include "decode.hh"

#include <cstring>

#include "rng.hh"

namespace tracelab::engine {

namespace {

constexpr int kDltNull = 0, kDltEthernet = 1, kDltRaw = 101, kDltRawAlt = 12, kDltLoop = 108, kDltSll = 113,
              kDltIpv4 = 228, kDltIpv6 = 229, kDltSll2 = 276;

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 |
         p[3];
}

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// One endpoint (address, port) folded to a word, for order-free connection keys.
uint64_t endpoint_key(const uint8_t* addr, uint16_t port) {
  return mix64(load64(addr) ^ mix64(load64(addr + 8) ^ port));
}

void hash_tuple(Decoded& d) {
  const uint64_t a = endpoint_key(d.src, d.sport);
  const uint64_t b = endpoint_key(d.dst, d.dport);
  d.flow_hash = mix64(a ^ mix64(b + d.proto));
  const uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
  d.conn_hash = mix64(lo ^ mix64(hi + d.proto));
}

DecodeResult decode_transport(const uint8_t* p, uint32_t avail, uint32_t l4_len, Decoded& d) {
  if (d.proto == 6) {
    if (avail < 20) return DecodeResult::kTruncated;
    d.has_ports = true;
    d.sport = be16(p);
    d.dport = be16(p + 2);
    d.tcp_seq = be32(p + 4);
    d.tcp_ack = be32(p + 8);
    const uint32_t hlen = (p[12] >> 4) * 4u;
    d.tcp_flags = p[13];
    if (hlen < 20) return DecodeResult::kBadIpHeader;
    d.tcp_payload = l4_len > hlen ? l4_len - hlen : 0;
  } else if (d.proto == 17 || d.proto == 132) {
    if (avail < 4) return DecodeResult::kTruncated;
    d.has_ports = true;
    d.sport = be16(p);
    d.dport = be16(p + 2);
  }
  return DecodeResult::kOk;
}

DecodeResult decode_ip(const uint8_t* p, uint32_t avail, uint32_t wire_avail, Decoded& d) {
  if (avail < 1) return DecodeResult::kTruncated;
  const uint8_t version = p[0] >> 4;
  if (version == 4) {
    if (avail < 20) return DecodeResult::kTruncated;
    const uint32_t ihl = (p[0] & 0x0f) * 4u;
    if (ihl < 20) return DecodeResult::kBadIpHeader;
    d.ip_version = 4;
    d.dscp = p[1] >> 2;
    d.ip_length = be16(p + 2);
    if (d.ip_length == 0) d.ip_length = wire_avail;  // BIG TCP / TSO captures
    if (d.ip_length < ihl) return DecodeResult::kBadIpHeader;
    d.proto = p[9];
    std::memcpy(d.src, p + 12, 4);
    std::memcpy(d.dst, p + 16, 4);
    const bool first_fragment = (be16(p + 6) & 0x1fff) == 0;
    if (first_fragment && avail > ihl) {
      DecodeResult r = decode_transport(p + ihl, avail - ihl, d.ip_length - ihl, d);
      if (r == DecodeResult::kBadIpHeader) return r;
    }
  } else if (version == 6) {
    if (avail < 40) return DecodeResult::kTruncated;
    d.ip_version = 6;
    d.dscp = static_cast<uint8_t>((be16(p) >> 6) & 0x3f);
    d.ip_length = 40u + be16(p + 4);
    if (d.ip_length == 40 && wire_avail > 40) d.ip_length = wire_avail;  // jumbogram
    std::memcpy(d.src, p + 8, 16);
    std::memcpy(d.dst, p + 24, 16);
    uint8_t next = p[6];
    uint32_t off = 40;
    bool fragment_later = false;
    // Walk the extension headers that may precede the transport header.
    while ((next == 0 || next == 43 || next == 44 || next == 60) && off + 8 <= avail) {
      if (next == 44) fragment_later = (be16(p + off + 2) & 0xfff8) != 0;
      const uint32_t len = next == 44 ? 8 : (p[off + 1] + 1u) * 8;
      next = p[off];
      off += len;
    }
    d.proto = next;
    if (!fragment_later && off < avail) {
      DecodeResult r = decode_transport(p + off, avail - off, d.ip_length > off ? d.ip_length - off : 0, d);
      if (r == DecodeResult::kBadIpHeader) return r;
    }
  } else {
    return DecodeResult::kBadIpHeader;
  }
  hash_tuple(d);
  return DecodeResult::kOk;
}

}  // namespace

const char* decode_result_name(DecodeResult r) {
  switch (r) {
    case DecodeResult::kOk:
      return "ok";
    case DecodeResult::kNonIp:
      return "non_ip";
    case DecodeResult::kTruncated:
      return "truncated_header";
    case DecodeResult::kBadIpHeader:
      return "bad_ip_header";
  }
  return "unknown";
}

bool linktype_supported(int lt) {
  return lt == kDltNull || lt == kDltEthernet || lt == kDltRaw || lt == kDltRawAlt || lt == kDltLoop || lt == kDltSll ||
         lt == kDltIpv4 || lt == kDltIpv6 || lt == kDltSll2;
}

DecodeResult decode_frame(int linktype, const uint8_t* data, uint32_t caplen, uint32_t wire_len, Decoded& d) {
  d = Decoded{};
  uint32_t off = 0;
  uint16_t ethertype = 0;
  switch (linktype) {
    case kDltEthernet:
      if (caplen < 14) return DecodeResult::kTruncated;
      ethertype = be16(data + 12);
      off = 14;
      while (ethertype == 0x8100 || ethertype == 0x88a8 || ethertype == 0x9100) {
        if (caplen < off + 4) return DecodeResult::kTruncated;
        ethertype = be16(data + off + 2);
        off += 4;
      }
      break;
    case kDltNull:
    case kDltLoop: {
      if (caplen < 4) return DecodeResult::kTruncated;
      // The AF value is in host order of the capturing machine: read the
      // version nibble instead.
      off = 4;
      ethertype = caplen > 4 && (data[4] >> 4) == 6 ? 0x86dd : 0x0800;
      break;
    }
    case kDltSll:
      if (caplen < 16) return DecodeResult::kTruncated;
      ethertype = be16(data + 14);
      off = 16;
      break;
    case kDltSll2:
      if (caplen < 20) return DecodeResult::kTruncated;
      ethertype = be16(data);
      off = 20;
      break;
    case kDltRaw:
    case kDltRawAlt:
    case kDltIpv4:
    case kDltIpv6:
      ethertype = caplen > 0 && (data[0] >> 4) == 6 ? 0x86dd : 0x0800;
      break;
    default:
      return DecodeResult::kNonIp;
  }
  if (ethertype != 0x0800 && ethertype != 0x86dd) return DecodeResult::kNonIp;
  if (caplen <= off) return DecodeResult::kTruncated;
  return decode_ip(data + off, caplen - off, wire_len > off ? wire_len - off : 0, d);
}

}  // namespace tracelab::engine
