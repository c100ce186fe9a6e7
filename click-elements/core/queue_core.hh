// tracelab queueing cores: the shared vocabulary.
//
// Every mechanism of docs/reference/algorithms.md §1-§7 is one header in this folder
// implementing QueueCore. Cores are deterministic, header-only C++17, know
// nothing of Click, ns-3 or the engine, and allocate nothing per packet: all
// tables are sized at construction.
//
// Time is an integer number of picoseconds: at 10 Gb/s one byte lasts
// exactly 800 ps, so serialization times never round and never drift.
#pragma once

#include <cstdint>
#include <limits>

namespace tracelab {

using Time = int64_t;  // picoseconds
constexpr Time kPicosecond = 1;
constexpr Time kNanosecond = 1000;
constexpr Time kMicrosecond = 1000 * kNanosecond;
constexpr Time kMillisecond = 1000 * kMicrosecond;
constexpr Time kSecond = 1000 * kMillisecond;
constexpr Time kNever = std::numeric_limits<Time>::max();

// Exact serialization time of `bytes` on a link of `bits_per_second`,
// rounded up to the next picosecond (exact for 10/40/100 Gb/s).
constexpr Time serialization_time(uint64_t bytes, uint64_t bits_per_second) {
  // bytes * 8 * 1e12 / rate, split to stay within 64 bits for jumbo frames.
  return static_cast<Time>((bytes * 8 * 1000000000000ULL + bits_per_second - 1) / bits_per_second);
}

// A packet as the cores see it: a handle (the adapter's own index, Click
// Packet*, ns-3 Ptr) plus the metadata the mechanisms read. Trivially
// copyable; 56 bytes.
struct Packet {
  uint64_t handle = 0;     // opaque to the cores; the adapter maps it back
  uint64_t flow_hash = 0;  // 5-tuple hash (direction-dependent, §0)
  Time arrival = 0;        // when the packet entered this node
  Time budget = kNever;    // remaining end-to-end delay budget (QTL/MTQ, chunking T_i)
  uint32_t length = 0;     // IP-level bytes
  uint32_t tcp_seq = 0;    // for ACK-aware variants
  uint32_t tcp_ack = 0;
  uint16_t mtq = 0;   // MTQ field as carried in the header (units: see mtq_qtl.hh)
  uint8_t cls = 0;    // traffic class (chunking classes, delay budgets)
  uint8_t flags = 0;  // kFlag* below
  // Added for the ACK-aware variants (EFDACK, Run2CACK, LASACK, §2.2/§3.1):
  // a hash of the TCP connection that is the same in both directions.
  uint64_t conn_hash = 0;
};

constexpr uint8_t kFlagTcp = 0x01;
constexpr uint8_t kFlagPureAck = 0x02;  // TCP segment without payload, ACK set
constexpr uint8_t kFlagSyn = 0x04;
constexpr uint8_t kFlagFin = 0x08;
constexpr uint8_t kFlagHasQtl = 0x10;  // `budget` carries a QTL value
constexpr uint8_t kFlagHasMtq = 0x20;  // `mtq` is valid

// Why a packet left a core without being served (docs/reference/algorithms.md §0 hook).
enum class DropReason : uint8_t {
  kBufferFull = 0,     // dropped on arrival: no room
  kPushedOut = 1,      // evicted from the buffer by a later arrival
  kEarlyDiscard = 2,   // mechanism-specific early drop (QTL/MTQ, RED, EFD-admission, sampling)
  kBudgetExpired = 3,  // delay budget already exceeded (QTL/MTQ, chunking)
  kCount = 4,
};

inline const char* drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::kBufferFull:
      return "buffer_full";
    case DropReason::kPushedOut:
      return "pushed_out";
    case DropReason::kEarlyDiscard:
      return "early_discard";
    case DropReason::kBudgetExpired:
      return "budget_expired";
    default:
      return "unknown";
  }
}

// Receives every packet a core drops, at the moment it drops it.
class DropSink {
 public:
  virtual ~DropSink() = default;
  virtual void on_drop(const Packet& p, DropReason why, Time now) = 0;
};

// Counters every core keeps; mechanism-specific ones live in the core.
struct Counters {
  uint64_t enqueued = 0;  // accepted into the buffer
  uint64_t served = 0;    // handed to the link (packets, not chunks)
  uint64_t dropped[static_cast<int>(DropReason::kCount)] = {0, 0, 0, 0};
  uint64_t offered = 0;  // every enqueue() call
  uint64_t highwater_packets = 0;
  uint64_t highwater_bytes = 0;
  uint64_t dropped_total() const {
    uint64_t s = 0;
    for (uint64_t d : dropped) s += d;
    return s;
  }
};

// What one dequeue hands to the link: one packet, or several packets that
// leave together as one chunk/JumboGram. `wire_bytes` is what the link
// serializes (payloads plus any encapsulation header).
struct Batch {
  Packet* packets = nullptr;  // caller-owned storage of `capacity` packets
  uint32_t capacity = 0;
  uint32_t count = 0;
  uint32_t wire_bytes = 0;
  void clear() {
    count = 0;
    wire_bytes = 0;
  }
};

// The interface every mechanism implements. Conservation, checked by the
// tests of every core: offered == served + dropped_total() + length_packets().
class QueueCore {
 public:
  virtual ~QueueCore() = default;
  void set_drop_sink(DropSink* sink) { sink_ = sink; }

  // Offer one packet at time `now`. The core may accept it, drop it, or
  // push out queued packets; every drop goes to the sink.
  virtual void enqueue(const Packet& p, Time now) = 0;

  // The link is free at `now`: fill `out` with what to send next and return
  // true, or return false if nothing is ready (empty, or waiting on a timer:
  // see next_ready()).
  virtual bool dequeue(Time now, Batch& out) = 0;

  // Earliest time >= now at which dequeue() could return something without
  // a new arrival: `now` if ready, a timer expiry, or kNever when empty.
  virtual Time next_ready(Time now) const { return length_packets() ? now : kNever; }

  // When the packet on the wire that still counts in the buffer (§2,
  // fifo_buffer.hh) leaves it, or kNever if there is none. A dequeue() at or
  // after that time retires it even when it returns nothing: an adapter
  // whose link goes idle calls it then, so that the occupancy and the flow
  // table do not keep a packet whose transmission has ended.
  virtual Time retire_at() const { return kNever; }

  // max(retire_at(), t), or kNever if nothing is on the wire: when a pull
  // at or after `t` retires it. The engine asks this after every
  // transmission with t = the link's end; a core answers it without
  // dividing when the packet's transmission ends by then (InService::
  // retires_at_or_after): the division and the wait on its result held ~6 %
  // of `engine_bench 0.5 'efd(capacity=300)'`'s samples in perf.
  virtual Time retire_at_or_after(Time t) const {
    const Time r = retire_at();
    return r == kNever || r > t ? r : t;
  }

  virtual uint64_t length_packets() const = 0;
  virtual uint64_t length_bytes() const = 0;
  const Counters& counters() const { return counters_; }

  // Clears every counter, to what a fresh core reports, keeping the packets
  // held and the mechanism's state (flow entries, running averages): an
  // adapter's `reset`. The high-waters restart from the present occupancy.
  // A core with counters of its own overrides this and calls it.
  virtual void reset_counters() {
    counters_ = Counters{};
    note_highwater();
  }

 protected:
  void drop(const Packet& p, DropReason why, Time now) {
    ++counters_.dropped[static_cast<int>(why)];
    if (sink_) sink_->on_drop(p, why, now);
  }
  // Record the occupancy after an admission. A core on a hot path passes
  // what it knows; the short form asks the virtual length_*() once each.
  void note_highwater(uint64_t packets, uint64_t bytes) {
    if (packets > counters_.highwater_packets) counters_.highwater_packets = packets;
    if (bytes > counters_.highwater_bytes) counters_.highwater_bytes = bytes;
  }
  void note_highwater() { note_highwater(length_packets(), length_bytes()); }
  Counters counters_;
  DropSink* sink_ = nullptr;
};

}  // namespace tracelab
