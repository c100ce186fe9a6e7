// MTQ / QTL early discarding, its header fields, and EPLR (docs/reference/algorithms.md §7).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "chunk_format.hh"
#include "mtq_qtl.hh"
#include "mtq_qtl_header.hh"

namespace tracelab {
namespace {

constexpr Time us = kMicrosecond;
constexpr Time ms = kMillisecond;

Packet pkt(uint32_t len, uint8_t flags = 0, uint16_t mtq_us = 0, Time qtl = kNever) {
  Packet p;
  p.length = len;
  p.flags = flags;
  p.mtq = mtq_us;
  p.budget = qtl;
  return p;
}

// 20 Mb/s, 200-B packets: 80 us each; 10 queued -> d = 800 us.
MtqQtlQueue with_backlog(int n) {
  MtqQtlQueue q;
  for (int i = 0; i < n; ++i) q.enqueue(pkt(200), 0);
  return q;
}

TEST(MtqQtlQueue, LocalDelayFromBacklogAndRate) {
  MtqQtlQueue q = with_backlog(10);
  EXPECT_EQ(q.local_delay(0), 800 * us);
  MtqQtlQueue full = with_backlog(199);
  // [004 §3]: 200 packets x 200 B at 20 Mb/s = 16 ms.
  EXPECT_EQ(full.local_delay(0) + 80 * us, 16 * ms);
}

TEST(MtqQtlQueue, MtqKeepsOnEqualityDropsAbove) {
  MtqQtlQueue q = with_backlog(10);
  q.enqueue(pkt(200, kFlagHasMtq, 800), 0);  // d == MTQ: kept
  EXPECT_EQ(q.length_packets(), 11u);
  q.enqueue(pkt(200, kFlagHasMtq, 879), 0);  // d = 880 > 879: dropped
  EXPECT_EQ(q.stats().mtq_drops, 1u);
  EXPECT_EQ(q.counters().dropped[int(DropReason::kEarlyDiscard)], 1u);
}

TEST(MtqQtlQueue, QtlDropsWhenNotPositiveAfterUpdate) {
  MtqQtlQueue q = with_backlog(10);
  q.enqueue(pkt(200, kFlagHasQtl, 0, 800 * us), 0);  // 800 - 800 = 0: dropped
  EXPECT_EQ(q.stats().qtl_drops, 1u);
  EXPECT_EQ(q.counters().dropped[int(DropReason::kBudgetExpired)], 1u);
  q.enqueue(pkt(200, kFlagHasQtl, 0, 800 * us + 1), 0);  // 1 ps left: kept
  std::vector<Packet> st(1);
  Batch b{st.data(), 1};
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(q.dequeue(0, b));
  ASSERT_TRUE(q.dequeue(0, b));
  EXPECT_EQ(b.packets[0].budget, 1);
}

TEST(MtqQtlQueue, QtlDecreasesAcrossThreeCongestedNodes) {
  // QTL = 10 ms; each node has 50 packets queued: d = 4 ms.
  Packet p = pkt(200, kFlagHasQtl, 0, 10 * ms);
  std::vector<Packet> st(1);
  Batch b{st.data(), 1};
  Time left[2];
  for (int node = 0; node < 3; ++node) {
    MtqQtlQueue q = with_backlog(50);
    q.enqueue(p, 0);
    if (node < 2) {
      for (int i = 0; i <= 50; ++i) ASSERT_TRUE(q.dequeue(0, b));
      p = b.packets[0];
      left[node] = p.budget;
    } else {
      EXPECT_EQ(q.stats().qtl_drops, 1u);  // 4 ms >= 2 ms left
    }
  }
  EXPECT_EQ(left[0], 6 * ms);
  EXPECT_EQ(left[1], 2 * ms);
}

TEST(MtqQtlQueue, AttributionOverflowThenMtqThenQtl) {
  MtqQtlQueue q = with_backlog(200);
  q.enqueue(pkt(200, kFlagHasMtq | kFlagHasQtl, 0, 0), 0);
  EXPECT_EQ(q.stats().overflow_drops, 1u);
  MtqQtlQueue r = with_backlog(10);
  r.enqueue(pkt(200, kFlagHasMtq | kFlagHasQtl, 1, 1), 0);  // both fail: MTQ counted
  EXPECT_EQ(r.stats().mtq_drops, 1u);
  EXPECT_EQ(r.stats().qtl_drops, 0u);
  EXPECT_EQ(r.counters().offered, r.counters().served + r.counters().dropped_total() + r.length_packets());
}

TEST(MtqQtlQueue, InServiceResidualOption) {
  MtqQtlConfig c;
  c.count_in_service = true;
  MtqQtlQueue q(c);
  std::vector<Packet> st(1);
  Batch b{st.data(), 1};
  q.enqueue(pkt(200), 0);
  ASSERT_TRUE(q.dequeue(0, b));  // in service until 80 us
  EXPECT_EQ(q.local_delay(30 * us), 50 * us);
  MtqQtlQueue plain;
  plain.enqueue(pkt(200), 0);
  ASSERT_TRUE(plain.dequeue(0, b));
  EXPECT_EQ(plain.local_delay(30 * us), 0);
}

// The estimate ignores the packet on the wire, so admitted packets can wait
// longer than their budgets; dequeue() counts those. 20 Mb/s: 200 B = 80 us.
TEST(MtqQtlQueue, ViolationsMeasuredAtDequeue) {
  MtqQtlQueue q;
  std::vector<Packet> st(1);
  Batch b{st.data(), 1};
  q.enqueue(pkt(200), 0);
  ASSERT_TRUE(q.dequeue(0, b));  // on the wire until 80 us
  auto with = [](uint16_t mtq_us, Time qtl) {
    Packet p = pkt(200, kFlagHasMtq | kFlagHasQtl, mtq_us, qtl);
    return p;
  };
  q.enqueue(with(50, 60 * us), 10 * us);     // B: d = 0, waits 70: both violated
  q.enqueue(with(100, 300 * us), 10 * us);   // C: d = 80, waits 150: MTQ only
  q.enqueue(with(1000, 230 * us), 10 * us);  // D: d = 160, waits 230 = QTL: QTL
  q.enqueue(with(310, 900 * us), 10 * us);   // E: d = 240, waits 310 = MTQ: none
  EXPECT_EQ(q.length_packets(), 4u);
  for (Time t = 80 * us; q.dequeue(t, b); t += 80 * us) {
  }
  EXPECT_EQ(q.stats().mtq_violations, 2u);
  EXPECT_EQ(q.stats().qtl_violations, 2u);
  // With the in-service residual counted, B's estimate is 70 us > 50: dropped.
  MtqQtlConfig c;
  c.count_in_service = true;
  MtqQtlQueue r(c);
  r.enqueue(pkt(200), 0);
  ASSERT_TRUE(r.dequeue(0, b));
  r.enqueue(with(50, 60 * us), 10 * us);
  EXPECT_EQ(r.stats().mtq_drops, 1u);
}

// ---- header bytes -------------------------------------------------------------

std::vector<uint8_t> ipv4_udp(size_t payload) {
  std::vector<uint8_t> p(28 + payload);
  const uint8_t hdr[20] = {0x45, 0x00, 0, 0, 0x12, 0x34, 0x40, 0x00, 64, 17, 0, 0, 192, 0, 2, 1, 198, 51, 100, 7};
  std::memcpy(p.data(), hdr, 20);
  jg::wr16(&p[2], static_cast<uint16_t>(p.size()));
  jg::wr16(&p[20], 5000);
  jg::wr16(&p[22], 6000);
  jg::wr16(&p[24], static_cast<uint16_t>(8 + payload));
  for (size_t i = 0; i < payload; ++i) p[28 + i] = static_cast<uint8_t>(i * 7);
  mq::ipv4_fix_checksum(p.data());
  return p;
}

TEST(MtqQtlHeader, Ipv4OptionInsertDecodeUpdate) {
  std::vector<uint8_t> orig = ipv4_udp(100);
  std::vector<uint8_t> b = orig;
  b.resize(orig.size() + 8);
  size_t len;
  mq::Fields f;
  f.mtq_us = 3300;
  f.qtl_ns = 10'000'000;
  ASSERT_EQ(mq::mark(b.data(), orig.size(), b.size(), f, len), mq::HeaderError::kOk);
  ASSERT_EQ(len, orig.size() + 8);
  EXPECT_EQ(b[0], 0x47);                                                 // IHL 7
  EXPECT_EQ(jg::rd16(&b[2]), orig.size() + 8);                           // total length
  EXPECT_EQ(jg::internet_checksum(b.data(), 28), 0);                     // valid header checksum
  const uint8_t opt[8] = {0x9E, 8, 0x0C, 0xE4, 0x00, 0x98, 0x96, 0x80};  // 3300, 10^7
  EXPECT_EQ(0, std::memcmp(&b[20], opt, 8));
  EXPECT_EQ(0, std::memcmp(&b[28], &orig[20], orig.size() - 20));  // UDP untouched
  mq::Fields g;
  ASSERT_EQ(mq::decode(b.data(), len, g), mq::HeaderError::kOk);
  EXPECT_EQ(g.mtq_us, 3300);
  EXPECT_EQ(g.qtl_ns, 10'000'000u);
  // Node: decode to Packet, decrement, write back in place.
  Packet p = pkt(static_cast<uint32_t>(len));
  mq::to_packet(g, p);
  EXPECT_EQ(p.budget, 10 * ms);
  p.budget -= 4 * ms + 999;  // not a whole ns: rounded down on the wire
  size_t len2;
  ASSERT_EQ(mq::mark(b.data(), len, b.size(), mq::from_packet(p), len2), mq::HeaderError::kOk);
  EXPECT_EQ(len2, len);
  ASSERT_EQ(mq::decode(b.data(), len2, g), mq::HeaderError::kOk);
  EXPECT_EQ(g.qtl_ns, 5'999'999u);
  EXPECT_EQ(g.mtq_us, 3300);
  EXPECT_EQ(jg::internet_checksum(b.data(), 28), 0);
}

TEST(MtqQtlHeader, Ipv4BoundsAndOptionWalk) {
  std::vector<uint8_t> p = ipv4_udp(10);
  mq::Fields f;
  size_t len;
  EXPECT_EQ(mq::decode(p.data(), p.size(), f), mq::HeaderError::kAbsent);
  EXPECT_EQ(mq::decode(p.data(), 19, f), mq::HeaderError::kTruncated);
  EXPECT_EQ(mq::mark(p.data(), p.size(), p.size() + 7, f, len), mq::HeaderError::kNoRoom);
  // IHL 14 (36 bytes of NOPs): no room for 8 more bytes of options.
  std::vector<uint8_t> big(56 + 8 + 64, 1);
  std::memcpy(big.data(), p.data(), 20);
  big[0] = 0x4E;
  jg::wr16(&big[2], 64);
  EXPECT_EQ(mq::mark(big.data(), 64, big.size(), f, len), mq::HeaderError::kNoOptionSpace);
  // An option whose length runs past the header.
  big[20] = 0x44;  // timestamp option
  big[21] = 40;
  EXPECT_EQ(mq::decode(big.data(), 64, f), mq::HeaderError::kBadOption);
  big[21] = 0;
  EXPECT_EQ(mq::decode(big.data(), 64, f), mq::HeaderError::kBadOption);
  std::vector<uint8_t> v5 = p;
  v5[0] = 0x55;
  EXPECT_EQ(mq::decode(v5.data(), v5.size(), f), mq::HeaderError::kNotIp);
}

std::vector<uint8_t> ipv6_udp(size_t payload, bool hbh) {
  std::vector<uint8_t> p(40 + (hbh ? 8 : 0) + 8 + payload);
  p[0] = 0x60;
  jg::wr16(&p[4], static_cast<uint16_t>(p.size() - 40));
  p[6] = hbh ? 0 : 17;
  p[7] = 64;
  for (int i = 8; i < 40; ++i) p[i] = static_cast<uint8_t>(i);
  size_t u = 40;
  if (hbh) {
    p[40] = 17;
    p[41] = 0;
    p[42] = 1;  // PadN 4
    p[43] = 4;
    u = 48;
  }
  jg::wr16(&p[u + 4], static_cast<uint16_t>(8 + payload));
  for (size_t i = 0; i < payload; ++i) p[u + 8 + i] = static_cast<uint8_t>(i);
  return p;
}

TEST(MtqQtlHeader, Ipv6DestinationOption) {
  for (bool hbh : {false, true}) {
    std::vector<uint8_t> orig = ipv6_udp(50, hbh);
    std::vector<uint8_t> b = orig;
    b.resize(orig.size() + 16);
    mq::Fields f;
    f.qtl_ns = 123456789;  // QTL only
    size_t len;
    ASSERT_EQ(mq::mark(b.data(), orig.size(), b.size(), f, len), mq::HeaderError::kOk);
    ASSERT_EQ(len, orig.size() + 16);
    EXPECT_EQ(jg::rd16(&b[4]), orig.size() - 40 + 16);
    const size_t at = hbh ? 48 : 40;
    EXPECT_EQ(b[hbh ? 40 : 6], 60);  // chain now points at Destination Options
    EXPECT_EQ(b[at], 17);            // which points at UDP
    EXPECT_EQ(b[at + 1], 1);
    EXPECT_EQ(b[at + 2], 0x3E);
    EXPECT_EQ(b[at + 3], 6);
    EXPECT_EQ(0, std::memcmp(&b[at + 16], &orig[at], orig.size() - at));
    mq::Fields g;
    ASSERT_EQ(mq::decode(b.data(), len, g), mq::HeaderError::kOk);
    EXPECT_FALSE(g.has_mtq());
    EXPECT_EQ(g.qtl_ns, 123456789u);
    EXPECT_EQ(mq::decode(b.data(), at + 10, g), mq::HeaderError::kTruncated);
  }
}

TEST(Eplr, DropsPlusLateOverSent) {
  EplrMeter m({10 * ms, 50 * ms});
  for (int i = 0; i < 10; ++i) m.on_sent(0);
  m.on_network_drop(0);
  m.on_received(0, 10 * ms);      // exactly D: on time
  m.on_received(0, 10 * ms + 1);  // late
  for (int i = 0; i < 4; ++i) m.on_sent(1);
  m.on_received(1, 60 * ms);
  m.on_sent(7);
  EXPECT_DOUBLE_EQ(m.eplr(0), 0.2);
  EXPECT_DOUBLE_EQ(m.eplr(1), 0.25);
  EXPECT_DOUBLE_EQ(m.worst(), 0.25);
  EXPECT_EQ(m.unknown_group(), 1u);
  // Receiver side: 10 sent, 2 received (1 late): (8 lost + 1 late) / 10.
  EXPECT_EQ(m.sent(0), 10u);
  EXPECT_EQ(m.received(0), 2u);
  EXPECT_DOUBLE_EQ(m.eplr_at_receiver(0), 0.9);
  EXPECT_DOUBLE_EQ(m.eplr_at_receiver(1), 1.0);  // 3 lost + 1 late of 4
}

}  // namespace
}  // namespace tracelab
