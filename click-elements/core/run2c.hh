// Run2C and Run2CACK. Spec: docs/reference/algorithms.md §2.4 ([003 §2.1, §4.5.3, §6.4]);
// two-level queue and push-out rules: efd_two_level.hh.
//
// Classification with infinite memory: a per-flow counter from the start of
// the flow; an arrival is HIGH while counter < th (th = 30 000 B as EFD's),
// then the counter grows by the arrival's volume. Unlike EFD, a transfer
// crosses the threshold once in its life, not once per fragment.
//
// Choices (the seed is silent):
// * The counter counts every arrival of the flow, admitted or dropped: the
//   original proposal reads it from TCP sequence numbers, i.e. from what the
//   sender has sent, whatever this queue did with it.
// * Run2CACK (`ack_aware`): key = TCP connection (Packet::conn_hash);
//   counter = data bytes plus ACK-number progress since the first ACK seen
//   for the connection (the "ack − ISN" of §2.4, with the first ACK as the
//   reference: for a connection seen from its handshake that is ISN + 1).
// * Full state needs a bound: the table holds `flows.max_flows` flows and is
//   scanned every `gc_interval` for flows idle >= `idle_timeout` (the GC the
//   thesis uses for LAS and X-Protect, [003 §4.6.1]). An arrival finding the
//   table full is served HIGH, untracked, and counted in untracked().
// Not implemented: the sequence-number encoding of the original proposal.
#pragma once

#include "efd_two_level.hh"
#include "flow_record_table.hh"

namespace tracelab {

struct Run2cConfig {
  TwoLevelConfig queue;
  uint64_t threshold = 30000;  // bytes
  bool ack_aware = false;      // Run2CACK
  FlowStateConfig flows;
};

class Run2cCore final : public TwoLevelQueue<Run2cCore> {
 public:
  explicit Run2cCore(const Run2cConfig& cfg = {}) : TwoLevelQueue(cfg.queue), cfg_(cfg), flows_(cfg.flows) {}

  uint32_t flows() const { return flows_.table.size(); }
  uint32_t flows_highwater() const { return flows_.table.highwater(); }
  // The flow table's longest probe now (FlowTable/FlowRecordTable::longest_probe).
  uint32_t table_longest_probe() const { return flows_.table.longest_probe(); }
  uint64_t untracked() const { return flows_.untracked; }

 private:
  friend class TwoLevelQueue<Run2cCore>;
  Admission classify(const Packet& p, Time now) {
    flows_.expire_idle(now);
    Admission a;
    // volume = the flow's counter, bytes
    FlowRecord<uint64_t>* e =
        flows_.table.find_or_insert(flow_key(p, cfg_.ack_aware ? FlowKey::kConnection : FlowKey::kFlow), now);
    if (e == nullptr) {
      ++flows_.untracked;
      return a;
    }
    a.prio = e->volume < cfg_.threshold ? Priority::kHigh : Priority::kLow;
    e->volume += cfg_.ack_aware ? ack_aware_volume(p, e->ack) : p.length;
    e->last_seen = now;
    return a;
  }
  void reset_mechanism_counters() { flows_.reset_counters(); }

  Run2cConfig cfg_;
  // Full state looked up once per arrival, mostly at keys that are new or
  // untracked: the record table, as LAS's (flow_record_table.hh). Over the
  // chained FlowTable: core_bench Run2C 64 B 36.7-43.3 -> 24.1-24.9
  // ns/packet (3 runs each, alternating).
  ScannedFlows<uint64_t> flows_;
};

}  // namespace tracelab
