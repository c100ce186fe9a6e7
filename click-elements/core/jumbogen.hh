// tracelab queueing cores: JumboGen ingress encapsulation (docs/reference/algorithms.md
// §5.1, §5.2; [002 §2, §3.1, §4]).
//
// Packets are sorted into aggregation queues by (key, class): the key is
// what the adapter says the next hop is (BGP next AS, or the egress point,
// [002 fn.3]: the adapter chooses, enqueue_to() takes it; enqueue() uses
// key 0), and only packets of the same DiffServ class (Packet::cls) share a
// JumboGram [002 §3.3].
// * The JFET of a JumboGram starts with its first packet; packets are added
//   while the JumboGram (outer IP header 20 B + 6 + 4N + payloads) fits the
//   JumboGen MTU (default 8 KB = 8192 B); at JFET expiry it is released.
// * ⚠AMB-14: `early_release_when_full` false (default, reproduces the seed's
//   Tables 2-5): a JumboGram that a packet no longer fits into is closed but
//   held until its JFET expires; true (the "design" of §3.1): it is released
//   at that moment. Either way the packet that did not fit starts the next
//   JumboGram of that queue (spec default), with its own JFET.
// * Released JumboGrams leave through dequeue() as one Batch, FIFO in
//   release order (ties: lower queue slot first); wire_bytes = 20 + 6 + 4N
//   + payloads. The adapter writes the bytes with jg::encode() (outer
//   header: a copy of the first packet's IP header, ECN-capable).
// * Aggregation queues live in a table of `queues` slots fixed at
//   construction; a slot is reused once its queue is empty. A packet whose
//   (key, class) finds no slot is dropped (kEarlyDiscard, `no_queue`); a
//   packet that cannot fit an empty JumboGram is dropped (`oversize`).
//   Lookup scans the used slots: fine for tens of next hops.
// * Timer ties: an expiry at t is processed before an arrival at t.
//
// Not implemented: the optional flow-bitmask mode of [002 §2.2] (several
// queues per AS keeping one packet per flow); per-packet MPLS handling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "chunk_format.hh"
#include "queue_core.hh"

namespace tracelab {

struct JumboGenConfig {
  uint32_t mtu = 8192;                   // JumboGen MTU [002 §3.1]
  Time jfet = kMillisecond;              // [002 §4]
  bool early_release_when_full = false;  // ⚠AMB-14
  uint32_t outer_header = 20;            // outer IPv4 header bytes
  size_t queues = 64;                    // aggregation queue slots
  size_t capacity_packets = 65536;       // all packets held (NOT IN SEEDS)
};

struct JumboGenStats {
  uint64_t jumbograms = 0;
  uint64_t encapsulated = 0;  // packets in released JumboGrams
  uint64_t wire_bytes = 0;    // of released JumboGrams
  uint64_t full_closes = 0;   // JumboGrams closed because a packet did not fit
  uint64_t no_queue = 0;
  uint64_t oversize = 0;
  Time wait_total = 0;  // sum over packets of (release - arrival)
};

class JumboGenIngress final : public QueueCore {
 public:
  explicit JumboGenIngress(const JumboGenConfig& c = {})
      : cfg_(c),
        cap_(c.capacity_packets ? c.capacity_packets : 1),
        pkts_(new Packet[cap_]),
        next_(new int32_t[cap_]),
        grams_(new Gram[cap_]),
        slots_(new Slot[c.queues ? c.queues : 1]) {
    if (cfg_.queues == 0) cfg_.queues = 1;
    for (size_t i = 0; i < cap_; ++i) {
      next_[i] = static_cast<int32_t>(i + 1);
      grams_[i].next = static_cast<int32_t>(i + 1);
    }
    next_[cap_ - 1] = grams_[cap_ - 1].next = -1;
  }

  void enqueue(const Packet& p, Time now) override { enqueue_to(p, 0, now); }

  void enqueue_to(const Packet& in, uint64_t key, Time now) {
    advance(now);
    ++counters_.offered;
    Packet p = in;
    p.arrival = now;
    if (gram_size(1, p.length) > cfg_.mtu) {
      ++stats_.oversize;
      drop(p, DropReason::kEarlyDiscard, now);
      return;
    }
    if (held_ >= cap_) {
      drop(p, DropReason::kBufferFull, now);
      return;
    }
    Slot* s = find_slot(key, p.cls);
    if (!s) {
      ++stats_.no_queue;
      drop(p, DropReason::kEarlyDiscard, now);
      return;
    }
    Gram* g = s->last >= 0 ? &grams_[s->last] : nullptr;
    if (g && !g->closed && gram_size(g->count + 1, g->payload + p.length) > cfg_.mtu) {
      g->closed = true;
      ++stats_.full_closes;
      if (cfg_.early_release_when_full) release_last(*s, now);
      g = nullptr;
    }
    if (!g || g->closed) g = &open_gram(*s, now);
    const int32_t i = free_pkt_;
    free_pkt_ = next_[i];
    pkts_[i] = p;
    next_[i] = -1;
    if (g->tail >= 0) next_[g->tail] = i;
    else g->head = i;
    g->tail = i;
    ++g->count;
    g->payload += p.length;
    ++held_;
    bytes_ += p.length;
    ++counters_.enqueued;
    note_highwater();
  }

  bool dequeue(Time now, Batch& out) override {
    advance(now);
    out.clear();
    if (out_head_ < 0 || out.capacity < grams_[out_head_].count) return false;
    const int32_t gi = out_head_;
    Gram& g = grams_[gi];
    for (int32_t i = g.head; i >= 0;) {
      out.packets[out.count++] = pkts_[i];
      stats_.wait_total += g.released - pkts_[i].arrival;
      const int32_t nx = next_[i];
      next_[i] = free_pkt_;
      free_pkt_ = i;
      i = nx;
    }
    out.wire_bytes = gram_size(g.count, g.payload);
    last_released_ = g.released;
    held_ -= g.count;
    bytes_ -= g.payload;
    counters_.served += g.count;
    ++stats_.jumbograms;
    stats_.encapsulated += g.count;
    stats_.wire_bytes += out.wire_bytes;
    out_head_ = g.next;
    if (out_head_ < 0) out_tail_ = -1;
    g.next = free_gram_;
    free_gram_ = gi;
    return true;
  }

  Time next_ready(Time now) const override {
    if (out_head_ >= 0) return now;
    const Time t = earliest_expiry();
    if (t == kNever) return kNever;
    return t > now ? t : now;
  }

  uint64_t length_packets() const override { return held_; }
  uint64_t length_bytes() const override { return bytes_; }
  const JumboGenStats& stats() const { return stats_; }
  void reset_counters() override {
    QueueCore::reset_counters();
    stats_ = JumboGenStats{};
  }
  // JFET expiry (or early release) of the JumboGram the last dequeue()
  // returned: the end of its QTime span for jg::encode().
  Time last_released() const { return last_released_; }
  uint32_t max_batch() const { return cfg_.mtu / 5; }  // N <= (MTU-26)/(4+1)

  uint32_t gram_size(uint64_t n, uint64_t payload) const {
    return static_cast<uint32_t>(cfg_.outer_header + jg::header_size(n) + payload);
  }

 private:
  struct Gram {
    int32_t head = -1, tail = -1;
    uint32_t count = 0;
    uint64_t payload = 0;
    Time start = 0;  // JFET start: first packet's arrival
    Time released = 0;
    bool closed = false;
    int32_t next = -1;  // next gram of the same queue, or in the output FIFO
  };
  struct Slot {
    bool used = false;
    uint64_t key = 0;
    uint8_t cls = 0;
    int32_t first = -1, last = -1;  // grams of this queue, oldest first
  };

  Slot* find_slot(uint64_t key, uint8_t cls) {
    Slot* free_slot = nullptr;
    for (size_t i = 0; i < cfg_.queues; ++i) {
      Slot& s = slots_[i];
      if (s.used && s.key == key && s.cls == cls) return &s;
      if (!s.used && !free_slot) free_slot = &s;
    }
    if (free_slot) {
      free_slot->used = true;
      free_slot->key = key;
      free_slot->cls = cls;
      free_slot->first = free_slot->last = -1;
    }
    return free_slot;
  }

  // A queue holds at most as many grams as packets, so the gram pool (sized
  // like the packet pool) cannot run out before the capacity check fires.
  Gram& open_gram(Slot& s, Time now) {
    const int32_t gi = free_gram_;
    free_gram_ = grams_[gi].next;
    Gram& g = grams_[gi];
    g = Gram{};
    g.start = now;
    s.used = true;  // an early release may have just emptied the slot
    if (s.last >= 0) grams_[s.last].next = gi;
    else s.first = gi;
    s.last = gi;
    return g;
  }

  Time expiry(const Slot& s) const { return s.first >= 0 ? grams_[s.first].start + cfg_.jfet : kNever; }
  Time earliest_expiry() const {
    Time t = kNever;
    for (size_t i = 0; i < cfg_.queues; ++i) {
      if (slots_[i].used && expiry(slots_[i]) < t) t = expiry(slots_[i]);
    }
    return t;
  }

  // Release the oldest gram of every queue whose JFET expired by `now`, in
  // expiry order (lower slot first on ties).
  void advance(Time now) {
    for (;;) {
      Slot* best = nullptr;
      for (size_t i = 0; i < cfg_.queues; ++i) {
        Slot& s = slots_[i];
        if (s.used && expiry(s) <= now && (!best || expiry(s) < expiry(*best))) best = &s;
      }
      if (!best) return;
      release_first(*best, expiry(*best));
    }
  }

  void release_first(Slot& s, Time at) {
    const int32_t gi = s.first;
    s.first = grams_[gi].next;
    if (s.first < 0) {
      s.last = -1;
      s.used = false;
    }
    to_output(gi, at);
  }
  // Early release of the (just closed) newest gram. Older grams of the queue
  // can only be held-closed ones in hold mode, so in early mode the newest
  // is also the oldest.
  void release_last(Slot& s, Time at) { release_first(s, at); }

  void to_output(int32_t gi, Time at) {
    grams_[gi].released = at;
    grams_[gi].next = -1;
    if (out_tail_ >= 0) grams_[out_tail_].next = gi;
    else out_head_ = gi;
    out_tail_ = gi;
  }

  JumboGenConfig cfg_;
  size_t cap_;
  std::unique_ptr<Packet[]> pkts_;
  std::unique_ptr<int32_t[]> next_;
  std::unique_ptr<Gram[]> grams_;
  std::unique_ptr<Slot[]> slots_;
  int32_t free_pkt_ = 0, free_gram_ = 0;
  int32_t out_head_ = -1, out_tail_ = -1;
  uint64_t held_ = 0, bytes_ = 0;
  Time last_released_ = 0;
  JumboGenStats stats_;
};

}  // namespace tracelab
