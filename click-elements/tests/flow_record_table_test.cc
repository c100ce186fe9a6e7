// FlowRecordTable (core/flow_record_table.hh) against std::map as the
// oracle: lookups and insertions up to a full table, and idle scans that
// delete arbitrary subsets, in tables small enough that clusters wrap
// around the end and keys share fingerprints.
#include <gtest/gtest.h>

#include <map>

#include "flow_record_table.hh"
#include "rng.hh"

namespace tracelab {
namespace {

class FlowRecordChurn : public ::testing::TestWithParam<uint32_t> {};

TEST_P(FlowRecordChurn, MatchesMapThroughInsertionsAndScans) {
  const uint32_t cap = GetParam();
  FlowRecordTable<uint64_t> t(cap);
  std::map<uint64_t, uint64_t> oracle;  // key -> volume
  Rng rng(cap);
  Time now = 0;
  for (int step = 0; step < 100000; ++step) {
    ++now;
    // 3 x cap distinct keys, half shifted into the high bits (they share
    // home slots and fingerprints).
    const uint64_t key = (rng.next_u64() % (3 * cap)) << (rng.next_u64() % 2 ? 0 : 40);
    FlowRecord<uint64_t>* r = t.find_or_insert(key, now);
    auto it = oracle.find(key);
    if (it != oracle.end()) {
      ASSERT_NE(r, nullptr) << "step " << step;
      ASSERT_EQ(r->volume, it->second) << "step " << step;
    } else if (oracle.size() == cap) {
      ASSERT_EQ(r, nullptr) << "step " << step;
    } else {
      ASSERT_NE(r, nullptr) << "step " << step;
      ASSERT_EQ(r->volume, 0u);
      ASSERT_EQ(r->last_seen, now);
      ASSERT_FALSE(r->ack.seen);
      it = oracle.emplace(key, 0).first;
    }
    if (r != nullptr) {
      const uint64_t add = rng.next_u64() % 1000 + 1;
      r->volume += add;
      it->second += add;
    }
    ASSERT_EQ(t.size(), oracle.size());
    // Scans often enough that small tables empty and refill, rarely enough
    // that the largest one fills too.
    if (rng.next_u64() % (cap < 1000 ? 50 : 20000) == 0) {
      // Delete a random subset: keys whose volume has a given low bit.
      const uint64_t bit = rng.next_u64() % 3;
      uint32_t asked = 0;
      t.erase_if([&](uint64_t k, const FlowRecord<uint64_t>& rec) {
        ++asked;
        EXPECT_EQ(oracle.at(k), rec.volume);
        return (rec.volume >> bit) & 1;
      });
      ASSERT_GE(asked, oracle.size());
      for (auto o = oracle.begin(); o != oracle.end();) o = (o->second >> bit) & 1 ? oracle.erase(o) : std::next(o);
      ASSERT_EQ(t.size(), oracle.size()) << "step " << step;
    }
  }
  EXPECT_EQ(t.highwater(), cap);
}

INSTANTIATE_TEST_SUITE_P(Capacities, FlowRecordChurn, ::testing::Values(1u, 5u, 8u, 9u, 300u, 5000u));

TEST(FlowRecordTable, RejectsBadSizes) {
  EXPECT_THROW(FlowRecordTable<double>(0), std::invalid_argument);
  EXPECT_THROW(FlowRecordTable<double>((1u << 28) + 1), std::invalid_argument);
}

}  // namespace
}  // namespace tracelab
