// tracelab queueing cores: buffer vocabulary shared by the FIFO, two-level
// (EFD family, Run2C, SIFT, X-Protect, NCQ) and sorted (LAS, LARS, SCFQ) cores.
//
// Spec: docs/reference/algorithms.md §0 (buffer granularity), §2 (packet in service).
//
// ⚠AMB-1 resolution: in byte mode an arrival of `size` bytes does not fit
// when `bytes + size > capacity` ("would overflow"); in packet mode when
// `packets >= capacity`. The alternative ("already >= capacity") is the
// option `full_test = FullTest::kAlreadyFull`.
//
// The packet in service (§2): by default a packet leaves the buffer the
// moment dequeue() hands it to the link, which is what a Click Queue or an
// ns-3 QueueDisc does. With `in_service_link_bps > 0` the core instead keeps
// the packet counted in the buffer (and, in the flow-state cores, in its
// flow's entry) until its transmission ends at that rate, as the thesis
// model does; it is never pushed out. Retirement happens at the next
// dequeue() (the link is free again, so the transmission has ended) or at
// an enqueue() at or after the computed end of transmission. The core's
// default is 0 only because a core does not know its link's rate: the
// engine and ns-3's spec strings pass it, so the spec's semantics are their
// default. The high-water counts the packet in service (a full buffer of B
// reads B); length_packets() counts the waiting packets only.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "queue_core.hh"

namespace tracelab {

enum class Granularity : uint8_t { kPackets, kBytes };
enum class FullTest : uint8_t { kWouldOverflow, kAlreadyFull };

struct BufferConfig {
  Granularity granularity = Granularity::kPackets;
  uint64_t capacity = 300;                        // packets, or bytes in byte mode (300 pkts: [003 §4.4.1])
  FullTest full_test = FullTest::kWouldOverflow;  // byte mode only, ⚠AMB-1
  uint32_t min_packet_bytes = 40;                 // byte mode only: sizes the packet slots, see slots()
  uint64_t in_service_link_bps = 0;               // 0 = the in-service packet leaves the buffer at dequeue

  // Packet slots to allocate. In byte mode a buffer of B bytes holds at most
  // B / min_packet_bytes packets; an arrival finding every slot taken (only
  // possible with packets below min_packet_bytes) is dropped as buffer_full.
  uint32_t slots() const {
    uint64_t n = granularity == Granularity::kPackets ? capacity : capacity / min_packet_bytes + 1;
    if (n == 0 || n > (1u << 26)) throw std::invalid_argument("buffer capacity out of range");
    return static_cast<uint32_t>(n);
  }
};

// Occupancy of one physical buffer, in-service packet included.
class BufferMeter {
 public:
  explicit BufferMeter(const BufferConfig& c) : cfg_(c), slots_(c.slots()) {}

  // Would a packet of `length` bytes fit now, without removing anything?
  bool fits(uint32_t length) const {
    if (packets_ >= slots_) return false;
    if (cfg_.granularity == Granularity::kPackets) return packets_ < cfg_.capacity;
    if (cfg_.full_test == FullTest::kAlreadyFull) return bytes_ < cfg_.capacity;
    return bytes_ + length <= cfg_.capacity;
  }
  void add(uint32_t length) {
    ++packets_;
    bytes_ += length;
  }
  void remove(uint32_t length) {
    --packets_;
    bytes_ -= length;
  }
  uint64_t packets() const { return packets_; }
  uint64_t bytes() const { return bytes_; }
  const BufferConfig& config() const { return cfg_; }

 private:
  BufferConfig cfg_;
  uint32_t slots_;
  uint64_t packets_ = 0;
  uint64_t bytes_ = 0;
};

// The packet on the wire when `in_service_link_bps > 0`: only what retiring
// it needs, its length and when its transmission started. Its end is never
// stored: a retirement at the next dequeue() (the Click adapter's IN_SERVICE
// true, a link of 1 b/s) needs none, an arrival's test compares without
// dividing, and only retire_at() divides (serialization_time()); the
// engine asks retires_at_or_after(), which divides only when the link ends
// the transmission before its rounded-up end. Holding the
// whole Packet and dividing at every dequeue() cost TLFifoQueue ~11
// ns/packet (click/bench.sh; click/README.md).
class InService {
 public:
  void start(uint32_t length, Time now) {
    length_ = length;
    start_ = now;
    busy_ = true;
  }
  void end() { busy_ = false; }
  bool busy() const { return busy_; }
  uint32_t length() const { return busy_ ? length_ : 0; }
  // Has the transmission ended by `now` at `bps`: now >= start +
  // serialization_time(length, bps), exactly. That time is ceil(length * 8e12
  // / bps) ps, and ceil(x / bps) <= e if and only if x <= e * bps, which
  // 128-bit products hold without overflow.
  bool ended(Time now, uint64_t bps) const {
    const Time elapsed = now - start_;
    return elapsed >= 0 &&
           static_cast<unsigned __int128>(length_) * 8000000000000ULL <= static_cast<unsigned __int128>(elapsed) * bps;
  }
  Time ends(uint64_t bps) const { return busy_ ? start_ + serialization_time(length_, bps) : kNever; }
  // max(ends(bps), t) without dividing when the transmission has ended by
  // `t`, which it has unless the link ends it before the rounded-up end
  // (a rate that does not divide 8e12, no overhead).
  Time retires_at_or_after(Time t, uint64_t bps) const {
    if (!busy_) return kNever;
    return ended(t, bps) ? t : start_ + serialization_time(length_, bps);
  }

 private:
  Time start_ = 0;
  uint32_t length_ = 0;
  bool busy_ = false;
};

// Fixed-capacity double-ended ring: push/pop at both ends, no allocation
// after construction. Power-of-two slots, positions wrapped with a mask:
// ChuTQ moved onto it from a 64-bit modulo per push/pop/front, engine_bench
// chutq(policy=dcf) 715 -> 708 instructions/packet, CPU RTF 0.91 -> 1.07
// (4afcb7d; docs/performance-history.md, engine step 2).
template <typename T>
class Ring {
 public:
  explicit Ring(uint32_t capacity) {
    uint32_t n = 1;
    while (n < capacity) n <<= 1;
    buf_.resize(n);
    mask_ = n - 1;
  }
  bool empty() const { return size_ == 0; }
  uint32_t size() const { return size_; }
  bool full() const { return size_ == buf_.size(); }
  const T& front() const { return buf_[head_]; }
  const T& back() const { return buf_[(head_ + size_ - 1) & mask_]; }
  const T& at(uint32_t i) const { return buf_[(head_ + i) & mask_]; }  // i-th from the front
  void push_back(const T& p) { buf_[(head_ + size_++) & mask_] = p; }
  T pop_front() {
    T p = buf_[head_];
    head_ = (head_ + 1) & mask_;
    --size_;
    return p;
  }
  T pop_back() { return buf_[(head_ + --size_) & mask_]; }
  // Copy-free forms for the hot path: pop_front_to() writes the head
  // straight into its destination; pop_back_ref() returns the slot itself,
  // valid until the next push_back().
  void pop_front_to(T& dst) {
    dst = buf_[head_];
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  const T& pop_back_ref() { return buf_[(head_ + --size_) & mask_]; }
  void drop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }

 private:
  std::vector<T> buf_;
  uint32_t mask_ = 0;
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

using PacketDeque = Ring<Packet>;

}  // namespace tracelab
