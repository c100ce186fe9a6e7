// FlowTable (core/efd_flow_table.hh) against std::map as the oracle, under
// the churn EFD puts it through: entries created and deleted per packet,
// shared buckets (long chains with spread 1), indices kept across other
// insertions and deletions.
#include <gtest/gtest.h>

#include <map>

#include "efd_flow_table.hh"
#include "rng.hh"

namespace tracelab {
namespace {

struct Value {
  uint64_t v = 0;
};

class FlowTableChurn : public ::testing::TestWithParam<uint32_t> {};

TEST_P(FlowTableChurn, RandomChurnMatchesMapAndIndicesStayPut) {
  const uint32_t cap = 300;
  FlowTable<Value> t(cap, GetParam());
  std::map<uint64_t, std::pair<uint32_t, uint64_t>> oracle;  // key -> (index, value)
  Rng rng(7);
  for (int step = 0; step < 200000; ++step) {
    // 600 distinct keys (half of them shifted into the high bits) for 300
    // entries: buckets are shared.
    const uint64_t key = (rng.next_u64() % 600) << (rng.next_u64() % 2 ? 0 : 40);
    FlowTable<Value>::Vacancy vac;
    const uint32_t e = t.lookup(key, vac);
    auto it = oracle.find(key);
    ASSERT_EQ(e == FlowTable<Value>::kNone, it == oracle.end()) << "step " << step;
    if (it != oracle.end()) {
      ASSERT_EQ(e, it->second.first);           // the index never moved
      ASSERT_EQ(t.at(e).v, it->second.second);  // nor the value
      if (rng.next_u64() % 2) {
        t.erase_at(e);
        oracle.erase(it);
      } else {
        t.at(e).v += 1;
        it->second.second += 1;
      }
    } else {
      const uint32_t n = t.insert(vac, key);
      if (oracle.size() == cap) {
        ASSERT_EQ(n, FlowTable<Value>::kNone);
      } else {
        ASSERT_NE(n, FlowTable<Value>::kNone);
        ASSERT_LT(n, cap);
        t.at(n).v = key;
        oracle[key] = {n, key};
      }
    }
    ASSERT_EQ(t.size(), oracle.size());
  }
  // Every live entry is reachable by key, by pointer, and by for_each.
  size_t seen = 0;
  t.for_each([&](uint64_t k, const Value& v) {
    ++seen;
    ASSERT_EQ(oracle.at(k).second, v.v);
  });
  EXPECT_EQ(seen, oracle.size());
  EXPECT_LE(t.highwater(), cap);
  for (auto& [k, iv] : oracle) t.erase(t.find(k));
  EXPECT_EQ(t.size(), 0u);
}

// Spread 1: ~one entry per bucket at capacity, chains of several; 4: the
// default; 8: EFD's.
INSTANTIATE_TEST_SUITE_P(Spreads, FlowTableChurn, ::testing::Values(1u, 4u, 8u));

TEST(FlowTable, EraseIfAndFindOrInsert) {
  // 6 entries in 8 buckets (the top 3 bits of the hash). With the default
  // seed keys 1, 22 and 30 share a bucket, as do 16 and 23; inserted in this
  // order the chains are (30, 1, 22) and (16, 23), so erasing the even keys
  // unlinks heads (30, 16), an entry behind a kept one (22), and goes on
  // after a removal.
  auto bucket = [](uint64_t k) { return flow_table_hash(k, kFlowTableSeed) >> 61; };
  ASSERT_EQ(bucket(1), bucket(22));
  ASSERT_EQ(bucket(1), bucket(30));
  ASSERT_EQ(bucket(16), bucket(23));
  ASSERT_NE(bucket(1), bucket(16));
  FlowTable<Value> t(6, 1);
  for (uint64_t k : {22, 1, 30, 23, 16, 3}) t.find_or_insert(k)->v = k;
  EXPECT_EQ(t.find_or_insert(5), nullptr);  // full
  EXPECT_EQ(t.find_or_insert(1)->v, 1u);    // existing
  t.erase_if([](uint64_t k, const Value&) { return k % 2 == 0; });
  EXPECT_EQ(t.size(), 3u);
  for (uint64_t k : {22, 30, 16}) EXPECT_EQ(t.find(k), nullptr) << k;
  for (uint64_t k : {1, 23, 3}) EXPECT_EQ(t.find(k)->v, k) << k;
  t.erase(uint64_t{1});
  EXPECT_EQ(t.find(1), nullptr);
  EXPECT_EQ(t.find(23)->v, 23u);
  EXPECT_EQ(t.size(), 2u);
}

}  // namespace
}  // namespace tracelab
