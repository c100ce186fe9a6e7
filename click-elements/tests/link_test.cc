// Exact-rate link: departures against closed-form totals.
#include "link.hh"

#include <gtest/gtest.h>

#include "rng.hh"

namespace tracelab {
namespace {

TEST(ExactLink, MillionMixedPacketsAt10GbpsNoDrift) {
  ExactLink link(10'000'000'000ULL);
  Rng rng(7);
  const uint32_t sizes[] = {40, 64, 576, 1500, 9000, 1};
  uint64_t total = 0;
  Time last = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    uint32_t b = sizes[rng.next_u64() % 6];
    total += b;
    last = link.send(0, b);  // all offered at t=0: one busy period
  }
  EXPECT_EQ(last, static_cast<Time>(total * 800));
  EXPECT_EQ(link.bytes(), total);
}

TEST(ExactLink, NonIntegralRateStaysExactOverBusyPeriod) {
  // 3 Gb/s: one byte = 2666.66.. ps. Per-packet rounding would add up to
  // 1 ps per packet; the exact link is within 1 ps of the true total.
  ExactLink link(3'000'000'000ULL);
  uint64_t total = 0;
  Time last = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    uint32_t b = 40 + (i * 37) % 1461;
    total += b;
    // Back to back, as an engine does: offer each at the previous departure.
    last = link.send(last, b);
  }
  // ceil(total * 8e12 / 3e9) = ceil(total * 8000 / 3)
  Time exact = static_cast<Time>((total * 8000 + 2) / 3);
  EXPECT_EQ(last, exact);
}

TEST(ExactLink, IdleGapRestartsAtArrival) {
  ExactLink link(10'000'000'000ULL);
  EXPECT_EQ(link.send(0, 1500), 1'200'000);  // 1.2 us
  EXPECT_TRUE(link.idle_at(1'200'000));
  EXPECT_EQ(link.send(5'000'000, 64), 5'000'000 + 51'200);
  // Offered while busy: queued behind the previous packet.
  EXPECT_EQ(link.send(5'000'001, 64), 5'000'000 + 2 * 51'200);
}

TEST(ExactLink, RoundingAtBusyPeriodBoundary) {
  ExactLink link(3'000'000'000ULL);
  Time t1 = link.send(0, 1);  // 2666.67 ps -> 2667
  EXPECT_EQ(t1, 2667);
  // Offered at the rounded end: continues from the exact end (5333.33 -> 5334).
  EXPECT_EQ(link.send(t1, 1), 5334);
  // Offered after the end: a new period starts at the arrival.
  EXPECT_EQ(link.send(10'000, 1), 12'667);
}

TEST(SerializationTime, MatchesSpecFormula) {
  EXPECT_EQ(serialization_time(9000, 10'000'000'000ULL), 7'200'000);  // 7.2 us, [000 §6]
  EXPECT_EQ(serialization_time(200, 20'000'000ULL), 80'000'000);      // 80 us at 20 Mb/s, [004]
}

}  // namespace
}  // namespace tracelab
