// tracelab queueing cores: the single sorted buffer shared by LAS, LARS and
// SCFQ. Spec: docs/reference/algorithms.md §3.
//
// Every arrival gets a tag from the mechanism; the link always serves the
// smallest tag (ties: arrival order). A mechanism supplies (CRTP hooks):
//   uint64_t tag(const Packet&, Time now)   the arrival's tag (no accounting yet)
//   uint32_t on_admit(const Packet&, uint64_t tag)  the arrival enters the
//        buffer; returns a ref kept with the packet (SCFQ: its flow entry)
//   void on_serve(const Packet&, uint64_t tag, uint32_t ref)  the packet goes
//        to the link, with the ref on_admit() returned
//
// Buffer management when full:
// * `push_out_largest` (LAS, LARS; [003 §4.3.2], LAS buffer management of
//   [50]): the arrival is inserted at its sorted position and the packet
//   with the largest tag is dropped, which may be the arrival itself (it is,
//   when its tag is >= the largest, ties going to the newest). Byte mode
//   repeats this until the arrival fits; if it becomes the largest first, it
//   is dropped and the packets already pushed out stay dropped (⚠AMB-1, the
//   rule of §2; a pre-check variant is not implemented here).
// * otherwise drop-tail (SCFQ, §3.3).
// In-service accounting (`in_service_link_bps`): as fifo_buffer.hh.
#pragma once

#include "fifo_buffer.hh"
#include "las_sorted_queue.hh"

namespace tracelab {

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
    queue_.push(p, tag, self().on_admit(p, tag));
    meter_.add(p.length);
    ++counters_.enqueued;
    note_highwater(meter_.packets(), meter_.bytes());  // the packet in service included (§2)
  }

  bool dequeue(Time now, Batch& out) final {
    retire(now, true);
    out.clear();
    if (queue_.empty()) return false;
    const uint64_t tag = queue_.min_tag();
    uint32_t ref;
    Packet p = queue_.pop_min(&ref);
    self().on_serve(p, tag, ref);
    ++counters_.served;
    out.packets[0] = p;
    out.count = 1;
    out.wire_bytes = p.length;
    const uint64_t bps = meter_.config().in_service_link_bps;
    if (bps == 0) meter_.remove(p.length);
    else service_.start(p.length, now);
    return true;
  }

  // Spelled out (the same as QueueCore's): QueueCore's calls the virtual
  // length_packets(), which the engine's direct calls then reach through a
  // guessed-type check (engine_bench las: -12 instructions/packet,
  // docs/performance-history.md, engine step 12).
  Time next_ready(Time now) const final { return queue_.empty() ? kNever : now; }
  uint64_t length_packets() const final { return queue_.size(); }
  uint64_t length_bytes() const final { return meter_.bytes() - service_.length(); }
  Time retire_at() const final { return service_.ends(meter_.config().in_service_link_bps); }
  Time retire_at_or_after(Time t) const final {
    return service_.retires_at_or_after(t, meter_.config().in_service_link_bps);
  }
  uint64_t pushed_out() const { return pushed_out_; }
  const BufferMeter& meter() const { return meter_; }
  void reset_counters() final {
    counters_ = Counters{};
    note_highwater(meter_.packets(), meter_.bytes());
    pushed_out_ = 0;
    self().reset_mechanism_counters();
  }

 private:
  Mechanism& self() { return static_cast<Mechanism&>(*this); }
  void retire(Time now, bool link_free) {
    if (service_.busy() && (link_free || service_.ended(now, meter_.config().in_service_link_bps))) {
      meter_.remove(service_.length());
      service_.end();
    }
  }

  BufferMeter meter_;
  SortedPacketQueue queue_;
  bool push_out_;
  InService service_;
  uint64_t pushed_out_ = 0;
};

}  // namespace tracelab
