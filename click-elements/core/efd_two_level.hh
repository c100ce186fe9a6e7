// tracelab queueing cores: the two-level (MLPS, PS+PS) framework shared by
// EFD, Run2C, SIFT, X-Protect and NCQ. Spec: docs/reference/algorithms.md §2, §2.3.
//
// One physical buffer holds two virtual queues, H (high priority) and L
// (low); the link serves H's head while H is non-empty, else L's head,
// non-preemptively. A mechanism supplies only its classification and its
// per-flow bookkeeping (CRTP hooks, so the per-packet path has no virtual
// calls):
//   Admission classify(const Packet&, Time now)   priority and tag of an arrival
//   void on_admit(const Packet&, Admission&)      the arrival enters the buffer
//   void on_unadmit(const Packet&, const Admission&)  byte-mode push-out failed, undo
//   void on_leave(const Packet&, uint32_t ref, bool served)  a packet leaves:
//        served, or pushed out; `ref` is the Admission::ref on_admit() set
//        (EFD: its flow entry, so a departure needs no table lookup)
//   void prefetch_flow(uint32_t ref)   optional: the packet with `ref` is the
//        next to be served; start loading its flow state (default: nothing)
// on_admit, on_unadmit and on_leave are optional too (default: nothing), for
// mechanisms whose flow state does not follow the buffered packets.
//
// Space priority (push-out, §2, default on): an arrival meeting a full buffer
// is conceptually inserted at its position and the packet at the physical
// tail (the last packet of L) is dropped as pushed_out. Hence: HIGH arrival
// with L non-empty evicts L's tail; HIGH arrival with L empty is dropped;
// LOW arrival is dropped (with a LAS-ordered L, a LOW arrival whose tag is
// below L's largest evicts that packet instead, §2.3). H packets are never
// pushed out. With `push_out = false` the buffer is drop-tail (NCQ default).
//
// The arrival's flow state is accounted before the victim is removed
// (§2.1 "insert first, then push out"), so a victim of the same flow never
// deletes and re-creates the entry.
//
// ⚠AMB-1, byte mode: one push-out may not free enough room. Default (the
// spec's rule): push out L's tail packets one by one until the arrival
// fits; if L runs out first, the arrival is dropped and the packets already
// pushed out stay dropped. Option `byte_pushout_precheck`: first check that
// emptying L would make room, and otherwise drop only the arrival.
//
// The packet in service never sits in L (it is held apart, see
// fifo_buffer.hh), so it is never a push-out victim, as §2 requires.
#pragma once

#include <cstdint>

#include "efd_flow_table.hh"
#include "fifo_buffer.hh"
#include "las_sorted_queue.hh"

namespace tracelab {

enum class Priority : uint8_t { kHigh = 0, kLow = 1 };

// Order inside one virtual queue (§2.3): FIFO, or LAS = ascending tag.
enum class Discipline : uint8_t { kFifo, kLas };

struct TwoLevelConfig {
  BufferConfig buffer;
  bool push_out = true;                // §2 space priority; false = drop-tail
  bool byte_pushout_precheck = false;  // ⚠AMB-1, see above
  Discipline high = Discipline::kFifo;
  Discipline low = Discipline::kFifo;
};

// What classify() decides for one arrival, plus room for on_admit() to
// remember what on_unadmit() must undo.
struct Admission {
  Priority prio = Priority::kHigh;
  uint64_t tag = 0;        // order key inside a LAS-ordered virtual queue
  uint64_t volume = 0;     // volume on_admit() added to the flow's counter
  AckProgress ack_before;  // the flow's ACK reference before on_admit()
  uint32_t ref = 0;        // kept with the packet, handed to on_leave()
};

// The packets of both virtual queues in one array of buffer-size slots: a
// FIFO-ordered virtual queue is then a ring of (slot, ref) pairs, and H and
// L together touch no more memory than one drop-tail FIFO does (two rings of
// whole packets would double the working set, which costs more than the
// indirection). Free slots form a stack, so the slot just freed, still in
// cache, is the next one used.
class PacketPool {
 public:
  explicit PacketPool(uint32_t n) : slots_(n), free_(n) {
    for (uint32_t i = 0; i < n; ++i) free_[i] = n - 1 - i;
  }
  uint32_t put(const Packet& p) {
    const uint32_t i = free_[--free_count_];
    slots_[i].packet = p;
    return i;
  }
  const Packet& packet(uint32_t i) const { return slots_[i].packet; }
  void prefetch(uint32_t i) const { __builtin_prefetch(&slots_[i]); }
  // The slot's contents stay readable until the next put().
  void release(uint32_t i) { free_[free_count_++] = i; }

 private:
  // One cache line per packet, never two.
  struct alignas(64) Slot {
    Packet packet;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  uint32_t free_count_ = static_cast<uint32_t>(free_.size());
};

// One virtual queue: a ring of pool slots (FIFO) or a sorted queue (LAS,
// which keeps its own packets). Front = next to serve, back = physical tail
// (push-out victim).
class SubQueue {
 public:
  SubQueue(Discipline d, uint32_t slots)
      : las_(d == Discipline::kLas), ring_(las_ ? 1 : slots), sorted_(las_ ? slots : 0) {}
  // Its own count, so the hot emptiness tests need no branch on las_.
  bool empty() const { return n_ == 0; }
  uint32_t size() const { return n_; }
  bool is_las() const { return las_; }
  // The FIFO paths are the hot ones and stay small enough to inline; the
  // LAS paths (heap operations) are kept out of line.
  void push(PacketPool& pool, const Packet& p, uint64_t tag, uint32_t ref) {
    ++n_;
    if (las_) las_push(p, tag, ref);
    else ring_.push_back(Item{pool.put(p), ref});
  }
  // FIFO: once the front leaves the ring, the next one's pool slot starts
  // loading and `next(ref)` is told its ref (the mechanism may warm its flow
  // state), before the copy: see TwoLevelQueue::dequeue().
  template <typename Next>
  void pop_front_to(PacketPool& pool, Packet& dst, uint32_t& ref, Next next) {
    --n_;
    if (las_) {
      las_pop_min(dst, ref);
      return;
    }
    const Item it = ring_.pop_front();
    if (n_ != 0) {
      pool.prefetch(ring_.front().slot);
      next(ring_.front().ref);
    }
    dst = pool.packet(it.slot);
    ref = it.ref;
    pool.release(it.slot);
  }
  // The physical tail, removed; the reference is valid until the next push.
  const Packet& pop_back_ref(PacketPool& pool, uint32_t& ref) {
    --n_;
    if (las_) {
      las_pop_min_max(ref);
      return last_;
    }
    const Item it = ring_.pop_back();
    ref = it.ref;
    pool.release(it.slot);
    return pool.packet(it.slot);
  }
  uint64_t back_tag() const { return sorted_.max_tag(); }  // LAS only

 private:
  struct Item {
    uint32_t slot;  // in the PacketPool
    uint32_t ref;   // its Admission::ref, known without loading the slot
  };
  [[gnu::noinline]] void las_push(const Packet& p, uint64_t tag, uint32_t ref) { sorted_.push(p, tag, ref); }
  [[gnu::noinline]] void las_pop_min(Packet& dst, uint32_t& ref) { dst = sorted_.pop_min(&ref); }
  [[gnu::noinline]] void las_pop_min_max(uint32_t& ref) { last_ = sorted_.pop_max(&ref); }

  bool las_;
  Ring<Item> ring_;
  SortedPacketQueue sorted_;
  Packet last_;  // LAS: the packet pop_back_ref() refers to
  uint32_t n_ = 0;
};

template <typename Mechanism>
class TwoLevelQueue : public QueueCore {
 public:
  explicit TwoLevelQueue(const TwoLevelConfig& cfg)
      : cfg_(cfg),
        meter_(cfg.buffer),
        pool_(cfg.high == Discipline::kFifo || cfg.low == Discipline::kFifo ? cfg.buffer.slots() : 1),
        high_(cfg.high, cfg.buffer.slots()),
        low_(cfg.low, cfg.buffer.slots()) {}

  void enqueue(const Packet& p, Time now) final {
    ++counters_.offered;
    retire(now, false);
    Admission a = self().classify(p, now);
    if (meter_.fits(p.length)) {
      self().on_admit(p, a);
      place(p, a);
    } else {
      overflow(p, a, now);
    }
  }

  bool dequeue(Time now, Batch& out) final {
    retire(now, true);
    out.clear();
    if (high_.empty() && low_.empty()) return false;
    Packet& p = out.packets[0];
    uint32_t ref;
    // The departure chain (ring -> pool slot, and in EFD ref -> flow entry
    // -> bucket) is a series of dependent loads of lines written one buffer
    // ago, which have left L1 by then. Starting the loads for the packet
    // behind this one overlaps them with the work until the next dequeue
    // (EFD in core_bench: -10 % ns/packet).
    auto warm = [this](uint32_t next_ref) { self().prefetch_flow(next_ref); };
    if (!high_.empty()) {
      high_.pop_front_to(pool_, p, ref, warm);
      ++served_high_;
    } else {
      low_.pop_front_to(pool_, p, ref, warm);
      low_bytes_ -= p.length;
    }
    ++counters_.served;
    out.count = 1;
    out.wire_bytes = p.length;
    const uint64_t bps = cfg_.buffer.in_service_link_bps;
    if (bps == 0) {
      leave(p, ref);
    } else {
      service_.start(p.length, now);
      service_packet_ = p;
      service_ref_ = ref;
    }
    return true;
  }

  // Spelled out (same as QueueCore's) so a caller holding the concrete
  // type gets a direct, inlinable call.
  Time next_ready(Time now) const final { return length_packets() ? now : kNever; }
  Time retire_at() const final { return service_.ends(cfg_.buffer.in_service_link_bps); }
  Time retire_at_or_after(Time t) const final {
    return service_.retires_at_or_after(t, cfg_.buffer.in_service_link_bps);
  }
  uint64_t length_packets() const final { return high_.size() + low_.size(); }
  uint64_t length_bytes() const final { return meter_.bytes() - service_.length(); }

  uint64_t high_packets() const { return high_.size(); }
  uint64_t low_packets() const { return low_.size(); }
  uint64_t admitted_high() const { return admitted_high_; }
  uint64_t admitted_low() const { return counters_.enqueued - admitted_high_; }
  uint64_t served_high() const { return served_high_; }
  uint64_t pushed_out() const { return pushed_out_; }
  // Buffer occupancy as the full test sees it (in-service packet included).
  const BufferMeter& meter() const { return meter_; }
  void reset_counters() final {
    counters_ = Counters{};
    note_highwater(meter_.packets(), meter_.bytes());
    admitted_high_ = served_high_ = pushed_out_ = 0;
    self().reset_mechanism_counters();
  }
  const TwoLevelConfig& config() const { return cfg_; }

 private:
  Mechanism& self() { return static_cast<Mechanism&>(*this); }

  // Default hooks: no per-flow state to warm or to keep per buffered packet,
  // no counters of its own.
  void prefetch_flow(uint32_t) {}
  void on_admit(const Packet&, Admission&) {}
  void on_unadmit(const Packet&, const Admission&) {}
  void on_leave(const Packet&, uint32_t, bool) {}
  void reset_mechanism_counters() {}

  // An arrival meeting a full buffer: push out, or drop it. Kept out of
  // line so the common path (room in the buffer) stays small.
  [[gnu::noinline]] void overflow(const Packet& p, Admission a, Time now) {
    if (!cfg_.push_out || !may_push_out(a)) {
      drop(p, DropReason::kBufferFull, now);
      return;
    }
    if (cfg_.byte_pushout_precheck && !fits_without_low(p.length)) {
      drop(p, DropReason::kBufferFull, now);
      return;
    }
    // Account first so that a victim of p's own flow keeps its entry (§2.1).
    self().on_admit(p, a);
    while (!meter_.fits(p.length) && !low_.empty()) {
      // A reference into L's storage: nothing is pushed before place().
      uint32_t ref;
      const Packet& victim = low_.pop_back_ref(pool_, ref);
      low_bytes_ -= victim.length;
      meter_.remove(victim.length);
      ++pushed_out_;
      self().on_leave(victim, ref, false);
      drop(victim, DropReason::kPushedOut, now);
    }
    if (!meter_.fits(p.length)) {  // byte mode only: L ran out first
      self().on_unadmit(p, a);
      drop(p, DropReason::kBufferFull, now);
      return;
    }
    place(p, a);
  }

  // May this arrival evict the physical tail (§2, §2.3)?
  bool may_push_out(const Admission& a) const {
    if (low_.empty()) return false;
    if (a.prio == Priority::kHigh) return true;
    // A LOW arrival goes behind L's tail in FIFO order, so it is the tail;
    // in a LAS-ordered L it is the tail unless its tag is smaller.
    return low_.is_las() && a.tag < low_.back_tag();
  }

  bool fits_without_low(uint32_t length) const {
    const BufferConfig& b = cfg_.buffer;
    uint64_t packets = meter_.packets() - low_.size();
    uint64_t bytes = meter_.bytes() - low_bytes_;
    if (b.granularity == Granularity::kPackets) return packets < b.capacity;
    return b.full_test == FullTest::kAlreadyFull ? bytes < b.capacity : bytes + length <= b.capacity;
  }

  void place(const Packet& p, const Admission& a) {
    if (a.prio == Priority::kHigh) {
      high_.push(pool_, p, a.tag, a.ref);
    } else {
      low_.push(pool_, p, a.tag, a.ref);
      low_bytes_ += p.length;
    }
    meter_.add(p.length);
    admitted_high_ += a.prio == Priority::kHigh;
    ++counters_.enqueued;
    note_highwater(meter_.packets(), meter_.bytes());  // the packet in service included (§2)
  }

  void leave(const Packet& p, uint32_t ref) {
    meter_.remove(p.length);
    self().on_leave(p, ref, true);
  }
  void retire(Time now, bool link_free) {
    if (service_.busy() && (link_free || service_.ended(now, cfg_.buffer.in_service_link_bps))) {
      service_.end();
      leave(service_packet_, service_ref_);
    }
  }

  TwoLevelConfig cfg_;
  BufferMeter meter_;
  PacketPool pool_;  // packets of the FIFO-ordered virtual queues
  SubQueue high_;
  SubQueue low_;
  uint64_t low_bytes_ = 0;
  InService service_;
  Packet service_packet_;  // the packet in service, for on_leave() (EFD's served counter reads it)
  uint32_t service_ref_ = 0;
  uint64_t admitted_high_ = 0;
  uint64_t served_high_ = 0;
  uint64_t pushed_out_ = 0;
};

}  // namespace tracelab
