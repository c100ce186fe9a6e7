// LAS / LASACK with LAS buffer management (docs/reference/algorithms.md §3.1), and the
// sorted queue under it checked against std::set.
#include "las.hh"

#include <set>
#include <tuple>

#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

LasConfig las(uint64_t buffer) {
  LasConfig c;
  c.buffer.capacity = buffer;
  return c;
}

TEST(SortedPacketQueue, MatchesAnOrderedSetUnderRandomOperations) {
  // Oracle: std::set of (tag, arrival, handle); the queue must return the
  // same minimum and maximum after every random push / pop_min / pop_max.
  std::mt19937_64 rng(5);
  SortedPacketQueue q(64);
  std::set<std::tuple<uint64_t, uint64_t, uint64_t>> oracle;
  uint64_t arrival = 0;
  for (int i = 0; i < 200000; ++i) {
    int op = static_cast<int>(rng() % 3);
    if (op == 0 && !q.full()) {
      uint64_t tag = rng() % 20;  // many ties
      q.push(pkt(arrival, 0, 1), tag);
      oracle.emplace(tag, arrival, arrival);
      ++arrival;
    } else if (op == 1 && !q.empty()) {
      ASSERT_EQ(q.pop_min().handle, std::get<2>(*oracle.begin()));
      oracle.erase(oracle.begin());
    } else if (op == 2 && !q.empty()) {
      ASSERT_EQ(q.max_tag(), std::get<0>(*oracle.rbegin()));
      ASSERT_EQ(q.pop_max().handle, std::get<2>(*oracle.rbegin()));
      oracle.erase(std::prev(oracle.end()));
    }
    ASSERT_EQ(q.size(), oracle.size());
    if (!q.empty()) {
      ASSERT_EQ(q.min().handle, std::get<2>(*oracle.begin()));
      ASSERT_EQ(q.max().handle, std::get<2>(*oracle.rbegin()));
    }
  }
}

TEST(Las, ServesLeastAttainedServiceFirst) {
  // A0 A1 A2 tagged 0, 1500, 3000; B0 tagged 0 (ties: arrival order).
  LasCore q(las(10));
  Driver d(q);
  uint64_t flow[] = {1, 1, 1, 2};
  for (uint64_t h = 0; h < 4; ++h) d.offer(pkt(h, flow[h], 1500));
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 3, 1, 2}));
}

TEST(Las, FullBufferDropsTheLargestTag) {
  // B = 3: A0 A1 A2 (0, 1500, 3000) fill it. B3 (tag 0) pushes out A2.
  // A4 gets tag 4500 (A2 was admitted, its bytes stay): the largest, so A4
  // itself is dropped and does not add to A's attained service.
  // C5 (tag 0) pushes out A1. Service: A0, B3, C5.
  LasCore q(las(3));
  Driver d(q);
  uint64_t flow[] = {1, 1, 1, 2, 1, 3};
  for (uint64_t h = 0; h < 6; ++h) d.offer(pkt(h, flow[h], 1500));
  EXPECT_EQ(d.log.handles(DropReason::kPushedOut), (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{4}));
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 3, 5}));
  // A's attained service is 4500 (A4 not counted): A6 tagged 4500 is served
  // after D7 tagged 0 but it is not preceded by anything larger.
  d.offer(pkt(6, 1, 1500));
  d.offer(pkt(7, 4, 1500));
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{7, 6}));
  d.check();
}

TEST(Las, EqualTagArrivalAtFullBufferIsDropped) {
  // B = 1: A0 (tag 0) queued; B1 also tag 0 but newer: it is the last in
  // order, so it is the one dropped.
  LasCore q(las(1));
  Driver d(q);
  d.offer(pkt(0, 1, 1500));
  d.offer(pkt(1, 2, 1500));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{1}));
}

TEST(Las, ByteModeRepeatsPushOutUntilTheArrivalFits) {
  // 3000 B: A0..A24 40 B each (tags 0, 40, ..., 960), X (1500 B, tag 0):
  // 2500 B. Y (1000 B, tag 0) needs 2500 − 40k + 1000 <= 3000: k = 13, the
  // largest tags A24 down to A12 go.
  LasConfig c = las(3000);
  c.buffer.granularity = Granularity::kBytes;
  LasCore q(c);
  Driver d(q);
  for (uint64_t h = 0; h < 25; ++h) d.offer(pkt(h, 1, 40));
  d.offer(pkt(100, 2, 1500));
  d.offer(pkt(101, 3, 1000));
  std::vector<uint64_t> expect;
  for (uint64_t h = 24; h >= 12; --h) expect.push_back(h);
  EXPECT_EQ(d.log.handles(DropReason::kPushedOut), expect);
  EXPECT_EQ(q.length_bytes(), 3000u - 20u);
  d.check();
}

TEST(Las, LasAckTagsAcksWithTheAcknowledgedVolume) {
  // LASACK: ACKs of connection 9 (first ack 1000 = reference, then 31000:
  // +30 000), then one more ACK (tag 30 000) and a new flow's packet (tag 0):
  // the new flow goes first. Plain LAS tags the third ACK 80 (two 40-B ACKs).
  for (bool ack_aware : {false, true}) {
    LasConfig c = las(10);
    c.ack_aware = ack_aware;
    LasCore q(c);
    Driver d(q);
    uint32_t acks[] = {1000, 31000, 31000};
    for (uint64_t h = 0; h < 3; ++h) {
      Packet p = pkt(h, 60, 40, kFlagTcp | kFlagPureAck);
      p.conn_hash = 9;
      p.tcp_ack = acks[h];
      d.offer(p);
      if (h < 2) d.serve();
    }
    d.offer(pkt(3, 70, 1500));  // tag 0
    d.offer(pkt(4, 71, 100));   // then 100 B of another flow (tag 0), and...
    d.offer(pkt(5, 71, 100));   // ...its second packet: tag 100
    // aware: ACK2 tag 30000 is last. plain: ACK2 tag 80 < 100.
    EXPECT_EQ(d.drain(), ack_aware ? (std::vector<uint64_t>{3, 4, 5, 2}) : (std::vector<uint64_t>{3, 4, 2, 5}));
  }
}

TEST(Las, IdleFlowsAreForgotten) {
  // A attains 1500 at t = 0; at t = 40 s the scan has deleted it (idle 40 s),
  // so A's packet is tagged 0 and served before B's second packet (tag 100).
  LasCore q(las(10));
  Driver d(q);
  d.offer(pkt(0, 1, 1500), 0);
  d.serve(0);
  d.offer(pkt(1, 2, 100), 40 * kSecond);
  d.offer(pkt(2, 2, 100), 40 * kSecond);
  d.offer(pkt(3, 1, 1500), 40 * kSecond);
  EXPECT_EQ(d.drain(40 * kSecond), (std::vector<uint64_t>{1, 3, 2}));
}

TEST(Las, RandomizedConservation) {
  for (Granularity g : {Granularity::kPackets, Granularity::kBytes}) {
    for (uint64_t bps : {uint64_t{0}, uint64_t{10'000'000'000}}) {
      LasConfig c = las(g == Granularity::kPackets ? 64 : 40000);
      c.buffer.granularity = g;
      c.buffer.in_service_link_bps = bps;
      LasCore q(c);
      testing::stress(q, 51 + bps % 7, 20000, 300);
      EXPECT_GT(q.pushed_out(), 0u);
    }
  }
}

}  // namespace
}  // namespace tracelab
