// X-Protect (docs/reference/algorithms.md §2.6).
#include "xprotect.hh"

#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

XProtectConfig xp(double p_ins, uint64_t th) {
  XProtectConfig c;
  c.queue.buffer.capacity = 100;
  c.insert_probability = p_ins;
  c.threshold = th;
  return c;
}

TEST(XProtect, CountsFromInsertionIncludingTheInsertingPacket) {
  // p_ins = 1, th = 3000: A0 inserted with 1500 (HIGH); A1 sees 1500 (HIGH,
  // -> 3000); A2 sees 3000: LOW.
  XProtectCore x(xp(1.0, 3000));
  Driver d(x);
  for (uint64_t h = 0; h < 3; ++h) d.offer(pkt(h, 1, 1500));
  EXPECT_EQ(x.admitted_low(), 1u);
  // AMB-6 alternative: the entry starts at 0, so A2 is still HIGH, A3 LOW.
  XProtectConfig c = xp(1.0, 3000);
  c.count_inserting_packet = false;
  XProtectCore y(c);
  Driver dy(y);
  for (uint64_t h = 0; h < 3; ++h) dy.offer(pkt(h, 1, 1500));
  EXPECT_EQ(y.admitted_low(), 0u);
  dy.offer(pkt(3, 1, 1500));
  EXPECT_EQ(y.admitted_low(), 1u);
}

TEST(XProtect, UntrackedFlowsStayHigh) {
  XProtectCore x(xp(0.0, 1500));
  Driver d(x);
  for (uint64_t h = 0; h < 50; ++h) d.offer(pkt(h, 1, 1500));
  EXPECT_EQ(x.admitted_low(), 0u);
  EXPECT_EQ(x.flows(), 0u);
}

TEST(XProtect, ScanDeletesIdleEntries) {
  // A inserted at t = 0, seen last at 29 s; the scan run by the arrival at
  // 59 s finds it idle 30 s (>= 30 s) and deletes it, so A's next packet is
  // inserted afresh (HIGH with p_ins = 1).
  XProtectCore x(xp(1.0, 1500));
  Driver d(x);
  d.offer(pkt(0, 1, 1500), 0);
  d.offer(pkt(1, 1, 1500), 29 * kSecond);  // 1500 >= th: LOW
  EXPECT_EQ(x.admitted_low(), 1u);
  d.offer(pkt(2, 2, 1500), 59 * kSecond);  // scan at 59 s: A idle exactly 30 s
  EXPECT_EQ(x.flows(), 1u);
  d.offer(pkt(3, 1, 1500), 59 * kSecond);
  EXPECT_EQ(x.admitted_low(), 1u);
}

TEST(XProtect, RandomizedConservation) {
  XProtectConfig c = xp(0.05, 6000);
  c.queue.buffer.capacity = 64;
  XProtectCore x(c);
  testing::stress(x, 31, 20000, 300, [&] { ASSERT_EQ(x.admitted_high(), x.served_high() + x.high_packets()); });
  EXPECT_GT(x.admitted_low(), 0u);
}

}  // namespace
}  // namespace tracelab
