// Test support shared by the §1–§4 core tests (fifo_test, efd_test, ...):
// packet construction, a drop recorder, and a seeded stress loop that checks
// conservation (offered = served + dropped + queued, in packets and bytes)
// after every operation and that every packet leaves exactly once.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "queue_core.hh"

namespace tracelab::testing {

inline Packet pkt(uint64_t handle, uint64_t flow, uint32_t length, uint8_t flags = 0) {
  Packet p;
  p.handle = handle;
  p.flow_hash = flow;
  p.conn_hash = flow;
  p.length = length;
  p.flags = flags;
  return p;
}

struct DropLog : DropSink {
  std::vector<std::pair<uint64_t, DropReason>> drops;
  void on_drop(const Packet& p, DropReason why, Time) override { drops.emplace_back(p.handle, why); }
  std::vector<uint64_t> handles(DropReason why) const {
    std::vector<uint64_t> out;
    for (auto& d : drops)
      if (d.second == why) out.push_back(d.first);
    return out;
  }
};

// Drives one core: offer() and serve() keep a ledger of what is inside.
class Driver {
 public:
  explicit Driver(QueueCore& core) : core_(core), batch_{storage_, 1} { core_.set_drop_sink(&log); }

  void offer(const Packet& p, Time now = 0) {
    inside_[p.handle] = p.length;
    core_.enqueue(p, now);
    settle_drops();
  }
  // Handle of the next packet served at `now`, or -1 when nothing is ready.
  int64_t serve(Time now = 0) {
    if (!core_.dequeue(now, batch_)) return -1;
    EXPECT_EQ(batch_.count, 1u);
    uint64_t h = storage_[0].handle;
    EXPECT_EQ(inside_.count(h), 1u) << "served a packet that is not inside: " << h;
    inside_.erase(h);
    served.push_back(h);
    return static_cast<int64_t>(h);
  }
  std::vector<uint64_t> drain(Time now = 0) {
    std::vector<uint64_t> out;
    for (int64_t h; (h = serve(now)) >= 0;) out.push_back(static_cast<uint64_t>(h));
    return out;
  }
  // Conservation in packets and bytes, and the ledger agrees with the core.
  void check() const {
    const Counters& c = core_.counters();
    ASSERT_EQ(c.offered, c.served + c.dropped_total() + core_.length_packets());
    ASSERT_EQ(core_.length_packets(), inside_.size());
    uint64_t bytes = 0;
    for (auto& kv : inside_) bytes += kv.second;
    ASSERT_EQ(core_.length_bytes(), bytes);
    ASSERT_EQ(c.dropped_total(), log.drops.size());
  }
  const Packet& last() const { return storage_[0]; }

  DropLog log;
  std::vector<uint64_t> served;

 private:
  void settle_drops() {
    for (size_t i = seen_drops_; i < log.drops.size(); ++i) {
      EXPECT_EQ(inside_.count(log.drops[i].first), 1u) << "dropped twice or unknown: " << log.drops[i].first;
      inside_.erase(log.drops[i].first);
    }
    seen_drops_ = log.drops.size();
  }
  QueueCore& core_;
  Packet storage_[1];
  Batch batch_;
  std::map<uint64_t, uint32_t> inside_;
  size_t seen_drops_ = 0;
};

// Seeded random traffic: heavy-tailed flow popularity over `flows` flows,
// packet sizes 40/576/1500 B (pure ACKs flagged), bursts of arrivals and of
// services so the buffer swings between empty and full. `invariant` runs
// after every operation.
inline void stress(
    QueueCore& core, uint64_t seed, int operations, uint32_t flows, const std::function<void()>& invariant = [] {}) {
  std::mt19937_64 rng(seed);
  Driver d(core);
  Time now = 0;
  uint64_t handle = 0;
  for (int i = 0; i < operations; ++i) {
    now += static_cast<Time>(rng() % 2000) * kNanosecond;
    const bool arrive = (i / 500) % 2 == 0 ? rng() % 10 < 7 : rng() % 10 < 3;
    if (arrive) {
      // Pareto-like popularity: flow = floor(flows * u^3) favours low ids.
      double u = std::uniform_real_distribution<double>(0, 1)(rng);
      uint64_t flow = static_cast<uint64_t>(flows * u * u * u);
      uint32_t sizes[3] = {40, 576, 1500};
      uint32_t len = sizes[rng() % 3];
      Packet p = pkt(handle++, flow, len, len == 40 ? (kFlagTcp | kFlagPureAck) : kFlagTcp);
      p.tcp_ack = static_cast<uint32_t>(rng() % 100000);
      p.arrival = now;
      d.offer(p, now);
    } else {
      d.serve(now);
    }
    d.check();
    if (::testing::Test::HasFatalFailure()) return;
    invariant();
  }
  d.drain(now);
  d.check();
  ASSERT_EQ(core.length_packets(), 0u);
  ASSERT_EQ(core.counters().served + core.counters().dropped_total(), handle);
}

}  // namespace tracelab::testing
