// The seed of the flow tables' keyed hash (efd_flow_table.hh) decides where
// a flow's entry lives, never what a core does: every core with a per-flow
// table serves and drops exactly the same packets, in the same order, under
// two seeds, on seeded traffic that fills the tables (untracked flows) and
// runs the idle scans (entries deleted).
#include <random>
#include <string>
#include <vector>

#include "efd.hh"
#include "fifo_test_harness.hh"
#include "lars.hh"
#include "las.hh"
#include "run2c.hh"
#include "scfq.hh"
#include "sift.hh"
#include "xprotect.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

constexpr uint64_t kOtherSeed = 0x0123456789ABCDEFULL;

// Served handles and (handle, reason) drops, in order, as one record.
std::vector<std::string> decisions(QueueCore& core) {
  Driver d(core);
  std::mt19937_64 rng(11);
  Time now = 0;
  for (uint64_t handle = 0; handle < 40000; ++handle) {
    now += static_cast<Time>(rng() % 4000) * kNanosecond;
    // 3000 flows, heavy-tailed popularity, for 300 buffer slots and 256
    // table entries; keys spread over the word as adapters' hashes are.
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const uint64_t flow = mix64(static_cast<uint64_t>(3000 * u * u * u));
    const uint32_t sizes[3] = {40, 576, 1500};
    const uint32_t len = sizes[rng() % 3];
    Packet p = pkt(handle, flow, len, len == 40 ? (kFlagTcp | kFlagPureAck) : kFlagTcp);
    p.tcp_ack = static_cast<uint32_t>(rng() % 100000);
    p.arrival = now;
    d.offer(p, now);
    if (rng() % 10 < 8) d.serve(now);
  }
  d.drain(now);
  std::vector<std::string> out;
  for (uint64_t h : d.served) out.push_back("s" + std::to_string(h));
  for (auto& [h, why] : d.log.drops) out.push_back("d" + std::to_string(h) + "/" + std::to_string(int(why)));
  return out;
}

// Small tables scanned often: full tables and idle deletions both happen.
FlowStateConfig flows(uint64_t seed) {
  FlowStateConfig f;
  f.max_flows = 256;
  f.gc_interval = 2 * kMillisecond;
  f.idle_timeout = 5 * kMillisecond;
  f.table_seed = seed;
  return f;
}

template <typename Core, typename Config>
void expect_same_decisions(Config a, Config b) {
  Core x(a), y(b);
  const std::vector<std::string> dx = decisions(x), dy = decisions(y);
  EXPECT_GT(x.flows_highwater(), 0u);
  EXPECT_EQ(dx, dy);
}

TEST(TableSeed, EfdFamilyDecidesAlike) {
  for (EfdConfig c : {EfdConfig::befd(), EfdConfig::pefd(), EfdConfig::efdack()}) {
    EfdConfig other = c;
    other.table_seed = kOtherSeed;
    expect_same_decisions<EfdCore>(c, other);
  }
}

TEST(TableSeed, ScfqDecidesAlike) {
  ScfqConfig other;
  other.table_seed = kOtherSeed;
  expect_same_decisions<ScfqCore>(ScfqConfig{}, other);
}

TEST(TableSeed, Run2cSiftXProtectDecideAlike) {
  Run2cConfig r[2];
  SiftConfig s[2];
  XProtectConfig x[2];
  for (int i = 0; i < 2; ++i) {
    const uint64_t seed = i == 0 ? kFlowTableSeed : kOtherSeed;
    r[i].flows = s[i].flows = x[i].flows = flows(seed);
    s[i].probability = x[i].insert_probability = 0.2;
  }
  expect_same_decisions<Run2cCore>(r[0], r[1]);
  expect_same_decisions<SiftCore>(s[0], s[1]);
  expect_same_decisions<XProtectCore>(x[0], x[1]);
}

TEST(TableSeed, LasLarsDecideAlike) {
  LasConfig l[2];
  LarsConfig r[2];
  for (int i = 0; i < 2; ++i) {
    const uint64_t seed = i == 0 ? kFlowTableSeed : kOtherSeed;
    l[i].flows = flows(seed);
    r[i].flows = flows(seed);
    r[i].tau = kMillisecond;
  }
  expect_same_decisions<LasCore>(l[0], l[1]);
  expect_same_decisions<LarsCore>(r[0], r[1]);
}

}  // namespace
}  // namespace tracelab
