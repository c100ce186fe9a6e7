// NCQ and NCQ+ (short packets first). Spec: docs/reference/algorithms.md §4 ([001 §3,
// Fig.1, Fig.3]); the two priority levels share one buffer
// (efd_two_level.hh: HIGH served first, each level FIFO).
//
// Running counts since the start: R = packets received, Ft / Fs = tiny /
// small packets favored (NCQ: F = favored), counted at classification as the
// pseudo-code does, whether or not the buffer then has room. Each arrival
// first does R += 1.
// NCQ (Fig.1):  size < size_thresh and F/R < ncqthresh         -> HIGH, F += 1
// NCQ+ (Fig.3 as corrected by §4):
//   size <= st1 (tiny):  (Ft+Fs)/R < t1                        -> HIGH, Ft += 1
//   size <= st2 (small): Fs/R < t2 and (Ft+Fs)/R < t1          -> HIGH, Fs += 1
//   a tiny or small packet refused: t2 = clamp(t1 − k·tiny_rate, 0, t1)
//   anything else NORMAL.  t2 starts at t1, k = 1 + α.
//
// Ambiguities and the choices taken:
// ⚠AMB-9   rates are cumulative since start (pseudo-code). A sliding
//          window of X_tiny(t) is NOT implemented.
// ⚠AMB-10  pure TCP ACKs are never favored (`favor_pure_acks = false`);
//          every other packet is eligible by size alone.
// ⚠AMB-11  (a) the size classes are if/elif; (b) tiny_rate = Ft/R, the
//          favored tiny share (option kIncoming: tiny arrivals / R, Eq.3's
//          X_tiny); (c) the `ncqthresh` typo is ncqthresh1; (d) NCQ tests
//          size < size_thresh, NCQ+ tests <=.
// ⚠AMB-12  the buffer is drop-tail (`queue.push_out = false`, the default
//          of NcqConfig); option: push_out = true lets a HIGH arrival at a
//          full buffer push out the last NORMAL packet.
// size_thresh1/2 are NOT IN SEEDS: 64 B and 150 B (any 40 <= st1 < 140 <=
// st2 < 1040 reproduces the seed's classification). Buffer 100 packets,
// ncqthresh1 = 0.05, α = 0.1 ([001 §4.2]).
#pragma once

#include <algorithm>

#include "efd_two_level.hh"

namespace tracelab {

enum class NcqVariant : uint8_t { kNcq, kNcqPlus };
enum class TinyRate : uint8_t { kFavored, kIncoming };

struct NcqConfig {
  TwoLevelConfig queue = default_queue();
  NcqVariant variant = NcqVariant::kNcqPlus;
  uint32_t size_thresh = 150;   // NCQ: favored if size < this ([001 §3.1] footnote)
  uint32_t size_thresh1 = 64;   // NCQ+: tiny if size <= this
  uint32_t size_thresh2 = 150;  // NCQ+: small if size <= this
  double ncqthresh1 = 0.05;     // NCQ's ncqthresh, NCQ+'s ncqthresh1
  double alpha = 0.1;           // k = 1 + alpha
  TinyRate tiny_rate = TinyRate::kFavored;
  bool favor_pure_acks = false;

  static TwoLevelConfig default_queue() {
    TwoLevelConfig q;
    q.buffer.capacity = 100;
    q.push_out = false;
    return q;
  }
};

class NcqCore final : public TwoLevelQueue<NcqCore> {
 public:
  explicit NcqCore(const NcqConfig& cfg = {}) : TwoLevelQueue(cfg.queue), cfg_(cfg), t2_(cfg.ncqthresh1) {}

  uint64_t received() const { return r_; }
  uint64_t favored_tiny() const { return ft_; }
  uint64_t favored_small() const { return fs_; }
  double ncqthresh2() const { return t2_; }

 private:
  friend class TwoLevelQueue<NcqCore>;

  Admission classify(const Packet& p, Time) {
    Admission a;
    a.prio = favored(p) ? Priority::kHigh : Priority::kLow;
    return a;
  }
  bool favored(const Packet& p) {
    ++r_;
    const bool eligible = cfg_.favor_pure_acks || !(p.flags & kFlagPureAck);
    const double r = static_cast<double>(r_);
    if (cfg_.variant == NcqVariant::kNcq) {
      if (eligible && p.length < cfg_.size_thresh && static_cast<double>(ft_) / r < cfg_.ncqthresh1) {
        ++ft_;
        return true;
      }
      return false;
    }
    if (!eligible || p.length > cfg_.size_thresh2) return false;
    const bool tiny = p.length <= cfg_.size_thresh1;
    if (tiny) ++tiny_arrivals_;
    const double total = static_cast<double>(ft_ + fs_) / r;
    if (tiny ? total < cfg_.ncqthresh1 : static_cast<double>(fs_) / r < t2_ && total < cfg_.ncqthresh1) {
      ++(tiny ? ft_ : fs_);
      return true;
    }
    // Refused: adapt ncqthresh2 to the tiny share (Eq.3), within [0, t1].
    const double tiny_rate = static_cast<double>(cfg_.tiny_rate == TinyRate::kFavored ? ft_ : tiny_arrivals_) / r;
    t2_ = std::clamp(cfg_.ncqthresh1 - (1.0 + cfg_.alpha) * tiny_rate, 0.0, cfg_.ncqthresh1);
    return false;
  }

  NcqConfig cfg_;
  uint64_t r_ = 0;
  uint64_t ft_ = 0;  // NCQ: all favored packets
  uint64_t fs_ = 0;
  uint64_t tiny_arrivals_ = 0;
  double t2_;
};

}  // namespace tracelab
