// Differential tests of the sorted cores (LAS, LASACK, LARS, SCFQ) and of
// the sorted packet queue under them (also under EFD's LAS sub-queues,
// §2.3) against a model written from the spec (docs/reference/algorithms.md
// §2, §3.1 LAS, §3.2 LARS, §3.3 SCFQ; namespace `model`): a vector kept
// sorted by (tag, arrival) and a std::map per flow, with none of the cores'
// data structures (tie groups, open addressing, chained table), so the two
// share the decisions and not the code. Both are fed the same seeded random
// sequence (many flows, equal tags, full buffers and push-outs, byte mode,
// in-service accounting, LASACK ACKs, flow tables that fill up, idle scans,
// time jumps) and must agree on every decision: each dequeued packet, each
// drop with its reason and time, every counter, after every step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "lars.hh"
#include "las.hh"
#include "scfq.hh"

namespace tracelab {
namespace model {

// ---- The sorted buffer: packets in service order -----------------------

// A vector in service order: smallest tag first, equal tags in arrival
// order (an arrival goes after every packet with its tag). The front is
// served, the back is pushed out.
class SortedList {
 public:
  explicit SortedList(uint32_t capacity) : capacity_(capacity) {}

  bool empty() const { return items_.empty(); }
  uint32_t size() const { return static_cast<uint32_t>(items_.size()); }
  bool full() const { return items_.size() == capacity_; }

  void push(const Packet& p, uint64_t tag, uint32_t ref = 0) {
    auto after_equal_tags =
        std::upper_bound(items_.begin(), items_.end(), tag, [](uint64_t t, const Item& i) { return t < i.tag; });
    items_.insert(after_equal_tags, Item{p, tag, ref});
  }

  const Packet& min() const { return items_.front().packet; }
  uint64_t min_tag() const { return items_.front().tag; }
  Packet pop_min(uint32_t* ref = nullptr) { return take(items_.begin(), ref); }

  const Packet& max() const { return items_.back().packet; }
  uint64_t max_tag() const { return items_.back().tag; }
  Packet pop_max(uint32_t* ref = nullptr) { return take(items_.end() - 1, ref); }

 private:
  struct Item {
    Packet packet;
    uint64_t tag;
    uint32_t ref;
  };
  Packet take(std::vector<Item>::iterator at, uint32_t* ref) {
    const Item item = *at;
    items_.erase(at);
    if (ref != nullptr) *ref = item.ref;
    return item.packet;
  }

  uint32_t capacity_;
  std::vector<Item> items_;
};

// ---- The three mechanisms over one sorted buffer (§3) -------------------

enum class Tagging { kLas, kLars, kScfq };

// One flow's state, whichever mechanism: LAS attained bytes, LARS faded
// volume, SCFQ last finish tag and packets queued.
struct Flow {
  uint64_t attained = 0;
  double faded = 0.0;
  Time last_seen = 0;
  AckProgress ack;
  uint64_t finish = 0;
  uint32_t queued = 0;
};

class SortedModel : public QueueCore {
 public:
  explicit SortedModel(const LasConfig& c) : SortedModel(Tagging::kLas, c.buffer, c.flows, c.ack_aware, 1.0, kSecond) {}
  explicit SortedModel(const LarsConfig& c)
      : SortedModel(Tagging::kLars, c.buffer, c.flows, c.ack_aware, c.beta, c.tau) {}
  explicit SortedModel(const ScfqConfig& c)
      : SortedModel(Tagging::kScfq, c.buffer, FlowStateConfig{}, false, 1.0, kSecond) {}

  void enqueue(const Packet& p, Time now) override {
    ++counters_.offered;
    if (on_wire_ && now >= wire_ends_) leave_wire();
    if (tagging_ != Tagging::kScfq) idle_scan(now);
    Flow* flow = nullptr;
    const uint64_t tag = tag_of(p, now, &flow);
    // LAS buffer management (§3.1): while the arrival does not fit, the
    // last packet in service order goes, unless the arrival would be last.
    while (tagging_ != Tagging::kScfq && !meter_.fits(p.length) && !list_.empty() && tag < list_.max_tag()) {
      const Packet victim = list_.pop_max();
      meter_.remove(victim.length);
      ++pushed_out_;
      drop(victim, DropReason::kPushedOut, now);
    }
    if (!meter_.fits(p.length)) return drop(p, DropReason::kBufferFull, now);
    admit(p, tag, flow);
    list_.push(p, tag);
    meter_.add(p.length);
    ++counters_.enqueued;
    note_highwater(meter_.packets(), meter_.bytes());
  }

  bool dequeue(Time now, Batch& out) override {
    if (on_wire_) leave_wire();
    out.clear();
    if (list_.empty()) return false;
    const uint64_t tag = list_.min_tag();
    const Packet p = list_.pop_min();
    if (tagging_ == Tagging::kScfq) {
      virtual_time_ = tag;
      auto f = flows_.find(p.flow_hash);
      if (--f->second.queued == 0) flows_.erase(f);
    }
    ++counters_.served;
    out.packets[0] = p;
    out.count = 1;
    out.wire_bytes = p.length;
    const uint64_t bps = meter_.config().in_service_link_bps;
    if (bps != 0) {
      on_wire_ = true;
      wire_packet_ = p;
      wire_ends_ = now + serialization_time(p.length, bps);
    } else {
      meter_.remove(p.length);
    }
    return true;
  }

  uint64_t length_packets() const override { return list_.size(); }
  uint64_t length_bytes() const override { return meter_.bytes() - (on_wire_ ? wire_packet_.length : 0); }
  Time retire_at() const override { return on_wire_ ? wire_ends_ : kNever; }
  uint64_t pushed_out() const { return pushed_out_; }
  uint32_t flows() const { return static_cast<uint32_t>(flows_.size()); }
  uint32_t flows_highwater() const { return flows_highwater_; }
  uint64_t untracked() const { return untracked_; }
  uint64_t virtual_time() const { return virtual_time_; }

 private:
  SortedModel(Tagging t, const BufferConfig& buffer, const FlowStateConfig& flows, bool ack_aware, double beta,
              Time tau)
      : tagging_(t),
        meter_(buffer),
        list_(buffer.slots()),
        flow_cfg_(flows),
        ack_aware_(ack_aware),
        beta_(beta),
        tau_(tau),
        next_scan_(flows.gc_interval) {}

  void leave_wire() {
    on_wire_ = false;
    meter_.remove(wire_packet_.length);
  }

  double faded(const Flow& f, Time now) const {
    return f.faded * std::pow(beta_, static_cast<double>(now - f.last_seen) / static_cast<double>(tau_));
  }

  // State GC (§3.1, §3.2): every gc_interval, flows idle for idle_timeout
  // go, and under LARS also flows faded below one byte.
  void idle_scan(Time now) {
    if (flow_cfg_.gc_interval == 0 || now < next_scan_) return;
    next_scan_ = now + flow_cfg_.gc_interval;
    for (auto f = flows_.begin(); f != flows_.end();) {
      const bool idle = now - f->second.last_seen >= flow_cfg_.idle_timeout;
      const bool faded_out = tagging_ == Tagging::kLars && faded(f->second, now) < 1.0;
      f = idle || faded_out ? flows_.erase(f) : std::next(f);
    }
  }

  Flow* track(uint64_t key, Time now) {
    auto f = flows_.find(key);
    if (f != flows_.end()) return &f->second;
    if (flows_.size() == flow_cfg_.max_flows) return nullptr;
    Flow& added = flows_[key];
    added.last_seen = now;
    flows_highwater_ = std::max(flows_highwater_, static_cast<uint32_t>(flows_.size()));
    return &added;
  }

  // The arrival's tag; `flow`: the LAS/LARS flow to charge if admitted.
  uint64_t tag_of(const Packet& p, Time now, Flow** flow) {
    if (tagging_ == Tagging::kScfq) {
      auto f = flows_.find(p.flow_hash);
      const uint64_t start = f == flows_.end() ? virtual_time_ : std::max(f->second.finish, virtual_time_);
      return start + p.length;
    }
    *flow = track(ack_aware_ ? p.conn_hash : p.flow_hash, now);
    if (*flow == nullptr) {
      ++untracked_;
      return 0;
    }
    if (tagging_ == Tagging::kLas) {
      (*flow)->last_seen = now;
      return (*flow)->attained;
    }
    (*flow)->faded = faded(**flow, now);
    (*flow)->last_seen = now;
    return static_cast<uint64_t>((*flow)->faded * 16.0);  // 1/16-byte units
  }

  void admit(const Packet& p, uint64_t tag, Flow* flow) {
    if (tagging_ == Tagging::kScfq) {
      Flow& f = *track_scfq(p.flow_hash);
      f.finish = tag;
      ++f.queued;
      return;
    }
    if (flow == nullptr) return;
    // LASACK: a pure ACK counts the progress of the ACK number.
    const bool pure_ack = ack_aware_ && (p.flags & kFlagPureAck) != 0;
    const uint64_t volume = pure_ack ? flow->ack.advance(p.tcp_ack) : p.length;
    if (tagging_ == Tagging::kLas) flow->attained += volume;
    else flow->faded += static_cast<double>(volume);
  }

  // SCFQ keeps a flow while it has packets queued (§3.3), unbounded.
  Flow* track_scfq(uint64_t key) {
    Flow* f = &flows_[key];
    flows_highwater_ = std::max(flows_highwater_, static_cast<uint32_t>(flows_.size()));
    return f;
  }

  Tagging tagging_;
  BufferMeter meter_;
  SortedList list_;
  FlowStateConfig flow_cfg_;
  bool ack_aware_;
  double beta_;
  Time tau_;
  Time next_scan_;
  std::map<uint64_t, Flow> flows_;
  uint32_t flows_highwater_ = 0;
  uint64_t untracked_ = 0;
  uint64_t pushed_out_ = 0;
  uint64_t virtual_time_ = 0;
  bool on_wire_ = false;
  Packet wire_packet_;
  Time wire_ends_ = 0;
};

}  // namespace model

namespace {

// ---- The queue alone ---------------------------------------------------

// Random push / pop_min / pop_max, with the accessors checked after every
// step: tags from `tag_range` values (small: ties everywhere), refs random.
void queue_differential(uint32_t capacity, uint64_t tag_range, uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  model::SortedList model_q(capacity);
  SortedPacketQueue new_q(capacity);
  uint64_t handle = 0;
  for (int step = 0; step < steps; ++step) {
    // Phases that fill and drain, so every size from empty to full occurs.
    const bool filling = (step / 97) % 2 == 0;
    const uint64_t r = rng() % 10;
    if (!model_q.full() && (model_q.empty() || (filling ? r < 6 : r < 3))) {
      Packet p;
      p.handle = handle++;
      p.length = static_cast<uint32_t>(rng() % 1500);
      const uint64_t tag = rng() % tag_range;
      const uint32_t ref = static_cast<uint32_t>(rng());
      model_q.push(p, tag, ref);
      new_q.push(p, tag, ref);
    } else if (!model_q.empty()) {
      uint32_t model_ref = 0, new_ref = 1;
      const bool max = rng() % 3 == 0;
      const Packet a = max ? model_q.pop_max(&model_ref) : model_q.pop_min(&model_ref);
      const Packet b = max ? new_q.pop_max(&new_ref) : new_q.pop_min(&new_ref);
      ASSERT_EQ(a.handle, b.handle) << "step " << step;
      ASSERT_EQ(a.length, b.length) << "step " << step;
      ASSERT_EQ(model_ref, new_ref) << "step " << step;
    }
    ASSERT_EQ(model_q.size(), new_q.size());
    ASSERT_EQ(model_q.empty(), new_q.empty());
    ASSERT_EQ(model_q.full(), new_q.full());
    if (!model_q.empty()) {
      ASSERT_EQ(model_q.min().handle, new_q.min().handle) << "step " << step;
      ASSERT_EQ(model_q.max().handle, new_q.max().handle) << "step " << step;
      ASSERT_EQ(model_q.min_tag(), new_q.min_tag()) << "step " << step;
      ASSERT_EQ(model_q.max_tag(), new_q.max_tag()) << "step " << step;
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

// Feeds the model and the core, compares everything after every step. `same` compares
// the mechanism's own counters.
template <typename Model, typename New, typename Same>
void core_differential(Model& model_core, New& new_core, const Traffic& t, uint64_t seed, int steps, Same same) {
  Recorder model_log, new_log;
  model_core.set_drop_sink(&model_log);
  new_core.set_drop_sink(&new_log);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> ack(t.flows / 2 + 1, 0);
  Packet model_out[1], new_out[1];
  Batch model_batch{model_out, 1}, new_batch{new_out, 1};
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
      model_core.enqueue(p, now);
      new_core.enqueue(p, now);
    } else {
      const bool a = model_core.dequeue(now, model_batch);
      const bool b = new_core.dequeue(now, new_batch);
      ASSERT_EQ(a, b) << "step " << step;
      if (a) {
        ASSERT_EQ(model_batch.count, new_batch.count);
        ASSERT_EQ(model_out[0].handle, new_out[0].handle) << "step " << step;
        ASSERT_EQ(model_batch.wire_bytes, new_batch.wire_bytes);
      }
    }
    ASSERT_EQ(model_log.drops, new_log.drops) << "step " << step;
    const Counters& x = model_core.counters();
    const Counters& y = new_core.counters();
    ASSERT_EQ(x.offered, y.offered);
    ASSERT_EQ(x.enqueued, y.enqueued);
    ASSERT_EQ(x.served, y.served);
    for (int r = 0; r < static_cast<int>(DropReason::kCount); ++r) ASSERT_EQ(x.dropped[r], y.dropped[r]);
    ASSERT_EQ(x.highwater_packets, y.highwater_packets);
    ASSERT_EQ(x.highwater_bytes, y.highwater_bytes);
    ASSERT_EQ(model_core.length_packets(), new_core.length_packets());
    ASSERT_EQ(model_core.length_bytes(), new_core.length_bytes());
    ASSERT_EQ(model_core.next_ready(now), new_core.next_ready(now));
    ASSERT_EQ(model_core.retire_at(), new_core.retire_at());
    ASSERT_EQ(model_core.pushed_out(), new_core.pushed_out());
    same(step);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Pushed out, dropped and served all happened (the paths were exercised).
  EXPECT_GT(model_core.counters().served, 0u);
  EXPECT_GT(model_core.counters().dropped_total(), 0u);
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

TEST(LasDifferential, MatchesTheModel) {
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
          model::SortedModel model_core(c);
          LasCore new_core(c);
          core_differential(model_core, new_core, t, ++seed, 6000, [&](int step) {
            ASSERT_EQ(model_core.flows(), new_core.flows()) << "step " << step;
            ASSERT_EQ(model_core.flows_highwater(), new_core.flows_highwater());
            ASSERT_EQ(model_core.untracked(), new_core.untracked());
          });
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(LarsDifferential, MatchesTheModel) {
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
        model::SortedModel model_core(c);
        LarsCore new_core(c);
        core_differential(model_core, new_core, t, ++seed, 6000, [&](int step) {
          ASSERT_EQ(model_core.flows(), new_core.flows()) << "step " << step;
          ASSERT_EQ(model_core.flows_highwater(), new_core.flows_highwater());
          ASSERT_EQ(model_core.untracked(), new_core.untracked());
        });
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(ScfqDifferential, MatchesTheModel) {
  uint64_t seed = 300;
  for (const BufferConfig& b : buffers()) {
    for (const Traffic& t : traffics()) {
      ScfqConfig c;
      c.buffer = b;
      model::SortedModel model_core(c);
      ScfqCore new_core(c);
      core_differential(model_core, new_core, t, ++seed, 8000, [&](int step) {
        ASSERT_EQ(model_core.flows(), new_core.flows()) << "step " << step;
        ASSERT_EQ(model_core.flows_highwater(), new_core.flows_highwater());
        ASSERT_EQ(model_core.virtual_time(), new_core.virtual_time());
      });
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace tracelab
