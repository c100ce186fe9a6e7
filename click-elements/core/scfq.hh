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
  uint64_t virtual_time() const { return v_; }

 private:
  friend class SortedCore<ScfqCore>;
  struct Entry {
    uint64_t finish = 0;
    uint32_t nq = 0;
  };

  uint64_t tag(const Packet& p, Time) {
    const Entry* e = table_.find(p.flow_hash);
    return (e != nullptr ? std::max(e->finish, v_) : v_) + p.length;
  }
  void reset_mechanism_counters() { table_.reset_highwater(); }
  void on_admit(const Packet& p, uint64_t tag) {
    Entry* e = table_.find_or_insert(p.flow_hash);
    if (e == nullptr) throw std::logic_error("SCFQ flow table larger than the buffer");
    e->finish = tag;
    ++e->nq;
  }
  void on_serve(const Packet& p, uint64_t tag) {
    v_ = tag;
    Entry* e = table_.find(p.flow_hash);
    if (--e->nq == 0) table_.erase(e);  // by pointer: no second hash
  }

  FlowTable<Entry> table_;
  uint64_t v_ = 0;
};

}  // namespace tracelab
