// SCFQ (docs/reference/algorithms.md §3.3, Golestani's definition).
#include "scfq.hh"

#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

ScfqConfig scfq(uint64_t buffer) {
  ScfqConfig c;
  c.buffer.capacity = buffer;
  return c;
}

TEST(Scfq, ServesSmallestFinishTag) {
  // v = 0. A0 A1 A2 (1500 B): F = 1500, 3000, 4500. B0 B1 B2 (500 B): F = 500,
  // 1000, 1500. Order: B0 500, B1 1000, A0 1500 (arrived before B2), B2 1500,
  // A1 3000, A2 4500.
  ScfqCore q(scfq(10));
  Driver d(q);
  for (uint64_t h = 0; h < 3; ++h) d.offer(pkt(h, 1, 1500));
  for (uint64_t h = 3; h < 6; ++h) d.offer(pkt(h, 2, 500));
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{3, 4, 0, 5, 1, 2}));
  EXPECT_EQ(q.virtual_time(), 4500u);
  EXPECT_EQ(q.flows(), 0u);
}

TEST(Scfq, NewFlowStartsAtTheVirtualTime) {
  // A0..A2 (F 1500, 3000, 4500). Serve A0 (v 1500) and A1 (v 3000). C0
  // (100 B) gets F = max(0, 3000) + 100 = 3100 < 4500: served before A2, then
  // A3 = max(4500, 3000) + 1500 = 6000 after A2.
  ScfqCore q(scfq(10));
  Driver d(q);
  for (uint64_t h = 0; h < 3; ++h) d.offer(pkt(h, 1, 1500));
  d.serve();
  d.serve();
  EXPECT_EQ(q.virtual_time(), 3000u);
  d.offer(pkt(3, 3, 100));
  d.offer(pkt(4, 1, 1500));
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{3, 2, 4}));
}

TEST(Scfq, BackloggedEqualFlowsAlternate) {
  ScfqCore q(scfq(100));
  Driver d(q);
  for (uint64_t h = 0; h < 10; ++h) d.offer(pkt(h, 1, 1000));
  for (uint64_t h = 10; h < 20; ++h) d.offer(pkt(h, 2, 1000));
  std::vector<uint64_t> expect;
  for (uint64_t i = 0; i < 10; ++i) expect.insert(expect.end(), {i, 10 + i});
  EXPECT_EQ(d.drain(), expect);
}

TEST(Scfq, DropTailEvenForSmallTags) {
  // B = 2, A0 A1 queued; new flow B (smallest tag) is dropped: drop-tail.
  ScfqCore q(scfq(2));
  Driver d(q);
  d.offer(pkt(0, 1, 1500));
  d.offer(pkt(1, 1, 1500));
  d.offer(pkt(2, 2, 40));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{2}));
  EXPECT_EQ(q.pushed_out(), 0u);
}

TEST(Scfq, RandomizedConservationAndBoundedTable) {
  for (Granularity g : {Granularity::kPackets, Granularity::kBytes}) {
    ScfqConfig c = scfq(g == Granularity::kPackets ? 64 : 40000);
    c.buffer.granularity = g;
    ScfqCore q(c);
    testing::stress(q, 81, 20000, 300, [&] { ASSERT_LE(q.flows(), q.length_packets()); });
    EXPECT_GT(q.counters().dropped[0], 0u);
  }
}

}  // namespace
}  // namespace tracelab
