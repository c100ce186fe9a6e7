// tracelab queueing cores: MTQ / QTL early discarding at an intermediate
// node, and the receiver-side EPLR (docs/reference/algorithms.md §7; [004 §1, §3, §5]).
//
// MtqQtlQueue is a drop-tail FIFO (capacity in packets; the seed uses 200)
// in front of a link of rate C. On arrival of p:
//   1. queue full                      -> drop (kBufferFull, "overflow")
//   2. d = 8 * backlog_bytes / C        (local queuing-delay estimate)
//   3. MTQ set and d > MTQ             -> drop (kEarlyDiscard, `mtq_drops`);
//      equality keeps the packet (spec default)
//   4. QTL set and d >= QTL            -> drop (kBudgetExpired, `qtl_drops`):
//      the updated QTL must stay positive; else QTL <- QTL - d
//   5. enqueue
// ⚠AMB-28: attribution order overflow, MTQ, QTL (spec default).
// ⚠AMB-27: backlog = bytes queued ahead of p, excluding the packet in
// service and p's own transmission (spec default); `count_in_service`
// adds the residual of the packet in service (known from the time and
// size of the last dequeue at rate C).
// MTQ is never changed; QTL decreases (Packet::budget, picoseconds; the
// adapter writes it back with mtq_qtl_header.hh).
// Violations: d is an estimate (without `count_in_service` it ignores the
// residual of the packet on the wire), so an admitted packet can still wait
// longer than its budget. dequeue() measures the real wait (now - arrival)
// and counts `mtq_violations` (wait > MTQ) and `qtl_violations` (wait >=
// the QTL it arrived with, the same "not positive" rule as the drop).
//
// EplrMeter counts, per flow group, the end-to-end packet loss ratio of
// [004 §1, §4]: (packets discarded in the network + packets received with a
// queuing delay above the group's budget D) / packets sent; worst() is the
// max-min objective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "chunk_buffer.hh"
#include "queue_core.hh"

namespace tracelab {

struct MtqQtlConfig {
  uint64_t link_bps = 20'000'000;  // [004 §4]: 20 Mb/s links
  size_t capacity_packets = 200;   // [004 §4]
  bool count_in_service = false;   // ⚠AMB-27 alternative
};

struct MtqQtlStats {
  uint64_t mtq_drops = 0;
  uint64_t qtl_drops = 0;
  uint64_t overflow_drops = 0;
  uint64_t mtq_violations = 0;  // served after waiting longer than MTQ
  uint64_t qtl_violations = 0;  // served after waiting at least the arriving QTL
};

class MtqQtlQueue final : public QueueCore {
 public:
  explicit MtqQtlQueue(const MtqQtlConfig& c = {}) : cfg_(c), ring_(c.capacity_packets) {}

  // Local queuing delay an arrival at `now` would be told.
  Time local_delay(Time now) const {
    Time d = serialization_time(ring_.bytes(), cfg_.link_bps);
    if (cfg_.count_in_service && in_service_end_ > now) d += in_service_end_ - now;
    return d;
  }

  void enqueue(const Packet& in, Time now) override {
    ++counters_.offered;
    if (ring_.size() >= cfg_.capacity_packets) {
      ++stats_.overflow_drops;
      drop(in, DropReason::kBufferFull, now);
      return;
    }
    const Time d = local_delay(now);
    if ((in.flags & kFlagHasMtq) && d > static_cast<Time>(in.mtq) * kMicrosecond) {
      ++stats_.mtq_drops;
      drop(in, DropReason::kEarlyDiscard, now);
      return;
    }
    Packet p = in;
    p.arrival = now;
    if (p.flags & kFlagHasQtl) {
      if (d >= p.budget) {
        ++stats_.qtl_drops;
        drop(in, DropReason::kBudgetExpired, now);
        return;
      }
      p.budget -= d;
    }
    // The tag keeps d, so dequeue() can recover the QTL the packet came with.
    ring_.push(p, d);
    ++counters_.enqueued;
    note_highwater();
  }

  bool dequeue(Time now, Batch& out) override {
    out.clear();
    if (ring_.empty() || out.capacity == 0) return false;
    const Packet& p = ring_.front();
    const Time waited = now - p.arrival;
    if ((p.flags & kFlagHasMtq) && waited > static_cast<Time>(p.mtq) * kMicrosecond) ++stats_.mtq_violations;
    if ((p.flags & kFlagHasQtl) && waited >= p.budget + ring_.front_tag()) ++stats_.qtl_violations;
    out.packets[0] = p;
    out.count = 1;
    out.wire_bytes = p.length;
    in_service_end_ = now + serialization_time(out.wire_bytes, cfg_.link_bps);
    ring_.pop();
    ++counters_.served;
    return true;
  }

  uint64_t length_packets() const override { return ring_.size(); }
  uint64_t length_bytes() const override { return ring_.bytes(); }
  const MtqQtlStats& stats() const { return stats_; }
  void reset_counters() override {
    QueueCore::reset_counters();
    stats_ = MtqQtlStats{};
  }

 private:
  MtqQtlConfig cfg_;
  PacketRing ring_;
  Time in_service_end_ = 0;
  MtqQtlStats stats_;
};

class EplrMeter {
 public:
  // One entry per flow group, each with its end-to-end queuing budget D.
  explicit EplrMeter(const std::vector<Time>& budgets)
      : n_(budgets.size()), groups_(new Group[budgets.size() ? budgets.size() : 1]) {
    for (size_t g = 0; g < n_; ++g) groups_[g].budget = budgets[g];
  }
  size_t groups() const { return n_; }

  // Out-of-range groups are counted in `unknown_group` and otherwise ignored.
  void on_sent(size_t g) {
    if (Group* x = find(g)) ++x->sent;
  }
  void on_network_drop(size_t g) {
    if (Group* x = find(g)) ++x->dropped;
  }
  // `queuing_delay` = e2e delay - the path's fixed delay ([004 §5.3]).
  void on_received(size_t g, Time queuing_delay) {
    Group* x = find(g);
    if (!x) return;
    ++x->received;
    if (queuing_delay > x->budget) ++x->late;
  }

  double eplr(size_t g) const {
    const Group& x = groups_[g];
    return x.sent ? double(x.dropped + x.late) / double(x.sent) : 0.0;
  }
  double worst() const {
    double w = 0;
    for (size_t g = 0; g < n_; ++g) w = eplr(g) > w ? eplr(g) : w;
    return w;
  }
  uint64_t late(size_t g) const { return groups_[g].late; }
  uint64_t sent(size_t g) const { return groups_[g].sent; }
  uint64_t received(size_t g) const { return groups_[g].received; }

  // A receiver that sees only sends and arrivals (no drop reports): every
  // packet sent and not received counts as discarded, so read it once the
  // network has drained.
  double eplr_at_receiver(size_t g) const {
    const Group& x = groups_[g];
    if (x.sent == 0) return 0.0;
    const uint64_t lost = x.sent > x.received ? x.sent - x.received : 0;
    return double(lost + x.late) / double(x.sent);
  }
  uint64_t unknown_group() const { return unknown_; }

 private:
  struct Group {
    Time budget = 0;
    uint64_t sent = 0, dropped = 0, received = 0, late = 0;
  };
  Group* find(size_t g) {
    if (g < n_) return &groups_[g];
    ++unknown_;
    return nullptr;
  }
  size_t n_;
  std::unique_ptr<Group[]> groups_;
  uint64_t unknown_ = 0;
};

}  // namespace tracelab
