// Drop-tail FIFO, the baseline of every study. Spec: docs/reference/algorithms.md §1.
//
// Enqueue: if the buffer is full the arriving packet is dropped
// (buffer_full), else appended at the tail. Dequeue: the head.
// Granularity: packets or bytes (§0, [003 ch.7]); ⚠AMB-1 and the optional
// in-service accounting are documented in fifo_buffer.hh.
//
// Not implemented: nothing the spec lists for §1.
#pragma once

#include "fifo_buffer.hh"

namespace tracelab {

class FifoCore final : public QueueCore {
 public:
  explicit FifoCore(const BufferConfig& cfg = {}) : meter_(cfg), ring_(cfg.slots()) {}

  void enqueue(const Packet& p, Time now) override {
    ++counters_.offered;
    retire(now, false);
    if (!meter_.fits(p.length)) {
      drop(p, DropReason::kBufferFull, now);
      return;
    }
    ring_.push_back(p);
    meter_.add(p.length);
    ++counters_.enqueued;
    note_highwater(meter_.packets(), meter_.bytes());  // the packet in service included (§2)
  }

  bool dequeue(Time now, Batch& out) override {
    retire(now, true);
    out.clear();
    if (ring_.empty()) return false;
    Packet p = ring_.pop_front();
    ++counters_.served;
    out.packets[0] = p;
    out.count = 1;
    out.wire_bytes = p.length;
    hold(p, now);
    return true;
  }

  // Spelled out (same as QueueCore's) so a caller holding the concrete
  // type gets a direct, inlinable call.
  Time next_ready(Time now) const override { return ring_.empty() ? kNever : now; }
  Time retire_at() const override { return service_.ends(meter_.config().in_service_link_bps); }
  Time retire_at_or_after(Time t) const override {
    return service_.retires_at_or_after(t, meter_.config().in_service_link_bps);
  }
  uint64_t length_packets() const override { return ring_.size(); }
  uint64_t length_bytes() const override { return meter_.bytes() - service_.length(); }
  const BufferMeter& meter() const { return meter_; }
  void reset_counters() override {
    counters_ = Counters{};
    note_highwater(meter_.packets(), meter_.bytes());
  }

 private:
  void hold(const Packet& p, Time now) {
    const uint64_t bps = meter_.config().in_service_link_bps;
    if (bps == 0) {
      meter_.remove(p.length);
      return;
    }
    service_.start(p.length, now);
  }
  void retire(Time now, bool link_free) {
    if (service_.busy() && (link_free || service_.ended(now, meter_.config().in_service_link_bps))) {
      meter_.remove(service_.length());
      service_.end();
    }
  }

  BufferMeter meter_;
  PacketDeque ring_;
  InService service_;
};

}  // namespace tracelab
