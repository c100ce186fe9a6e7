// tracelab queueing cores: a fixed-capacity queue sorted by a per-packet tag,
// removable at both ends. LAS and LARS serve the smallest tag and push out
// the largest (§3.1, §3.2); SCFQ serves the smallest finish tag (§3.3); the
// LAS sub-queues of EFD's X+Y variants (§2.3) use it too.
//
// Ties are broken by arrival order (a per-queue sequence number), so every
// order is total and deterministic. Implementation: a min-max heap
// (Atkinson et al., CACM 1986) of (tag, seq, slot) over a pool of packet
// slots with a free list; O(log n) per operation, no allocation after
// construction.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "queue_core.hh"

namespace tracelab {

class SortedPacketQueue {
 public:
  explicit SortedPacketQueue(uint32_t capacity) : pool_(capacity), refs_(capacity), free_(capacity), heap_(capacity) {
    for (uint32_t i = 0; i < capacity; ++i) free_[i] = capacity - 1 - i;
  }

  bool empty() const { return size_ == 0; }
  uint32_t size() const { return size_; }
  bool full() const { return size_ == pool_.size(); }

  // `ref`: an opaque word kept with the packet and handed back when it
  // leaves (the two-level queue's flow-entry reference).
  void push(const Packet& p, uint64_t tag, uint32_t ref = 0) {
    uint32_t slot = free_[--free_count_];
    pool_[slot] = p;
    refs_[slot] = ref;
    heap_[size_] = Node{tag, seq_++, slot};
    up(size_++);
  }

  // Smallest (tag, arrival) first.
  const Packet& min() const { return pool_[heap_[0].slot]; }
  uint64_t min_tag() const { return heap_[0].tag; }
  Packet pop_min(uint32_t* ref = nullptr) { return take(0, ref); }

  // Largest (tag, arrival): the last packet in service order.
  const Packet& max() const { return pool_[heap_[max_index()].slot]; }
  uint64_t max_tag() const { return heap_[max_index()].tag; }
  Packet pop_max(uint32_t* ref = nullptr) { return take(max_index(), ref); }

 private:
  struct Node {
    uint64_t tag;
    uint64_t seq;
    uint32_t slot;
  };
  static bool less(const Node& a, const Node& b) { return a.tag < b.tag || (a.tag == b.tag && a.seq < b.seq); }
  static bool on_min_level(uint32_t i) { return ((63 - __builtin_clzll(uint64_t{i} + 1)) & 1) == 0; }
  // Orders `a` before `b` on a min level, after it on a max level.
  static bool before(const Node& a, const Node& b, bool min_level) { return min_level ? less(a, b) : less(b, a); }

  uint32_t max_index() const { return size_ <= 1 ? 0 : size_ == 2 ? 1 : (less(heap_[1], heap_[2]) ? 2 : 1); }

  Packet take(uint32_t i, uint32_t* ref) {
    uint32_t slot = heap_[i].slot;
    if (ref) *ref = refs_[slot];
    free_[free_count_++] = slot;
    heap_[i] = heap_[--size_];
    if (i < size_) {
      down(i);
      up(i);  // the moved node may belong above i on the other kind of level
    }
    return pool_[slot];
  }

  void up(uint32_t i) {
    if (i == 0) return;
    uint32_t parent = (i - 1) / 2;
    bool min_level = on_min_level(i);
    if (before(heap_[parent], heap_[i], min_level)) {
      // i belongs on the parent's kind of level.
      std::swap(heap_[i], heap_[parent]);
      up_same(parent, !min_level);
    } else {
      up_same(i, min_level);
    }
  }
  void up_same(uint32_t i, bool min_level) {
    while (i > 2) {
      uint32_t grand = ((i - 1) / 2 - 1) / 2;
      if (!before(heap_[i], heap_[grand], min_level)) break;
      std::swap(heap_[i], heap_[grand]);
      i = grand;
    }
  }

  void down(uint32_t i) {
    bool min_level = on_min_level(i);
    for (;;) {
      uint32_t first_child = 2 * i + 1;
      if (first_child >= size_) return;
      // The most extreme among children and grandchildren.
      uint32_t m = first_child;
      uint32_t candidates[6] = {first_child,         first_child + 1,     2 * first_child + 1,
                                2 * first_child + 2, 2 * first_child + 3, 2 * first_child + 4};
      for (uint32_t c : candidates)
        if (c < size_ && before(heap_[c], heap_[m], min_level)) m = c;
      if (!before(heap_[m], heap_[i], min_level)) return;
      std::swap(heap_[m], heap_[i]);
      if (m <= first_child + 1) return;  // a child: done
      uint32_t parent = (m - 1) / 2;
      if (before(heap_[parent], heap_[m], min_level)) std::swap(heap_[m], heap_[parent]);
      i = m;
    }
  }

  std::vector<Packet> pool_;
  std::vector<uint32_t> refs_;
  std::vector<uint32_t> free_;
  std::vector<Node> heap_;
  uint32_t free_count_ = static_cast<uint32_t>(free_.size());
  uint32_t size_ = 0;
  uint64_t seq_ = 0;
};

}  // namespace tracelab
