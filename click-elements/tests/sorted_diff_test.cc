// Differential tests of the sorted cores (LAS, LASACK, LARS, SCFQ) and of
// the sorted packet queue under them (also under EFD's LAS sub-queues,
// §2.3): today's implementation against the one it replaced, kept below
// verbatim as the reference (namespace `reference`; only this file has
// it). Both are fed the same seeded random sequence (many flows, equal
// tags, full buffers and push-outs, byte mode, in-service accounting,
// LASACK ACKs, flow tables that fill up, idle scans, time jumps) and must
// agree on every decision: each dequeued packet, each drop with its reason
// and time, every counter, after every step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "lars.hh"
#include "las.hh"
#include "scfq.hh"

namespace tracelab {
namespace reference {

// ---- The sorted packet queue before the tie groups (a min-max heap of
// (tag, seq, slot), ties by a sequence number) --------------------------

class SortedPacketQueue {
 public:
  explicit SortedPacketQueue(uint32_t capacity) : pool_(capacity), refs_(capacity), free_(capacity), heap_(capacity) {
    for (uint32_t i = 0; i < capacity; ++i) free_[i] = capacity - 1 - i;
  }

  bool empty() const { return size_ == 0; }
  uint32_t size() const { return size_; }
  bool full() const { return size_ == pool_.size(); }

  // `ref`: an opaque word kept with the packet and handed back when it
  // leaves (the two-level queue's flow-entry reference).
  void push(const Packet& p, uint64_t tag, uint32_t ref = 0) {
    uint32_t slot = free_[--free_count_];
    pool_[slot] = p;
    refs_[slot] = ref;
    heap_[size_] = Node{tag, seq_++, slot};
    up(size_++);
  }

  // Smallest (tag, arrival) first.
  const Packet& min() const { return pool_[heap_[0].slot]; }
  uint64_t min_tag() const { return heap_[0].tag; }
  Packet pop_min(uint32_t* ref = nullptr) { return take(0, ref); }

  // Largest (tag, arrival): the last packet in service order.
  const Packet& max() const { return pool_[heap_[max_index()].slot]; }
  uint64_t max_tag() const { return heap_[max_index()].tag; }
  Packet pop_max(uint32_t* ref = nullptr) { return take(max_index(), ref); }

 private:
  struct Node {
    uint64_t tag;
    uint64_t seq;
    uint32_t slot;
  };
  static bool less(const Node& a, const Node& b) { return a.tag < b.tag || (a.tag == b.tag && a.seq < b.seq); }
  static bool on_min_level(uint32_t i) { return ((63 - __builtin_clzll(uint64_t{i} + 1)) & 1) == 0; }
  // Orders `a` before `b` on a min level, after it on a max level.
  static bool before(const Node& a, const Node& b, bool min_level) { return min_level ? less(a, b) : less(b, a); }

  uint32_t max_index() const { return size_ <= 1 ? 0 : size_ == 2 ? 1 : (less(heap_[1], heap_[2]) ? 2 : 1); }

  Packet take(uint32_t i, uint32_t* ref) {
    uint32_t slot = heap_[i].slot;
    if (ref) *ref = refs_[slot];
    free_[free_count_++] = slot;
    heap_[i] = heap_[--size_];
    if (i < size_) {
      down(i);
      up(i);  // the moved node may belong above i on the other kind of level
    }
    return pool_[slot];
  }

  void up(uint32_t i) {
    if (i == 0) return;
    uint32_t parent = (i - 1) / 2;
    bool min_level = on_min_level(i);
    if (before(heap_[parent], heap_[i], min_level)) {
      // i belongs on the parent's kind of level.
      std::swap(heap_[i], heap_[parent]);
      up_same(parent, !min_level);
    } else {
      up_same(i, min_level);
    }
  }
  void up_same(uint32_t i, bool min_level) {
    while (i > 2) {
      uint32_t grand = ((i - 1) / 2 - 1) / 2;
      if (!before(heap_[i], heap_[grand], min_level)) break;
      std::swap(heap_[i], heap_[grand]);
      i = grand;
    }
  }

  void down(uint32_t i) {
    bool min_level = on_min_level(i);
    for (;;) {
      uint32_t first_child = 2 * i + 1;
      if (first_child >= size_) return;
      // The most extreme among children and grandchildren.
      uint32_t m = first_child;
      uint32_t candidates[6] = {first_child,         first_child + 1,     2 * first_child + 1,
                                2 * first_child + 2, 2 * first_child + 3, 2 * first_child + 4};
      for (uint32_t c : candidates)
        if (c < size_ && before(heap_[c], heap_[m], min_level)) m = c;
      if (!before(heap_[m], heap_[i], min_level)) return;
      std::swap(heap_[m], heap_[i]);
      if (m <= first_child + 1) return;  // a child: done
      uint32_t parent = (m - 1) / 2;
      if (before(heap_[parent], heap_[m], min_level)) std::swap(heap_[m], heap_[parent]);
      i = m;
    }
  }

  std::vector<Packet> pool_;
  std::vector<uint32_t> refs_;
  std::vector<uint32_t> free_;
  std::vector<Node> heap_;
  uint32_t free_count_ = static_cast<uint32_t>(free_.size());
  uint32_t size_ = 0;
  uint64_t seq_ = 0;
};

// ---- SortedCore, LasCore, LarsCore and ScfqCore as they were, over the
// queue above and the chained FlowTable -------------------------------

template <typename Mechanism>
class SortedCore : public QueueCore {
 public:
  SortedCore(const BufferConfig& cfg, bool push_out_largest)
      : meter_(cfg), queue_(cfg.slots()), push_out_(push_out_largest) {}

  void enqueue(const Packet& p, Time now) final {
    ++counters_.offered;
    retire(now, false);
    const uint64_t tag = self().tag(p, now);
    if (push_out_) {
      while (!meter_.fits(p.length) && !queue_.empty() && tag < queue_.max_tag()) {
        Packet victim = queue_.pop_max();
        meter_.remove(victim.length);
        ++pushed_out_;
        drop(victim, DropReason::kPushedOut, now);
      }
    }
    if (!meter_.fits(p.length)) {
      drop(p, DropReason::kBufferFull, now);
      return;
    }
    self().on_admit(p, tag);
    queue_.push(p, tag);
    meter_.add(p.length);
    ++counters_.enqueued;
    note_highwater(meter_.packets(), meter_.bytes());
  }

  bool dequeue(Time now, Batch& out) final {
    retire(now, true);
    out.clear();
    if (queue_.empty()) return false;
    const uint64_t tag = queue_.min_tag();
    Packet p = queue_.pop_min();
    self().on_serve(p, tag);
    ++counters_.served;
    out.packets[0] = p;
    out.count = 1;
    out.wire_bytes = p.length;
    const uint64_t bps = meter_.config().in_service_link_bps;
    if (bps == 0) meter_.remove(p.length);
    else service_ = {p, now + serialization_time(p.length, bps), true};
    return true;
  }

  uint64_t length_packets() const final { return queue_.size(); }
  uint64_t length_bytes() const final { return meter_.bytes() - (service_.busy ? service_.packet.length : 0); }
  uint64_t pushed_out() const { return pushed_out_; }
  const BufferMeter& meter() const { return meter_; }

 private:
  Mechanism& self() { return static_cast<Mechanism&>(*this); }
  void retire(Time now, bool link_free) {
    if (service_.busy && (link_free || now >= service_.ends)) {
      service_.busy = false;
      meter_.remove(service_.packet.length);
    }
  }

  BufferMeter meter_;
  SortedPacketQueue queue_;
  bool push_out_;
  InService service_;
  uint64_t pushed_out_ = 0;
};

class LasCore final : public SortedCore<LasCore> {
 public:
  explicit LasCore(const LasConfig& cfg = {})
      : SortedCore(cfg.buffer, true), cfg_(cfg), table_(cfg.flows.max_flows), scan_(cfg.flows) {}

  uint32_t flows() const { return table_.size(); }
  uint32_t flows_highwater() const { return table_.highwater(); }
  uint64_t untracked() const { return untracked_; }

 private:
  friend class SortedCore<LasCore>;
  struct Entry {
    uint64_t attained = 0;
    AckProgress ack;
    Time last_seen = 0;
  };

  uint64_t tag(const Packet& p, Time now) {
    scan_.run(table_, now, [](const Entry&, Time) { return false; });
    // No table change happens between tag() and on_admit(), so the entry
    // pointer stays valid.
    pending_ = table_.find_or_insert(flow_key(p, cfg_.ack_aware ? FlowKey::kConnection : FlowKey::kFlow));
    if (pending_ == nullptr) {
      ++untracked_;
      return 0;
    }
    pending_->last_seen = now;
    return pending_->attained;
  }
  void on_admit(const Packet& p, uint64_t) {
    if (pending_ != nullptr) pending_->attained += cfg_.ack_aware ? ack_aware_volume(p, pending_->ack) : p.length;
  }
  void on_serve(const Packet&, uint64_t) {}

  LasConfig cfg_;
  FlowTable<Entry> table_;
  IdleScan scan_;
  Entry* pending_ = nullptr;
  uint64_t untracked_ = 0;
};

class LarsCore final : public SortedCore<LarsCore> {
 public:
  explicit LarsCore(const LarsConfig& cfg = {})
      : SortedCore(cfg.buffer, true), cfg_(cfg), table_(cfg.flows.max_flows), scan_(cfg.flows) {
    if (!(cfg.beta > 0.0 && cfg.beta <= 1.0) || cfg.tau <= 0)
      throw std::invalid_argument("LARS needs 0 < beta <= 1 and tau > 0");
  }

  uint32_t flows() const { return table_.size(); }
  uint32_t flows_highwater() const { return table_.highwater(); }
  uint64_t untracked() const { return untracked_; }
  static constexpr double kTagUnitsPerByte = 16.0;

 private:
  friend class SortedCore<LarsCore>;
  struct Entry {
    double volume = 0.0;
    AckProgress ack;
    Time last_seen = 0;
  };

  double decayed(const Entry& e, Time now) const {
    return e.volume * std::pow(cfg_.beta, static_cast<double>(now - e.last_seen) / static_cast<double>(cfg_.tau));
  }

  uint64_t tag(const Packet& p, Time now) {
    scan_.run(table_, now, [this](const Entry& e, Time t) { return decayed(e, t) < 1.0; });
    pending_ = table_.find_or_insert(flow_key(p, cfg_.ack_aware ? FlowKey::kConnection : FlowKey::kFlow));
    if (pending_ == nullptr) {
      ++untracked_;
      return 0;
    }
    pending_->volume = decayed(*pending_, now);
    pending_->last_seen = now;
    return static_cast<uint64_t>(pending_->volume * kTagUnitsPerByte);
  }
  void on_admit(const Packet& p, uint64_t) {
    if (pending_ != nullptr)
      pending_->volume += static_cast<double>(cfg_.ack_aware ? ack_aware_volume(p, pending_->ack) : p.length);
  }
  void on_serve(const Packet&, uint64_t) {}

  LarsConfig cfg_;
  FlowTable<Entry> table_;
  IdleScan scan_;
  Entry* pending_ = nullptr;
  uint64_t untracked_ = 0;
};

class ScfqCore final : public SortedCore<ScfqCore> {
 public:
  explicit ScfqCore(const ScfqConfig& cfg = {}) : SortedCore(cfg.buffer, false), table_(cfg.buffer.slots() + 2) {}

  uint32_t flows() const { return table_.size(); }
  uint32_t flows_highwater() const { return table_.highwater(); }
  uint64_t virtual_time() const { return v_; }

 private:
  friend class SortedCore<ScfqCore>;
  struct Entry {
    uint64_t finish = 0;
    uint32_t nq = 0;
  };

  uint64_t tag(const Packet& p, Time) {
    const Entry* e = table_.find(p.flow_hash);
    return (e != nullptr ? std::max(e->finish, v_) : v_) + p.length;
  }
  void on_admit(const Packet& p, uint64_t tag) {
    Entry* e = table_.find_or_insert(p.flow_hash);
    if (e == nullptr) throw std::logic_error("SCFQ flow table larger than the buffer");
    e->finish = tag;
    ++e->nq;
  }
  void on_serve(const Packet& p, uint64_t tag) {
    v_ = tag;
    Entry* e = table_.find(p.flow_hash);
    if (--e->nq == 0) table_.erase(p.flow_hash);
  }

  FlowTable<Entry> table_;
  uint64_t v_ = 0;
};

}  // namespace reference

namespace {

// ---- The queue alone ---------------------------------------------------

// Random push / pop_min / pop_max, with the accessors checked after every
// step: tags from `tag_range` values (small: ties everywhere), refs random.
void queue_differential(uint32_t capacity, uint64_t tag_range, uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  reference::SortedPacketQueue old_q(capacity);
  SortedPacketQueue new_q(capacity);
  uint64_t handle = 0;
  for (int step = 0; step < steps; ++step) {
    // Phases that fill and drain, so every size from empty to full occurs.
    const bool filling = (step / 97) % 2 == 0;
    const uint64_t r = rng() % 10;
    if (!old_q.full() && (old_q.empty() || (filling ? r < 6 : r < 3))) {
      Packet p;
      p.handle = handle++;
      p.length = static_cast<uint32_t>(rng() % 1500);
      const uint64_t tag = rng() % tag_range;
      const uint32_t ref = static_cast<uint32_t>(rng());
      old_q.push(p, tag, ref);
      new_q.push(p, tag, ref);
    } else if (!old_q.empty()) {
      uint32_t old_ref = 0, new_ref = 1;
      const bool max = rng() % 3 == 0;
      const Packet a = max ? old_q.pop_max(&old_ref) : old_q.pop_min(&old_ref);
      const Packet b = max ? new_q.pop_max(&new_ref) : new_q.pop_min(&new_ref);
      ASSERT_EQ(a.handle, b.handle) << "step " << step;
      ASSERT_EQ(a.length, b.length) << "step " << step;
      ASSERT_EQ(old_ref, new_ref) << "step " << step;
    }
    ASSERT_EQ(old_q.size(), new_q.size());
    ASSERT_EQ(old_q.empty(), new_q.empty());
    ASSERT_EQ(old_q.full(), new_q.full());
    if (!old_q.empty()) {
      ASSERT_EQ(old_q.min().handle, new_q.min().handle) << "step " << step;
      ASSERT_EQ(old_q.max().handle, new_q.max().handle) << "step " << step;
      ASSERT_EQ(old_q.min_tag(), new_q.min_tag()) << "step " << step;
      ASSERT_EQ(old_q.max_tag(), new_q.max_tag()) << "step " << step;
    }
  }
}

TEST(SortedQueueDifferential, TinyQueuesEveryShape) {
  // Capacities 1 to 9 walk the heap through every partial bottom level.
  for (uint32_t cap = 1; cap <= 9; ++cap)
    for (uint64_t range : {uint64_t{1}, uint64_t{3}, uint64_t{1} << 40}) queue_differential(cap, range, cap, 20000);
}

TEST(SortedQueueDifferential, ManyTies) {
  for (uint64_t range : {uint64_t{2}, uint64_t{20}, uint64_t{300}}) queue_differential(300, range, 11 + range, 300000);
}

TEST(SortedQueueDifferential, DistinctTags) {
  queue_differential(300, uint64_t{1} << 40, 12, 300000);
  queue_differential(5000, uint64_t{1} << 62, 13, 300000);
}

TEST(SortedQueueDifferential, TieOrderIsArrivalOrderAtBothEnds) {
  // Pinned by hand as well: equal tags leave the front in arrival order and
  // the back in reverse arrival order, whatever the other tags do.
  SortedPacketQueue q(8);
  Packet p;
  const uint64_t tags[8] = {5, 3, 5, 3, 9, 5, 3, 9};
  for (uint64_t h = 0; h < 8; ++h) {
    p.handle = h;
    q.push(p, tags[h]);
  }
  EXPECT_EQ(q.pop_max().handle, 7u);  // 9: the later of 4 and 7
  EXPECT_EQ(q.pop_min().handle, 1u);  // 3: 1, 3, 6
  EXPECT_EQ(q.pop_max().handle, 4u);
  EXPECT_EQ(q.pop_min().handle, 3u);
  EXPECT_EQ(q.pop_max().handle, 5u);  // 5: 0, 2, 5 from the back
  EXPECT_EQ(q.pop_min().handle, 6u);
  EXPECT_EQ(q.pop_min().handle, 0u);
  EXPECT_EQ(q.pop_max().handle, 2u);
  EXPECT_TRUE(q.empty());
}

// ---- Whole cores -------------------------------------------------------

struct Recorder : DropSink {
  std::vector<std::tuple<uint64_t, DropReason, Time>> drops;
  void on_drop(const Packet& p, DropReason why, Time now) override { drops.emplace_back(p.handle, why, now); }
};

// The random traffic: `flows` flows (popularity skewed toward low ids),
// packet sizes from `sizes` (one size: every flow's k-th packet ties with
// every other's), TCP pure ACKs of 40 B carrying an ACK number that moves
// forward, stays or goes back, each connection seen in both directions
// (conn_hash shared by flow pairs). Arrivals outnumber services in bursts,
// so the buffer is full for long stretches; time mostly advances by
// nanoseconds and now and then jumps by `jump`, past idle timeouts.
struct Traffic {
  uint32_t flows = 200;
  std::vector<uint32_t> sizes = {40, 576, 1500};
  Time jump = 0;  // 0: no jumps
  double arrive = 0.6;
};

// Feeds both cores, compares everything after every step. `same` compares
// the mechanism's own counters.
template <typename Old, typename New, typename Same>
void core_differential(Old& old_core, New& new_core, const Traffic& t, uint64_t seed, int steps, Same same) {
  Recorder old_log, new_log;
  old_core.set_drop_sink(&old_log);
  new_core.set_drop_sink(&new_log);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> ack(t.flows / 2 + 1, 0);
  Packet old_out[1], new_out[1];
  Batch old_batch{old_out, 1}, new_batch{new_out, 1};
  Time now = 0;
  uint64_t handle = 0;
  for (int step = 0; step < steps; ++step) {
    now += static_cast<Time>(rng() % 3000) * kNanosecond;
    if (t.jump != 0 && rng() % 500 == 0) now += static_cast<Time>(rng() % 4) * t.jump;
    const double burst = (step / 400) % 2 == 0 ? t.arrive + 0.2 : t.arrive - 0.2;
    if (std::uniform_real_distribution<double>(0, 1)(rng) < burst) {
      const double u = std::uniform_real_distribution<double>(0, 1)(rng);
      const uint64_t flow = static_cast<uint64_t>(t.flows * u * u);
      Packet p;
      p.handle = handle++;
      p.flow_hash = flow * 0x9E3779B97F4A7C15ULL + 1;  // spread, as an adapter's hash
      p.conn_hash = (flow / 2) * 0xC2B2AE3D27D4EB4FULL;
      p.arrival = now;
      p.length = t.sizes[rng() % t.sizes.size()];
      p.flags = kFlagTcp;
      if (p.length == 40) {
        p.flags |= kFlagPureAck;
        uint32_t& a = ack[flow / 2];
        const uint64_t move = rng() % 4;
        a = move == 0 ? a : move == 1 ? a - 1000 : a + static_cast<uint32_t>(rng() % 3000);
        p.tcp_ack = a;
      }
      old_core.enqueue(p, now);
      new_core.enqueue(p, now);
    } else {
      const bool a = old_core.dequeue(now, old_batch);
      const bool b = new_core.dequeue(now, new_batch);
      ASSERT_EQ(a, b) << "step " << step;
      if (a) {
        ASSERT_EQ(old_batch.count, new_batch.count);
        ASSERT_EQ(old_out[0].handle, new_out[0].handle) << "step " << step;
        ASSERT_EQ(old_batch.wire_bytes, new_batch.wire_bytes);
      }
    }
    ASSERT_EQ(old_log.drops, new_log.drops) << "step " << step;
    const Counters& x = old_core.counters();
    const Counters& y = new_core.counters();
    ASSERT_EQ(x.offered, y.offered);
    ASSERT_EQ(x.enqueued, y.enqueued);
    ASSERT_EQ(x.served, y.served);
    for (int r = 0; r < static_cast<int>(DropReason::kCount); ++r) ASSERT_EQ(x.dropped[r], y.dropped[r]);
    ASSERT_EQ(x.highwater_packets, y.highwater_packets);
    ASSERT_EQ(x.highwater_bytes, y.highwater_bytes);
    ASSERT_EQ(old_core.length_packets(), new_core.length_packets());
    ASSERT_EQ(old_core.length_bytes(), new_core.length_bytes());
    ASSERT_EQ(old_core.next_ready(now), new_core.next_ready(now));
    ASSERT_EQ(old_core.pushed_out(), new_core.pushed_out());
    same(step);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Pushed out, dropped and served all happened (the paths were exercised).
  EXPECT_GT(old_core.counters().served, 0u);
  EXPECT_GT(old_core.counters().dropped_total(), 0u);
}

// The buffer configurations every core runs under.
std::vector<BufferConfig> buffers() {
  std::vector<BufferConfig> out;
  for (Granularity g : {Granularity::kPackets, Granularity::kBytes}) {
    for (uint64_t bps : {uint64_t{0}, uint64_t{10'000'000'000}}) {
      BufferConfig b;
      b.granularity = g;
      b.capacity = g == Granularity::kPackets ? 64 : 40000;
      b.in_service_link_bps = bps;
      out.push_back(b);
      if (g == Granularity::kBytes) {
        b.full_test = FullTest::kAlreadyFull;
        b.min_packet_bytes = 500;  // slots run out before bytes do
        out.push_back(b);
      }
    }
  }
  return out;
}

std::vector<Traffic> traffics() {
  std::vector<Traffic> out;
  out.push_back(Traffic{});                                        // mixed sizes, ACKs
  out.push_back(Traffic{2000, {64}, 0, 0.6});                      // one size: ties everywhere
  out.push_back(Traffic{30, {1500, 1500, 40}, 0, 0.7});            // few flows, long ones
  out.push_back(Traffic{5000, {40, 64, 1500}, 0, 0.55});           // many flows
  out.push_back(Traffic{300, {40, 576, 1500}, 2 * kSecond, 0.6});  // idle scans due
  return out;
}

TEST(LasDifferential, MatchesTheReference) {
  uint64_t seed = 100;
  for (const BufferConfig& b : buffers()) {
    for (const Traffic& t : traffics()) {
      for (bool ack_aware : {false, true}) {
        // Default flow state; a table that fills up (untracked flows); a
        // fast idle scan.
        for (int flows = 0; flows < 3; ++flows) {
          LasConfig c;
          c.buffer = b;
          c.ack_aware = ack_aware;
          if (flows == 1) c.flows = {50, 5 * kSecond, 30 * kSecond};
          if (flows == 2) c.flows = {400, 100 * kMicrosecond, 2 * kMillisecond};
          reference::LasCore old_core(c);
          LasCore new_core(c);
          core_differential(old_core, new_core, t, ++seed, 6000, [&](int step) {
            ASSERT_EQ(old_core.flows(), new_core.flows()) << "step " << step;
            ASSERT_EQ(old_core.flows_highwater(), new_core.flows_highwater());
            ASSERT_EQ(old_core.untracked(), new_core.untracked());
          });
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(LarsDifferential, MatchesTheReference) {
  uint64_t seed = 200;
  for (const BufferConfig& b : buffers()) {
    for (const Traffic& t : traffics()) {
      for (int variant = 0; variant < 4; ++variant) {
        LarsConfig c;
        c.buffer = b;
        c.ack_aware = variant == 1;
        if (variant == 2) {  // fast fading, small table, short timeouts
          c.beta = 0.3;
          c.tau = 50 * kMicrosecond;
          c.flows = {60, 200 * kMicrosecond, 5 * kMillisecond};
        }
        if (variant == 3) c.beta = 1.0;  // no fading: LAS with 1/16-byte tags
        reference::LarsCore old_core(c);
        LarsCore new_core(c);
        core_differential(old_core, new_core, t, ++seed, 6000, [&](int step) {
          ASSERT_EQ(old_core.flows(), new_core.flows()) << "step " << step;
          ASSERT_EQ(old_core.flows_highwater(), new_core.flows_highwater());
          ASSERT_EQ(old_core.untracked(), new_core.untracked());
        });
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(ScfqDifferential, MatchesTheReference) {
  uint64_t seed = 300;
  for (const BufferConfig& b : buffers()) {
    for (const Traffic& t : traffics()) {
      ScfqConfig c;
      c.buffer = b;
      reference::ScfqCore old_core(c);
      ScfqCore new_core(c);
      core_differential(old_core, new_core, t, ++seed, 8000, [&](int step) {
        ASSERT_EQ(old_core.flows(), new_core.flows()) << "step " << step;
        ASSERT_EQ(old_core.flows_highwater(), new_core.flows_highwater());
        ASSERT_EQ(old_core.virtual_time(), new_core.virtual_time());
      });
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace tracelab
