// tracelab queueing cores: JumboGen-aware RED with partial drop, for core
// routers (docs/reference/algorithms.md §5.3; [002 §2.3, §4]).
//
// RED in packet mode (Floyd & Jacobson 1993): avg <- (1-w_q) avg + w_q q on
// each arrival; p_b = max_p (avg-min_th)/(max_th-min_th); p_a = p_b/(1 -
// count p_b); avg >= max_th -> p_a = 1. min_th == max_th is allowed: every
// arrival with avg >= max_th is selected.
// * A plain packet (enqueue) is dropped with probability p_a (Red_w).
// * A JumboGram (enqueue_jumbogram, the bytes of chunk_format.hh) with N
//   encapsulated packets is selected with probability
//     dropPercent = (1 - jg_fraction) Red_w / N + jg_fraction Red_w
//   where jg_fraction = fraction of arriving packets that are JumboGrams,
//   an EWMA over arrivals with weight `jg_fraction_weight` (the seed says
//   "current fraction"; the averaging is NOT IN SEEDS). ⚠AMB-16: the two
//   alphas of the seed are `jg_fraction` and `w_q` here.
// * kFullDrop: a selected JumboGram is dropped whole.
//   kPartialDrop: Drop_num trailing packets are removed in place, with
//   ⚠AMB-17's intended form
//     Drop_num = ceil(N (minPktDrop + (maxPktDrop - minPktDrop) frac)),
//     frac = clamp((avg - min_th)/(max_th - min_th), 0, 1), clamped to [0, N];
//   not cumulative along the path (jg::partial_drop). A JumboGram with all
//   entries removed is dropped whole. minPktDrop/maxPktDrop NOT IN SEEDS.
//   kStandard: a JumboGram is treated as one packet (p_a, whole drop).
// * Queue length q counts encapsulated packets still carried in kPartialDrop
//   (the PD variant of [002 §4]), in kFullDrop when `full_drop_counts_packets`
//   is set, and items otherwise; `capacity` is in the same unit, tail drop of
//   the whole arrival. (The spec counts FD in items; the seed's FD delay,
//   within 2 ms of Standard's, fits a queue counted in packets: the flag
//   lets both readings run.)
//
// Drops of whole items go to the DropSink; packets removed by a partial
// drop are counted in `partial_dropped` (the item itself is still served).
// Not implemented: RED's idle-period correction of avg, byte-mode RED,
// ECN marking instead of dropping.
#pragma once

#include <cmath>
#include <cstdint>

#include "chunk_buffer.hh"
#include "chunk_format.hh"
#include "queue_core.hh"
#include "rng.hh"

namespace tracelab {

enum class JumboRedMode : uint8_t { kStandard, kFullDrop, kPartialDrop };

struct JumboRedConfig {
  JumboRedMode mode = JumboRedMode::kPartialDrop;
  double min_th = 5, max_th = 15;  // queue units
  double max_p = 0.1;
  double w_q = 0.025;         // JumboGen runs of [002 §4]; 0.005 standard
  double min_pkt_drop = 0.1;  // fractions of N, NOT IN SEEDS
  double max_pkt_drop = 0.5;
  double jg_fraction_weight = 0.01;       // NOT IN SEEDS
  bool full_drop_counts_packets = false;  // kFullDrop: q in encapsulated packets, as kPartialDrop
  size_t capacity = 200;                  // queue units
  size_t ring_slots = 4096;               // items the ring can hold (>= capacity in item mode)
  uint64_t seed = 1;
};

struct JumboRedStats {
  uint64_t jumbograms = 0;       // JumboGram arrivals
  uint64_t selected = 0;         // JumboGrams selected by RED
  uint64_t partial_dropped = 0;  // packets removed from carried JumboGrams
  uint64_t malformed = 0;        // JumboGrams that failed to parse (dropped)
  double avg = 0;                // current RED average
  double jg_fraction = 0;
};

// What happened to one arriving JumboGram.
struct JumboRedResult {
  bool queued = false;
  uint16_t removed = 0;   // packets this router removed (partial drop)
  size_t new_length = 0;  // bytes after the partial drop
};

class JumboGenRed final : public QueueCore {
 public:
  explicit JumboGenRed(const JumboRedConfig& c = {}) : cfg_(c), ring_(c.ring_slots), rng_(c.seed) {}

  void enqueue(const Packet& p, Time now) override {
    ++counters_.offered;
    update_average(false);
    const double pa = red_probability();
    if (pa > 0 && rng_.uniform() < pa) {
      count_ = 0;
      drop(p, DropReason::kEarlyDiscard, now);
      return;
    }
    admit(p, 1, now);
  }

  // `bytes[0..len)` is the JumboGram as carried (chunk_format.hh); a
  // partial drop rewrites it in place and shortens it.
  JumboRedResult enqueue_jumbogram(const Packet& in, uint8_t* bytes, size_t len, Time now) {
    ++counters_.offered;
    ++stats_.jumbograms;
    JumboRedResult r;
    r.new_length = len;
    jg::View v;
    if (jg::parse(bytes, len, v) != jg::FormatError::kOk) {
      ++stats_.malformed;
      drop(in, DropReason::kEarlyDiscard, now);
      return r;
    }
    update_average(true);
    const double pa = red_probability();
    const uint16_t n = v.n ? v.n : 1;
    const double sel =
        cfg_.mode == JumboRedMode::kStandard ? pa : (1 - stats_.jg_fraction) * pa / n + stats_.jg_fraction * pa;
    Packet p = in;
    uint16_t carried = static_cast<uint16_t>(v.n - v.dropped());
    if (sel > 0 && rng_.uniform() < sel) {
      ++stats_.selected;
      count_ = 0;
      if (cfg_.mode != JumboRedMode::kPartialDrop) {
        drop(p, DropReason::kEarlyDiscard, now);
        return r;
      }
      const double frac = fraction();
      double want = std::ceil(n * (cfg_.min_pkt_drop + (cfg_.max_pkt_drop - cfg_.min_pkt_drop) * frac) - 1e-9);
      if (want < 0) want = 0;
      if (want > n) want = n;
      jg::partial_drop(bytes, len, static_cast<uint16_t>(want), r.new_length, r.removed);
      stats_.partial_dropped += r.removed;
      carried = static_cast<uint16_t>(carried - r.removed);
      p.length = static_cast<uint32_t>(r.new_length);
      if (carried == 0) {
        drop(p, DropReason::kEarlyDiscard, now);
        return r;
      }
    }
    r.queued = admit(p, carried, now);
    return r;
  }

  bool dequeue(Time, Batch& out) override {
    out.clear();
    if (ring_.empty() || out.capacity == 0) return false;
    out.packets[0] = ring_.front();
    out.count = 1;
    out.wire_bytes = ring_.front().length;
    units_ -= static_cast<uint64_t>(ring_.front_tag());
    ring_.pop();
    ++counters_.served;
    return true;
  }

  uint64_t length_packets() const override { return ring_.size(); }
  uint64_t length_bytes() const override { return ring_.bytes(); }
  // Queue length in RED's unit (encapsulated packets in kPartialDrop and a packet-counting kFullDrop).
  uint64_t length_units() const { return units_; }
  const JumboRedStats& stats() const { return stats_; }
  // avg and jg_fraction are RED's running averages (state), not counters.
  void reset_counters() override {
    QueueCore::reset_counters();
    stats_.jumbograms = stats_.selected = stats_.partial_dropped = stats_.malformed = 0;
  }

 private:
  void update_average(bool jumbogram) {
    stats_.avg = (1 - cfg_.w_q) * stats_.avg + cfg_.w_q * static_cast<double>(units_);
    stats_.jg_fraction =
        (1 - cfg_.jg_fraction_weight) * stats_.jg_fraction + cfg_.jg_fraction_weight * (jumbogram ? 1.0 : 0.0);
  }
  double fraction() const {
    if (stats_.avg >= cfg_.max_th) return 1.0;
    if (stats_.avg <= cfg_.min_th) return 0.0;
    return (stats_.avg - cfg_.min_th) / (cfg_.max_th - cfg_.min_th);
  }
  double red_probability() {
    if (stats_.avg >= cfg_.max_th) return 1.0;
    if (stats_.avg < cfg_.min_th) {
      count_ = -1;
      return 0.0;
    }
    ++count_;
    const double pb = cfg_.max_p * fraction();
    const double den = 1.0 - static_cast<double>(count_) * pb;
    return den <= 0 ? 1.0 : pb / den;
  }
  bool admit(const Packet& p, uint64_t units, Time now) {
    const bool in_packets = cfg_.mode == JumboRedMode::kPartialDrop ||
                            (cfg_.mode == JumboRedMode::kFullDrop && cfg_.full_drop_counts_packets);
    const uint64_t unit_cost = in_packets ? units : 1;
    if (units_ + unit_cost > cfg_.capacity || ring_.full()) {
      drop(p, DropReason::kBufferFull, now);
      return false;
    }
    ring_.push(p, static_cast<int64_t>(unit_cost));
    units_ += unit_cost;
    ++counters_.enqueued;
    note_highwater();
    return true;
  }

  JumboRedConfig cfg_;
  PacketRing ring_;
  Rng rng_;
  uint64_t units_ = 0;
  int64_t count_ = -1;
  JumboRedStats stats_;
};

}  // namespace tracelab
