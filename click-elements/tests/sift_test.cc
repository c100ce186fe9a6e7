// SIFT-like probabilistic sampling (docs/reference/algorithms.md §2.5, Algorithm 2).
#include "sift.hh"

#include <cmath>

#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

SiftConfig sift(double p, uint32_t ts, uint64_t seed = 1) {
  SiftConfig c;
  c.queue.buffer.capacity = 1000;
  c.probability = p;
  c.sample_threshold = ts;
  c.seed = seed;
  return c;
}

TEST(Sift, CertainSamplingIsAPacketThreshold) {
  // p = 1, Ts = 3 (AMB-5: sampled >= Ts): packets 0, 1, 2 HIGH (sampled
  // 1, 2, 3), packet 3 LOW.
  SiftCore s(sift(1.0, 3));
  Driver d(s);
  for (uint64_t h = 0; h < 4; ++h) d.offer(pkt(h, 1, 1500));
  EXPECT_EQ(s.admitted_low(), 1u);
  EXPECT_EQ(s.flows(), 1u);
}

TEST(Sift, ZeroProbabilityNeverSamples) {
  SiftCore s(sift(0.0, 1));
  Driver d(s);
  for (uint64_t h = 0; h < 500; ++h) d.offer(pkt(h, h % 3, 100));
  EXPECT_EQ(s.admitted_low(), 0u);
  EXPECT_EQ(s.flows(), 0u);
}

// P(flow of x packets is sampled) = 1 − Σ_{i<Ts} C(x,i) p^i (1−p)^{x−i} (Eq.3.1).
double sampled_probability(int x, int ts, double p) {
  double miss = 0;
  for (int i = 0; i < ts; ++i) {
    double c = std::tgamma(x + 1) / (std::tgamma(i + 1) * std::tgamma(x - i + 1));
    miss += c * std::pow(p, i) * std::pow(1 - p, x - i);
  }
  return 1 - miss;
}

TEST(Sift, SampledShareMatchesEquation31) {
  // Eq.3.1 with p = 0.1, Ts = 2, x = 10: 1 − 0.9^10 − 10·0.1·0.9^9 = 0.2639.
  // A flow is sampled within its first x packets iff its (x+1)-th is LOW.
  EXPECT_NEAR(sampled_probability(10, 2, 0.1), 0.2639, 1e-4);
  const int flows = 20000;
  SiftConfig c = sift(0.1, 2, 42);
  c.flows.max_flows = flows;
  SiftCore s(c);
  Driver d(s);
  uint64_t h = 0, sampled = 0;
  for (int f = 0; f < flows; ++f) {
    for (int i = 0; i < 10; ++i) d.offer(pkt(h++, f, 100));
    uint64_t before = s.admitted_low();
    d.offer(pkt(h++, f, 100));
    sampled += s.admitted_low() - before;
    d.drain();
  }
  // 5 standard deviations of a binomial share over 20 000 flows: 0.016.
  EXPECT_NEAR(static_cast<double>(sampled) / flows, 0.2639, 0.016);
}

TEST(Sift, SameSeedSameDecisions) {
  auto run = [](uint64_t seed) {
    SiftCore s(sift(0.05, 1, seed));
    Driver d(s);
    for (uint64_t h = 0; h < 3000; ++h) d.offer(pkt(h, h % 17, 100));
    return s.admitted_low();
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_GT(run(7), 0u);
}

TEST(Sift, RejectsZeroThreshold) { EXPECT_THROW(SiftCore(sift(0.1, 0)), std::invalid_argument); }

TEST(Sift, RandomizedConservation) {
  SiftConfig c = sift(0.05, 2, 3);
  c.queue.buffer.capacity = 64;
  SiftCore s(c);
  testing::stress(s, 21, 20000, 300, [&] { ASSERT_EQ(s.admitted_high(), s.served_high() + s.high_packets()); });
  EXPECT_GT(s.pushed_out(), 0u);
}

}  // namespace
}  // namespace tracelab
