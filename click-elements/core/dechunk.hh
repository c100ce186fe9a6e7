// tracelab queueing cores: de-chunking / JumboGen egress (docs/reference/algorithms.md §5.4
// and the de-chunker of §6), over the format of chunk_format.hh.
//
// Dechunker::split() turns one received aggregate into its packets: where
// each packet's bytes are in the buffer and when to release it.
// * Entries with pktLen = 0 (removed by a partial drop upstream) are skipped
//   and counted; their presence means congestion on the path, which the
//   caller may signal by setting ECN-CE on ECN-capable packets ([002 §3.3]).
// * Shaping on: packet i is released at t0 + (pQTime_i - pQTime_0) * unit,
//   the spacing it had at the ingress ([002 §2.4]). Shaping off: all at t0
//   (the seed notes this causes ACK compression).
//
// EgressShaper is the queue that holds split packets until their release
// time, in arrival order (a later aggregate never overtakes an earlier one:
// release = max(scheduled, previous release), which keeps per-flow order).
//
// Not implemented: re-inserting the outer header's ECN bits into the inner
// IP headers (the caller owns the packet bytes and does it if wanted).
#pragma once

#include <cstddef>
#include <cstdint>

#include "chunk_buffer.hh"
#include "chunk_format.hh"
#include "queue_core.hh"

namespace tracelab {

struct SplitPacket {
  size_t offset;  // of the packet's first byte in the aggregate
  uint16_t length;
  Time release;
};

struct SplitResult {
  jg::FormatError error = jg::FormatError::kOk;
  size_t count = 0;      // packets written to `out`
  uint16_t missing = 0;  // entries removed upstream (pktLen = 0)
};

class Dechunker {
 public:
  Dechunker(bool shaping, Time unit) : shaping_(shaping), unit_(unit) {}

  // Split the aggregate `buf[0..len)` received at `t0` into at most
  // `out_cap` packets. A malformed aggregate yields an error and no packet.
  SplitResult split(const uint8_t* buf, size_t len, Time t0, SplitPacket* out, size_t out_cap) const {
    SplitResult r;
    jg::View v;
    r.error = jg::parse(buf, len, v);
    if (r.error != jg::FormatError::kOk) return r;
    if (v.n > out_cap) {
      r.error = jg::FormatError::kNoRoom;
      return r;
    }
    size_t off = jg::header_size(v.n);
    const Time base = v.n ? static_cast<Time>(v.pq_time(0)) : 0;
    for (size_t i = 0; i < v.n; ++i) {
      const uint16_t l = v.pkt_len(i);
      if (l == 0) {
        ++r.missing;
        continue;
      }
      Time rel = t0;
      if (shaping_) rel += (static_cast<Time>(v.pq_time(i)) - base) * unit_;
      out[r.count++] = SplitPacket{off, l, rel};
      off += l;
    }
    return r;
  }

 private:
  bool shaping_;
  Time unit_;
};

// Holds packets until their release time; drop-tail at `capacity` packets.
class EgressShaper final : public QueueCore {
 public:
  explicit EgressShaper(size_t capacity) : ring_(capacity) {}

  // Queue `p` (arrived at `now`) for release at `release`.
  void enqueue_at(const Packet& p, Time release, Time now) {
    ++counters_.offered;
    if (ring_.full()) {
      drop(p, DropReason::kBufferFull, now);
      return;
    }
    if (release < now) release = now;
    if (release < last_release_) release = last_release_;
    last_release_ = release;
    Packet q = p;
    q.arrival = now;
    ring_.push(q, release);
    ++counters_.enqueued;
    note_highwater();
  }
  void enqueue(const Packet& p, Time now) override { enqueue_at(p, now, now); }

  bool dequeue(Time now, Batch& out) override {
    out.clear();
    if (ring_.empty() || ring_.front_tag() > now || out.capacity == 0) return false;
    out.packets[0] = ring_.front();
    out.count = 1;
    out.wire_bytes = ring_.front().length;
    ring_.pop();
    ++counters_.served;
    return true;
  }
  Time next_ready(Time now) const override {
    if (ring_.empty()) return kNever;
    return ring_.front_tag() > now ? ring_.front_tag() : now;
  }
  uint64_t length_packets() const override { return ring_.size(); }
  uint64_t length_bytes() const override { return ring_.bytes(); }

 private:
  PacketRing ring_;
  Time last_release_ = 0;
};

}  // namespace tracelab
