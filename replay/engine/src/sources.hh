// Traffic sources: each yields packets in non-decreasing time order.
//
//   pcap(path=F, speed=2 | rate=1G | load=0.9, classes='RULES', filter='BPF', hops=0-1)
//   poisson(rate=1M | load=0.5, size=DIST, cls=0, flows=1, start=0s, stop=1s, count=N, hops=...)
//   cbr(...same as poisson, or interval=67200ps)
//   onoff(flows=80, rate=80k | peak=..., on=exp(350ms), off=exp(650ms), size=200, cls=0, ...)
//   flows(rate=100 | load=0.8, size=bzipf(1.1,6,6667), pkt=1500, peak=100M, cls=0, ...)
//
// `rate` of poisson/cbr is in packets/s, of onoff in bits/s per flow (mean;
// an ON period D is a burst of max(1, round(D/gap)) packets, ns-2's rule),
// of flows in flows/s; `load` is relative to `link` (default: the first
// node's link rate). Every random source is seeded from the run seed and the
// source's position (or its own `seed=`).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "queue_core.hh"

namespace tracelab::engine {

// One packet offered by a source. `pkt.arrival` is its time; `data` points
// into the source's own buffer (valid until the next call) when the source
// carries frames (pcap), else is null.
struct Arrival {
  Packet pkt;
  const uint8_t* data = nullptr;
  uint32_t caplen = 0;
  uint32_t wire_len = 0;
  int64_t ts_sec = 0, ts_nsec = 0;  // capture timestamp of a recorded packet
};

// A time that may lie beyond the engine's clock (Time, 2^63 ps = 106 days):
// an arrival's exact time before the engine skips idle time (engine.cc).
using WideTime = __int128;
// The latest instant the clock holds; a movable source reports an arrival
// beyond it at this instant until the engine moves it (move_earlier()).
constexpr Time kLastInstant = kNever - 1;

struct SourceContext {
  uint64_t link_bps = 10000000000ULL;  // reference rate for `load=`
  uint64_t seed = 1;                   // run seed
  uint32_t index = 0;                  // position among the run's sources
  uint32_t nodes = 1;                  // nodes in series, to check `hops=`
};

class Source {
 public:
  virtual ~Source() = default;
  // Fills `a` with the next packet; false when the source is exhausted.
  virtual bool next(Arrival& a) = 0;
  // Named counts (packets read, skipped by reason) for metrics.json.
  virtual std::vector<std::pair<std::string, uint64_t>> counts() const = 0;
  // Pcap link type of the frames carried, or -1 for synthetic packets.
  virtual int linktype() const { return -1; }
  // False when the source never ends by itself (needs a stop time).
  virtual bool bounded() const = 0;
  // Whether the engine may move this source's arrivals earlier to skip an
  // idle gap (a recorded trace: its times are data; a synthetic source's
  // times always fit the clock, and it is never moved).
  virtual bool movable() const { return false; }
  // The exact time of the arrival next() returned last, on the engine's
  // clock, beyond kLastInstant if it lies there. Movable sources only.
  virtual WideTime exact_time() const { throw std::logic_error("exact_time() of an immovable source"); }
  // Moves the arrival next() returned last and every later one `d` earlier;
  // returns that arrival's new time. Movable sources only.
  virtual Time move_earlier(WideTime d) {
    (void)d;
    throw std::logic_error("move_earlier() of an immovable source");
  }

  const std::string& spec() const { return spec_; }
  uint32_t first_node() const { return first_node_; }
  uint32_t last_node() const { return last_node_; }

 protected:
  std::string spec_;
  uint32_t first_node_ = 0, last_node_ = 0;
  friend std::unique_ptr<Source> make_source(const std::string&, const SourceContext&);
};

// Throws SpecError on a bad spec, std::runtime_error on an unreadable file.
std::unique_ptr<Source> make_source(const std::string& spec_text, const SourceContext& ctx);

std::vector<std::pair<std::string, std::string>> known_sources();

}  // namespace tracelab::engine
