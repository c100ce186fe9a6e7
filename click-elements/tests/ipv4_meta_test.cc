// Packet metadata from IPv4 headers (core/ipv4_meta.hh), on hand-built bytes.
#include <gtest/gtest.h>

#include <vector>

#include "ipv4_meta.hh"

namespace tracelab {
namespace {

// 192.0.2.1:40000 -> 198.51.100.7:80, TCP with `payload` bytes and `flags`.
std::vector<uint8_t> tcp(uint8_t flags, size_t payload, bool reverse = false) {
  std::vector<uint8_t> p(40 + payload + 4);  // + 4 bytes of link padding
  const uint8_t a[4] = {192, 0, 2, 1}, b[4] = {198, 51, 100, 7};
  p[0] = 0x45;
  p[2] = static_cast<uint8_t>((40 + payload) >> 8);
  p[3] = static_cast<uint8_t>(40 + payload);
  p[9] = 6;
  for (int i = 0; i < 4; ++i) {
    p[12 + i] = reverse ? b[i] : a[i];
    p[16 + i] = reverse ? a[i] : b[i];
  }
  const uint16_t sp = reverse ? 80 : 40000, dp = reverse ? 40000 : 80;
  p[20] = sp >> 8;
  p[21] = sp & 0xff;
  p[22] = dp >> 8;
  p[23] = dp & 0xff;
  p[24] = 0x01;
  p[25] = 0x02;
  p[26] = 0x03;
  p[27] = 0x04;  // seq
  p[28] = 0xA0;
  p[29] = 0xB0;
  p[30] = 0xC0;
  p[31] = 0xD0;  // ack
  p[32] = 0x50;  // data offset 5 words
  p[33] = flags;
  return p;
}

TEST(Ipv4Meta, TcpFieldsLengthAndPureAck) {
  Packet p;
  std::vector<uint8_t> ack = tcp(0x10, 0);
  ASSERT_TRUE(describe_ipv4(ack.data(), ack.size(), p));
  EXPECT_EQ(p.length, 40u);  // total length, not the padded capture
  EXPECT_EQ(p.tcp_seq, 0x01020304u);
  EXPECT_EQ(p.tcp_ack, 0xA0B0C0D0u);
  EXPECT_EQ(p.flags, kFlagTcp | kFlagPureAck);
  Packet d;
  std::vector<uint8_t> data = tcp(0x18, 100);  // PSH ACK with payload
  ASSERT_TRUE(describe_ipv4(data.data(), data.size(), d));
  EXPECT_EQ(d.flags, kFlagTcp);
  Packet s;
  std::vector<uint8_t> syn = tcp(0x12, 0);  // SYN ACK: not a pure ACK
  ASSERT_TRUE(describe_ipv4(syn.data(), syn.size(), s));
  EXPECT_EQ(s.flags, kFlagTcp | kFlagSyn);
  EXPECT_EQ(p.flow_hash, d.flow_hash);
}

TEST(Ipv4Meta, DirectionsShareTheConnectionHashOnly) {
  Packet f, r;
  std::vector<uint8_t> a = tcp(0x10, 0), b = tcp(0x10, 0, true);
  ASSERT_TRUE(describe_ipv4(a.data(), a.size(), f));
  ASSERT_TRUE(describe_ipv4(b.data(), b.size(), r));
  EXPECT_NE(f.flow_hash, r.flow_hash);
  EXPECT_EQ(f.conn_hash, r.conn_hash);
}

TEST(Ipv4Meta, LaterFragmentHasNoPortsAndBadInputIsNotIpv4) {
  Packet first, later;
  std::vector<uint8_t> a = tcp(0x10, 0), b = tcp(0x10, 0);
  b[7] = 0x10;  // fragment offset 16 x 8 bytes
  ASSERT_TRUE(describe_ipv4(a.data(), a.size(), first));
  ASSERT_TRUE(describe_ipv4(b.data(), b.size(), later));
  EXPECT_NE(first.flow_hash, later.flow_hash);
  EXPECT_EQ(later.flags, 0);
  Packet x;
  std::vector<uint8_t> v6(60, 0);
  v6[0] = 0x60;
  EXPECT_FALSE(describe_ipv4(v6.data(), v6.size(), x));
  EXPECT_EQ(x.length, 60u);
  EXPECT_EQ(x.flow_hash, 0u);
  EXPECT_FALSE(describe_ipv4(a.data(), 19, x));  // truncated header
  a[0] = 0x4F;                                   // IHL 60 > 44 bytes
  EXPECT_FALSE(describe_ipv4(a.data(), a.size(), x));
}

}  // namespace
}  // namespace tracelab
