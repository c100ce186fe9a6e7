// LAS and LASACK — Least Attained Service with LAS buffer management.
// Spec: docs/reference/algorithms.md §3.1 ([003 §2.1, §2.2, §4.6, §6.2.1]); sorted buffer
// and push-out: las_sorted_core.hh.
//
// Full state: A[F] = bytes of flow F admitted so far. An arrival is tagged
// with A[F] *before* adding its own size (⚠AMB-7; both choices keep each
// flow in FIFO order), then A[F] grows by its size if it is admitted (a
// packet dropped on arrival was never served, so it does not count; a
// pushed-out packet is not taken back, as ⚠AMB-3 for EFD).
// LASACK (`ack_aware`): key = TCP connection (Packet::conn_hash); data
// packets add their length and a pure ACK adds the ACK-number progress
// since the connection's first ACK, so an ACK stream is tagged with the
// volume the reverse data stream has sent ("ack − ISN", §3.1).
// State GC [003 §4.6.1]: every 5 s delete flows idle for 30 s. A flow
// arriving at a full table is tagged 0 (untracked) and counted. The flow
// records: flow_record_table.hh.
#pragma once

#include "flow_record_table.hh"
#include "las_sorted_core.hh"

namespace tracelab {

struct LasConfig {
  BufferConfig buffer;
  bool ack_aware = false;  // LASACK
  FlowStateConfig flows;
};

class LasCore final : public SortedCore<LasCore> {
 public:
  explicit LasCore(const LasConfig& cfg = {})
      : SortedCore(cfg.buffer, true), cfg_(cfg), table_(cfg.flows.max_flows, cfg.flows.table_seed), scan_(cfg.flows) {}

  uint32_t flows() const { return table_.size(); }
  uint32_t flows_highwater() const { return table_.highwater(); }
  // The flow table's longest probe now (FlowTable/FlowRecordTable::longest_probe).
  uint32_t table_longest_probe() const { return table_.longest_probe(); }
  uint64_t untracked() const { return untracked_; }

 private:
  friend class SortedCore<LasCore>;
  using Entry = FlowRecord<uint64_t>;  // volume = A[F], bytes

  uint64_t tag(const Packet& p, Time now) {
    scan_.run(table_, now, [](const Entry&, Time) { return false; });
    // No table change happens between tag() and on_admit(), so the entry
    // pointer stays valid.
    pending_ = table_.find_or_insert(flow_key(p, cfg_.ack_aware ? FlowKey::kConnection : FlowKey::kFlow), now);
    if (pending_ == nullptr) {
      ++untracked_;
      return 0;
    }
    pending_->last_seen = now;
    return pending_->volume;
  }
  void reset_mechanism_counters() {
    table_.reset_highwater();
    untracked_ = 0;
  }
  uint32_t on_admit(const Packet& p, uint64_t) {
    if (pending_ != nullptr) pending_->volume += cfg_.ack_aware ? ack_aware_volume(p, pending_->ack) : p.length;
    return 0;
  }
  void on_serve(const Packet&, uint64_t, uint32_t) {}

  LasConfig cfg_;
  FlowRecordTable<uint64_t> table_;  // see flow_record_table.hh for why not FlowTable
  IdleScan scan_;
  Entry* pending_ = nullptr;
  uint64_t untracked_ = 0;
};

}  // namespace tracelab
