// JumboGen (docs/reference/algorithms.md §5): ingress encapsulation, JumboGen-aware RED,
// egress decapsulation and shaping.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "chunk_format.hh"
#include "dechunk.hh"
#include "jumbogen.hh"
#include "jumbogen_red.hh"
#include "rng.hh"

namespace tracelab {
namespace {

constexpr Time us = kMicrosecond;

Packet pkt(uint32_t len, uint64_t handle, uint8_t cls = 0) {
  Packet p;
  p.length = len;
  p.handle = handle;
  p.cls = cls;
  return p;
}

struct Out {
  std::vector<Packet> store = std::vector<Packet>(2048);
  Batch b{store.data(), static_cast<uint32_t>(store.size())};
};

void expect_conserved(const QueueCore& q) {
  const Counters& c = q.counters();
  EXPECT_EQ(c.offered, c.served + c.dropped_total() + q.length_packets());
}

TEST(JumboGenIngress, HeldUntilJfetWhenFullByDefault) {
  JumboGenIngress q;  // MTU 8192, JFET 1 ms, hold
  Out o;
  for (int i = 0; i < 6; ++i) q.enqueue(pkt(1500, i), i * 100 * us);
  // 20 + 6 + 4*5 + 7500 = 7546; a sixth would make 9050 > 8192: closed, held.
  EXPECT_EQ(q.stats().full_closes, 1u);
  EXPECT_EQ(q.next_ready(500 * us), 1000 * us);
  EXPECT_FALSE(q.dequeue(999 * us, o.b));
  // Dequeued late (a busy link): the release instant is still the JFET expiry.
  ASSERT_TRUE(q.dequeue(1200 * us, o.b));
  EXPECT_EQ(q.last_released(), 1000 * us);
  EXPECT_EQ(o.b.count, 5u);
  EXPECT_EQ(o.b.wire_bytes, 7546u);
  // The sixth started the next JumboGram with its own JFET.
  EXPECT_EQ(q.next_ready(1200 * us), 1500 * us);
  ASSERT_TRUE(q.dequeue(1500 * us, o.b));
  EXPECT_EQ(q.last_released(), 1500 * us);
  EXPECT_EQ(o.b.count, 1u);
  EXPECT_EQ(o.b.wire_bytes, 20u + 6 + 4 + 1500);
  expect_conserved(q);
}

TEST(JumboGenIngress, EarlyReleaseWhenFull) {
  JumboGenConfig c;
  c.early_release_when_full = true;
  JumboGenIngress q(c);
  Out o;
  for (int i = 0; i < 6; ++i) q.enqueue(pkt(1500, i), i * 100 * us);
  ASSERT_TRUE(q.dequeue(500 * us, o.b));
  EXPECT_EQ(o.b.count, 5u);
  EXPECT_EQ(q.next_ready(500 * us), 1500 * us);
  EXPECT_EQ(q.stats().wait_total, (500 + 400 + 300 + 200 + 100) * us);
}

TEST(JumboGenIngress, QueuesPerKeyAndClassAndTieOrder) {
  JumboGenConfig c;
  c.queues = 3;
  JumboGenIngress q(c);
  Out o;
  q.enqueue_to(pkt(100, 1), 7, 0);
  q.enqueue_to(pkt(100, 2), 9, 0);
  q.enqueue_to(pkt(100, 3, /*cls=*/1), 7, 0);  // same next hop, other class
  q.enqueue_to(pkt(100, 4), 7, 10 * us);
  q.enqueue_to(pkt(100, 5), 11, 0);  // no slot left
  EXPECT_EQ(q.stats().no_queue, 1u);
  // All three expire at 1 ms: slot order.
  std::vector<std::vector<uint64_t>> grams;
  while (q.dequeue(kMillisecond, o.b)) {
    grams.emplace_back();
    for (uint32_t i = 0; i < o.b.count; ++i) grams.back().push_back(o.b.packets[i].handle);
  }
  EXPECT_EQ(grams, (std::vector<std::vector<uint64_t>>{{1, 4}, {2}, {3}}));
  // Slots are free again.
  q.enqueue_to(pkt(100, 6), 11, kMillisecond);
  EXPECT_EQ(q.stats().no_queue, 1u);
  expect_conserved(q);
}

TEST(JumboGenIngress, ExpiryBeforeTiedArrivalAndOversize) {
  JumboGenConfig c;
  c.mtu = 1600;
  JumboGenIngress q(c);
  Out o;
  q.enqueue(pkt(100, 1), 0);
  q.enqueue(pkt(100, 2), kMillisecond);  // arrives at the expiry
  ASSERT_TRUE(q.dequeue(kMillisecond, o.b));
  EXPECT_EQ(o.b.count, 1u);
  q.enqueue(pkt(1571, 3), kMillisecond);  // 20 + 6 + 4 + 1571 = 1601 > 1600
  EXPECT_EQ(q.stats().oversize, 1u);
  expect_conserved(q);
}

// [002 §3.1]: with shaping, every packet's added delay (ingress wait +
// egress hold) equals the JumboGram's QTime, and never exceeds JFET.
TEST(JumboGen, ShapedAddedDelayEqualsQTime) {
  JumboGenIngress q;
  Out o;
  Rng rng(9);
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<Time> arrival;
  Time t = 0;
  for (int i = 0; i < 40; ++i) {
    t += static_cast<Time>(1 + rng.next_u64() % 60) * us;  // on the 1 us grid
    bytes.emplace_back(40 + rng.next_u64() % 1400);
    for (auto& x : bytes.back()) x = static_cast<uint8_t>(rng.next_u64());
    arrival.push_back(t);
  }
  Dechunker egress(true, kMicrosecond);
  int seen = 0;
  // Release every JumboGram at its JFET expiry (dequeue as soon as ready),
  // encode it, and split it at the egress with zero core delay.
  auto serve_until = [&](Time limit) {
    for (Time now = q.next_ready(0); now <= limit; now = q.next_ready(now)) {
      ASSERT_TRUE(q.dequeue(now, o.b));
      std::vector<jg::PacketRef> refs;
      for (uint32_t k = 0; k < o.b.count; ++k) {
        const uint64_t h = o.b.packets[k].handle;
        refs.push_back({bytes[h].data(), bytes[h].size(), o.b.packets[k].arrival});
      }
      std::vector<uint8_t> wire(o.b.wire_bytes);
      jg::FormatError e;
      size_t n = jg::encode(refs.data(), refs.size(), now, kMicrosecond, wire.data(), wire.size(), e);
      ASSERT_EQ(n + 20, o.b.wire_bytes);  // + outer IP header
      jg::View v;
      ASSERT_EQ(jg::parse(wire.data(), n, v), jg::FormatError::kOk);
      SplitPacket sp[64];
      SplitResult r = egress.split(wire.data(), n, now, sp, 64);
      ASSERT_EQ(r.count, o.b.count);
      for (uint32_t k = 0; k < r.count; ++k) {
        const uint64_t h = o.b.packets[k].handle;
        ASSERT_EQ(0, std::memcmp(wire.data() + sp[k].offset, bytes[h].data(), bytes[h].size()));
        const Time added = sp[k].release - arrival[h];
        EXPECT_EQ(added, static_cast<Time>(v.qtime) * us) << h;
        EXPECT_EQ(added, kMillisecond);  // held exactly JFET (hold mode)
        ++seen;
      }
    }
  };
  for (int i = 0; i < 40; ++i) {
    serve_until(arrival[i] - 1);
    q.enqueue(pkt(static_cast<uint32_t>(bytes[i].size()), i), arrival[i]);
  }
  serve_until(kNever - 1);
  EXPECT_EQ(seen, 40);
}

// --- RED -------------------------------------------------------------------

std::vector<uint8_t> make_gram(size_t n) {
  std::vector<std::vector<uint8_t>> pk;
  std::vector<jg::PacketRef> refs;
  for (size_t i = 0; i < n; ++i) pk.emplace_back(100 + i, static_cast<uint8_t>(i));
  for (size_t i = 0; i < n; ++i) refs.push_back({pk[i].data(), pk[i].size(), Time(i) * us});
  std::vector<uint8_t> w(jg::header_size(n) + 2000 * n);
  jg::FormatError e;
  w.resize(jg::encode(refs.data(), n, Time(n) * us, us, w.data(), w.size(), e));
  return w;
}

// Equal thresholds at 0: every arrival is above max_th, Red_w = 1, frac = 1,
// so the router asks for ceil(12 * maxPktDrop) packets.
JumboRedConfig always_select(double drop_fraction) {
  JumboRedConfig c;
  c.min_th = c.max_th = 0;
  c.min_pkt_drop = c.max_pkt_drop = drop_fraction;
  c.jg_fraction_weight = 1.0;  // every arrival is a JumboGram: fraction 1
  return c;
}

TEST(JumboGenRed, TwelvePacketPartialDropExample) {
  std::vector<uint8_t> w = make_gram(12);
  size_t len = w.size();
  JumboGenRed a(always_select(4.0 / 12)), b(always_select(3.0 / 12)), c(always_select(5.0 / 12));
  Packet p = pkt(static_cast<uint32_t>(len), 1);
  JumboRedResult r = a.enqueue_jumbogram(p, w.data(), len, 0);
  EXPECT_TRUE(r.queued);
  EXPECT_EQ(r.removed, 4);
  EXPECT_EQ(a.length_units(), 8u);  // PD: the queue counts carried packets
  len = r.new_length;
  r = b.enqueue_jumbogram(p, w.data(), len, 0);
  EXPECT_EQ(r.removed, 0);
  len = r.new_length;
  r = c.enqueue_jumbogram(p, w.data(), len, 0);
  EXPECT_EQ(r.removed, 1);
  len = r.new_length;
  Dechunker d(false, us);
  SplitPacket sp[12];
  SplitResult s = d.split(w.data(), len, 0, sp, 12);
  EXPECT_EQ(s.count, 7u);
  EXPECT_EQ(s.missing, 5);
  EXPECT_EQ(a.stats().partial_dropped + b.stats().partial_dropped + c.stats().partial_dropped, 5u);
}

TEST(JumboGenRed, FullDropAndAllRemovedAndMalformed) {
  JumboRedConfig fd = always_select(1.0);
  fd.mode = JumboRedMode::kFullDrop;
  JumboGenRed q(fd);
  std::vector<uint8_t> w = make_gram(3);
  q.enqueue_jumbogram(pkt(static_cast<uint32_t>(w.size()), 1), w.data(), w.size(), 0);
  EXPECT_EQ(q.counters().dropped[int(DropReason::kEarlyDiscard)], 1u);
  JumboGenRed pd(always_select(1.0));  // partial drop of all N = whole drop
  JumboRedResult r = pd.enqueue_jumbogram(pkt(1, 2), w.data(), w.size(), 0);
  EXPECT_FALSE(r.queued);
  EXPECT_EQ(r.removed, 3);
  EXPECT_EQ(pd.counters().dropped_total(), 1u);
  w[0] ^= 0xFF;  // corrupt: checksum fails
  JumboGenRed m;
  m.enqueue_jumbogram(pkt(1, 3), w.data(), w.size(), 0);
  EXPECT_EQ(m.stats().malformed, 1u);
  expect_conserved(q);
  expect_conserved(pd);
  expect_conserved(m);
}

// With Red_w = 1 and no JumboGram share (fraction weight 0), a JumboGram of
// N = 4 is selected with probability (1 - 0) * 1/4 + 0 = 0.25.
TEST(JumboGenRed, SelectionProbabilityFollowsFormula) {
  JumboRedConfig c = always_select(1.0);
  c.mode = JumboRedMode::kFullDrop;
  c.jg_fraction_weight = 0.0;
  c.seed = 123;
  JumboGenRed q(c);
  Out o;
  std::vector<uint8_t> w = make_gram(4);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    q.enqueue_jumbogram(pkt(static_cast<uint32_t>(w.size()), i), w.data(), w.size(), i);
    q.dequeue(i, o.b);
  }
  const double sel = double(q.stats().selected) / n;
  EXPECT_NEAR(sel, 0.25, 0.015);  // 5 sigma = 5 * sqrt(.25*.75/20000) = 0.015
  // Plain packets at Red_w = 1 are always dropped.
  q.enqueue(pkt(100, 0), n);
  EXPECT_EQ(q.stats().selected, q.counters().dropped_total() - 1);
}

TEST(JumboGenRed, BelowMinThresholdNeverDropsAndCapacityTailDrops) {
  JumboRedConfig c;
  c.mode = JumboRedMode::kStandard;
  c.min_th = 1000;
  c.max_th = 2000;
  c.capacity = 10;
  JumboGenRed q(c);
  for (int i = 0; i < 15; ++i) q.enqueue(pkt(100, i), i);
  EXPECT_EQ(q.length_packets(), 10u);
  EXPECT_EQ(q.counters().dropped[int(DropReason::kBufferFull)], 5u);
  EXPECT_EQ(q.counters().dropped[int(DropReason::kEarlyDiscard)], 0u);
  expect_conserved(q);
}

// Full drop counts a JumboGram as one item unless asked to count its
// packets, as partial drop does: with capacity 10, three JumboGrams of
// N = 4 fit as items (3 units) but only two as packets (8 units, a third
// would make 12).
TEST(JumboGenRed, FullDropQueueUnit) {
  for (const bool in_packets : {false, true}) {
    JumboRedConfig c;
    c.mode = JumboRedMode::kFullDrop;
    c.min_th = 1000;
    c.max_th = 2000;
    c.capacity = 10;
    c.full_drop_counts_packets = in_packets;
    JumboGenRed q(c);
    for (int i = 0; i < 3; ++i) {
      std::vector<uint8_t> w = make_gram(4);
      q.enqueue_jumbogram(pkt(static_cast<uint32_t>(w.size()), i), w.data(), w.size(), i);
    }
    EXPECT_EQ(q.length_packets(), in_packets ? 2u : 3u);
    EXPECT_EQ(q.length_units(), in_packets ? 8u : 3u);
    EXPECT_EQ(q.counters().dropped[int(DropReason::kBufferFull)], in_packets ? 1u : 0u);
    expect_conserved(q);
  }
}

TEST(JumboGenIngress, RandomConservation) {
  JumboGenConfig c;
  c.queues = 8;
  c.capacity_packets = 500;
  c.jfet = 200 * us;
  JumboGenIngress q(c);
  Out o;
  Rng rng(5);
  Time t = 0;
  for (int i = 0; i < 100000; ++i) {
    t += static_cast<Time>(rng.next_u64() % 2000) * kNanosecond;
    q.enqueue_to(pkt(40 + rng.next_u64() % 1460, i, rng.next_u64() % 2), rng.next_u64() % 5, t);
    if (rng.next_u64() % 3 == 0) {
      if (q.dequeue(t, o.b)) {
        EXPECT_LE(o.b.wire_bytes, 8192u);
      }
    }
    if (i % 997 == 0) expect_conserved(q);
  }
  expect_conserved(q);
}

}  // namespace
}  // namespace tracelab
