// LARS (docs/reference/algorithms.md §3.2): LAS with an exponentially fading volume.
#include "lars.hh"

#include "las.hh"
#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

TEST(Lars, VolumeFadesByBetaPerTau) {
  // beta = 0.5, tau = 1 s. A sends 1500 B at t = 0 (served). At t = 1 s C
  // sends 800 B (tag 0, served), then C1 (tag 800) and A1 (tag 1500·0.5 =
  // 750) queue together: LARS serves A1 first; LAS (no fading) serves C1.
  auto run = [](QueueCore& q) {
    Driver d(q);
    d.offer(pkt(0, 1, 1500), 0);
    d.serve(0);
    d.offer(pkt(1, 3, 800), kSecond);
    d.serve(kSecond);
    d.offer(pkt(2, 3, 800), kSecond);
    d.offer(pkt(3, 1, 1500), kSecond);
    return d.drain(kSecond);
  };
  LarsCore lars;
  LasCore las;
  EXPECT_EQ(run(lars), (std::vector<uint64_t>{3, 2}));
  EXPECT_EQ(run(las), (std::vector<uint64_t>{2, 3}));
}

TEST(Lars, NoFadingIsExactlyLas) {
  // Oracle: with beta = 1 the tags are LAS's times 16, so the same random
  // input must give the same service order and the same drops.
  for (Granularity g : {Granularity::kPackets, Granularity::kBytes}) {
    LarsConfig lc;
    lc.beta = 1.0;
    lc.buffer.granularity = g;
    lc.buffer.capacity = g == Granularity::kPackets ? 64 : 40000;
    LasConfig sc;
    sc.buffer = lc.buffer;
    LarsCore lars(lc);
    LasCore las(sc);
    testing::stress(lars, 61, 20000, 300);
    testing::stress(las, 61, 20000, 300);
    EXPECT_EQ(lars.counters().served, las.counters().served);
    EXPECT_EQ(lars.counters().dropped[1], las.counters().dropped[1]);
    EXPECT_GT(lars.pushed_out(), 0u);
    // And order, packet by packet:
    LarsCore lars2(lc);
    LasCore las2(sc);
    Driver dl(lars2), ds(las2);
    std::mt19937_64 rng(3);
    for (uint64_t h = 0; h < 5000; ++h) {
      Packet p = pkt(h, rng() % 40, rng() % 2 ? 1500 : 40);
      dl.offer(p, static_cast<Time>(h) * kMicrosecond);
      ds.offer(p, static_cast<Time>(h) * kMicrosecond);
      if (rng() % 3 == 0) {
        ASSERT_EQ(dl.serve(h * kMicrosecond), ds.serve(h * kMicrosecond));
      }
    }
    EXPECT_EQ(dl.log.drops, ds.log.drops);
  }
}

TEST(Lars, ScanDeletesFadedEntries) {
  // beta = 0.5 per second. A: 1500 B at t = 0; B: 1500 B at 9 s. The scan run
  // by the arrival at 9 s keeps A (1500·2^-9 = 2.9 B). At 15 s A has faded to
  // 1500·2^-15 < 1 B and is deleted; B (1500·2^-6 = 23 B) stays; C is new.
  LarsCore q;
  Driver d(q);
  d.offer(pkt(0, 1, 1500), 0);
  d.offer(pkt(1, 2, 1500), 9 * kSecond);
  EXPECT_EQ(q.flows(), 2u);
  d.offer(pkt(2, 3, 1500), 15 * kSecond);
  EXPECT_EQ(q.flows(), 2u);
  EXPECT_EQ(q.flows_highwater(), 2u);
}

TEST(Lars, RejectsBadFading) {
  LarsConfig c;
  c.beta = 0;
  EXPECT_THROW(LarsCore{c}, std::invalid_argument);
  c.beta = 0.5;
  c.tau = 0;
  EXPECT_THROW(LarsCore{c}, std::invalid_argument);
}

TEST(Lars, RandomizedConservation) {
  LarsConfig c;
  c.buffer.capacity = 64;
  c.tau = 100 * kMicrosecond;  // fading on the stress loop's time scale
  c.ack_aware = true;
  LarsCore q(c);
  testing::stress(q, 71, 20000, 300);
  EXPECT_GT(q.pushed_out(), 0u);
}

}  // namespace
}  // namespace tracelab
