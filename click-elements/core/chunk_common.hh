// tracelab queueing cores: what BasiCQ, ChuMQ and ChuTQ share
// (docs/reference/algorithms.md §6.1, §6.2, §6.8).
//
// * A packet's waiting-time budget W_max arrives in Packet::budget (the
//   adapter sets Q - (X + D), §6.1); kNever = no requirement. The core
//   stamps Packet::arrival = the enqueue instant, so the residual is
//   r(t) = budget - (t - arrival) = deadline - t with deadline = arrival + budget.
// * Chunk size: payload plus, with `shim` on, the 6 + 4N bytes of the
//   chunk_format.hh header; a chunk never exceeds `mtu` (default 9000 B).
//   The seed assumes no header (§6: "assume 0"): set shim = false to
//   reproduce its numbers. A packet that cannot fit a chunk on its own is
//   dropped (kEarlyDiscard, counted in `oversize`).
// * Violation (⚠AMB-18, the spec's default): a packet violates when the
//   start of its chunk's transmission (the dequeue() that hands it to the
//   link) is later than its deadline.
// * Capacity (NOT IN SEEDS): one tail-drop limit on all packets the node
//   holds (class buffers, chunking buffer and chunks waiting for the link).
//   A per-class-buffer limit would be meaningless for ChuMQ: the formation
//   rule cuts a chunk before any buffer exceeds one MTU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chunk_buffer.hh"
#include "chunk_format.hh"
#include "queue_core.hh"

namespace tracelab {

inline Time deadline_of(const Packet& p) {
  if (p.budget == kNever) return kNever;
  return p.arrival + p.budget;
}

// Chunk size in bytes for n packets carrying `payload` bytes.
inline uint64_t chunk_wire_size(uint64_t n, uint64_t payload, bool shim) {
  return payload + (shim ? jg::header_size(n) : 0);
}

struct ChunkStats {
  uint64_t chunks = 0;         // chunks handed to the link
  uint64_t chunk_packets = 0;  // packets in them
  uint64_t chunk_bytes = 0;    // wire bytes of them (shim included if on)
  uint64_t timer_chunks = 0;   // formed on timer expiry
  uint64_t mtu_chunks = 0;     // formed on MTU excess
  uint64_t cea_packets = 0;    // packets added by CEA
  uint64_t oversize = 0;       // packets larger than a chunk can carry
  uint64_t split_chunks = 0;   // chunks cut short by a too-small Batch
  uint64_t violations = 0;     // all classes
  uint64_t class_served[256] = {};
  uint64_t class_violations[256] = {};
  Time max_excess = 0;  // largest (transmission start - deadline)
  double mean_chunk_bytes() const { return chunks ? double(chunk_bytes) / double(chunks) : 0.0; }

  // Packet p starts transmission at `now` in a chunk (violation: ⚠AMB-18).
  void note_served(const Packet& p, Time now) {
    ++class_served[p.cls];
    const Time dl = deadline_of(p);
    if (dl != kNever && now > dl) {
      ++violations;
      ++class_violations[p.cls];
      if (now - dl > max_excess) max_excess = now - dl;
    }
  }
  // `out` holds a whole chunk of `payload` bytes: set its wire size, count it.
  void note_chunk(Batch& out, uint64_t payload, bool shim) {
    out.wire_bytes = static_cast<uint32_t>(chunk_wire_size(out.count, payload, shim));
    ++chunks;
    chunk_packets += out.count;
    chunk_bytes += out.wire_bytes;
  }
};

// Packets one chunk can hold at most (every IP packet has >= 20 bytes).
inline uint32_t max_chunk_packets(uint32_t mtu) { return mtu / 20 + 1; }

// Formed chunks waiting for the link, FIFO (chunk transmission contention,
// §6.2). Packets are stored flat; tag 1 marks the first packet of a chunk.
class ChunkOutput {
 public:
  explicit ChunkOutput(size_t capacity) : ring_(capacity) {}
  bool empty() const { return ring_.empty(); }
  size_t packets() const { return ring_.size(); }
  uint64_t bytes() const { return ring_.bytes(); }
  void add(const Packet& p, bool first) { ring_.push(p, first ? 1 : 0); }

  // Move the head chunk into `out` and account for it. A Batch smaller than
  // the chunk splits it (the rest becomes the next chunk, counted in
  // `split_chunks`); size the Batch with max_chunk_packets() to avoid that.
  bool pop_chunk(Time now, Batch& out, bool shim, ChunkStats& st, uint64_t& served) {
    out.clear();
    if (ring_.empty() || out.capacity == 0) return false;
    uint64_t payload = 0;
    do {
      const Packet& p = ring_.front();
      out.packets[out.count++] = p;
      payload += p.length;
      st.note_served(p, now);
      ring_.pop();
    } while (!ring_.empty() && ring_.front_tag() == 0 && out.count < out.capacity);
    if (!ring_.empty() && ring_.front_tag() == 0) {
      ring_.set_tag_at(0, 1);
      ++st.split_chunks;
    }
    st.note_chunk(out, payload, shim);
    served += out.count;
    return true;
  }

 private:
  PacketRing ring_;
};

// What BasiCQ, ChuMQ and ChuTQ share: the statistics and the admission.
class ChunkCore : public QueueCore {
 public:
  const ChunkStats& stats() const { return stats_; }
  void reset_counters() override {
    QueueCore::reset_counters();
    stats_ = ChunkStats{};
  }

 protected:
  // The admission every chunking core applies first (its Config has mtu,
  // shim and capacity_packets): count the offer and copy `in` into `p`
  // stamped with the arrival `now`; drop a packet no chunk can carry
  // (kEarlyDiscard, counted in `oversize`), then one finding the node full
  // (kBufferFull). Returns whether `p` is admitted.
  template <typename Config>
  bool admit(const Config& cfg, const Packet& in, Time now, Packet& p) {
    ++counters_.offered;
    p = in;
    p.arrival = now;
    if (chunk_wire_size(1, p.length, cfg.shim) > cfg.mtu) {
      ++stats_.oversize;
      drop(p, DropReason::kEarlyDiscard, now);
      return false;
    }
    if (length_packets() >= cfg.capacity_packets) {
      drop(p, DropReason::kBufferFull, now);
      return false;
    }
    return true;
  }

  ChunkStats stats_;
};

// ChuMQ's and ChuTQ's class buffer for packet p: the largest i with
// timers[i] <= its budget, 0 when the budget is below timers[1] (also below
// timers[0]: ⚠AMB-19), the last buffer when it has no budget.
inline size_t select_class_buffer(const std::vector<Time>& timers, const Packet& p) {
  size_t i = 0;
  if (p.budget == kNever) return timers.size() - 1;
  while (i + 1 < timers.size() && timers[i + 1] <= p.budget) ++i;
  return i;
}

}  // namespace tracelab
