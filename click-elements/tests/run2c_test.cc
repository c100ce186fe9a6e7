// Run2C / Run2CACK (docs/reference/algorithms.md §2.4). Hand-worked traces in comments.
#include "run2c.hh"

#include "efd.hh"
#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

Run2cConfig run2c(uint64_t buffer, uint64_t th) {
  Run2cConfig c;
  c.queue.buffer.capacity = buffer;
  c.threshold = th;
  return c;
}

TEST(Run2c, InfiniteMemoryUnlikeEfd) {
  // th = 3000: A0, A1 HIGH, A2 LOW; everything is served. A3 then arrives:
  // Run2C remembers 4500 B (LOW); EFD's entry is gone (HIGH, new fragment).
  Run2cCore r(run2c(10, 3000));
  EfdConfig ec;
  ec.threshold = 3000;
  EfdCore e(ec);
  Driver dr(r), de(e);
  for (uint64_t h = 0; h < 3; ++h) {
    dr.offer(pkt(h, 1, 1500));
    de.offer(pkt(h, 1, 1500));
  }
  dr.drain();
  de.drain();
  dr.offer(pkt(3, 1, 1500));
  de.offer(pkt(3, 1, 1500));
  EXPECT_EQ(r.admitted_low(), 2u);
  EXPECT_EQ(e.admitted_low(), 1u);
}

TEST(Run2c, CounterIncludesDroppedArrivals) {
  // B = 1, th = 3000. A0 HIGH, admitted. A1 HIGH (counter 1500) meets a full
  // buffer with L empty: dropped, yet counted (3000). After A0 is served, A2
  // finds counter 3000: LOW.
  Run2cCore r(run2c(1, 3000));
  Driver d(r);
  d.offer(pkt(0, 1, 1500));
  d.offer(pkt(1, 1, 1500));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{1}));
  d.serve();
  d.offer(pkt(2, 1, 1500));
  EXPECT_EQ(r.admitted_low(), 1u);
}

TEST(Run2c, PushOutAsEfd) {
  // B = 2, th = 1500: A0 HIGH, A1 LOW (full). B2 HIGH pushes out A1.
  Run2cCore r(run2c(2, 1500));
  Driver d(r);
  d.offer(pkt(0, 1, 1500));
  d.offer(pkt(1, 1, 1500));
  d.offer(pkt(2, 2, 1500));
  EXPECT_EQ(d.log.handles(DropReason::kPushedOut), (std::vector<uint64_t>{1}));
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 2}));
}

TEST(Run2c, AckAwareCountsAbsoluteAckProgress) {
  // Run2CACK, th = 30 000: first ACK (ack 5000) is the reference; ACK 35000
  // is HIGH (counter 0) and adds 30 000; ACK 35001 is LOW. Plain Run2C:
  // three 40-B packets, all HIGH.
  Run2cConfig c = run2c(10, 30000);
  c.ack_aware = true;
  Run2cCore r(c), plain(run2c(10, 30000));
  Driver d(r), dp(plain);
  uint32_t acks[] = {5000, 35000, 35001};
  for (uint64_t h = 0; h < 3; ++h) {
    Packet p = pkt(h, 50 + h, 40, kFlagTcp | kFlagPureAck);  // flow_hash varies, conn_hash 9
    p.conn_hash = 9;
    p.tcp_ack = acks[h];
    d.offer(p);
    dp.offer(p);
  }
  EXPECT_EQ(r.admitted_low(), 1u);
  EXPECT_EQ(plain.admitted_low(), 0u);
}

TEST(Run2c, IdleFlowsAreForgottenAfterTheTimeout) {
  // th = 3000, A sends 3 packets at t = 0 (counter 4500). Scans every 5 s
  // delete flows idle >= 30 s: at t = 20 s A is LOW; at t = 60 s it was
  // deleted by the scan at 60 s (idle 40 s since its last packet at 20 s).
  Run2cCore r(run2c(100, 3000));
  Driver d(r);
  for (uint64_t h = 0; h < 3; ++h) d.offer(pkt(h, 1, 1500), 0);
  d.offer(pkt(3, 1, 1500), 20 * kSecond);
  EXPECT_EQ(r.admitted_low(), 2u);
  d.offer(pkt(4, 1, 1500), 60 * kSecond);
  EXPECT_EQ(r.admitted_low(), 2u);
  EXPECT_EQ(r.flows(), 1u);
}

TEST(Run2c, FullTableServesUntrackedFlowsHigh) {
  Run2cConfig c = run2c(100, 1500);
  c.flows.max_flows = 2;
  Run2cCore r(c);
  Driver d(r);
  for (uint64_t h = 0; h < 6; ++h) d.offer(pkt(h, h % 3, 1500));  // flows 0 1 2 0 1 2
  EXPECT_EQ(r.untracked(), 2u);                                   // flow 2, twice
  EXPECT_EQ(r.admitted_low(), 2u);                                // second packets of flows 0 and 1
  EXPECT_EQ(r.flows_highwater(), 2u);
}

TEST(Run2c, RandomizedConservation) {
  for (bool ack : {false, true}) {
    for (Granularity g : {Granularity::kPackets, Granularity::kBytes}) {
      Run2cConfig c = run2c(g == Granularity::kPackets ? 64 : 40000, 6000);
      c.queue.buffer.granularity = g;
      c.ack_aware = ack;
      Run2cCore r(c);
      testing::stress(r, 11 + ack, 20000, 300,
                      [&] { ASSERT_EQ(r.admitted_high(), r.served_high() + r.high_packets()); });
      EXPECT_GT(r.pushed_out(), 0u);
    }
  }
}

}  // namespace
}  // namespace tracelab
