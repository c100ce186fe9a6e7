// SCFQ — Self-Clocked Fair Queueing (Golestani 1994) with drop-tail.
// Spec: docs/reference/algorithms.md §3.3 (the seeds only name it; the standard definition
// is used); sorted buffer: las_sorted_core.hh.
//
//   arrival of packet k of flow i:  F_i^k = max(F_i^{k−1}, v) + size / w_i
//   serve the smallest finish tag; v = finish tag of the packet in service
//
// Equal weights (w_i = 1, tags in bytes), key = directional 5-tuple, as
// §3.3 states; per-flow weights are not implemented. Drop-tail on overflow.
// Flow state lives only while a flow has packets queued: when its last
// packet starts service, v equals that packet's tag, which is F_i^{k−1}, so
// max(F_i^{k−1}, v) = v for any later arrival and the entry carries no
// information. The table is therefore bounded by the buffer, as EFD's.
// v is never reset at the end of a busy period (tags only grow; 64-bit
// bytes do not wrap in any run).
#pragma once

#include <algorithm>
#include <stdexcept>

#include "efd_flow_table.hh"
#include "las_sorted_core.hh"

namespace tracelab {

struct ScfqConfig {
  BufferConfig buffer;
  uint64_t table_seed = kFlowTableSeed;  // the key of the flow table's hash (efd_flow_table.hh)
};

class ScfqCore final : public SortedCore<ScfqCore> {
 public:
  explicit ScfqCore(const ScfqConfig& cfg = {})
      : SortedCore(cfg.buffer, false), table_(cfg.buffer.slots() + 2, 4, cfg.table_seed) {}

  uint32_t flows() const { return table_.size(); }
  uint32_t flows_highwater() const { return table_.highwater(); }
  // The flow table's longest probe now (FlowTable/FlowRecordTable::longest_probe).
  uint32_t table_longest_probe() const { return table_.longest_probe(); }
  uint64_t virtual_time() const { return v_; }

 private:
  friend class SortedCore<ScfqCore>;
  struct Entry {
    uint64_t finish = 0;
    uint32_t nq = 0;
  };

  // The table does not change between tag() and on_admit() (SCFQ pushes
  // nothing out), so the lookup is kept, and each packet carries its flow
  // entry's index to on_serve(): one hash per packet instead of four
  // (core_bench SCFQ 64 B, 3 runs each alternating: 35.0 / 39.2 / 34.8 ->
  // 28.4 / 27.6 / 28.0 ns/packet).
  uint64_t tag(const Packet& p, Time) {
    found_ = table_.lookup(p.flow_hash, vacancy_);
    return (found_ != FlowTable<Entry>::kNone ? std::max(table_.at(found_).finish, v_) : v_) + p.length;
  }
  void reset_mechanism_counters() { table_.reset_highwater(); }
  uint32_t on_admit(const Packet& p, uint64_t tag) {
    if (found_ == FlowTable<Entry>::kNone) found_ = table_.insert(vacancy_, p.flow_hash);
    if (found_ == FlowTable<Entry>::kNone) throw std::logic_error("SCFQ flow table larger than the buffer");
    Entry& e = table_.at(found_);
    e.finish = tag;
    ++e.nq;
    return found_;
  }
  void on_serve(const Packet&, uint64_t tag, uint32_t ref) {
    v_ = tag;
    if (--table_.at(ref).nq == 0) table_.erase_at(ref);
  }

  FlowTable<Entry> table_;
  uint32_t found_ = FlowTable<Entry>::kNone;  // tag()'s lookup, for on_admit()
  FlowTable<Entry>::Vacancy vacancy_;
  uint64_t v_ = 0;
};

}  // namespace tracelab
