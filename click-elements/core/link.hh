// tracelab queueing cores: an exact-rate output link (docs/reference/algorithms.md §0:
// "a link of rate C bit/s serves one packet at a time, non-preemptively;
// service time = 8*size/C").
//
// Departure times are integers in picoseconds and carry no per-packet
// rounding error: the link keeps the fractional picoseconds of the current
// busy period as an exact remainder (numerator over the rate), so after any
// number of back-to-back packets the last departure is exactly
// ceil(start + 8e12 * sum(bytes) / C). At 10/40/100 Gb/s one byte is an
// integral number of picoseconds (800/200/80) and the remainder stays 0; at
// rates such as 3 Gb/s it is what keeps a million packets from drifting.
//
// The reported departure of one packet is rounded up to the picosecond; the
// remainder is dropped when the link goes idle (a new busy period starts at
// an integral `now`).
//
// Not implemented: preemption, per-frame overhead (preamble, IFG: add it to
// `bytes` if you want it on the wire), propagation delay (a constant the
// caller adds).
#pragma once

#include <cstdint>

#include "queue_core.hh"

namespace tracelab {

class ExactLink {
 public:
  explicit ExactLink(uint64_t bits_per_second) : rate_(bits_per_second ? bits_per_second : 1) {}

  uint64_t rate() const { return rate_; }

  // The link is free at this time (the departure of the last packet sent).
  Time busy_until() const { return end_ps_ + (end_frac_ ? 1 : 0); }
  bool idle_at(Time now) const { return now >= busy_until(); }

  // Send `bytes` offered at `now`: transmission starts at the end of the
  // previous packet, or at `now` if the link was idle, and the returned time
  // is when the last bit leaves (rounded up to the picosecond).
  //
  // A packet offered exactly at busy_until() continues the busy period from
  // the exact (fractional) end of the previous one: that is what a caller
  // driving the link back to back does, and it must not add a rounding step
  // per packet.
  Time send(Time now, uint64_t bytes) {
    if (now > busy_until()) {
      end_ps_ = now;
      end_frac_ = 0;
    }
    unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8u * kPsPerSecond + end_frac_;
    end_ps_ += static_cast<Time>(num / rate_);
    end_frac_ = static_cast<uint64_t>(num % rate_);
    ++packets_;
    bytes_ += bytes;
    return busy_until();
  }

  uint64_t packets() const { return packets_; }
  uint64_t bytes() const { return bytes_; }

 private:
  static constexpr uint64_t kPsPerSecond = 1000000000000ULL;
  uint64_t rate_;
  Time end_ps_ = 0;        // exact end of the last transmission is
  uint64_t end_frac_ = 0;  // end_ps_ + end_frac_ / rate_ picoseconds
  uint64_t packets_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace tracelab
