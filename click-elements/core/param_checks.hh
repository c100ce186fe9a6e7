// Parameter range checks of every core's configuration, in one place for the
// three adapters (replay engine, Click elements, ns-3 queue discs), which call
// check_params(config) where they build a core and report a non-empty result
// as a configuration error. Ranges: docs/reference/algorithms.md; where it
// gives none, the physically meaningful one (noted below).
//
// A message names the parameter by its spec key (the names of algorithms.md
// and of the engine's element specs: p, ts, th, p_ins, beta, ...), its value
// and the allowed range, e.g. "p=2 out of range (0, 1]". The checks only
// reject; they change no default and no decision for an accepted value.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "basicq.hh"
#include "chumq.hh"
#include "chutq.hh"
#include "efd.hh"
#include "fifo_buffer.hh"
#include "jumbogen.hh"
#include "jumbogen_red.hh"
#include "lars.hh"
#include "las.hh"
#include "mtq_qtl.hh"
#include "ncq.hh"
#include "run2c.hh"
#include "scfq.hh"
#include "sift.hh"
#include "xprotect.hh"

namespace tracelab {

// Collects the first violation; every check is skipped once one is found.
class ParamCheck {
 public:
  // lo <(=) v <(=) hi; `range` is the allowed range as printed.
  ParamCheck& in(const char* name, double v, double lo, bool lo_open, double hi, bool hi_open, const char* range) {
    const bool ok = (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);  // false for NaN
    if (error_.empty() && !ok) error_ = std::string(name) + "=" + fmt(v) + " out of range " + range;
    return *this;
  }
  ParamCheck& unit(const char* name, double v) { return in(name, v, 0, true, 1, false, "(0, 1]"); }
  ParamCheck& at_least(const char* name, double v, double lo, const char* range) {
    return in(name, v, lo, false, 1e300, false, range);
  }
  ParamCheck& positive(const char* name, double v) { return in(name, v, 0, true, 1e300, false, "(0, inf)"); }
  // A sub-configuration's result.
  ParamCheck& also(const std::string& e) {
    if (error_.empty()) error_ = e;
    return *this;
  }
  // A constraint between parameters, `what` naming them and their values.
  ParamCheck& require(bool ok, const std::string& what) {
    if (error_.empty() && !ok) error_ = what;
    return *this;
  }
  const std::string& error() const { return error_; }

  static std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.10g", v);
    return b;
  }

 private:
  std::string error_;
};

// Durations are checked in seconds (Time is picoseconds).
inline double param_seconds(Time t) { return static_cast<double>(t) / static_cast<double>(kSecond); }

// §0: capacity >= 1 packet / byte (at most 2^26 packet slots, the buffer's
// own limit, see BufferConfig::slots()); min_packet >= 1 byte.
inline std::string check_params(const BufferConfig& b) {
  ParamCheck c;
  c.at_least("min_packet", b.min_packet_bytes, 1, "[1, inf) bytes");
  if (b.granularity == Granularity::kPackets) {
    c.in("capacity", static_cast<double>(b.capacity), 1, false, 1u << 26, false, "[1, 2^26] packets");
  } else {
    c.at_least("capacity", static_cast<double>(b.capacity), 1, "[1, inf) bytes");
    if (b.min_packet_bytes > 0)
      c.require(b.capacity / b.min_packet_bytes + 1 <= (1u << 26),
                "capacity=" + std::to_string(b.capacity) + " out of range: at most 2^26 packets of min_packet=" +
                    std::to_string(b.min_packet_bytes) + " bytes");
  }
  return c.error();
}

// Not in algorithms.md: max_flows in [1, 2^28] (the flow tables' limit),
// gc >= 0 (0 = never scan), idle > 0.
inline std::string check_params(const FlowStateConfig& f) {
  return ParamCheck()
      .in("max_flows", f.max_flows, 1, false, 1u << 28, false, "[1, 2^28]")
      .at_least("gc", param_seconds(f.gc_interval), 0, "[0, inf) s")
      .in("idle", param_seconds(f.idle_timeout), 0, true, 1e300, false, "(0, inf) s")
      .error();
}

inline std::string check_params(const TwoLevelConfig& q) { return check_params(q.buffer); }

// §2.1/§2.2: th > 0 (bytes, or packets for PEFD).
inline std::string check_params(const EfdConfig& e) {
  return ParamCheck()
      .at_least("th", static_cast<double>(e.threshold), 1, "[1, inf)")
      .also(check_params(e.queue))
      .error();
}

// §2.4: th > 0 bytes.
inline std::string check_params(const Run2cConfig& r) {
  return ParamCheck()
      .at_least("th", static_cast<double>(r.threshold), 1, "[1, inf) bytes")
      .also(check_params(r.queue))
      .also(check_params(r.flows))
      .error();
}

// §2.5: p in (0, 1] (E[N] = Ts/p), Ts >= 1.
inline std::string check_params(const SiftConfig& s) {
  return ParamCheck()
      .unit("p", s.probability)
      .at_least("ts", s.sample_threshold, 1, "[1, inf)")
      .also(check_params(s.queue))
      .also(check_params(s.flows))
      .error();
}

// §2.6: p_ins in (0, 1], th > 0 bytes.
inline std::string check_params(const XProtectConfig& x) {
  return ParamCheck()
      .unit("p_ins", x.insert_probability)
      .at_least("th", static_cast<double>(x.threshold), 1, "[1, inf) bytes")
      .also(check_params(x.queue))
      .also(check_params(x.flows))
      .error();
}

// §3.1.
inline std::string check_params(const LasConfig& l) {
  return ParamCheck().also(check_params(l.buffer)).also(check_params(l.flows)).error();
}

// §3.2: beta in (0, 1] (a fading factor; 1 = LAS), tau > 0.
inline std::string check_params(const LarsConfig& l) {
  return ParamCheck()
      .unit("beta", l.beta)
      .in("tau", param_seconds(l.tau), 0, true, 1e300, false, "(0, inf) s")
      .also(check_params(l.buffer))
      .also(check_params(l.flows))
      .error();
}

// §3.3.
inline std::string check_params(const ScfqConfig& s) { return check_params(s.buffer); }

// §4: ncqthresh in (0, 1] (a share of the arrivals), alpha in (0, 1)
// (Eq.2: 0 < α < 1); size thresholds >= 1 byte, NCQ+: size_thresh1 <
// size_thresh2 (tiny below small).
inline std::string check_params(const NcqConfig& n) {
  ParamCheck c;
  c.unit("ncqthresh", n.ncqthresh1);
  if (n.variant == NcqVariant::kNcq) {
    c.at_least("size_thresh", n.size_thresh, 1, "[1, inf) bytes");
  } else {
    c.in("alpha", n.alpha, 0, true, 1, true, "(0, 1)")
        .at_least("size_thresh1", n.size_thresh1, 1, "[1, inf) bytes")
        .require(n.size_thresh1 < n.size_thresh2,
                 "size_thresh1=" + std::to_string(n.size_thresh1) +
                     " out of range: must be below size_thresh2=" + std::to_string(n.size_thresh2));
  }
  return c.also(check_params(n.queue)).error();
}

// §6: mtu in [64, 65535] bytes (an IP datagram), capacity in [1, 2^26]
// packets (NOT IN SEEDS), timers > 0 and strictly ascending (T_1 < ... < T_N).
inline std::string check_chunk_params(uint32_t mtu, size_t capacity) {
  return ParamCheck()
      .in("mtu", mtu, 64, false, 65535, false, "[64, 65535] bytes")
      .in("capacity", static_cast<double>(capacity), 1, false, 1u << 26, false, "[1, 2^26] packets")
      .error();
}
inline std::string check_chunk_timers(const std::vector<Time>& timers) {
  ParamCheck c;
  c.require(!timers.empty(), "timers: at least one timer");
  for (size_t i = 0; i < timers.size(); ++i) {
    c.in("timers", param_seconds(timers[i]), 0, true, 1e300, false, "(0, inf) s");
    if (i > 0)
      c.require(timers[i] > timers[i - 1], "timers=" + ParamCheck::fmt(param_seconds(timers[i])) +
                                               " s out of range: timers must be strictly ascending");
  }
  return c.error();
}
inline std::string check_params(const BasiCQConfig& b) { return check_chunk_params(b.mtu, b.capacity_packets); }
inline std::string check_params(const ChuMQConfig& m) {
  return ParamCheck().also(check_chunk_timers(m.timers)).also(check_chunk_params(m.mtu, m.capacity_packets)).error();
}
// link_bps >= 0 (0 = never blocked).
inline std::string check_params(const ChuTQConfig& t) {
  return ParamCheck().also(check_chunk_timers(t.timers)).also(check_chunk_params(t.mtu, t.capacity_packets)).error();
}

// §7: capacity >= 1 packet ([004 §4]: 200), link rate > 0 (d = backlog / C).
inline std::string check_params(const MtqQtlConfig& m) {
  return ParamCheck()
      .at_least("capacity", static_cast<double>(m.capacity_packets), 1, "[1, inf) packets")
      .positive("rate", static_cast<double>(m.link_bps))
      .error();
}

// §5.1: mtu at most 65535 bytes and above the outer header, jfet > 0,
// queues >= 1, capacity >= 1 (NOT IN SEEDS).
inline std::string check_params(const JumboGenConfig& j) {
  return ParamCheck()
      .in("mtu", j.mtu, j.outer_header + 1.0, false, 65535, false, "(outer header, 65535] bytes")
      .in("jfet", param_seconds(j.jfet), 0, true, 1e300, false, "(0, inf) s")
      .at_least("queues", static_cast<double>(j.queues), 1, "[1, inf)")
      .at_least("capacity", static_cast<double>(j.capacity_packets), 1, "[1, inf) packets")
      .error();
}

// §5.3 (RED): 0 <= min_th <= max_th, max_p in [0, 1] (0: no early drop),
// w_q in (0, 1], 0 <= min_pkt_drop <= max_pkt_drop <= 1 (fractions of N),
// jg_fraction_weight in (0, 1] (an EWMA weight), capacity and ring slots >= 1.
inline std::string check_params(const JumboRedConfig& r) {
  return ParamCheck()
      .at_least("min_th", r.min_th, 0, "[0, max_th]")
      .in("max_th", r.max_th, r.min_th, false, 1e300, false, "[min_th, inf)")
      .in("max_p", r.max_p, 0, false, 1, false, "[0, 1]")
      .unit("w_q", r.w_q)
      .in("min_pkt_drop", r.min_pkt_drop, 0, false, 1, false, "[0, 1]")
      .in("max_pkt_drop", r.max_pkt_drop, r.min_pkt_drop, false, 1, false, "[min_pkt_drop, 1]")
      .unit("jg_fraction_weight", r.jg_fraction_weight)
      .at_least("capacity", static_cast<double>(r.capacity), 1, "[1, inf)")
      .at_least("ring_slots", static_cast<double>(r.ring_slots), 1, "[1, inf)")
      .error();
}

}  // namespace tracelab
