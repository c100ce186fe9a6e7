// tracelab queueing cores: the fixed-size per-flow table and the flow-key /
// ACK-progress rules shared by EFD, Run2C, SIFT, X-Protect, LAS, LARS, SCFQ.
//
// Spec: ALGORITHMS.md §0 (flow = 5-tuple), §2.2 (EFDACK key and volume,
// ⚠AMB-4), §2.4 (Run2CACK), §3.1 (LASACK).
//
// FlowTable: open addressing with linear probing and backward-shift
// deletion (no tombstones, so a table whose entries come and go per packet,
// as EFD's do, never degrades). At most `max_entries` live entries; the
// slot array is the next power of two >= 2 * max_entries (load <= 1/2),
// allocated once. Keys and values live apart in a pool and never move: a core
// may keep an entry's index (lookup / insert / at / erase_at) instead of
// looking its flow up again. Each slot keeps its home index, so a deletion's backward shift
// never rehashes; a lookup that misses reports its vacancy, so an
// insertion right after it does not probe again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "queue_core.hh"

namespace tracelab {

template <typename V>
class FlowTable {
 public:
  explicit FlowTable(uint32_t max_entries) : max_(max_entries), pool_(max_entries), free_(max_entries) {
    if (max_entries == 0) throw std::invalid_argument("flow table needs at least one entry");
    uint64_t n = 2;
    int bits = 1;
    while (n < 2ULL * max_entries) {
      n <<= 1;
      ++bits;
    }
    slots_.resize(n);
    mask_ = static_cast<uint32_t>(n - 1);
    shift_ = 64 - bits;
    for (uint32_t i = 0; i < max_entries; ++i) free_[i] = max_entries - 1 - i;
  }

  // Where a key that find() missed would go: its home and the empty slot
  // that ended the probe.
  struct Vacancy {
    uint32_t home = 0;
    uint32_t slot = 0;
  };

  static constexpr uint32_t kNone = 0xFFFFFFFF;

  // Index interface. An entry's index is stable while it lives: a core may
  // keep it (e.g. beside a queued packet) instead of looking its flow up
  // again.
  //
  // The index of `key`'s entry, or kNone; then `vacancy` says where
  // insert() can put `key` without probing again.
  uint32_t lookup(uint64_t key, Vacancy& vacancy) const {
    vacancy.home = home(key);
    for (uint32_t i = vacancy.home;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.entry == kEmpty) {
        vacancy.slot = i;
        return kNone;
      }
      // Different homes mean different keys: only a same-home slot costs
      // a look at the entry's key.
      if (s.home == vacancy.home && pool_[s.entry].key == key) return s.entry;
    }
  }
  // Insert `key` (value-initialised) at the vacancy a lookup() miss
  // reported, with no insertion or deletion since. kNone when the table
  // already holds max_entries flows (the caller counts that).
  uint32_t insert(const Vacancy& vacancy, uint64_t key) {
    if (size_ == max_) return kNone;
    const uint32_t e = free_[max_ - 1 - size_];
    pool_[e] = Entry{V{}, key, vacancy.slot};
    slots_[vacancy.slot] = Slot{vacancy.home, e};
    if (++size_ > highwater_) highwater_ = size_;
    return e;
  }
  V& at(uint32_t index) { return pool_[index].value; }
  void erase_at(uint32_t index) { erase_slot(pool_[index].slot); }

  // Pointer interface over the same table.
  V* find(uint64_t key) {
    Vacancy v;
    return find(key, v);
  }
  V* find(uint64_t key, Vacancy& vacancy) {
    const uint32_t e = lookup(key, vacancy);
    return e == kNone ? nullptr : &pool_[e].value;
  }
  V* insert_at(const Vacancy& vacancy, uint64_t key) {
    const uint32_t e = insert(vacancy, key);
    return e == kNone ? nullptr : &pool_[e].value;
  }

  // The entry for `key`, value-initialised if new; nullptr when full.
  V* find_or_insert(uint64_t key) {
    Vacancy v;
    if (V* e = find(key, v)) return e;
    return insert_at(v, key);
  }

  void erase(uint64_t key) {
    for (uint32_t i = home(key); slots_[i].entry != kEmpty; i = (i + 1) & mask_) {
      if (pool_[slots_[i].entry].key == key) {
        erase_slot(i);
        return;
      }
    }
  }

  // Delete the entry `v` points to. Entries never move while they live, so
  // any pointer from find / find_or_insert / at() will do, without a probe.
  void erase(V* v) {
    erase_at(static_cast<uint32_t>(
        reinterpret_cast<const Entry*>(reinterpret_cast<const char*>(v) - offsetof(Entry, value)) - pool_.data()));
  }

  // Delete every entry for which pred(key, value) holds (periodic GC).
  template <typename Pred>
  void erase_if(Pred pred) {
    for (uint32_t i = 0; i <= mask_;) {
      const Slot& s = slots_[i];
      // After a deletion slot i holds a shifted entry: look at it again.
      if (s.entry != kEmpty && pred(pool_[s.entry].key, pool_[s.entry].value)) erase_slot(i);
      else ++i;
    }
  }

  template <typename F>
  void for_each(F f) const {
    for (const Slot& s : slots_)
      if (s.entry != kEmpty) f(pool_[s.entry].key, pool_[s.entry].value);
  }

  uint32_t size() const { return size_; }
  uint32_t highwater() const { return highwater_; }
  uint32_t max_entries() const { return max_; }

 private:
  static constexpr uint32_t kEmpty = 0xFFFFFFFF;
  // The index: 8 bytes a slot (a probe run stays in one cache line); keys
  // and values live in `pool_` and never move.
  struct Slot {
    uint32_t home = 0;       // kept so deletion never rehashes, and as a filter
    uint32_t entry = kEmpty; // index into pool_
  };
  struct Entry {
    V value{};
    uint64_t key = 0;
    uint32_t slot = 0;       // where the index points at this entry
  };
  // Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): one multiply by 2^64/phi,
  // keeping the top bits, spreads adapter-supplied flow hashes of unknown
  // quality over the index (a multiply mixes upward, so the top bits are
  // the well-mixed ones). No modulo: the table size is a power of two.
  uint32_t home(uint64_t key) const { return static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_); }

  void erase_slot(uint32_t hole) {
    free_[max_ - size_] = slots_[hole].entry;
    --size_;
    // Backward shift: move each later member of the probe run into the hole
    // when its home position does not lie cyclically in (hole, j].
    for (uint32_t j = (hole + 1) & mask_; slots_[j].entry != kEmpty; j = (j + 1) & mask_) {
      const uint32_t h = slots_[j].home;
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        pool_[slots_[hole].entry].slot = hole;
        hole = j;
      }
    }
    slots_[hole].entry = kEmpty;
  }

  uint32_t max_;
  std::vector<Slot> slots_;
  std::vector<Entry> pool_;
  std::vector<uint32_t> free_;  // free pool indices: free_[0 .. max_ - size_)
  uint32_t mask_ = 0;
  int shift_ = 63;
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
