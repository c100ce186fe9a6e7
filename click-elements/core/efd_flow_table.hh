// tracelab queueing cores: the fixed-size per-flow table and the flow-key /
// ACK-progress rules shared by EFD, Run2C, SIFT, X-Protect, LAS, LARS, SCFQ.
//
// Spec: ALGORITHMS.md §0 (flow = 5-tuple), §2.2 (EFDACK key and volume,
// ⚠AMB-4), §2.4 (Run2CACK), §3.1 (LASACK).
//
// FlowTable: open addressing with linear probing and backward-shift
// deletion (no tombstones, so a table whose entries come and go per packet,
// as EFD's do, never degrades). At most `max_entries` live entries; the
// slot array is the next power of two >= 2 * max_entries, allocated once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "queue_core.hh"

namespace tracelab {

// SplitMix64's finalizer: spreads adapter-supplied flow hashes of unknown
// quality over the table index.
constexpr uint64_t mix_flow_hash(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <typename V>
class FlowTable {
 public:
  explicit FlowTable(uint32_t max_entries) : max_(max_entries) {
    if (max_entries == 0) throw std::invalid_argument("flow table needs at least one entry");
    uint64_t n = 2;
    while (n < 2ULL * max_entries) n <<= 1;
    slots_.resize(n);
    mask_ = n - 1;
  }

  V* find(uint64_t key) {
    for (uint64_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  // The entry for `key`, value-initialised if new; nullptr when the table
  // already holds max_entries flows (the caller counts that).
  V* find_or_insert(uint64_t key) {
    uint64_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) break;
      if (s.key == key) return &s.value;
    }
    if (size_ == max_) return nullptr;
    slots_[i] = Slot{key, V{}, true};
    if (++size_ > highwater_) highwater_ = size_;
    return &slots_[i].value;
  }

  void erase(uint64_t key) {
    for (uint64_t i = home(key);; i = (i + 1) & mask_) {
      if (!slots_[i].used) return;
      if (slots_[i].key == key) {
        erase_slot(i);
        return;
      }
    }
  }

  // Delete the entry whose value `v` points to (from find / find_or_insert,
  // with no insertion or deletion since): saves the second probe.
  void erase(V* v) {
    erase_slot(static_cast<uint64_t>(reinterpret_cast<Slot*>(reinterpret_cast<char*>(v) - offsetof(Slot, value)) -
                                     slots_.data()));
  }

  // Delete every entry for which pred(key, value) holds (periodic GC).
  template <typename Pred>
  void erase_if(Pred pred) {
    for (uint64_t i = 0; i <= mask_;) {
      Slot& s = slots_[i];
      // After a deletion slot i holds a shifted entry: look at it again.
      if (s.used && pred(s.key, s.value)) erase_slot(i);
      else ++i;
    }
  }

  template <typename F>
  void for_each(F f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }

  uint32_t size() const { return size_; }
  uint32_t highwater() const { return highwater_; }
  uint32_t max_entries() const { return max_; }

 private:
  struct Slot {
    uint64_t key = 0;
    V value{};
    bool used = false;
  };
  uint64_t home(uint64_t key) const { return mix_flow_hash(key) & mask_; }

  void erase_slot(uint64_t hole) {
    // Backward shift: move each later member of the probe run into the hole
    // when its home position does not lie cyclically in (hole, j].
    for (uint64_t j = (hole + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      uint64_t h = home(slots_[j].key);
      bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].used = false;
    --size_;
  }

  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  uint32_t max_;
  uint32_t size_ = 0;
  uint32_t highwater_ = 0;
};

// Full-state tables (Run2C, SIFT, X-Protect, LAS, LARS): capacity and the
// periodic idle-entry scan of [003 §4.6.1] ("every 5 s, delete flows
// inactive for 30 s"). An arrival finding the table full is served as an
// untracked flow and counted (each core says how it classifies it).
struct FlowStateConfig {
  uint32_t max_flows = 1u << 16;
  Time gc_interval = 5 * kSecond;   // 0 = never scan
  Time idle_timeout = 30 * kSecond;
};

// Runs the idle scan when it is due. Values must carry `Time last_seen`.
class IdleScan {
 public:
  explicit IdleScan(const FlowStateConfig& c) : cfg_(c), next_(c.gc_interval) {}
  template <typename V, typename Extra>
  void run(FlowTable<V>& table, Time now, Extra also_deletable) {
    if (cfg_.gc_interval == 0 || now < next_) return;
    next_ = now + cfg_.gc_interval;
    const Time timeout = cfg_.idle_timeout;
    table.erase_if([&](uint64_t, const V& v) { return now - v.last_seen >= timeout || also_deletable(v, now); });
  }

 private:
  FlowStateConfig cfg_;
  Time next_;
};

// Which packets form one flow.
enum class FlowKey : uint8_t {
  kFlow,        // directional 5-tuple: Packet::flow_hash (§0)
  kConnection,  // TCP connection, both directions: Packet::conn_hash (§2.2)
};

inline uint64_t flow_key(const Packet& p, FlowKey k) {
  return k == FlowKey::kFlow ? p.flow_hash : p.conn_hash;
}

// Progress of the acknowledgment number of one connection (⚠AMB-4): the
// first ACK only sets the reference and adds 0; each later ACK adds how far
// it moves the highest ACK seen, in 32-bit serial arithmetic (RFC 1982), so
// sequence wrap is harmless and duplicate or reordered ACKs add nothing.
struct AckProgress {
  uint32_t highest = 0;
  bool seen = false;
  uint64_t advance(uint32_t ack) {
    if (!seen) {
      seen = true;
      highest = ack;
      return 0;
    }
    int32_t delta = static_cast<int32_t>(ack - highest);
    if (delta <= 0) return 0;
    highest = ack;
    return static_cast<uint64_t>(delta);
  }
};

// Volume of a packet for the ACK-aware variants (EFDACK, Run2CACK, LASACK):
// a pure TCP ACK counts the data it newly acknowledges, every other packet
// (data, UDP, SYN/FIN) its own length.
inline uint64_t ack_aware_volume(const Packet& p, AckProgress& ack) {
  return (p.flags & kFlagPureAck) ? ack.advance(p.tcp_ack) : p.length;
}

}  // namespace tracelab
