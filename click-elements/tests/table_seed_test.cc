// The seed of the flow tables' keyed hash (efd_flow_table.hh) decides where
// a flow's entry lives, never what a core does: every core with a per-flow
// table serves and drops exactly the same packets, in the same order, under
// two seeds, on seeded traffic that fills the tables (untracked flows) and
// runs the idle scans (entries deleted). And it does decide where: keys
// crafted to share one bucket under a seed make the table's longest probe
// as long as their number under that seed, and short under another, in
// every core that keeps a table.
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

// The inverse of mix64 (rng.hh), to build keys that hash where a test
// wants them: undo each xorshift (x = y ^ y >> s ^ y >> 2s ...) and each
// multiply (by the odd multiplier's inverse modulo 2^64, Newton's method).
uint64_t unxorshift(uint64_t y, int s) {
  uint64_t x = y;
  for (int k = s; k < 64; k += s) x ^= y >> k;
  return x;
}
uint64_t inverse(uint64_t odd) {
  uint64_t inv = odd;
  for (int i = 0; i < 5; ++i) inv *= 2 - odd * inv;
  return inv;
}
uint64_t unmix64(uint64_t z) {
  z = unxorshift(z, 31) * inverse(0x94d049bb133111ebULL);
  z = unxorshift(z, 27) * inverse(0xbf58476d1ce4e5b9ULL);
  return unxorshift(z, 30);
}

// kCrafted flow keys whose hash under `seed` shares its top 20 bits: one
// bucket (FlowTable) or one home slot (FlowRecordTable) for any table of up
// to 2^20 buckets or slots, so a lookup of the last walks past all the others.
constexpr int kCrafted = 16;
std::vector<uint64_t> colliding(uint64_t seed) {
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < kCrafted; ++i) keys.push_back(unmix64(0xABCDEull << 44 | (i * 0x9E3779B97ull + 1)) ^ seed);
  return keys;
}

TEST(TableSeed, CraftedKeysHashAsCrafted) {
  for (uint64_t v : {0ull, 1ull, 0x0123456789ABCDEFull, ~0ull}) EXPECT_EQ(unmix64(mix64(v)), v);
  for (uint64_t k : colliding(kOtherSeed)) EXPECT_EQ(flow_table_hash(k, kOtherSeed) >> 44, 0xABCDEull);
}

// Offers one packet of each crafted flow and reads the table's longest
// probe: every flow in one chain (or cluster) under the seed the keys were
// crafted for, spread under another. The core holds every packet (capacity
// 300), so every flow keeps its entry.
template <typename Core, typename Config>
void expect_seed_in_table(Config crafted_for, Config other) {
  for (const bool same : {true, false}) {
    Core core(same ? crafted_for : other);
    Driver d(core);
    uint64_t handle = 0;
    for (uint64_t key : colliding(kOtherSeed)) d.offer(pkt(handle++, key, 1500, kFlagTcp), 0);
    EXPECT_EQ(core.flows(), static_cast<uint32_t>(kCrafted));
    if (same) {
      EXPECT_EQ(core.table_longest_probe(), static_cast<uint32_t>(kCrafted));
    } else {
      EXPECT_LE(core.table_longest_probe(), 4u);
    }
  }
}

TEST(TableSeed, EveryCoreHashesWithItsSeed) {
  EfdConfig e = EfdConfig::befd(), e_default = e;
  e.table_seed = kOtherSeed;
  expect_seed_in_table<EfdCore>(e, e_default);
  ScfqConfig q, q_default;
  q.table_seed = kOtherSeed;
  expect_seed_in_table<ScfqCore>(q, q_default);
  Run2cConfig r, r_default;
  r.flows.table_seed = kOtherSeed;
  expect_seed_in_table<Run2cCore>(r, r_default);
  SiftConfig s, s_default;
  s.probability = s_default.probability = 1;
  s.flows.table_seed = kOtherSeed;
  expect_seed_in_table<SiftCore>(s, s_default);
  XProtectConfig x, x_default;
  x.insert_probability = x_default.insert_probability = 1;
  x.flows.table_seed = kOtherSeed;
  expect_seed_in_table<XProtectCore>(x, x_default);
  LasConfig l, l_default;
  l.flows.table_seed = kOtherSeed;
  expect_seed_in_table<LasCore>(l, l_default);
  LarsConfig a, a_default;
  a.flows.table_seed = kOtherSeed;
  expect_seed_in_table<LarsCore>(a, a_default);
}

}  // namespace
}  // namespace tracelab
