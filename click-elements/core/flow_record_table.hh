// tracelab queueing cores: the per-flow record table of the full-state
// cores (LAS, LASACK, LARS, Run2C, Run2CACK; docs/reference/algorithms.md
// §3.1, §3.2, §2.4).
//
// LAS, LARS and Run2C keep a record for every flow seen within the idle timeout,
// up to `max_flows` (65 536 by default): megabytes, looked up once per
// arrival at a key nothing predicts, and mostly a key that is new or not
// tracked (in core_bench 85 % of the packets open a new flow, so the table
// is full after 80 000 packets and every new flow is then untracked). The
// chained FlowTable (efd_flow_table.hh) costs two dependent cache misses
// per lookup there, its chain head and then the entry, each as slow as
// main memory on this machine (random loads over 4 MB: 100 ns).
//
// This table is open addressing with linear probing (load <= 1/2): the
// key and the whole record share one 32-byte slot, and a byte per slot,
// kept apart in a small control array (1 byte per slot: 128 KB for 65 536
// flows, which stays in L2), is either kEmpty or 7 bits of the key's hash.
// A lookup reads 8 control bytes at once (SWAR) and touches a slot only
// where those 7 bits match, so a key that is absent costs no slot access
// at all, and a key that is present one. core_bench LAS 64 B, over the
// grouped sorted queue: chained FlowTable 52 ns/packet -> slots alone
// (one miss) 46 -> control bytes read one at a time 38 -> eight at a time
// 32 (the byte loop mispredicted its exit at every other slot).
//
// The slots grow with the flows held, from kInitialSlots, doubling to keep
// the load <= 1/2, up to 2 x max_entries rounded to a power of two: a run
// of 1000 flows then probes 2048 slots (64 KB, cache-resident) instead of
// 131 072 (4 MB, a cache and TLB miss per lookup even for a known flow).
// engine_bench (1000 flows, 64 B at 10 Gb/s) RTF_cpu: lars 0.86 -> 1.04,
// run2c 1.26 -> 1.43, lasack 1.15 -> 1.22; core_bench, whose table fills
// to 65 536 flows, is unchanged (LAS 31-33 ns, LARS 39-40 either way).
//
// Records move on deletion (backward-shift deletion, Knuth 6.4 Algorithm
// R, no tombstones) and on growth, so unlike FlowTable a record's address
// is valid only until the next insertion or deletion. Deletion happens only in the idle
// scan (erase_if). Which flows are tracked, found, untracked or deleted is
// exactly as with FlowTable: the same capacity, the same keys.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <stdexcept>
#include <vector>

#include "efd_flow_table.hh"

namespace tracelab {

// One flow's record: V is the mechanism's volume (LAS: bytes, LARS: the
// faded volume), `ack` the ACK-aware progress (LASACK).
template <typename V>
struct FlowRecord {
  V volume{};
  Time last_seen = 0;
  AckProgress ack;
};

template <typename V>
class FlowRecordTable {
 public:
  // `seed`: the key of flow_table_hash().
  explicit FlowRecordTable(uint32_t max_entries, uint64_t seed = kFlowTableSeed) : max_(max_entries), seed_(seed) {
    if (max_entries == 0 || max_entries > (1u << 28)) throw std::invalid_argument("flow table size out of range");
    // At least 16 slots, so a window of 8 control bytes never wraps onto
    // itself.
    uint64_t most = 16;
    while (most < 2 * uint64_t{max_entries}) most <<= 1;
    allocate(std::min(most, kInitialSlots));
  }

  // The record of `key`, inserted (volume 0, last_seen = now) if new;
  // nullptr when the table already holds max_entries flows. Valid until the
  // next insertion or erase_if().
  FlowRecord<V>* find_or_insert(uint64_t key, Time now) {
    const uint64_t h = flow_table_hash(key, seed_);
    uint32_t i;
    if (FlowRecord<V>* r = probe(key, h, i)) return r;
    if (size_ == max_) return nullptr;
    if (2 * (uint64_t{size_} + 1) > uint64_t{mask_} + 1) {
      // Load above 1/2; as 2 x (size_ + 1) <= 2 x max_, the table never
      // grows past 2 x max_ rounded up to a power of two.
      grow();
      i = vacancy(h);
    }
    set_ctrl(i, fingerprint(h));
    Slot& s = slots_[i];
    s.key = key;
    s.rec = FlowRecord<V>{};
    s.rec.last_seen = now;
    if (++size_ > highwater_) highwater_ = size_;
    return &s.rec;
  }

  // The record of `key`, or nullptr; valid as find_or_insert()'s.
  FlowRecord<V>* find(uint64_t key) {
    uint32_t vacant;
    return probe(key, flow_table_hash(key, seed_), vacant);
  }

  // Delete every record for which pred(key, record) holds (the idle scan).
  // Out of line, as grow(): the engine's per-packet loop inlines every
  // call it can (engine.cc, core_broke()).
  template <typename Pred>
  [[gnu::noinline]] void erase_if(Pred pred) {
    for (uint32_t i = 0; i <= mask_; ++i) {
      // A deletion may shift a later record of the cluster into slot i:
      // look at i again. Records only move backwards within their cluster,
      // so none skips the scan; one asked twice (wrapped from the start)
      // gives the same answer.
      while (ctrl_[i] != kEmpty && pred(slots_[i].key, slots_[i].rec)) erase_slot(i);
    }
  }

  uint32_t size() const { return size_; }
  uint32_t highwater() const { return highwater_; }
  void reset_highwater() { highwater_ = size_; }
  uint32_t max_entries() const { return max_; }
  // The longest probe: the most slots a lookup of a present key visits (its
  // distance from its home slot, plus one), as FlowTable::longest_probe();
  // walked on demand, nothing per packet.
  uint32_t longest_probe() const {
    uint32_t longest = 0;
    for (uint32_t i = 0; i <= mask_; ++i) {
      const uint32_t n = ctrl_[i] == kEmpty ? 0 : ((i - home(slots_[i].key)) & mask_) + 1;
      if (n > longest) longest = n;
    }
    return longest;
  }

 private:
  static constexpr uint8_t kEmpty = 0x80;
  static constexpr uint32_t kWindow = 8;
  // 1024 slots: 32 KB of LAS records; a handful of flows keeps its short
  // probes (table_seed_test: 16 flows, longest probe <= 4).
  static constexpr uint64_t kInitialSlots = 1024;
  static constexpr uint64_t kOnes = 0x0101010101010101ULL;
  static constexpr uint64_t kHigh = 0x8080808080808080ULL;
  struct Slot {
    uint64_t key = 0;
    FlowRecord<V> rec;
  };

  // The record of `key` (hash `h`), or nullptr and `vacant` = the empty
  // slot that ends its probe, where an insertion puts it.
  FlowRecord<V>* probe(uint64_t key, uint64_t h, uint32_t& vacant) {
    const uint8_t fp = fingerprint(h);
    uint32_t i = static_cast<uint32_t>(h >> shift_);
    for (;;) {
      // Control bytes i .. i+7 (the copy past the end makes them
      // contiguous), in little-endian order: byte k is slot i+k.
      uint64_t w;
      std::memcpy(&w, &ctrl_[i], sizeof w);
      const uint64_t empty = w & kHigh;  // fingerprints are < 0x80
      // Exact zero-byte test of w ^ fp...fp (no false positives).
      const uint64_t y = w ^ (fp * kOnes);
      uint64_t match = ~(((y & ~kHigh) + ~kHigh) | y | ~kHigh);
      if (empty != 0) match &= (empty & (0 - empty)) - 1;  // before the first empty slot
      for (; match != 0; match &= match - 1) {
        const uint32_t j = (i + (__builtin_ctzll(match) >> 3)) & mask_;
        if (slots_[j].key == key) return &slots_[j].rec;
      }
      if (empty != 0) {
        vacant = (i + (__builtin_ctzll(empty) >> 3)) & mask_;
        return nullptr;
      }
      i = (i + kWindow) & mask_;
    }
  }

  // Empty slots and control bytes for `n` slots (a power of two >= 16).
  void allocate(uint64_t n) {
    slots_.assign(n, Slot{});
    ctrl_.assign(n + kWindow - 1, kEmpty);
    mask_ = static_cast<uint32_t>(n - 1);
    shift_ = 64 - __builtin_ctzll(n);
  }

  // Twice the slots, every record rehashed into them (the fingerprints
  // change with the number of slots).
  [[gnu::noinline]] void grow() {
    std::vector<Slot> old = std::move(slots_);
    const std::vector<uint8_t> old_ctrl = std::move(ctrl_);
    allocate(2 * old.size());
    for (uint32_t j = 0; j < old.size(); ++j) {
      if (old_ctrl[j] == kEmpty) continue;
      const uint64_t h = flow_table_hash(old[j].key, seed_);
      const uint32_t i = vacancy(h);
      set_ctrl(i, fingerprint(h));
      slots_[i] = old[j];
    }
  }

  // The first empty slot from the home slot of hash `h` (for a key known
  // to be absent).
  uint32_t vacancy(uint64_t h) const {
    uint32_t i = static_cast<uint32_t>(h >> shift_);
    while (ctrl_[i] != kEmpty) i = (i + 1) & mask_;
    return i;
  }

  // The keyed hash, as FlowTable: the top bits pick the home slot, the 7
  // bits below them are the fingerprint.
  uint8_t fingerprint(uint64_t h) const { return static_cast<uint8_t>((h >> (shift_ - 7)) & 0x7F); }
  uint32_t home(uint64_t key) const { return static_cast<uint32_t>(flow_table_hash(key, seed_) >> shift_); }
  void set_ctrl(uint32_t i, uint8_t c) {
    ctrl_[i] = c;
    if (i < kWindow - 1) ctrl_[mask_ + 1 + i] = c;
  }

  void erase_slot(uint32_t hole) {
    for (uint32_t j = (hole + 1) & mask_; ctrl_[j] != kEmpty; j = (j + 1) & mask_) {
      // The record at j may fill the hole iff its home is not cyclically
      // in (hole, j].
      if (((j - home(slots_[j].key)) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        set_ctrl(hole, ctrl_[j]);
        hole = j;
      }
    }
    set_ctrl(hole, kEmpty);
    --size_;
  }

  uint32_t max_;
  uint64_t seed_;
  std::vector<uint8_t> ctrl_;  // per slot: kEmpty or the fingerprint; then a copy of the first 7
  std::vector<Slot> slots_;
  uint32_t mask_ = 0;
  int shift_ = 60;
  uint32_t size_ = 0;
  uint32_t highwater_ = 0;
};

// The flow state of the classifiers that keep one record per flow and expire
// idle ones (Run2C, SIFT, X-Protect): the table, its idle scan, and the count
// of packets whose flow the full table could not record.
template <typename V>
struct ScannedFlows {
  explicit ScannedFlows(const FlowStateConfig& c) : table(c.max_flows, c.table_seed), scan(c) {}
  // Deletes the records idle for the configured timeout, when a scan is due.
  void expire_idle(Time now) {
    scan.run(table, now, [](const FlowRecord<V>&, Time) { return false; });
  }
  void reset_counters() {
    table.reset_highwater();
    untracked = 0;
  }

  FlowRecordTable<V> table;
  IdleScan scan;
  uint64_t untracked = 0;
};

}  // namespace tracelab
