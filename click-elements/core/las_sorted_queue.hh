// tracelab queueing cores: a fixed-capacity queue sorted by a per-packet tag,
// removable at both ends. LAS and LARS serve the smallest tag and push out
// the largest (§3.1, §3.2); SCFQ serves the smallest finish tag (§3.3); the
// LAS sub-queues of EFD's X+Y variants (§2.3) use it too.
//
// Order: ascending tag, ties by arrival order (the order of push() calls),
// so every order is total and deterministic: min() is the earliest packet
// of the smallest tag, max() the latest packet of the largest tag.
//
// Implementation: the packets of one tag value form a group, a FIFO list
// in arrival order (so ties need no sequence number and no comparison);
// the groups, whose tags are distinct, sit in a min-max heap (Atkinson et
// al., CACM 1986) keyed by the tag alone, and a hash index (linear probing,
// load <= 1/2) finds an arrival's group. Ties are the common case: every
// new flow starts at LAS tag 0, flows of MSS-sized packets meet at the same
// multiples, and SCFQ's finish tags are max(F, v) + size, so in core_bench
// (64 B, 300 packets) an arrival joins an existing group 77 % (LAS) to
// 99 % (SCFQ) of the time and the queue holds 3 to 60 groups: push and
// pop are then O(1) list operations, and the heap is small when it is
// touched at all. The packet-per-node min-max heap this replaces compared
// (tag, seq) pairs, mispredicting on every tie (core_bench 64 B, medians
// of 3 runs, with this queue alone: LAS 127 -> 48 ns/packet, SCFQ 118 ->
// 31). With all tags distinct the heap holds every packet, as before, but
// its sift loops are written branch-light (four grandchildren compared
// without branches), so that case got faster too (a replay of random
// distinct tags, 300 packets: 55 -> 38 ns per push + pop; 100 000 packets:
// 145 -> 171, the one case that got slower: the index and the groups add
// 40 % to a footprint far beyond the caches).
// A packet that arrives at an empty queue stays out of the index and the
// heap (a solo packet) until a second one arrives: on a link that keeps
// up, as in engine_bench's line-rate CBR, every packet leaves before the
// next comes, and then neither needs the index nor the heap
// (docs/performance-history.md, engine step 11).
// Fixed sizes, no allocation after construction.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "queue_core.hh"

namespace tracelab {

class SortedPacketQueue {
 public:
  explicit SortedPacketQueue(uint32_t capacity)
      : slots_(capacity),
        prev_(capacity),
        free_(capacity),
        groups_(capacity),
        free_groups_(capacity),
        heap_(capacity),
        free_count_(capacity),
        free_group_count_(capacity) {
    for (uint32_t i = 0; i < capacity; ++i) free_[i] = free_groups_[i] = capacity - 1 - i;
    uint64_t n = 16;
    int bits = 4;
    while (n < 2 * uint64_t{capacity}) {
      n <<= 1;
      ++bits;
    }
    index_.assign(n, kNone);
    mask_ = static_cast<uint32_t>(n - 1);
    shift_ = 64 - bits;
  }

  bool empty() const { return size_ == 0; }
  uint32_t size() const { return size_; }
  bool full() const { return size_ == slots_.size(); }

  // `ref`: an opaque word kept with the packet and handed back when it
  // leaves (the two-level queue's flow-entry reference).
  void push(const Packet& p, uint64_t tag, uint32_t ref = 0) {
    const uint32_t s = free_[--free_count_];
    Slot& slot = slots_[s];
    slot.packet = p;
    slot.ref = ref;
    if (size_++ == 0) {
      solo_ = true;
      solo_slot_ = s;
      solo_tag_ = tag;
      return;
    }
    if (solo_) {  // the solo packet arrived first: it goes in first
      solo_ = false;
      place(solo_slot_, solo_tag_);
    }
    place(s, tag);
  }

  // Smallest (tag, arrival) first.
  const Packet& min() const { return slots_[solo_ ? solo_slot_ : groups_[heap_[0].group].head].packet; }
  uint64_t min_tag() const { return solo_ ? solo_tag_ : heap_[0].tag; }
  Packet pop_min(uint32_t* ref = nullptr) {
    if (solo_) return take_solo(ref);
    Group& group = groups_[heap_[0].group];
    const uint32_t s = group.head;
    if (s == group.tail) remove_group(0);
    else group.head = slots_[s].next;
    return take(s, ref);
  }

  // Largest (tag, arrival): the last packet in service order.
  const Packet& max() const { return slots_[solo_ ? solo_slot_ : groups_[heap_[max_index()].group].tail].packet; }
  uint64_t max_tag() const { return solo_ ? solo_tag_ : heap_[max_index()].tag; }
  Packet pop_max(uint32_t* ref = nullptr) {
    if (solo_) return take_solo(ref);
    const uint32_t i = max_index();
    Group& group = groups_[heap_[i].group];
    const uint32_t s = group.tail;
    if (s == group.head) remove_group(i);
    else group.tail = prev_[s];
    return take(s, ref);
  }

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFF;
  // One cache line per packet, with what a departure needs besides it.
  struct alignas(64) Slot {
    Packet packet;
    uint32_t ref = 0;
    uint32_t next = kNone;  // the next packet of its group
  };
  struct Group {
    uint64_t tag;
    uint32_t head;  // earliest packet
    uint32_t tail;  // latest packet
  };
  struct Node {
    uint64_t tag;
    uint32_t group;
  };

  // Slot s, holding a packet of `tag`, into its group (behind the group's
  // last packet) or a new group.
  void place(uint32_t s, uint64_t tag) {
    uint32_t pos = home(tag);
    for (uint32_t g; (g = index_[pos]) != kNone; pos = (pos + 1) & mask_) {
      Group& group = groups_[g];
      if (group.tag == tag) {  // a tie: behind the group's last packet
        prev_[s] = group.tail;
        slots_[group.tail].next = s;
        group.tail = s;
        return;
      }
    }
    const uint32_t g = free_groups_[--free_group_count_];
    groups_[g] = Group{tag, s, s};
    index_[pos] = g;
    sift_up(heap_size_++, Node{tag, g});
  }

  Packet take_solo(uint32_t* ref) {
    solo_ = false;
    return take(solo_slot_, ref);
  }
  Packet take(uint32_t s, uint32_t* ref) {
    if (ref) *ref = slots_[s].ref;
    free_[free_count_++] = s;
    --size_;
    return slots_[s].packet;
  }

  // Fibonacci hashing: the top bits of tag * 2^64/phi (tags are byte
  // counts, not keys the traffic picks freely, and at most one per slot).
  uint32_t home(uint64_t tag) const { return static_cast<uint32_t>((tag * 0x9E3779B97F4A7C15ULL) >> shift_); }

  // The group at heap index i (the min, or the max) has no packet left.
  void remove_group(uint32_t i) {
    const uint32_t g = heap_[i].group;
    free_groups_[free_group_count_++] = g;
    // Out of the index: backward-shift deletion (Knuth 6.4, Algorithm R),
    // so the probe sequences need no tombstones.
    uint32_t hole = home(heap_[i].tag);
    while (index_[hole] != g) hole = (hole + 1) & mask_;
    for (uint32_t j = (hole + 1) & mask_, h; (h = index_[j]) != kNone; j = (j + 1) & mask_) {
      // The group at j may fill the hole iff its home is not cyclically in
      // (hole, j].
      if (((j - home(groups_[h].tag)) & mask_) >= ((j - hole) & mask_)) {
        index_[hole] = h;
        hole = j;
      }
    }
    index_[hole] = kNone;
    // Out of the heap: the last node refills index i. The removed group was
    // the min (i = 0) or the max (i = 1 or 2), so the refill belongs at i or
    // below it, never above.
    const Node last = heap_[--heap_size_];
    if (i == heap_size_) return;
    if (i == 0) sift_down<true>(0, last);
    else sift_down<false>(i, last);
  }

  // Min-max heap: the levels alternate, even ones (root: 0) ordered as a
  // min-heap over their descendants, odd ones as a max-heap. Group tags are
  // distinct, so the order is strict.
  static bool on_min_level(uint32_t i) { return ((63 - __builtin_clzll(uint64_t{i} + 1)) & 1) == 0; }
  template <bool kMin>
  static bool before(uint64_t a, uint64_t b) {
    return kMin ? a < b : b < a;
  }
  uint32_t max_index() const {
    return heap_size_ <= 1 ? 0 : heap_size_ == 2 ? 1 : (heap_[1].tag < heap_[2].tag ? 2 : 1);
  }

  // Place x, the new node, from the hole at the end (i). x comes in a
  // register: written to heap_[i] and read back, its two stores did not
  // forward to the 16-byte load (core_bench EFD LAS+LAS 64 B: half of
  // push()'s samples on that load).
  void sift_up(uint32_t i, const Node x) {
    if (i == 0) {
      heap_[0] = x;
      return;
    }
    const uint32_t parent = (i - 1) / 2;
    if (on_min_level(i)) {
      if (heap_[parent].tag < x.tag) {  // x belongs on the max levels
        heap_[i] = heap_[parent];
        sift_up_same<false>(parent, x);
      } else {
        sift_up_same<true>(i, x);
      }
    } else if (x.tag < heap_[parent].tag) {  // x belongs on the min levels
      heap_[i] = heap_[parent];
      sift_up_same<true>(parent, x);
    } else {
      sift_up_same<false>(i, x);
    }
  }
  // Move x from the hole at i up through the grandparents (levels of i's kind).
  template <bool kMin>
  void sift_up_same(uint32_t i, const Node x) {
    while (i > 2) {
      const uint32_t grand = (i - 3) / 4;
      if (!before<kMin>(x.tag, heap_[grand].tag)) break;
      heap_[i] = heap_[grand];
      i = grand;
    }
    heap_[i] = x;
  }
  // Fill the hole at i, a level of kind kMin, with x.
  template <bool kMin>
  void sift_down(uint32_t i, Node x) {
    const uint32_t n = heap_size_;
    for (;;) {
      const uint32_t child = 2 * i + 1;
      if (child >= n) break;
      const uint32_t grand = 4 * i + 3;  // the first of i's four grandchildren
      uint32_t m;
      if (grand + 3 < n) {
        // Both children have children, which they bound: the extreme is
        // among the four grandchildren, adjacent in the array. Compared
        // without branches (a replay of random distinct tags, 300 packets:
        // 100 -> 38 ns per push + pop against the branchy loop over all
        // six candidates).
        const uint32_t a = grand + before<kMin>(heap_[grand + 1].tag, heap_[grand].tag);
        const uint32_t b = grand + 2 + before<kMin>(heap_[grand + 3].tag, heap_[grand + 2].tag);
        m = before<kMin>(heap_[b].tag, heap_[a].tag) ? b : a;
      } else {
        // The bottom: the extreme of the children and grandchildren there.
        m = child;
        if (child + 1 < n && before<kMin>(heap_[child + 1].tag, heap_[m].tag)) m = child + 1;
        for (uint32_t k = grand; k < n; ++k)
          if (before<kMin>(heap_[k].tag, heap_[m].tag)) m = k;
        if (m <= child + 1) {  // a child, which has no children: done
          if (before<kMin>(heap_[m].tag, x.tag)) {
            heap_[i] = heap_[m];
            i = m;
          }
          break;
        }
      }
      if (!before<kMin>(heap_[m].tag, x.tag)) break;
      heap_[i] = heap_[m];
      i = m;
      // x passes the grandchild's parent, a level of the other kind.
      Node& parent = heap_[(m - 1) / 2];
      if (before<kMin>(parent.tag, x.tag)) std::swap(parent, x);
    }
    heap_[i] = x;
  }

  std::vector<Slot> slots_;
  std::vector<uint32_t> prev_;  // the previous packet of its group (pop_max)
  std::vector<uint32_t> free_;  // free slots: a stack, the last freed first
  std::vector<Group> groups_;
  std::vector<uint32_t> free_groups_;
  std::vector<Node> heap_;       // the groups, by tag
  std::vector<uint32_t> index_;  // tag -> group: open addressing, kNone = empty
  uint32_t mask_ = 0;
  int shift_ = 60;
  uint32_t free_count_;
  uint32_t free_group_count_;
  uint32_t heap_size_ = 0;
  uint32_t size_ = 0;
  bool solo_ = false;  // the one packet is in solo_slot_, in no group (see above)
  uint32_t solo_slot_ = 0;
  uint64_t solo_tag_ = 0;
};

}  // namespace tracelab
