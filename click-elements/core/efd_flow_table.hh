// tracelab queueing cores: the fixed-size per-flow table of EFD and SCFQ
// (whose flow state lives while the flow has packets queued), and what every
// core with flow state shares: the keyed hash, the full-state configuration
// and idle scan, the flow-key and ACK-progress rules. The full-state tables
// of Run2C, SIFT, X-Protect, LAS and LARS: flow_record_table.hh.
//
// Spec: docs/reference/algorithms.md §0 (flow = 5-tuple), §2.2 (EFDACK key and volume,
// ⚠AMB-4), §2.4 (Run2CACK), §3.1 (LASACK).
//
// FlowTable: separate chaining through the entry pool. The bucket array
// holds 4-byte chain heads, the next power of two >= spread * max_entries
// (load <= 1/spread, default 1/4), allocated once; each pooled entry carries its key and the next
// entry of its chain. At the load EFD runs at (every queued packet its own
// flow, the table churning per packet), a miss reads one empty head and
// an insertion or deletion touches one head and one entry: no probe runs
// to walk or shift, hence few mispredicted branches. Keys and values live
// in the pool and never move: a core may keep an entry's index (lookup /
// insert / at / erase_at) instead of looking its flow up again; a lookup
// that misses reports its bucket, so an insertion right after it does not
// hash again. Free entries form a stack, so the entry just freed (still
// in cache) is the next one used. Chaining instead of linear probing with
// backward shift: core_bench EFD 277 -> 253 instructions/packet (65c468d;
// CHANGELOG.md, 0.1.0).
//
// The bucket is the top bits of flow_table_hash(key, seed), a keyed mix
// (below), so that keys chosen by the traffic (a SYN flood's ports, or flow
// hashes an adversary computed against an unkeyed multiply) do not share
// buckets: tests/flood_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "queue_core.hh"
#include "rng.hh"

namespace tracelab {

// The default seed of every per-flow table of the cores
// (FlowStateConfig::table_seed, EfdConfig::table_seed,
// ScfqConfig::table_seed): fixed, so that a run's memory layout, hence its
// timing, is the same from one run to the next. No decision depends on the
// seed (which flows a table holds does not depend on where it holds them:
// tests/table_seed_test.cc runs the cores under two seeds); a deployment
// that faces traffic crafted against this default sets a secret seed.
constexpr uint64_t kFlowTableSeed = 0x7472616365'6c6162ULL;  // "tracelab"

// The keyed hash every flow table indexes by: SplitMix64's finalizer of
// the key xored with the seed. Every output bit depends on every key bit
// (full avalanche), so any field the traffic varies moves the bucket, and
// which keys collide depends on the seed. Chosen by core_bench (64 B,
// ns/packet, medians of 3 alternating runs) against Fibonacci hashing (one
// multiply, unkeyed: the former index), a keyed xorshift-multiply (one
// multiply, no full avalanche) and SipHash-1-3: EFD 23.9 / 25.1 (this) /
// 24.1 / 30.6, SCFQ 30.3 / 33.8 / 31.9 / 52.5, LAS 28.8 / 32.4 / 30.4 / 39.3.
inline uint64_t flow_table_hash(uint64_t key, uint64_t seed) { return mix64(key ^ seed); }

template <typename V>
class FlowTable {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFF;

  // `spread`: buckets per entry (rounded up to a power of two in total).
  // Sparser buckets mean fewer collisions, hence fewer mispredicted chain
  // walks, for more memory. EFD's table takes 16 (efd.hh: core_bench EFD
  // 29.8 -> 27.5 ns/packet at 8, 94387f6; 25.1 -> 24.5 at 16); 8 for every
  // table slowed Run2C/SIFT.
  // `seed`: the key of flow_table_hash().
  explicit FlowTable(uint32_t max_entries, uint32_t spread = 4, uint64_t seed = kFlowTableSeed)
      : max_(max_entries), pool_(max_entries), free_(max_entries), seed_(seed) {
    if (max_entries == 0 || max_entries > (1u << 28)) throw std::invalid_argument("flow table size out of range");
    if (spread == 0 || spread > 64) throw std::invalid_argument("flow table spread out of range");
    uint64_t n = 2;
    int bits = 1;
    while (n < uint64_t{spread} * max_entries) {
      n <<= 1;
      ++bits;
    }
    heads_.assign(n, kNone);
    shift_ = 64 - bits;
    for (uint32_t i = 0; i < max_entries; ++i) free_[i] = max_entries - 1 - i;
  }

  // Where a key that lookup() missed goes: its bucket.
  struct Vacancy {
    uint32_t bucket = 0;
  };

  // Index interface. An entry's index is stable while it lives: a core may
  // keep it (e.g. beside a queued packet) instead of looking its flow up
  // again.
  //
  // The index of `key`'s entry, or kNone; then `vacancy` says where
  // insert() puts `key` without hashing again.
  uint32_t lookup(uint64_t key, Vacancy& vacancy) const {
    vacancy.bucket = bucket(key);
    uint32_t e = heads_[vacancy.bucket];
    while (e != kNone && pool_[e].key != key) e = pool_[e].next;
    return e;
  }
  // Insert `key` (value-initialised) at the vacancy a lookup() miss
  // reported, with no insertion or deletion since. kNone when the table
  // already holds max_entries flows (the caller counts that).
  uint32_t insert(const Vacancy& vacancy, uint64_t key) {
    if (size_ == max_) return kNone;
    const uint32_t e = free_[max_ - 1 - size_];
    uint32_t& head = heads_[vacancy.bucket];
    pool_[e] = Entry{V{}, key, head, vacancy.bucket};
    head = e;
    if (++size_ > highwater_) highwater_ = size_;
    return e;
  }
  V& at(uint32_t index) { return pool_[index].value; }
  void erase_at(uint32_t index) { unlink(&heads_[pool_[index].bucket], index); }
  // Start loading an entry that will be needed soon.
  void prefetch(uint32_t index) const { __builtin_prefetch(&pool_[index]); }

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
    Vacancy v;
    const uint32_t e = lookup(key, v);
    if (e != kNone) unlink(&heads_[v.bucket], e);
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
    for (uint32_t& head : heads_) {
      uint32_t* link = &head;
      while (*link != kNone) {
        const uint32_t e = *link;
        if (pred(pool_[e].key, pool_[e].value)) unlink(link, e);
        else link = &pool_[e].next;
      }
    }
  }

  template <typename F>
  void for_each(F f) const {
    for (uint32_t head : heads_)
      for (uint32_t e = head; e != kNone; e = pool_[e].next) f(pool_[e].key, pool_[e].value);
  }

  uint32_t size() const { return size_; }
  uint32_t highwater() const { return highwater_; }
  void reset_highwater() { highwater_ = size_; }
  uint32_t max_entries() const { return max_; }
  // The longest chain: the most entries one lookup walks now. It shows the
  // seed at work (the keys that share a bucket under one seed spread under
  // another) without a decision depending on it. A statistic for tests and
  // handlers, walked on demand (every bucket): nothing per packet.
  uint32_t longest_probe() const {
    uint32_t longest = 0;
    for (uint32_t head : heads_) {
      uint32_t n = 0;
      for (uint32_t e = head; e != kNone; e = pool_[e].next) ++n;
      if (n > longest) longest = n;
    }
    return longest;
  }

 private:
  struct Entry {
    V value{};
    uint64_t key = 0;
    uint32_t next = kNone;  // the next entry of the same bucket
    uint32_t bucket = 0;    // its bucket: a deletion does not hash again
  };
  // The top bits of the keyed hash. No modulo: the bucket count is a power
  // of two.
  uint32_t bucket(uint64_t key) const { return static_cast<uint32_t>(flow_table_hash(key, seed_) >> shift_); }

  // Remove entry `e`, which `*link` points at, from its chain and free it.
  // Chains are short (load <= 1/4): from the head, the walk to `e`'s link
  // is usually no walk at all.
  void unlink(uint32_t* link, uint32_t e) {
    while (*link != e) link = &pool_[*link].next;
    *link = pool_[e].next;
    free_[max_ - size_] = e;
    --size_;
  }

  uint32_t max_;
  std::vector<uint32_t> heads_;  // first entry of each bucket, or kNone
  std::vector<Entry> pool_;
  std::vector<uint32_t> free_;  // free pool indices: free_[0 .. max_ - size_)
  uint64_t seed_;
  int shift_ = 62;
  uint32_t size_ = 0;
  uint32_t highwater_ = 0;
};

// Full-state tables (Run2C, SIFT, X-Protect, LAS, LARS): capacity and the
// periodic idle-entry scan of [003 §4.6.1] ("every 5 s, delete flows
// inactive for 30 s"). An arrival finding the table full is served as an
// untracked flow and counted (each core says how it classifies it).
struct FlowStateConfig {
  uint32_t max_flows = 1u << 16;
  Time gc_interval = 5 * kSecond;  // 0 = never scan
  Time idle_timeout = 30 * kSecond;
  uint64_t table_seed = kFlowTableSeed;  // the key of the table's hash (flow_table_hash)
};

// Runs the idle scan when it is due. Values must carry `Time last_seen`.
class IdleScan {
 public:
  explicit IdleScan(const FlowStateConfig& c) : cfg_(c), next_(c.gc_interval) {}
  // `table`: a FlowTable or a FlowRecordTable (flow_record_table.hh).
  template <typename Table, typename Extra>
  void run(Table& table, Time now, Extra also_deletable) {
    if (cfg_.gc_interval == 0 || now < next_) return;
    next_ = now + cfg_.gc_interval;
    const Time timeout = cfg_.idle_timeout;
    table.erase_if([&](uint64_t, const auto& v) { return now - v.last_seen >= timeout || also_deletable(v, now); });
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

inline uint64_t flow_key(const Packet& p, FlowKey k) { return k == FlowKey::kFlow ? p.flow_hash : p.conn_hash; }

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
