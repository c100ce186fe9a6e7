// LARS — Least Attained Recent Service: LAS whose per-flow volume fades
// with time. Spec: docs/reference/algorithms.md §3.2 ([003 §2.1, §4.2]); sorted buffer and
// push-out as LAS (las_sorted_core.hh).
//
//   V[F] = V[F] * beta^((t − t_last[F]) / tau); t_last[F] = t
//   tag = V[F]; if admitted: V[F] += size
//
// NOT IN SEEDS (⚠AMB-8): beta and tau. Defaults beta = 0.5, tau = 1 s
// (volume halves every idle second); log the values used. The WLAN runs use
// ACK-aware accounting as LASACK: option `ack_aware`.
// Tags are the decayed volume in 1/16 byte, rounded down, so the order is
// an integer comparison; two flows closer than 1/16 byte tie and go in
// arrival order. An idle scan (every `flows.gc_interval`) deletes entries
// whose decayed volume is below 1 byte, as §3.2 allows; flows idle longer
// than `flows.idle_timeout` (default: never) go too.
#pragma once

#include <array>
#include <cmath>
#include <stdexcept>

#include "flow_record_table.hh"
#include "las_sorted_core.hh"

namespace tracelab {

struct LarsConfig {
  BufferConfig buffer;
  double beta = 0.5;   // fading factor per tau
  Time tau = kSecond;  // time unit of the fading
  bool ack_aware = false;
  FlowStateConfig flows = {1u << 16, 5 * kSecond, kNever};
};

class LarsCore final : public SortedCore<LarsCore> {
 public:
  explicit LarsCore(const LarsConfig& cfg = {})
      : SortedCore(cfg.buffer, true), cfg_(cfg), table_(cfg.flows.max_flows, cfg.flows.table_seed), scan_(cfg.flows) {
    if (!(cfg.beta > 0.0 && cfg.beta <= 1.0) || cfg.tau <= 0)
      throw std::invalid_argument("LARS needs 0 < beta <= 1 and tau > 0");
  }

  uint32_t flows() const { return table_.size(); }
  uint32_t flows_highwater() const { return table_.highwater(); }
  // The flow table's longest probe now (FlowTable/FlowRecordTable::longest_probe).
  uint32_t table_longest_probe() const { return table_.longest_probe(); }
  uint64_t untracked() const { return untracked_; }
  static constexpr double kTagUnitsPerByte = 16.0;

 private:
  friend class SortedCore<LarsCore>;
  using Entry = FlowRecord<double>;  // volume = V[F], bytes

  double decayed(const Entry& e, Time now) const {
    // pow(beta, 0) is exactly 1 and 0 * pow(...) exactly 0 (pow is finite
    // here), so both shortcuts return the value the formula gives, without
    // the libm call (every new flow has volume 0 and last_seen = now).
    if (e.volume == 0.0 || now == e.last_seen) return e.volume;
    return e.volume * std::pow(cfg_.beta, static_cast<double>(now - e.last_seen) / static_cast<double>(cfg_.tau));
  }

  // decayed()'s factor for an arrival `gap` after its flow's last one,
  // memoised by gap in a direct-mapped cache: the same gap gives the same
  // pow() result, so the tags are unchanged. Arrivals on a regular clock
  // (engine_bench's CBR: gaps are multiples of 67.2 ns) repeat few gaps.
  double gap_factor(Time gap) {
    GapFactor& slot = gap_factors_[static_cast<uint64_t>(gap) * 0x9E3779B97F4A7C15ULL >> (64 - kGapFactorBits)];
    if (slot.gap != gap) {
      slot.gap = gap;
      slot.factor = std::pow(cfg_.beta, static_cast<double>(gap) / static_cast<double>(cfg_.tau));
    }
    return slot.factor;
  }

  uint64_t tag(const Packet& p, Time now) {
    scan_.run(table_, now, [this](const Entry& e, Time t) { return decayed(e, t) < 1.0; });
    pending_ = table_.find_or_insert(flow_key(p, cfg_.ack_aware ? FlowKey::kConnection : FlowKey::kFlow), now);
    if (pending_ == nullptr) {
      ++untracked_;
      return 0;
    }
    if (pending_->volume != 0.0) pending_->volume *= gap_factor(now - pending_->last_seen);
    pending_->last_seen = now;
    return static_cast<uint64_t>(pending_->volume * kTagUnitsPerByte);
  }
  void reset_mechanism_counters() {
    table_.reset_highwater();
    untracked_ = 0;
  }
  uint32_t on_admit(const Packet& p, uint64_t) {
    if (pending_ != nullptr)
      pending_->volume += static_cast<double>(cfg_.ack_aware ? ack_aware_volume(p, pending_->ack) : p.length);
    return 0;
  }
  void on_serve(const Packet&, uint64_t, uint32_t) {}

  LarsConfig cfg_;
  FlowRecordTable<double> table_;  // see flow_record_table.hh for why not FlowTable
  IdleScan scan_;
  Entry* pending_ = nullptr;
  uint64_t untracked_ = 0;
  struct GapFactor {
    Time gap = 0;  // pow(beta, 0) is exactly 1
    double factor = 1.0;
  };
  static constexpr int kGapFactorBits = 12;
  std::array<GapFactor, size_t{1} << kGapFactorBits> gap_factors_{};
};

}  // namespace tracelab
