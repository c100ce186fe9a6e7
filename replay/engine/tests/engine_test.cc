// The event loop against hand-computed departures, drops and delays.
#include "engine.hh"

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <iterator>

#include "spec.hh"
#include "test_pcap.hh"

using namespace tracelab;
using namespace tracelab::engine;
using tracelab::engine::testing::TestPacket;
using tracelab::engine::testing::write_pcap;

namespace {

constexpr int64_t kT0 = 1700000000LL * 1000000000LL;  // an arbitrary capture epoch, ns
constexpr Time us = kMicrosecond;

RunResult run(RunConfig cfg) {
  Engine e(cfg);
  return e.run();
}

// 1250-byte packets take exactly 1 us at 10 Gb/s.
TEST(Engine, FifoHandTrace) {
  const std::string pcap = write_pcap("fifo_hand.pcap", {{kT0 + 0, 1250},
                                                         {kT0 + 100, 1250},
                                                         {kT0 + 200, 1250},     // finds p0 (on the wire) and p1
                                                         {kT0 + 1000, 1250}});  // arrives as p1 starts: fits
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + pcap + ")"};
  // Two slots: the packet on the wire keeps one until its transmission ends (§2).
  cfg.nodes = {NodeConfig{"fifo(capacity=2)", 10000000000ULL, 5 * us, 0}};
  cfg.detail = true;
  RunResult r = run(cfg);
  ASSERT_EQ(r.detail.fate.size(), 4u);
  // Delivery = transmission end + 5 us propagation.
  EXPECT_EQ(r.detail.fate[0], 0);
  EXPECT_EQ(r.detail.end[0], 1 * us + 5 * us);
  EXPECT_EQ(r.detail.queue_delay[0], 0);
  EXPECT_EQ(r.detail.end[1], 2 * us + 5 * us);
  EXPECT_EQ(r.detail.queue_delay[1], 900 * kNanosecond);
  EXPECT_EQ(r.detail.fate[2], 1 + static_cast<int>(DropReason::kBufferFull));
  EXPECT_EQ(r.detail.end[2], 200 * kNanosecond);
  // Same-instant rule: the link pulls p1 at 1 us before p3 arrives at 1 us.
  EXPECT_EQ(r.detail.fate[3], 0);
  EXPECT_EQ(r.detail.end[3], 3 * us + 5 * us);
  EXPECT_EQ(r.detail.queue_delay[3], 1 * us);
  EXPECT_EQ(r.offered, 4u);
  EXPECT_EQ(r.delivered, 3u);
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_EQ(r.overall.dropped[static_cast<int>(DropReason::kBufferFull)], 1u);
  EXPECT_EQ(r.overall.queue_delay.max, 1 * us);
  EXPECT_EQ(r.overall.queue_delay.p50, 900 * kNanosecond);  // nearest rank 2 of {0, 0.9, 1}
  EXPECT_EQ(r.overall.latency.max, 8 * us - 1 * us);
  EXPECT_EQ(r.nodes[0].transmissions, 3u);
  EXPECT_EQ(r.nodes[0].busy, 3 * us);
  EXPECT_EQ(r.nodes[0].highwater_packets, 2u);  // p0 on the wire and p1 waiting
  // The run ends with its last delivery, p3's at 8 us, not with the last
  // event of the link (p3's transmission ends at 3 us).
  EXPECT_EQ(r.end_time, 8 * us);
}

TEST(Engine, PacketInServiceStaysCountedUnlessInServiceIsOff) {
  // Three 1-us packets 100 ns apart into one slot. The spec's default: p0
  // holds the slot while on the wire, so p1 and p2 are dropped. in_service=0
  // (Click's Queue, ns-3's QueueDisc): p0 leaves the buffer when the link
  // takes it, p1 takes the slot and p2 finds it full.
  const std::string pcap = write_pcap("in_service.pcap", {{kT0, 1250}, {kT0 + 100, 1250}, {kT0 + 200, 1250}});
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + pcap + ")"};
  cfg.nodes = {NodeConfig{"fifo(capacity=1)", 10000000000ULL, 0, 0}};
  RunResult spec = run(cfg);
  EXPECT_EQ(spec.delivered, 1u);
  EXPECT_EQ(spec.dropped, 2u);
  EXPECT_EQ(spec.nodes[0].highwater_packets, 1u);
  cfg.nodes[0].element = "fifo(capacity=1, in_service=0)";
  RunResult click = run(cfg);
  EXPECT_EQ(click.delivered, 2u);
  EXPECT_EQ(click.dropped, 1u);
  EXPECT_EQ(click.nodes[0].highwater_packets, 1u);
}

// 10^9 bytes sent back to back (10^6 packets of 1000 B, all queued within
// 1 ms) end exactly at the closed form ceil(8e12 * 10^9 / rate) ps: at
// 10 Gb/s (800 ps a byte) and at 3 Gb/s, where a 1000-B packet lasts
// 2 666 666.67 ps and rounding each transmission would end 333 333 ps late.
TEST(Engine, GigabyteBusyPeriodEndsAtTheClosedForm) {
  for (const uint64_t rate : {10000000000ULL, 3000000000ULL}) {
    RunConfig cfg;
    cfg.sources = {"cbr(interval=1ns, size=1000, count=1000000)"};
    cfg.nodes = {NodeConfig{"fifo(capacity=1048576)", rate, 0, 0}};
    RunResult r = run(cfg);
    const unsigned __int128 num = static_cast<unsigned __int128>(1000000000ULL) * 8000000000000ULL;
    const Time closed = static_cast<Time>((num + rate - 1) / rate);
    ASSERT_EQ(r.delivered, 1000000u) << rate;
    EXPECT_EQ(r.nodes[0].wire_bytes, 1000000000u) << rate;
    EXPECT_EQ(r.end_time, closed) << rate;
    EXPECT_EQ(r.nodes[0].busy, closed) << rate;
  }
}

TEST(Engine, MinServiceCapsThePacketRate) {
  // 64-B packets every 100 ns into a 200 ns processing floor (5 M PPS): the
  // node forwards one packet per 200 ns and the FIFO of 10 fills and drops.
  RunConfig cfg;
  cfg.sources = {"cbr(interval=100ns, size=64, count=1000)"};
  cfg.nodes = {NodeConfig{"fifo(capacity=10)", 10000000000ULL, 0, 0, 200 * kNanosecond}};
  RunResult r = run(cfg);
  EXPECT_EQ(r.nodes[0].busy, static_cast<Time>(r.delivered) * 200 * kNanosecond);
  // Arrivals at k*100 ns, departures at j*200 ns: the queue grows by one
  // every 200 ns until it holds 10, then every second arrival is dropped.
  EXPECT_NEAR(static_cast<double>(r.delivered), 1000 / 2.0 + 10, 2);
  EXPECT_EQ(r.delivered + r.dropped, 1000u);
}

TEST(Engine, TwoNodesInSeriesWithCrossTraffic) {
  // Node 0: 10 Gb/s, 1 us propagation; node 1: 1 Gb/s.
  const std::string main = write_pcap("series_main.pcap", {{kT0, 1250}, {kT0 + 500, 1250}});
  const std::string cross = write_pcap("series_cross.pcap", {{kT0, 125}});  // joins at node 1 at t=0
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + main + ")", "pcap(path=" + cross + ", hops=1)"};
  cfg.nodes = {NodeConfig{"fifo(capacity=10)", 10000000000ULL, 1 * us, 0},
               NodeConfig{"fifo(capacity=10)", 1000000000ULL, 0, 0}};
  cfg.detail = true;
  RunResult r = run(cfg);
  // uid order: main p0 (t=0, source 0), cross (t=0, source 1), main p1 (0.5 us).
  ASSERT_EQ(r.detail.fate.size(), 3u);
  // Cross packet: 125 B at 1 Gb/s = 1 us, on an idle link at t=0.
  EXPECT_EQ(r.detail.source[1], 1u);
  EXPECT_EQ(r.detail.end[1], 1 * us);
  // p0: node 0 [0, 1 us], arrives at node 1 at 2 us, 1250 B at 1 Gb/s = 10 us.
  EXPECT_EQ(r.detail.end[0], 12 * us);
  EXPECT_EQ(r.detail.queue_delay[0], 0);
  // p1: waits 0.5 us at node 0 ([1, 2] us), arrives at node 1 at 3 us, waits
  // for p0 until 12 us, leaves at 22 us.
  EXPECT_EQ(r.detail.end[2], 22 * us);
  EXPECT_EQ(r.detail.queue_delay[2], 500 * kNanosecond + 9 * us);
  EXPECT_EQ(r.nodes[0].offered, 2u);
  EXPECT_EQ(r.nodes[1].offered, 3u);
  // Node 1 queueing: cross 0, p0 0, p1 9 us -> mean 3 us.
  EXPECT_DOUBLE_EQ(r.nodes[1].mean_queue_delay, 3.0 * us);
}

// Two sources into one node take the general loop (loop_single follows one
// source). 1250-B packets (1 us at 10 Gb/s) every 1 us from t = 0: ten from
// the first source, five from the second. At equal times the first
// source's packet goes first, so the link serves s0@0, s1@0, s0@1, s1@1,
// ..., s1@4, s0@5, ..., s0@9 back to back, the j-th from j us: the last
// ends at 15 us, and s1@4 and s0@5..9 each wait 5 us.
TEST(Engine, TwoSourcesIntoOneNode) {
  RunConfig cfg;
  cfg.sources = {"cbr(interval=1us, size=1250, count=10)", "cbr(interval=1us, size=1250, count=5)"};
  cfg.nodes = {NodeConfig{"fifo(capacity=100)", 10000000000ULL, 0, 0}};
  RunResult r = run(cfg);
  EXPECT_EQ(r.offered, 15u);
  EXPECT_EQ(r.delivered, 15u);
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_EQ(r.nodes[0].busy, 15 * us);
  EXPECT_EQ(r.end_time, 15 * us);
  EXPECT_EQ(r.overall.queue_delay.max, 5 * us);
}

TEST(Engine, LineRateCbrWithFrameOverhead) {
  // 64 B + 20 B preamble/IFG at 10 Gb/s: 67.2 ns per frame, 14.88 Mpps.
  RunConfig cfg;
  cfg.sources = {"cbr(interval=67200ps, size=64, stop=1ms)"};
  cfg.nodes = {NodeConfig{"fifo(capacity=1)", 10000000000ULL, 0, 20}};
  RunResult r = run(cfg);
  EXPECT_EQ(r.offered, 14881u);  // t = 0, 67.2 ns, ... < 1 ms
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_EQ(r.overall.queue_delay.max, 0);
  EXPECT_EQ(r.nodes[0].busy, static_cast<Time>(14881) * 67200);
  EXPECT_NEAR(r.mpps_in, 14.881, 0.001);
  EXPECT_GT(r.wall_mpps, 0.0);  // a run shorter than a second has a rate too
}

// M/D/1 against Pollaczek-Khinchine: mean wait = rho * S / (2 (1 - rho)).
TEST(Engine, PoissonThroughFifoMatchesMD1) {
  RunConfig cfg;
  cfg.sources = {"poisson(load=0.5, size=1500, count=400000, seed=7)"};
  cfg.nodes = {NodeConfig{"fifo(capacity=100000)", 10000000000ULL, 0, 0}};
  RunResult r = run(cfg);
  const double service = 1500 * 8 / 10e9 * 1e12;  // ps
  const double expect = 0.5 * service / (2 * 0.5);
  EXPECT_NEAR(r.overall.queue_delay.mean, expect, 0.03 * expect);
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_NEAR(r.nodes[0].utilization, 0.5, 0.01);
}

TEST(Engine, SameSeedSameRunDifferentSeedDifferentRun) {
  RunConfig cfg;
  cfg.sources = {"poisson(load=0.9, size=bpareto(1.2,40,1500), flows=50, count=20000)"};
  cfg.nodes = {NodeConfig{"efd(capacity=30)", 10000000000ULL, 0, 0}};
  cfg.detail = true;
  RunResult a = run(cfg), b = run(cfg);
  EXPECT_EQ(a.detail.end, b.detail.end);
  EXPECT_EQ(a.detail.fate, b.detail.fate);
  cfg.seed = 2;
  RunResult c = run(cfg);
  EXPECT_NE(a.detail.end, c.detail.end);
}

TEST(Engine, UntilStopsTheClockAndCountsWhatIsQueued) {
  RunConfig cfg;
  // 2 packets per 1.2 us of service: the queue grows until the stop.
  cfg.sources = {"cbr(interval=600ns, size=1500)"};
  cfg.nodes = {NodeConfig{"fifo(capacity=1000000)", 10000000000ULL, 0, 0}};
  cfg.until = 1200 * us;
  RunResult r = run(cfg);
  EXPECT_EQ(r.offered, 2001u);    // t = 0 .. 1200 us inclusive
  EXPECT_EQ(r.delivered, 1000u);  // the 1000th ends exactly at 1200 us
  EXPECT_EQ(r.in_flight, 1u);     // the 1001st started at 1200 us: on the wire
  EXPECT_EQ(r.queued, r.offered - r.delivered - 1);
  EXPECT_EQ(r.overall.queued_end, r.queued + r.in_flight);
  EXPECT_EQ(r.end_time, 1200 * us);
}

// One source into one node keeps no per-packet records (the engine's lean
// path) unless per-packet detail asks for them: both must give the same
// metrics, here with drops, push-out, chunking, a measure window, budgets
// and packets still queued and on the wire at `until`.
TEST(Engine, LeanPathEqualsTheRecordPath) {
  auto same_quantiles = [](const Quantiles& a, const Quantiles& b) {
    return a.count == b.count && a.mean == b.mean && a.min == b.min && a.max == b.max && a.p50 == b.p50 &&
           a.p90 == b.p90 && a.p99 == b.p99 && a.p999 == b.p999 && a.exact == b.exact;
  };
  auto same_class = [&](const ClassResult& a, const ClassResult& b) {
    for (int d = 0; d < kDropReasons; ++d)
      if (a.dropped[d] != b.dropped[d]) return false;
    return a.offered == b.offered && a.offered_bytes == b.offered_bytes && a.delivered == b.delivered &&
           a.delivered_bytes == b.delivered_bytes && a.violations == b.violations && a.queued_end == b.queued_end &&
           same_quantiles(a.queue_delay, b.queue_delay) && same_quantiles(a.latency, b.latency) &&
           same_quantiles(a.excess, b.excess);
  };
  // The lean loop calls each core directly, the record path through
  // QueueCore's virtual functions except for FIFO, EFD and ChuTQ: every
  // element of the engine is compared. The first three are checked to
  // drop, queue, hold packets on the wire and violate budgets at the cut.
  const char* const elements[] = {
      "efd(capacity=40, th=3000)", "fifo(capacity=50)",        "chutq(policy=dcf, capacity=60)",
      "pefd(capacity=40)",         "efdack(capacity=40)",      "run2c(capacity=40, th=3000)",
      "run2cack(capacity=40)",     "sift(capacity=40, p=0.2)", "xprotect(capacity=40, p_ins=0.2, th=3000)",
      "las(capacity=40)",          "lasack(capacity=40)",      "lars(capacity=40)",
      "scfq(capacity=40)",         "ncq(capacity=40)",         "ncqplus(capacity=40)",
      "basicq(capacity=60)",       "chumq(capacity=60)",       "mtqqtl(capacity=40)"};
  for (size_t i = 0; i < std::size(elements); ++i) {
    const char* element = elements[i];
    RunConfig cfg;
    cfg.sources = {"poisson(load=1.3, size=bpareto(1.2,40,1500), flows=50, cls=1, stop=400us)"};
    cfg.nodes = {NodeConfig{element, 10000000000ULL, 3 * us, 20}};
    cfg.classes = {{"a", 10 * us}, {"b", 5 * us}};
    cfg.measure_from = 50 * us;
    cfg.measure_until = 350 * us;
    cfg.until = 300 * us;
    cfg.max_delay_samples = 100;
    const RunResult lean = run(cfg);
    cfg.detail = true;
    const RunResult records = run(cfg);
    SCOPED_TRACE(element);
    ASSERT_GT(lean.offered, 0u);
    if (i < 3) {
      ASSERT_GT(lean.dropped, 0u);
      ASSERT_GT(lean.queued, 0u);
      ASSERT_GT(lean.in_flight, 0u);
      ASSERT_GT(lean.overall.violations, 0u);
    }
    EXPECT_EQ(lean.offered, records.offered);
    EXPECT_EQ(lean.delivered, records.delivered);
    EXPECT_EQ(lean.dropped, records.dropped);
    EXPECT_EQ(lean.queued, records.queued);
    EXPECT_EQ(lean.in_flight, records.in_flight);
    EXPECT_EQ(lean.nodes[0].mean_queue_delay, records.nodes[0].mean_queue_delay);
    ASSERT_EQ(lean.classes.size(), records.classes.size());
    for (size_t c = 0; c < lean.classes.size(); ++c) EXPECT_TRUE(same_class(lean.classes[c], records.classes[c])) << c;
    EXPECT_TRUE(same_class(lean.overall, records.overall));
  }
}

TEST(Engine, ClassBudgetsGiveViolationsAndEplr) {
  // 5 back-to-back 1250-B packets of class 0 (budget 1.5 us) into 4 slots
  // (one on the wire, 3 waiting): 4 delivered with queueing delays 0, 1, 2,
  // 3 us -> 2 violations with excess 0.5 and 1.5 us.
  const std::string pcap = write_pcap("budget.pcap", {{kT0, 1250}, {kT0, 1250}, {kT0, 1250}, {kT0, 1250}, {kT0, 1250}});
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + pcap + ")"};
  cfg.nodes = {NodeConfig{"fifo(capacity=4)", 10000000000ULL, 0, 0}};
  cfg.classes = {ClassConfig{"video", 1500 * kNanosecond, kNever, kNever}};
  RunResult r = run(cfg);
  ASSERT_EQ(r.classes.size(), 1u);
  const ClassResult& c = r.classes[0];
  EXPECT_EQ(c.name, "video");
  EXPECT_EQ(c.delivered, 4u);
  EXPECT_EQ(c.dropped_total, 1u);
  EXPECT_EQ(c.violations, 2u);
  EXPECT_DOUBLE_EQ(c.r_v, 0.5);
  EXPECT_DOUBLE_EQ(c.eplr, 3.0 / 5.0);
  EXPECT_EQ(c.excess.min, 500 * kNanosecond);
  EXPECT_EQ(c.excess.max, 1500 * kNanosecond);
}

TEST(Engine, MeasureWindowRestrictsClassMetricsNotConservation) {
  RunConfig cfg;
  cfg.sources = {"cbr(interval=1us, size=100, stop=10us)"};
  cfg.nodes = {NodeConfig{}};
  cfg.measure_from = 2 * us;
  cfg.measure_until = 5 * us;
  RunResult r = run(cfg);
  EXPECT_EQ(r.offered, 10u);
  EXPECT_EQ(r.overall.offered, 3u);
  EXPECT_EQ(r.span, 3 * us);
}

// An empty measure window has no span: the rates over it are 0, not rates
// over some other duration. Ten 1-us packets still all go through.
TEST(Engine, EmptyMeasureWindowHasNoRates) {
  RunConfig cfg;
  cfg.sources = {"cbr(interval=1us, size=1250, count=10)"};
  cfg.nodes = {NodeConfig{"fifo(capacity=100)", 10000000000ULL, 0, 0}};
  cfg.measure_from = cfg.measure_until = 5 * us;
  RunResult r = run(cfg);
  EXPECT_EQ(r.delivered, 10u);
  EXPECT_EQ(r.span, 0);
  EXPECT_EQ(r.nodes[0].utilization, 0);
  EXPECT_EQ(r.nodes[0].out_bps, 0);
  EXPECT_EQ(r.mpps_in, 0);
}

TEST(Engine, ClassRulesFromPcapHeaders) {
  const std::string pcap = write_pcap("classes.pcap", {{kT0, 100, 1000, 2000, 46},
                                                       {kT0 + 1, 100, 5060, 2000},
                                                       {kT0 + 2, 100, 1, 2, 0, 77},
                                                       {kT0 + 3, 1500},
                                                       {kT0 + 4, 600}});
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + pcap +
                 ", classes='dscp=46->1; port=5060->2; src=10.0.0.77/32->3; size>1000->4; else->5')"};
  cfg.detail = true;
  RunResult r = run(cfg);
  EXPECT_EQ(r.detail.cls, (std::vector<uint8_t>{1, 2, 3, 4, 5}));
}

TEST(Engine, PcapBpfFilterSelectsPackets) {
  const std::string pcap =
      write_pcap("filter.pcap", {{kT0, 100, 5060, 2000}, {kT0 + 1, 100, 1, 2}, {kT0 + 2, 100, 7, 5060}});
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + pcap + ", filter='udp port 5060')"};
  RunResult r = run(cfg);
  EXPECT_EQ(r.offered, 2u);
  cfg.sources = {"pcap(path=" + pcap + ", filter='tcp and')"};
  EXPECT_THROW(Engine{cfg}, SpecError);
}

TEST(Engine, PcapTimeScalingToARate) {
  // 2 packets of 1250 B 1 ms apart: 20 kb over 1 ms = 20 Mb/s recorded;
  // scaled to 1 Gb/s the gap becomes 20 us.
  const std::string pcap = write_pcap("scale.pcap", {{kT0, 1250}, {kT0 + 1000000, 1250}});
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + pcap + ", rate=1G)"};
  cfg.detail = true;
  RunResult r = run(cfg);
  EXPECT_EQ(r.detail.created[1] - r.detail.created[0], 20 * us);
  cfg.sources = {"pcap(path=" + pcap + ", speed=4)"};
  r = run(cfg);
  EXPECT_EQ(r.detail.created[1] - r.detail.created[0], 250 * us);
}

TEST(Engine, CaptureSpanningYearsRunsScaledAndIsRefusedClearlyUnscaled) {
  // Three packets, the last 3 years (94 608 000 s) after the first: beyond
  // the 2^63 ps (106 days) of the engine's clock at the recorded speed.
  constexpr int64_t kYears3 = 3LL * 365 * 86400 * 1000000000LL;
  const std::string pcap = write_pcap("years.pcap", {{kT0, 1250}, {kT0 + 1000, 1250}, {kT0 + kYears3, 1250}});
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + pcap + ")"};
  cfg.nodes = {NodeConfig{"fifo(capacity=10)", 10000000000ULL, 0, 0}};
  // The clock skips idle time only without a measure window (or until).
  cfg.measure_from = 1;
  try {
    run(cfg);
    ADD_FAILURE() << "a 3-year capture ran at its recorded speed with a measure window";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a packet 1094 days after the one before"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("106 days"), std::string::npos) << e.what();
  }
  cfg.measure_from = 0;
  // x1000: 94 608 s of replay, within the clock; the times are exact.
  cfg.sources = {"pcap(path=" + pcap + ", speed=1000)"};
  cfg.detail = true;
  RunResult r = run(cfg);
  EXPECT_EQ(r.delivered, 3u);
  EXPECT_EQ(r.idle_skipped, 0);
  EXPECT_EQ(r.detail.created[1], 1 * kNanosecond);  // 1 us after the first, x1000
  EXPECT_EQ(r.last_arrival, kYears3 / 1000 * kNanosecond);
}

TEST(Engine, CaptureSpanningYearsRunsExactlyBySkippingIdleTime) {
  // Two packets, 5.8 years of silence, three more: at the recorded speed
  // the clock skips the gap beyond 2^60 ps (13 days). The oracle is the
  // same capture with a 20-day gap, which runs without a skip: the cores
  // see an idle gap of 13 days or more either way, so every fate and delay
  // is the same, and the times differ by exactly the gap's difference.
  constexpr int64_t kGap = 2117LL * 86400 * 1000000000LL;  // 5.8 years, ns
  constexpr int64_t kDays20 = 20LL * 86400 * 1000000000LL;
  auto trace = [](int64_t gap) {
    return std::vector<TestPacket>{
        {kT0, 1250}, {kT0 + 500, 1250}, {kT0 + gap, 1250}, {kT0 + gap + 300, 1250}, {kT0 + gap + 600, 1250}};
  };
  RunConfig cfg;
  cfg.nodes = {NodeConfig{"fifo(capacity=2)", 10000000000ULL, 0, 0}};  // 1 us a packet; the third of a burst drops
  cfg.detail = true;
  cfg.sources = {"pcap(path=" + write_pcap("gap20d.pcap", trace(kDays20)) + ")"};
  const RunResult oracle = run(cfg);
  const std::string out = ::testing::TempDir() + "years_out.pcap";
  cfg.sources = {"pcap(path=" + write_pcap("gap_years.pcap", trace(kGap)) + ")"};
  cfg.out_pcap = out;
  const RunResult r = run(cfg);

  EXPECT_EQ(oracle.idle_skipped, 0);
  // The network is empty from the second delivery (2 us) on.
  const WideTime gap_ps = static_cast<WideTime>(kGap) * kNanosecond;
  EXPECT_EQ(r.idle_skipped, gap_ps - 2 * kMicrosecond - (WideTime{1} << 60));
  EXPECT_EQ(r.last_arrival, gap_ps + 600 * kNanosecond);
  EXPECT_EQ(r.end_time, gap_ps + 2 * kMicrosecond);
  EXPECT_EQ(r.span, r.last_arrival);
  EXPECT_EQ(r.delivered, 4u);
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_EQ(r.detail.fate, oracle.detail.fate);
  EXPECT_EQ(r.detail.queue_delay, oracle.detail.queue_delay);
  for (size_t i = 2; i < 5; ++i)  // on the engine's clock: the gap cut to 13 days
    EXPECT_EQ(r.detail.created[i] - oracle.detail.created[i],
              static_cast<Time>(gap_ps - r.idle_skipped - static_cast<WideTime>(kDays20) * kNanosecond));
  // The delivered pcap carries the exact delivery times.
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(out.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  ASSERT_NE(p, nullptr) << err;
  std::vector<int64_t> ts;
  pcap_pkthdr* h;
  const u_char* d;
  while (pcap_next_ex(p, &h, &d) == 1) ts.push_back(static_cast<int64_t>(h->ts.tv_sec) * 1000000000LL + h->ts.tv_usec);
  pcap_close(p);
  EXPECT_EQ(ts, (std::vector<int64_t>{kT0 + 1000, kT0 + 2000, kT0 + kGap + 1000, kT0 + kGap + 2000}));
}

TEST(Engine, OutPcapHasTheDeliveredPacketsAtTheirDeliveryTimes) {
  const std::string in = write_pcap("out_in.pcap", {{kT0, 1250}, {kT0 + 100, 1250}, {kT0 + 200, 1250}});
  const std::string out = ::testing::TempDir() + "out_out.pcap";
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + in + ")"};
  cfg.nodes = {NodeConfig{"fifo(capacity=2)", 10000000000ULL, 0, 0}};  // p0 on the wire, p1 waits, p2 dropped
  cfg.out_pcap = out;
  run(cfg);
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(out.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  ASSERT_NE(p, nullptr) << err;
  std::vector<int64_t> ts;
  pcap_pkthdr* h;
  const u_char* d;
  while (pcap_next_ex(p, &h, &d) == 1) {
    ts.push_back(static_cast<int64_t>(h->ts.tv_sec) * 1000000000LL + h->ts.tv_usec);
    EXPECT_EQ(h->caplen, 1264u);
  }
  EXPECT_EQ(pcap_snapshot(p), 262144);  // the header's snapshot length: tcpdump's default
  pcap_close(p);
  EXPECT_EQ(ts, (std::vector<int64_t>{kT0 + 1000, kT0 + 2000}));
}

TEST(Engine, OutPcapWriteErrorsEndTheRunWithTheirReason) {
  // /dev/full fails every write with ENOSPC: a handful of packets fail at the
  // final flush, thousands at the write that overflows the stdio buffer.
  for (const int n : {3, 4000}) {
    std::vector<TestPacket> pkts;
    for (int i = 0; i < n; ++i) pkts.push_back({kT0 + i * 2000LL, 1250});
    RunConfig cfg;
    cfg.sources = {"pcap(path=" + write_pcap("full_in.pcap", pkts) + ")"};
    cfg.nodes = {NodeConfig{"fifo(capacity=10)", 10000000000ULL, 0, 0}};
    cfg.out_pcap = "/dev/full";
    try {
      run(cfg);
      ADD_FAILURE() << n << " packets written to /dev/full without an error";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "cannot write '/dev/full': " + std::string(std::strerror(ENOSPC)));
    }
  }
}

TEST(Engine, ConfigurationErrorsAreClear) {
  RunConfig cfg;
  cfg.sources = {"poisson(load=0.5)"};
  EXPECT_THROW(Engine{cfg}, SpecError);  // never ends
  cfg.sources = {"poisson(load=0.5, count=10)"};
  cfg.out_pcap = ::testing::TempDir() + "x.pcap";
  EXPECT_THROW(Engine{cfg}, SpecError);  // synthetic packets have no bytes
  cfg.out_pcap.clear();
  cfg.sources = {"poisson(load=0.5, count=10, hops=1)"};
  EXPECT_THROW(Engine{cfg}, SpecError);  // one node only
  cfg.sources = {"pcap(path=/nonexistent.pcap)"};
  EXPECT_THROW(Engine{cfg}, std::runtime_error);
  cfg.sources = {"poisson(load=0.5, count=10)"};
  cfg.classes = {ClassConfig{"x", kNever, kNever, 1500 * kNanosecond}};
  EXPECT_THROW(Engine{cfg}, SpecError);  // MTQ is whole microseconds
  // ... below 65.535 ms: the header field's 0xFFFF means "not set" (mtq_qtl_header.hh).
  cfg.classes = {ClassConfig{"x", kNever, kNever, 65535 * us}};
  EXPECT_THROW(Engine{cfg}, SpecError);
  cfg.classes = {ClassConfig{"x", kNever, kNever, 65534 * us}};
  EXPECT_NO_THROW(Engine{cfg});
  // A class id is one byte: 256 classes, not 257.
  cfg.classes.assign(256, ClassConfig{});
  EXPECT_NO_THROW(Engine{cfg});
  cfg.classes.assign(257, ClassConfig{});
  EXPECT_THROW(Engine{cfg}, SpecError);
}

TEST(Engine, EfdFlowTableStaysBelowTheQueueLength) {
  // Open-loop flows through EFD in overload: the INV of E-THS-3.
  RunConfig cfg;
  cfg.sources = {"flows(load=1.5, link=10M, packets=bzipf(1.1,6,6667), size=1500, peak=100M, stop=20s)"};
  cfg.nodes = {NodeConfig{"efd(capacity=300, th=30000)", 10000000ULL, 0, 0}};
  cfg.until = 20 * kSecond;
  RunResult r = run(cfg);
  ASSERT_TRUE(r.nodes[0].has_flow_table);
  EXPECT_LE(r.nodes[0].flow_table_max, r.nodes[0].highwater_packets);
  EXPECT_GT(r.nodes[0].flow_table_mean, 0.5);
  EXPECT_GT(r.dropped, 0u);
}

TEST(Engine, FlowEntryLeavesWhenTheTransmissionEnds) {
  // Two 1250-B packets 10 us apart into EFD at 10 Gb/s: each keeps its flow
  // entry while on the wire (1 us, §2) and no longer, though the link then
  // idles: the table holds one entry for 1 us of the 10-us span.
  const std::string pcap = write_pcap("efd_entry.pcap", {{kT0, 1250}, {kT0 + 10000, 1250}});
  RunConfig cfg;
  cfg.sources = {"pcap(path=" + pcap + ")"};
  cfg.nodes = {NodeConfig{"efd(capacity=10)", 10000000000ULL, 0, 0}};
  RunResult r = run(cfg);
  ASSERT_EQ(r.nodes[0].flow_table_time_at.size(), 2u);
  EXPECT_EQ(r.nodes[0].flow_table_time_at[0], 9 * us);
  EXPECT_EQ(r.nodes[0].flow_table_time_at[1], 2 * us);  // the last 1 us after the span too
  EXPECT_EQ(r.nodes[0].flow_table_max, 1u);
  EXPECT_EQ(r.nodes[0].highwater_packets, 1u);
}

TEST(Engine, ChunkingCoresFormChunksUpToTheMtu) {
  RunConfig cfg;
  cfg.sources = {"poisson(load=0.3, size=40, cls=0, stop=2ms)", "poisson(load=0.3, size=200, cls=1, stop=2ms)",
                 "poisson(load=0.3, size=1500, cls=2, stop=2ms)"};
  cfg.classes = {ClassConfig{"sensing", 50 * us, kNever, kNever}, ClassConfig{"realtime", 100 * us, kNever, kNever},
                 ClassConfig{"file", 200 * us, kNever, kNever}};
  for (const char* element :
       {"basicq(shim=0)", "chumq(shim=0)", "chutq(policy=dcf, shim=0)", "chutq(policy=tpf, shim=0)"}) {
    cfg.nodes = {NodeConfig{element, 10000000000ULL, 0, 0}};
    RunResult r = run(cfg);
    EXPECT_EQ(r.dropped, 0u) << element;
    EXPECT_LE(r.nodes[0].max_transmission_bytes, 9000u) << element;
    EXPECT_GT(r.nodes[0].mean_packets_per_transmission, 10) << element;
    EXPECT_EQ(r.delivered, r.offered) << element;
  }
}

TEST(Engine, QtlPacketsNeverExceedTheirBudget) {
  // Three 20 Mb/s nodes in overload; QTL = 10 ms stamped at ingress: no
  // delivered packet may have queued longer than 10 ms in total (INV, E-MTQ-4).
  RunConfig cfg;
  cfg.sources = {"onoff(flows=300, rate=80k, size=200, stop=3s)"};
  cfg.nodes.assign(3, NodeConfig{"mtqqtl(capacity=200)", 20000000ULL, 0, 0});
  cfg.classes = {ClassConfig{"g0", 10 * kMillisecond, 10 * kMillisecond, kNever}};
  RunResult r = run(cfg);
  EXPECT_GT(r.overall.dropped[static_cast<int>(DropReason::kBudgetExpired)], 0u);
  EXPECT_LE(r.overall.queue_delay.max, 10 * kMillisecond);
  EXPECT_EQ(r.overall.violations, 0u);
}

}  // namespace

namespace {

TEST(Metrics, LogHistogramQuantilesAreWithinTheirResolution) {
  LogHistogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.add(v * 1000);
  for (double q : {0.5, 0.9, 0.99}) {
    const double exact = q * 100000 * 1000;
    EXPECT_NEAR(static_cast<double>(h.quantile(q, 100000)), exact, exact / 512) << q;
  }
  EXPECT_EQ(LogHistogram::upper_edge(LogHistogram::index(511)), 511u);  // exact below 2^9
}

// The bucket of v by its definition: v itself below 2^9; above, the top
// bit's position m picks a block of 512 buckets and the 9 bits below it the
// bucket. Every bucket must hold v: lower edge <= v <= upper_edge.
TEST(Metrics, LogHistogramIndexMatchesItsDefinition) {
  const auto by_definition = [](uint64_t v) -> size_t {
    if (v < 512) return v;
    int m = 63;
    while (!(v >> m)) --m;
    return static_cast<size_t>(m - 8) * 512 + ((v >> (m - 9)) & 511);
  };
  std::vector<uint64_t> values = {0,    1,    2,    510,  511,   512,       513,       1023,
                                  1024, 1025, 2047, 2048, ~0ULL, ~0ULL - 1, 1ULL << 63};
  for (int b = 1; b < 64; ++b)
    for (uint64_t d : {0ULL, 1ULL}) values.push_back((1ULL << b) - d), values.push_back((1ULL << b) + d);
  uint64_t x = 88172645463325252ULL;  // xorshift64: arbitrary values of every magnitude
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    values.push_back(x >> (i % 64));
  }
  for (uint64_t v : values) {
    const size_t idx = LogHistogram::index(v);
    ASSERT_EQ(idx, by_definition(v)) << v;
    ASSERT_LT(idx, LogHistogram::kBuckets) << v;
    ASSERT_GE(LogHistogram::upper_edge(idx), v) << v;
    if (idx > 0) {
      ASSERT_LT(LogHistogram::upper_edge(idx - 1), v) << v;
    }
  }
}

TEST(Metrics, Distribution1DFallsBackToTheHistogramBeyondItsSamples) {
  Distribution1D exact(100), approx(10);
  for (int64_t v = 1; v <= 100; ++v) exact.add(v * 1000), approx.add(v * 1000);
  const Quantiles a = exact.summarize(), b = approx.summarize();
  EXPECT_TRUE(a.exact);
  EXPECT_EQ(a.p50, 50000);
  EXPECT_EQ(a.p99, 99000);
  EXPECT_FALSE(b.exact);
  EXPECT_NEAR(static_cast<double>(b.p50), 50000, 50000.0 / 512);
  EXPECT_EQ(b.max, 100000);
  EXPECT_DOUBLE_EQ(b.mean, 50500);
}

}  // namespace
