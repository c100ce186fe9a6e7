// EFD — Early Flow Discard, and its variants BEFD, PEFD, EFDACK and X+Y
// intra-queue disciplines. Spec: docs/reference/algorithms.md §2.1–§2.3; thesis [003 §4.3,
// Algorithm 3, §6.2.1]. Two-level queue and push-out: efd_two_level.hh.
//
// Flow table (efd_flow_table.hh): an entry {counter, nq} exists exactly while the flow has
// packets in the buffer (the in-service packet included when
// `in_service_link_bps` is set); it is created when a packet is admitted
// (not merely offered) and deleted when the flow's last packet leaves,
// served or pushed out. So |T| <= packets in the buffer and no garbage
// collection is needed. An arrival with no entry is HIGH; otherwise HIGH
// iff counter < th.
//
// Ambiguities (docs/reference/algorithms.md §12) and the choices taken:
// ⚠AMB-2  counter = volume of the flow admitted during the current entry
//         lifetime, excluding the arrival, compared with strict `< th`
//         (so with 1500-B packets and th = 30 000 B the first 20 packets of
//         every fragment are HIGH). Option `counter = EfdCounter::kServed`:
//         volume dequeued during the entry lifetime (Alg.3 line 19 literally).
// ⚠AMB-3  a pushed-out packet does not decrease its flow's counter.
// ⚠AMB-4  EFDACK: the key is the TCP connection (Packet::conn_hash); a pure
//         ACK adds the ACK-number progress since the previous ACK of the
//         same entry (the first ACK of a fresh entry adds 0), mod 2^32; UDP
//         and data packets add their length. The absolute alternative
//         (ack − ISN) is what Run2CACK does (run2c.hh).
// §2.3    `queue.high` / `queue.low` = kLas order that virtual queue by the
//         tag "flow counter at enqueue" (packets for PEFD, bytes otherwise),
//         ties in arrival order; push-out still takes L's last packet.
//
// Variant defaults (factories below): BEFD th = 30 000 B; PEFD counts 1 per
// packet, th = 20; EFDACK th = 30 000 B.
// Not implemented: nothing listed in §2.1–§2.3.
#pragma once

#include <stdexcept>

#include "efd_flow_table.hh"
#include "efd_two_level.hh"

namespace tracelab {

enum class EfdVariant : uint8_t { kBefd, kPefd, kEfdAck };
enum class EfdCounter : uint8_t { kAdmitted, kServed };

struct EfdConfig {
  TwoLevelConfig queue;
  EfdVariant variant = EfdVariant::kBefd;
  uint64_t threshold = 30000;  // bytes (BEFD, EFDACK) or packets (PEFD)
  EfdCounter counter = EfdCounter::kAdmitted;
  uint64_t table_seed = kFlowTableSeed;  // the key of the flow table's hash (efd_flow_table.hh)

  static EfdConfig befd() { return {}; }
  static EfdConfig pefd() {
    EfdConfig c;
    c.variant = EfdVariant::kPefd;
    c.threshold = 20;
    return c;
  }
  static EfdConfig efdack() {
    EfdConfig c;
    c.variant = EfdVariant::kEfdAck;
    return c;
  }
};

class EfdCore final : public TwoLevelQueue<EfdCore> {
 public:
  struct Entry {
    uint64_t counter = 0;
    uint32_t nq = 0;
    AckProgress ack;
  };

  explicit EfdCore(const EfdConfig& cfg = {})
      : TwoLevelQueue(cfg.queue),
        cfg_(cfg),
        // One entry per buffered packet at most, plus the arrival that is
        // accounted just before its push-out victim leaves. The table is
        // buffer-sized, so 16 buckets an entry stay small (32 KB of heads
        // for 300 packets) and quarter the collisions of the default 4:
        // every arrival of a new flow looks up and inserts, every last
        // departure erases (core_bench EFD: 4 -> 8 buckets 29.8 -> 27.5
        // ns/packet; 8 -> 16, 13 alternated pairs, 25.1 -> 24.5).
        table_(cfg.queue.buffer.slots() + 2, 16, cfg.table_seed) {}

  uint32_t flows() const { return table_.size(); }
  uint32_t flows_highwater() const { return table_.highwater(); }
  // The flow table's longest probe now (FlowTable/FlowRecordTable::longest_probe).
  uint32_t table_longest_probe() const { return table_.longest_probe(); }
  const FlowTable<Entry>& table() const { return table_; }

 private:
  friend class TwoLevelQueue<EfdCore>;
  Admission classify(const Packet& p, Time) {
    Admission a;
    // No entry is inserted or deleted between classify() and on_admit(), so
    // the lookup (the entry, or where to insert it) is kept for on_admit().
    found_ = table_.lookup(key(p), vacancy_);
    if (found_ != FlowTable<Entry>::kNone) {
      const Entry& e = table_.at(found_);
      a.prio = e.counter < cfg_.threshold ? Priority::kHigh : Priority::kLow;
      a.tag = e.counter;
    }
    return a;
  }
  void reset_mechanism_counters() { table_.reset_highwater(); }
  void on_admit(const Packet& p, Admission& a) {
    if (found_ == FlowTable<Entry>::kNone) found_ = insert(key(p));
    // The packet carries its entry's index: no lookup when it leaves.
    a.ref = found_;
    Entry& e = table_.at(a.ref);
    ++e.nq;
    if (cfg_.counter == EfdCounter::kAdmitted) {
      a.ack_before = e.ack;
      a.volume = volume(p, e);
      e.counter += a.volume;
    }
  }
  void prefetch_flow(uint32_t ref) { table_.prefetch(ref); }
  void on_unadmit(const Packet&, const Admission& a) {
    Entry& e = table_.at(a.ref);
    e.counter -= a.volume;
    e.ack = a.ack_before;
    release(a.ref);
  }
  void on_leave(const Packet& p, uint32_t ref, bool served) {
    if (served && cfg_.counter == EfdCounter::kServed) {
      Entry& e = table_.at(ref);
      e.counter += volume(p, e);
    }
    release(ref);
  }

  // The variant's flow key, chosen once (EFDACK: the connection, §2.2).
  uint64_t key(const Packet& p) const { return p.*key_; }
  uint64_t volume(const Packet& p, Entry& e) const {
    switch (cfg_.variant) {
      case EfdVariant::kPefd:
        return 1;
      case EfdVariant::kEfdAck:
        return ack_aware_volume(p, e.ack);
      default:
        return p.length;
    }
  }
  uint32_t insert(uint64_t k) {
    const uint32_t ref = table_.insert(vacancy_, k);
    if (ref == FlowTable<Entry>::kNone) table_overflow();
    return ref;
  }
  // Unreachable: the table has room for every buffered packet's flow.
  [[noreturn, gnu::noinline, gnu::cold]] static void table_overflow() {
    throw std::logic_error("EFD flow table larger than the buffer");
  }
  void release(uint32_t ref) {
    if (--table_.at(ref).nq == 0) table_.erase_at(ref);
  }

  EfdConfig cfg_;
  uint64_t Packet::* key_ = cfg_.variant == EfdVariant::kEfdAck ? &Packet::conn_hash : &Packet::flow_hash;
  FlowTable<Entry> table_;
  uint32_t found_ = FlowTable<Entry>::kNone;
  FlowTable<Entry>::Vacancy vacancy_;
};

}  // namespace tracelab
