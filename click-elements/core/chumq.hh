// tracelab queueing cores: ChuMQ, chunking with N parallel buffers, and its
// chunking-efficiency-aware extension CEA (docs/reference/algorithms.md §6.4, §6.6;
// [000 §4.2, §4.4]).
//
// Buffer i (0-based here, 1-based in the spec) has a chunking timer T_i,
// T_0 < T_1 < ... < T_{N-1} (default 50, 100, 200 us).
// * Class selection ("safe side"): a packet with residual r at arrival
//   (its budget) goes to the buffer with the largest T_i <= r; r >= T_{N-1}
//   -> last buffer; no budget -> last buffer. ⚠AMB-19: r < T_0 cannot be
//   guaranteed; the spec's default puts it in buffer 0.
// * Timer of buffer i starts (T_i) when the buffer goes from 0 to 1 packet.
//   After a chunk leaves and packets remain, ⚠AMB-19 default: the timer is
//   restarted for the new head, expiring at head_arrival + T_i
//   (`restart_from_head`); alternative: now + T_i.
// * A buffer is ready when its timer has expired or its content exceeds
//   the MTU. A chunk takes packets from the head up to the MTU.
// * Contention: dequeue(now), called at the instant the link is free,
//   forms the chunk of one ready buffer then and there; a buffer that became
//   ready while another chunk was on the wire waits for that chunk ("forced
//   to wait until the end of ongoing transmission", [000 §4.2]). Which
//   ready buffer goes first (`contention`):
//   - kTimerFirst (default): buffers whose timer has expired, lowest index
//     first ("the ith buffer is first served when ith and jth (j > i)
//     buffers expire simultaneously", §4.2), then buffers above the MTU,
//     lowest index first. A timer-expired chunk is already at its deadline
//     while an MTU chunk still has slack, and priority is granted through
//     the timers ("the value of the timer for packets with short acceptable
//     waiting times is set to a small value, thereby allowing priority
//     control to work", §7.2.2). In overload a backlogged buffer's head is
//     always expired, so the short-timer classes leave at their expiry plus
//     the chunk on the wire: this reproduces Table IV (sensing ~20 %: the
//     residual of a 7.2-us chunk, 3.6 us on average, over the 18 us a
//     sensing chunk spans at 4 Gb/s).
//   - kPriority: the lowest-index ready buffer, whatever made it ready. In
//     overload the sensing and real-time buffers leave on MTU excess and
//     never violate (Table IV's 20 / 38 % are not reproduced).
//   In both, a chunk waits for the chunk on the wire and for the chunks
//   that precede it at the same instant (at most 2 x 7.2 us with two minor
//   classes, §7.2.1). Packets that arrive while a buffer waits join its
//   chunk if they fit.
//   - kFifo (the spec's literal §6.2: "FIFO among chunks"): a chunk is
//     formed at the instant its buffer becomes ready (timer expiry; an
//     arrival that would exceed the MTU) and queued in one FIFO of formed
//     chunks in front of the link; simultaneous expiries: lower index first;
//     an expiry at t is processed before an arrival at t. In overload that
//     FIFO grows and every class waits behind it, which the seed's Table IV
//     and 7.82 us maximum excess do not show.
// * CEA (`cea`): when a timer-triggered chunk is below the MTU, packets are
//   appended from the other buffers, shortest-timer buffer first, each from
//   its head, until the next packet would exceed the MTU (the fill stops
//   there) or all buffers are empty. Donor buffers restart their timers as
//   above. MTU-triggered chunks are full already and are not extended.
//   (Default mode: a chunk is timer-triggered when its buffer's content
//   does not exceed the MTU at the pull.)
//
// Shared definitions (budget, shim, violation, capacity): chunk_common.hh.
#pragma once

#include <vector>

#include "chunk_common.hh"

namespace tracelab {

// Order of the ready buffers at the link-free instant (see above).
enum class ChuMQContention { kTimerFirst, kPriority, kFifo };

struct ChuMQConfig {
  std::vector<Time> timers = {50 * kMicrosecond, 100 * kMicrosecond, 200 * kMicrosecond};
  uint32_t mtu = 9000;
  bool shim = true;                 // count the 6+4N chunk header (false: seed's 0)
  bool cea = false;                 // §6.6 extension
  bool restart_from_head = true;    // ⚠AMB-19 default; false: now + T_i
  size_t capacity_packets = 16384;  // NOT IN SEEDS; all packets held
  ChuMQContention contention = ChuMQContention::kTimerFirst;
};

class ChuMQ final : public ChunkCore {
 public:
  explicit ChuMQ(const ChuMQConfig& c = {}) : cfg_(c), out_(c.capacity_packets) {
    if (cfg_.timers.empty()) cfg_.timers.push_back(50 * kMicrosecond);
    bufs_.reserve(cfg_.timers.size());
    for (size_t i = 0; i < cfg_.timers.size(); ++i) bufs_.emplace_back(c.capacity_packets);
    expiry_.assign(cfg_.timers.size(), kNever);
  }

  size_t select_buffer(const Packet& p) const { return select_class_buffer(cfg_.timers, p); }

  void enqueue(const Packet& in, Time now) override {
    if (fifo()) advance(now);
    Packet p;
    if (!admit(cfg_, in, now, p)) return;
    const size_t i = select_buffer(p);
    PacketRing& b = bufs_[i];
    if (fifo() && !b.empty() && chunk_wire_size(b.size() + 1, b.bytes() + p.length, cfg_.shim) > cfg_.mtu) {
      form_chunk(i, now, /*timer=*/false);
    }
    if (b.empty()) expiry_[i] = now + cfg_.timers[i];
    b.push(p);
    ++counters_.enqueued;
    note_highwater();
  }

  bool dequeue(Time now, Batch& out) override {
    if (fifo()) {
      advance(now);
    } else {
      const size_t i = pick(now);
      if (i < bufs_.size()) form_chunk(i, now, /*timer=*/!over_mtu(i));
    }
    return out_.pop_chunk(now, out, cfg_.shim, stats_, counters_.served);
  }

  Time next_ready(Time now) const override {
    if (!out_.empty()) return now;
    Time t = kNever;
    for (size_t i = 0; i < bufs_.size(); ++i) {
      if (!fifo() && over_mtu(i)) return now;
      t = expiry_[i] < t ? expiry_[i] : t;
    }
    if (t == kNever) return kNever;
    return t > now ? t : now;
  }

  uint64_t length_packets() const override {
    uint64_t n = out_.packets();
    for (const auto& b : bufs_) n += b.size();
    return n;
  }
  uint64_t length_bytes() const override {
    uint64_t n = out_.bytes();
    for (const auto& b : bufs_) n += b.bytes();
    return n;
  }
  size_t buffers() const { return bufs_.size(); }
  size_t buffer_length(size_t i) const { return bufs_[i].size(); }

 private:
  bool fifo() const { return cfg_.contention == ChuMQContention::kFifo; }

  // The buffer whose chunk takes the free link, bufs_.size() if none is
  // ready. kTimerFirst: expired timers first, lowest index, then buffers
  // over the MTU, lowest index; kPriority: the lowest-index ready buffer.
  size_t pick(Time now) const {
    const bool timer_first = cfg_.contention == ChuMQContention::kTimerFirst;
    for (size_t i = 0; i < bufs_.size(); ++i) {
      if (expiry_[i] <= now || (!timer_first && over_mtu(i))) return i;
    }
    if (timer_first) {
      for (size_t i = 0; i < bufs_.size(); ++i) {
        if (over_mtu(i)) return i;
      }
    }
    return bufs_.size();
  }

  bool over_mtu(size_t i) const {
    const PacketRing& b = bufs_[i];
    return chunk_wire_size(b.size(), b.bytes(), cfg_.shim) > cfg_.mtu;
  }

  // kFifo: process every timer expiry <= now in time order (lower
  // index on ties).
  void advance(Time now) {
    for (;;) {
      size_t best = bufs_.size();
      for (size_t i = 0; i < bufs_.size(); ++i) {
        if (expiry_[i] <= now && (best == bufs_.size() || expiry_[i] < expiry_[best])) best = i;
      }
      if (best == bufs_.size()) return;
      form_chunk(best, expiry_[best], /*timer=*/true);
    }
  }

  void form_chunk(size_t i, Time at, bool timer) {
    PacketRing& b = bufs_[i];
    uint64_t n = 0, payload = 0;
    while (!b.empty() && chunk_wire_size(n + 1, payload + b.front().length, cfg_.shim) <= cfg_.mtu) {
      out_.add(b.front(), n == 0);
      ++n;
      payload += b.front().length;
      b.pop();
    }
    restart(i, at);
    if (timer) {
      ++stats_.timer_chunks;
      if (cfg_.cea) extend(i, at, n, payload);
    } else {
      ++stats_.mtu_chunks;
    }
  }

  // CEA: fill from the other buffers, shortest timer (lowest index) first.
  void extend(size_t src, Time at, uint64_t n, uint64_t payload) {
    for (size_t j = 0; j < bufs_.size(); ++j) {
      if (j == src) continue;
      PacketRing& b = bufs_[j];
      bool took = false;
      while (!b.empty()) {
        if (chunk_wire_size(n + 1, payload + b.front().length, cfg_.shim) > cfg_.mtu) {
          if (took) restart(j, at);
          return;
        }
        out_.add(b.front(), false);
        ++n;
        payload += b.front().length;
        ++stats_.cea_packets;
        b.pop();
        took = true;
      }
      if (took) restart(j, at);
    }
  }

  void restart(size_t i, Time at) {
    const PacketRing& b = bufs_[i];
    if (b.empty()) {
      expiry_[i] = kNever;
    } else {
      expiry_[i] = (cfg_.restart_from_head ? b.front().arrival : at) + cfg_.timers[i];
    }
  }

  ChuMQConfig cfg_;
  std::vector<PacketRing> bufs_;
  std::vector<Time> expiry_;
  ChunkOutput out_;
};

}  // namespace tracelab
