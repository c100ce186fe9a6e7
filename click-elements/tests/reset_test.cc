// reset_counters(): after traffic and a reset, every counter a core reports
// equals a fresh core's (the adapters' `reset`). Each test first checks the
// traffic moved the counters, so a reset that forgets one fails. A flow-state
// table keeps its entries (state, not counters): its high-water restarts at
// its present size.
#include <gtest/gtest.h>

#include "basicq.hh"
#include "chumq.hh"
#include "chutq.hh"
#include "efd.hh"
#include "fifo.hh"
#include "fifo_test_harness.hh"
#include "jumbogen.hh"
#include "lars.hh"
#include "las.hh"
#include "mtq_qtl.hh"
#include "ncq.hh"
#include "run2c.hh"
#include "scfq.hh"
#include "sift.hh"
#include "xprotect.hh"

namespace tracelab {
namespace {

using testing::pkt;

BufferConfig small_buffer() {
  BufferConfig b;
  b.capacity = 12;
  b.in_service_link_bps = 10'000'000'000ULL;  // the adapters' default (§2)
  return b;
}

TwoLevelConfig small_two_level() {
  TwoLevelConfig q;
  q.buffer = small_buffer();
  return q;
}

void expect_same_counters(const QueueCore& used, const QueueCore& fresh) {
  const Counters& a = used.counters();
  const Counters& b = fresh.counters();
  EXPECT_EQ(a.offered, b.offered);
  EXPECT_EQ(a.enqueued, b.enqueued);
  EXPECT_EQ(a.served, b.served);
  for (int r = 0; r < static_cast<int>(DropReason::kCount); ++r) EXPECT_EQ(a.dropped[r], b.dropped[r]) << r;
  EXPECT_EQ(a.highwater_packets, b.highwater_packets);
  EXPECT_EQ(a.highwater_bytes, b.highwater_bytes);
}

// Random traffic into `used` until it drains (fifo_test_harness.hh), then
// reset: its counters and `extra` must read as `fresh`'s.
template <typename Core, typename Extra>
void check_reset(Core& used, const Core& fresh, Extra extra) {
  testing::stress(used, 7, 6000, 40);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  ASSERT_GT(used.counters().served, 0u);
  ASSERT_GT(used.counters().dropped_total(), 0u);
  ASSERT_GT(used.counters().highwater_packets, 0u);
  used.reset_counters();
  expect_same_counters(used, fresh);
  extra(used, fresh);
}

template <typename Core>
void check_two_level(Core& used, const Core& fresh) {
  check_reset(used, fresh, [](const Core& u, const Core& f) {
    EXPECT_EQ(u.admitted_high(), f.admitted_high());
    EXPECT_EQ(u.admitted_low(), f.admitted_low());
    EXPECT_EQ(u.served_high(), f.served_high());
    EXPECT_EQ(u.pushed_out(), f.pushed_out());
  });
}

TEST(Reset, Fifo) {
  FifoCore used(small_buffer()), fresh(small_buffer());
  check_reset(used, fresh, [](const FifoCore&, const FifoCore&) {});
}

TEST(Reset, EfdFamily) {
  for (EfdConfig c : {EfdConfig::befd(), EfdConfig::pefd(), EfdConfig::efdack()}) {
    c.queue = small_two_level();
    c.threshold = c.variant == EfdVariant::kPefd ? 3 : 3000;
    EfdCore used(c), fresh(c);
    check_two_level(used, fresh);
    EXPECT_EQ(used.flows_highwater(), fresh.flows_highwater());
  }
}

TEST(Reset, Run2c) {
  Run2cConfig c;
  c.queue = small_two_level();
  c.threshold = 3000;
  c.flows.max_flows = 8;  // fewer than the flows: some packets go untracked
  Run2cCore used(c), fresh(c);
  check_two_level(used, fresh);
  EXPECT_EQ(used.flows_highwater(), used.flows());  // entries outlive their packets (state, kept)
  EXPECT_EQ(used.untracked(), fresh.untracked());
}

TEST(Reset, Sift) {
  SiftConfig c;
  c.queue = small_two_level();
  c.probability = 0.3;
  c.flows.max_flows = 8;
  SiftCore used(c), fresh(c);
  check_two_level(used, fresh);
  EXPECT_EQ(used.flows_highwater(), used.flows());  // entries outlive their packets (state, kept)
  EXPECT_EQ(used.untracked(), fresh.untracked());
}

TEST(Reset, XProtect) {
  XProtectConfig c;
  c.queue = small_two_level();
  c.insert_probability = 0.3;
  c.threshold = 3000;
  c.flows.max_flows = 8;
  XProtectCore used(c), fresh(c);
  check_two_level(used, fresh);
  EXPECT_EQ(used.untracked(), fresh.untracked());
}

TEST(Reset, NcqBothVariants) {
  for (NcqVariant v : {NcqVariant::kNcq, NcqVariant::kNcqPlus}) {
    NcqConfig c;
    c.variant = v;
    c.queue = small_two_level();
    NcqCore used(c), fresh(c);
    check_two_level(used, fresh);
  }
}

TEST(Reset, LasAndLasAck) {
  for (bool ack : {false, true}) {
    LasConfig c;
    c.buffer = small_buffer();
    c.ack_aware = ack;
    c.flows.max_flows = 8;
    LasCore used(c), fresh(c);
    check_reset(used, fresh, [](const LasCore& u, const LasCore& f) {
      EXPECT_EQ(u.pushed_out(), f.pushed_out());
      EXPECT_EQ(u.flows_highwater(), u.flows());  // entries outlive their packets (state, kept)
      EXPECT_EQ(u.untracked(), f.untracked());
    });
  }
}

TEST(Reset, Lars) {
  LarsConfig c;
  c.buffer = small_buffer();
  c.flows.max_flows = 8;
  LarsCore used(c), fresh(c);
  check_reset(used, fresh, [](const LarsCore& u, const LarsCore& f) {
    EXPECT_EQ(u.pushed_out(), f.pushed_out());
    EXPECT_EQ(u.flows_highwater(), u.flows());  // entries outlive their packets (state, kept)
    EXPECT_EQ(u.untracked(), f.untracked());
  });
}

TEST(Reset, Scfq) {
  ScfqConfig c;
  c.buffer = small_buffer();
  ScfqCore used(c), fresh(c);
  check_reset(used, fresh, [](const ScfqCore& u, const ScfqCore& f) {
    EXPECT_EQ(u.pushed_out(), f.pushed_out());
    EXPECT_EQ(u.flows_highwater(), f.flows_highwater());
  });
}

TEST(Reset, MtqQtl) {
  MtqQtlConfig c;
  c.capacity_packets = 12;
  MtqQtlQueue used(c), fresh(c);
  check_reset(used, fresh, [](const MtqQtlQueue& u, const MtqQtlQueue& f) {
    EXPECT_EQ(u.stats().mtq_drops, f.stats().mtq_drops);
    EXPECT_EQ(u.stats().qtl_drops, f.stats().qtl_drops);
    EXPECT_EQ(u.stats().overflow_drops, f.stats().overflow_drops);
    EXPECT_EQ(u.stats().mtq_violations, f.stats().mtq_violations);
    EXPECT_EQ(u.stats().qtl_violations, f.stats().qtl_violations);
  });
}

// The chunking cores: packets with a 100-us budget every 300 ns into a
// small buffer, a chunk taken every 20 us, then drained by their timers.
template <typename Core>
void check_chunk_reset(Core& used, const Core& fresh) {
  std::vector<Packet> storage(64);
  Batch batch{storage.data(), static_cast<uint32_t>(storage.size())};
  Time now = 0;
  for (uint64_t h = 0; h < 3000; ++h) {
    now += 300 * kNanosecond;
    Packet p = pkt(h, h % 7, h % 3 ? 1500 : 40);
    p.arrival = now;
    p.budget = 100 * kMicrosecond;
    used.enqueue(p, now);
    if (h % 64 == 0) used.dequeue(now, batch);
  }
  for (int guard = 0; used.length_packets() > 0 && guard < 100000; ++guard) {
    now = std::max(now + kMicrosecond, used.next_ready(now));
    used.dequeue(now, batch);
  }
  ASSERT_EQ(used.length_packets(), 0u);
  ASSERT_GT(used.counters().dropped_total(), 0u);
  ASSERT_GT(used.stats().chunks, 0u);
  used.reset_counters();
  expect_same_counters(used, fresh);
  const ChunkStats& u = used.stats();
  const ChunkStats& f = fresh.stats();
  EXPECT_EQ(u.chunks, f.chunks);
  EXPECT_EQ(u.chunk_packets, f.chunk_packets);
  EXPECT_EQ(u.chunk_bytes, f.chunk_bytes);
  EXPECT_EQ(u.timer_chunks, f.timer_chunks);
  EXPECT_EQ(u.mtu_chunks, f.mtu_chunks);
  EXPECT_EQ(u.cea_packets, f.cea_packets);
  EXPECT_EQ(u.oversize, f.oversize);
  EXPECT_EQ(u.split_chunks, f.split_chunks);
  EXPECT_EQ(u.violations, f.violations);
  EXPECT_EQ(u.max_excess, f.max_excess);
  for (int c = 0; c < 256; ++c) {
    EXPECT_EQ(u.class_served[c], f.class_served[c]) << c;
    EXPECT_EQ(u.class_violations[c], f.class_violations[c]) << c;
  }
}

TEST(Reset, BasiCQ) {
  BasiCQ used(BasiCQConfig{9000, true, 40}), fresh(BasiCQConfig{9000, true, 40});
  check_chunk_reset(used, fresh);
}

TEST(Reset, ChuMQ) {
  ChuMQConfig c;
  c.capacity_packets = 40;
  ChuMQ used(c), fresh(c);
  check_chunk_reset(used, fresh);
}

TEST(Reset, ChuTQ) {
  ChuTQConfig c;
  c.capacity_packets = 40;
  ChuTQ used(c), fresh(c);
  check_chunk_reset(used, fresh);
}

TEST(Reset, JumboGenIngress) {
  // Packets every 50 us into JumboGrams released at their JFET; every 9th
  // is larger than a JumboGram can carry and is dropped.
  JumboGenIngress used, fresh;
  std::vector<Packet> storage(256);
  Batch batch{storage.data(), static_cast<uint32_t>(storage.size())};
  Time now = 0;
  for (uint64_t h = 0; h < 500; ++h) {
    now += 50 * kMicrosecond;
    used.enqueue(pkt(h, h % 5, h % 9 == 0 ? 9000 : 1200), now);
    while (used.next_ready(now) <= now && used.dequeue(now, batch)) {
    }
  }
  for (int guard = 0; used.length_packets() > 0 && guard < 1000; ++guard) {
    now = std::max(now + kMicrosecond, used.next_ready(now));
    used.dequeue(now, batch);
  }
  ASSERT_EQ(used.length_packets(), 0u);
  ASSERT_GT(used.counters().dropped_total(), 0u);
  ASSERT_GT(used.stats().jumbograms, 0u);
  used.reset_counters();
  expect_same_counters(used, fresh);
  const JumboGenStats& u = used.stats();
  const JumboGenStats& f = fresh.stats();
  EXPECT_EQ(u.jumbograms, f.jumbograms);
  EXPECT_EQ(u.encapsulated, f.encapsulated);
  EXPECT_EQ(u.wire_bytes, f.wire_bytes);
  EXPECT_EQ(u.full_closes, f.full_closes);
  EXPECT_EQ(u.no_queue, f.no_queue);
  EXPECT_EQ(u.oversize, f.oversize);
  EXPECT_EQ(u.wait_total, f.wait_total);
}

}  // namespace
}  // namespace tracelab
