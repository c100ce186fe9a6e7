// The `onoff` source against ns-2's burst rule, hand-timed, and its mean
// offered rate against the rule's closed-form expectation.
//
// The rule (sources.cc, OnOffSource): an ON period D makes a burst of
// N = max(1, round(D/gap)) packets one gap apart, and the OFF period starts
// one gap after the burst's last packet. A flow's mean rate is then
// E[N]·bits / (E[N]·gap + E[off]) — `rate=` when E[N] = E[on]/gap.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "sources.hh"

using namespace tracelab;
using namespace tracelab::engine;

namespace {

constexpr Time ms = 1000 * kMicrosecond;

std::vector<Time> arrival_times(const std::string& spec) {
  auto src = make_source(spec, SourceContext{});
  std::vector<Time> out;
  Arrival a;
  while (src->next(a)) out.push_back(a.pkt.arrival);
  return out;
}

// One flow, constant periods, gap 10 ms (200 B at 160 kb/s), OFF 100 ms.
// Returns the sizes of its bursts and checks every spacing is a gap within
// a burst or gap + OFF between bursts.
std::vector<int> burst_sizes(const std::string& on) {
  const auto t = arrival_times("onoff(flows=1, peak=160k, size=200, on=" + on + ", off=100ms, stop=2s)");
  std::vector<int> sizes{1};
  for (size_t i = 1; i < t.size(); ++i) {
    const Time d = t[i] - t[i - 1];
    if (d == 10 * ms) {
      ++sizes.back();
    } else {
      EXPECT_EQ(d, 110 * ms) << "spacing " << i << " with on=" << on;
      sizes.push_back(1);
    }
  }
  sizes.pop_back();  // the last burst may be cut by stop=
  return sizes;
}

TEST(OnOffSource, BurstHoldsTheOnPeriodInGapsRounded) {
  // 34 ms = 3.4 gaps: 3 packets (a packet per gap begun inside D would send 4).
  for (int n : burst_sizes("34ms")) EXPECT_EQ(n, 3);
  // 36 ms = 3.6 gaps: 4 packets.
  for (int n : burst_sizes("36ms")) EXPECT_EQ(n, 4);
  // 4 ms = 0.4 gaps rounds to 0: still one packet.
  for (int n : burst_sizes("4ms")) EXPECT_EQ(n, 1);
}

struct RateEstimate {
  double mean_bps, standard_error_bps;
};

// Mean and standard error of the per-flow offered rates over [0, stop):
// the flows are independent, so their spread gives the error of the mean.
RateEstimate offered_rate(const std::string& spec, uint64_t flows, double stop_s) {
  auto src = make_source(spec, SourceContext{});
  std::unordered_map<uint64_t, uint64_t> bytes_by_flow;
  Arrival a;
  while (src->next(a)) bytes_by_flow[a.pkt.flow_hash] += a.pkt.length;
  EXPECT_EQ(bytes_by_flow.size(), flows);
  double sum = 0, sum_sq = 0;
  for (const auto& [flow, bytes] : bytes_by_flow) {
    const double bps = 8.0 * static_cast<double>(bytes) / stop_s;
    sum += bps;
    sum_sq += bps * bps;
  }
  const double n = static_cast<double>(flows);
  const double mean = sum / n;
  const double variance = (sum_sq - n * mean * mean) / (n - 1);
  return {mean, std::sqrt(variance / n)};
}

// The MTQ flows of E-MTQ-0: 200 B, ON/OFF means 350/650 ms, 80 kb/s mean,
// so 228.57 kb/s peak and a 7-ms gap; E[on]/gap = 50 packets.
constexpr double kBits = 1600, kGapS = 0.007, kOnS = 0.350, kOffS = 0.650, kNominalBps = 80000;

double rate_for_mean_burst(double mean_packets) { return mean_packets * kBits / (mean_packets * kGapS + kOffS); }

TEST(OnOffSource, ExponentialOnOffOffersItsNominalMeanRate) {
  // E[N] for exponential D of mean m gaps: Σ_k≥1 P(D/gap ≥ k − ½) plus
  // P(D/gap < ½) (the burst of at least one) = 1/(2 sinh(1/2m)) + 1 − e^(−1/2m).
  const double m = 50;
  const double expected_n = 1 / (2 * std::sinh(1 / (2 * m))) + 1 - std::exp(-1 / (2 * m));
  const double expected_bps = rate_for_mean_burst(expected_n);
  ASSERT_NEAR(expected_bps, kNominalBps, 0.0002 * kNominalBps);  // ns-2's rounding: +0.012 %
  const auto r =
      offered_rate("onoff(flows=400, rate=80k, size=200, on=exp(350ms), off=exp(650ms), stop=1000s)", 400, 1000);
  EXPECT_NEAR(r.mean_bps, expected_bps, 4 * r.standard_error_bps) << "standard error " << r.standard_error_bps;
  // A packet per gap begun inside D, 1/(1 − e^(−1/m)) per period of mean
  // E[on] + E[off], is 1 % above.
  const double old_rule_bps = kBits / (1 - std::exp(-1 / m)) / (kOnS + kOffS);
  EXPECT_GT(std::abs(r.mean_bps - old_rule_bps), 4 * r.standard_error_bps);
}

TEST(OnOffSource, UniformOnPeriodOffersItsNominalMeanRate) {
  // D uniform on [100, 600] ms (mean 350 ms) = [a, b] gaps: E[N] =
  // Σ_k≥1 P(D/gap ≥ k − ½), every D being above half a gap.
  const double a = 0.100 / kGapS, b = 0.600 / kGapS;
  double expected_n = 0;
  for (int k = 1; k - 0.5 < b; ++k) expected_n += std::min(1.0, (b - (k - 0.5)) / (b - a));
  const double expected_bps = rate_for_mean_burst(expected_n);
  ASSERT_NEAR(expected_bps, kNominalBps, 0.0002 * kNominalBps);
  const auto r = offered_rate(
      "onoff(flows=400, rate=80k, size=200, on=uniform(100ms, 600ms), off=exp(650ms), stop=1000s)", 400, 1000);
  EXPECT_NEAR(r.mean_bps, expected_bps, 4 * r.standard_error_bps) << "standard error " << r.standard_error_bps;
  // A packet per gap begun inside D: E[floor(D/gap)] + 1 per period, 1 % above.
  double old_n = 1;
  for (int k = 1; k < b; ++k) old_n += std::min(1.0, (b - k) / (b - a));
  EXPECT_GT(std::abs(r.mean_bps - old_n * kBits / (kOnS + kOffS)), 4 * r.standard_error_bps);
}

}  // namespace
