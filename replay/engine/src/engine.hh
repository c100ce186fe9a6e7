// The embedded replay engine: sources -> node -> node -> ... in virtual time.
//
// Each node is one queueing core of click-elements/core followed by an exact
// output link (rate C, optional per-frame overhead, propagation delay). Time
// is integer picoseconds throughout; serialization times never round.
//
// A packet is delivered when its last bit has crossed the propagation delay
// of the link of its last node; until then it is "in flight".
//
// Order of events at the same instant (documented because golden outputs
// depend on it): deliveries (in time order across nodes), then every link
// that becomes free pulls its next batch (node order), then packets arriving
// from an upstream link (node order), then packets from the sources (source
// order). A packet arriving at an idle link is pulled at once, in the same
// instant.
//
// Not implemented yet: chunk encapsulation overhead beyond what a core reports in Batch::wire_bytes;
// per-hop rewriting of the delay budget by the engine (cores that consume
// it, QTL, update Packet::budget themselves).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "metrics.hh"
#include "queue_core.hh"
#include "sources.hh"

namespace tracelab::engine {

struct NodeConfig {
  std::string element = "fifo(capacity=300)";
  uint64_t rate_bps = 10000000000ULL;
  Time prop_delay = 0;
  uint32_t overhead_bytes = 0;  // per transmission, e.g. 20 for preamble + inter-frame gap
  // Per-transmission processing floor: a transmission lasts at least this
  // long (a router forwarding at most 1/min_service packets or chunks per
  // second, e.g. 200 ns = the 5 M PPS edge of [000 §5.1]).
  Time min_service = 0;
};

struct ClassConfig {
  std::string name;
  Time budget = kNever;  // delay budget: R_v, EPLR, and Packet::budget at ingress (chunking W_max)
  Time qtl = kNever;     // if set: stamp a QTL header of this value at ingress (kFlagHasQtl)
  Time mtq = kNever;     // if set: stamp an MTQ header (whole microseconds, kFlagHasMtq)
};

struct RunConfig {
  std::vector<std::string> sources;
  std::vector<NodeConfig> nodes = {NodeConfig{}};
  std::vector<ClassConfig> classes;  // index = class id; missing classes: no budget
  uint64_t seed = 1;
  Time until = kNever;    // stop the clock; what is still queued is reported as queued
  Time measure_from = 0;  // class metrics count packets created in [from, until)
  Time measure_until = kNever;
  double router_pps = 5e6;                  // for eta = transmissions per second / router_pps ([000 §6.8])
  std::string out_pcap;                     // delivered packets in delivery order, timestamped at delivery
  bool detail = false;                      // keep one record per packet
  uint64_t max_delay_samples = 1ULL << 24;  // per distribution; beyond, quantiles come from a histogram
  uint32_t batch_capacity = 4096;           // packets one dequeue may return (chunks)
};

struct ClassResult {
  std::string name;
  Time budget = kNever;
  uint64_t offered = 0, offered_bytes = 0, delivered = 0, delivered_bytes = 0;
  uint64_t dropped[kDropReasons] = {0, 0, 0, 0};
  uint64_t dropped_total = 0, violations = 0;
  uint64_t queued_end = 0;  // still in the network at the end: queued or on a link
  double r_v = 0;           // violations / delivered
  double eplr = 0;          // (dropped + violations) / offered ([004 §1])
  Quantiles queue_delay, latency, excess;
};

struct NodeResult {
  std::string element;
  uint64_t rate_bps = 0;
  Time prop_delay = 0;
  uint64_t offered = 0, enqueued = 0, served = 0, queued_end = 0;
  uint64_t dropped[kDropReasons] = {0, 0, 0, 0};
  uint64_t highwater_packets = 0, highwater_bytes = 0;
  uint64_t transmissions = 0, wire_bytes = 0;  // chunks (or packets) put on the link
  double mean_transmission_bytes = 0, mean_packets_per_transmission = 0;
  uint64_t min_transmission_bytes = 0, max_transmission_bytes = 0;
  Time busy = 0;                // link busy time
  double mean_queue_delay = 0;  // ps, over the packets this node transmitted
  double utilization = 0;       // busy / run span
  double eta = 0;               // transmissions per second / router_pps
  double out_bps = 0;           // wire bits per second
  bool has_flow_table = false;
  double flow_table_mean = 0;  // time-weighted
  uint64_t flow_table_max = 0;
  uint64_t flow_table_longest_probe = 0;  // at the end of the run: the seed at work (table_seed)
  std::vector<Time> flow_table_time_at;   // picoseconds spent at each table size
};

struct Detail {  // one entry per packet, in the order packets were offered
  std::vector<uint32_t> source, length;
  std::vector<uint8_t> cls, fate, node;         // fate: 0 delivered, 1 + DropReason, 255 still queued
  std::vector<Time> created, end, queue_delay;  // end: delivery or drop time
  std::vector<uint64_t> flow;                   // Packet::flow_hash
};

struct RunResult {
  std::vector<ClassResult> classes;
  ClassResult overall;
  std::vector<NodeResult> nodes;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, uint64_t>>>> sources;
  // Conservation over every packet of the run (not only the measured ones).
  uint64_t offered = 0, delivered = 0, dropped = 0, queued = 0, in_flight = 0;
  // Exact times, idle time skipped by the clock included (see idle_skipped).
  WideTime first_arrival = 0, last_arrival = 0, end_time = 0;
  WideTime span = 0;  // measured window: [first, last] source arrival, or the measure window
  // Idle time the engine's clock skipped (engine.cc, skip_idle): the sum,
  // over idle gaps of a recorded trace that would carry the clock past 2^62
  // ps, of each gap's length beyond 2^60 ps (13 days). Per-packet detail
  // times and the flow-table time at each size are on that clock.
  WideTime idle_skipped = 0;
  double mpps_in = 0;   // offered per virtual second
  double mpps_out = 0;  // transmissions of the last node per virtual second
  double wall_seconds = 0;
  double wall_mpps = 0;  // offered packets per wall-clock second
  Detail detail;
};

class Engine {
 public:
  // Builds every node and source; throws SpecError or std::runtime_error.
  explicit Engine(const RunConfig& cfg);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs to the end (sources exhausted and every queue drained, or `until`).
  // Throws ConservationError if packets were created or lost.
  RunResult run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ConservationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tracelab::engine
