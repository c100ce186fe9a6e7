// tracelab queueing cores: BasiCQ, basic packet chunking with one buffer
// (docs/reference/algorithms.md §6.3, §6.2; [000 §4.1]).
//
// One FIFO buffer and one timer. The timer always points at the earliest
// deadline (arrival + W_max) among the buffered packets, i.e. it expires
// when the most urgent packet's residual waiting time reaches 0. A chunk is
// formed (and queued for the link, FIFO) when
//   (1) the timer expires: all buffered packets (they fit: see (2)), or
//   (2) an arriving packet would make the content exceed the MTU ("MTU size
//       excess"): the current content leaves as a chunk, and the arriving
//       packet becomes the head of the next one.
// Content exactly equal to the MTU does not trigger (2) by itself.
//
// Timer ties: an expiry at t is processed before an arrival at the same t
// (the arriving packet is not in that chunk). Events between two calls are
// processed lazily in time order when the next call arrives, which is exact
// because nothing but the timer changes the state between calls.
//
// Shared definitions (budget, shim, violation, capacity): chunk_common.hh.
// Not implemented: the ingress PPS limit of the seed's routers (a property
// of the router model around the core, not of the chunking scheme).
#pragma once

#include "chunk_common.hh"

namespace tracelab {

struct BasiCQConfig {
  uint32_t mtu = 9000;              // chunk MTU, bytes [000 §4]
  bool shim = true;                 // count the 6+4N chunk header (false: seed's 0)
  size_t capacity_packets = 16384;  // NOT IN SEEDS
};

class BasiCQ final : public ChunkCore {
 public:
  explicit BasiCQ(const BasiCQConfig& c = {}) : cfg_(c), buf_(c.capacity_packets), out_(c.capacity_packets) {}

  void enqueue(const Packet& in, Time now) override {
    advance(now);
    Packet p;
    if (!admit(cfg_, in, now, p)) return;
    if (!buf_.empty() && chunk_wire_size(buf_.size() + 1, buf_.bytes() + p.length, cfg_.shim) > cfg_.mtu) {
      form_chunk();
      ++stats_.mtu_chunks;
    }
    buf_.push(p);
    const Time dl = deadline_of(p);
    if (dl < timer_) timer_ = dl;
    ++counters_.enqueued;
    note_highwater();
  }

  bool dequeue(Time now, Batch& out) override {
    advance(now);
    return out_.pop_chunk(now, out, cfg_.shim, stats_, counters_.served);
  }

  Time next_ready(Time now) const override {
    if (!out_.empty()) return now;
    if (buf_.empty() || timer_ == kNever) return kNever;
    return timer_ > now ? timer_ : now;
  }

  uint64_t length_packets() const override { return buf_.size() + out_.packets(); }
  uint64_t length_bytes() const override { return buf_.bytes() + out_.bytes(); }
  const BasiCQConfig& config() const { return cfg_; }

 private:
  void advance(Time now) {
    if (!buf_.empty() && timer_ <= now) {
      form_chunk();
      ++stats_.timer_chunks;
    }
  }
  // Everything buffered fits one chunk (rule (2) keeps it so).
  void form_chunk() {
    bool first = true;
    while (!buf_.empty()) {
      out_.add(buf_.front(), first);
      first = false;
      buf_.pop();
    }
    timer_ = kNever;
  }

  BasiCQConfig cfg_;
  PacketRing buf_;
  ChunkOutput out_;
  Time timer_ = kNever;
};

}  // namespace tracelab
