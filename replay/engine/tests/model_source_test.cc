// The workload-model source against hand-computed timing, and the new
// distribution forms against their closed-form means.
#include <gtest/gtest.h>

#include <cmath>

#include "distributions.hh"
#include "sources.hh"
#include "spec.hh"

using namespace tracelab;
using namespace tracelab::engine;

namespace {

constexpr Time us = kMicrosecond;
constexpr Time ms = 1000 * kMicrosecond;
constexpr Time s = 1000 * ms;

std::vector<Arrival> all(const std::string& spec) {
  auto src = make_source(spec, SourceContext{});
  std::vector<Arrival> out;
  Arrival a;
  while (src->next(a)) out.push_back(a);
  return out;
}

// One connection (constant gap 10 s, stop 15 s) of 4000 bytes, half
// uploaded: the initiator sends 2 packets of 1000 B, the responder 4 of
// 500 B. At peak 1 Gb/s, 1000 B take 8 us and 500 B 4 us.
TEST(ModelSource, OneConnectionHandTimed) {
  const auto pkts =
      all("model(size=4000, gap=10s, stop=15s, peak=1G, "
          "intranet='scope(share=1, up=0.5, rtt=1ms, orig_size=hist(1000:1), orig_train=hist(2:1), "
          "resp_size=hist(500:1), resp_train=hist(3:1), resp_warmup=100us, resp_pacing=1us, orig_warmup=7us)')");
  ASSERT_EQ(pkts.size(), 6u);
  const Time t0 = 10 * s;
  // Initiator's train of 2: flight 1 (one packet), flight 2 one RTT later.
  EXPECT_EQ(pkts[0].pkt.arrival, t0);
  EXPECT_EQ(pkts[1].pkt.arrival, t0 + 1 * ms);
  // Responder: 100 us warm-up after the last packet has left at peak rate;
  // train of 3 = flights of 1 and 2, the second's packets 4 us + 1 us apart.
  const Time r1 = t0 + 1 * ms + 8 * us + 100 * us;
  EXPECT_EQ(pkts[2].pkt.arrival, r1);
  EXPECT_EQ(pkts[3].pkt.arrival, r1 + 1 * ms);
  EXPECT_EQ(pkts[4].pkt.arrival, r1 + 1 * ms + 5 * us);
  // The initiator has nothing left: the responder's last packet is a new
  // train after its own warm-up.
  EXPECT_EQ(pkts[5].pkt.arrival, r1 + 1 * ms + 5 * us + 4 * us + 100 * us);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(pkts[i].pkt.length, 1000u);
  for (int i = 2; i < 6; ++i) EXPECT_EQ(pkts[i].pkt.length, 500u);
  // Classes: intranet download 0, upload 1; one flow per direction.
  EXPECT_EQ(pkts[0].pkt.cls, 1);
  EXPECT_EQ(pkts[2].pkt.cls, 0);
  EXPECT_EQ(pkts[0].pkt.flow_hash, pkts[1].pkt.flow_hash);
  EXPECT_NE(pkts[0].pkt.flow_hash, pkts[2].pkt.flow_hash);
  EXPECT_EQ(pkts[0].pkt.conn_hash, pkts[2].pkt.conn_hash);
}

// Without train sizes a side sends everything as one train; the flights
// follow Eq. 5.10 (1, 2, 3, 4, 6, ...) one RTT apart, back to back inside.
TEST(ModelSource, SlowStartFlights) {
  const auto pkts =
      all("model(size=12500, gap=10s, stop=15s, peak=1G, "
          "internet='scope(share=1, up=0, rtt=10ms, resp_size=hist(1250:1))')");
  ASSERT_EQ(pkts.size(), 10u);            // flights 1 + 2 + 3 + 4
  const Time t0 = 10 * s, ser = 10 * us;  // 1250 B at 1 Gb/s
  const Time want[10] = {t0,
                         t0 + 10 * ms,
                         t0 + 10 * ms + ser,
                         t0 + 20 * ms,
                         t0 + 20 * ms + ser,
                         t0 + 20 * ms + 2 * ser,
                         t0 + 30 * ms,
                         t0 + 30 * ms + ser,
                         t0 + 30 * ms + 2 * ser,
                         t0 + 30 * ms + 3 * ser};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(pkts[i].pkt.arrival, want[i]) << i;
  for (const auto& a : pkts) EXPECT_EQ(a.pkt.cls, 2);  // internet download
}

TEST(ModelSource, ErrorsNameTheProblem) {
  EXPECT_THROW(make_source("model(gap=1s, stop=1s)", SourceContext{}), SpecError);  // no size
  try {
    make_source("model(size=1000, stop=1s, intranet='scope(share=1, up=0.5, resp_size=hist(100:1))')", SourceContext{});
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("orig_size has no packets"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_source("model(size=1000, stop=1s, intranet='scope(share=1, up=0, resp_size=hist(100:1), typo=1)')",
                           SourceContext{}),
               SpecError);
}

// Sample means against the closed forms (10^6 draws: a relative standard
// error below 0.3 % for these shapes; tolerance 1 %).
TEST(Distributions, FittedFamiliesMatchTheirMeans) {
  struct Case {
    const char* text;
    double mean;
  } cases[] = {
      {"lognormal(1000, 0.8)", 1000 * std::exp(0.32)},
      {"weibull(0.7, 2000)", 2000 * std::tgamma(1 + 1 / 0.7)},
      {"hist(40:3, 1500:1)", (40.0 * 3 + 1500) / 4},
      {"quantiles(0, 100, 400)", (50.0 + 250.0) / 2},
  };
  for (const auto& c : cases) {
    Distribution d = Distribution::parse(c.text, Distribution::Unit::kBytes, "test");
    EXPECT_NEAR(d.mean(), c.mean, 1e-9 * c.mean) << c.text;
    Rng rng(7);
    double sum = 0;
    const int n = 1000000;
    for (int i = 0; i < n; ++i) sum += d.sample(rng);
    EXPECT_NEAR(sum / n, c.mean, 0.01 * c.mean) << c.text;
    d.scale_by(3);
    EXPECT_NEAR(d.mean(), 3 * c.mean, 1e-9 * c.mean) << c.text;
  }
  EXPECT_THROW(Distribution::parse("hist(40:1, 30:1)", Distribution::Unit::kBytes, "t"), SpecError);
  EXPECT_THROW(Distribution::parse("quantiles(5, 3)", Distribution::Unit::kBytes, "t"), SpecError);
}

}  // namespace
