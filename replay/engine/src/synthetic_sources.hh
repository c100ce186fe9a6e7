// The synthetic sources' shared part and the Poisson/CBR source, in a
// header so that the engine's lean single-node loop can call
// PacketSource::next() directly (it is `final`) and inline it, rather than
// through Source's virtual next(): engine_bench's source (docs/performance-history.md,
// engine step 9). The constructors, which parse the spec, stay in sources.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "distributions.hh"
#include "rng.hh"
#include "sources.hh"

namespace tracelab {
class Spec;
}

namespace tracelab::engine {

// Nearest picosecond of a non-negative time kept as a double (cheaper than
// std::llround, which handles negative values and errno).
inline Time round_ps(double t) { return static_cast<Time>(t + 0.5); }

// Uniform in [0, n) without a division (Lemire's multiply-shift; the bias
// is below n / 2^64).
inline uint64_t below(uint64_t r, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}

// What every synthetic source shares: class, sizes, flow identities, window.
struct SyntheticCommon {
  SyntheticCommon(Spec& s, const SourceContext& ctx, const char* size_default);
  bool done(Time t) const { return t >= stop || (count && emitted >= count); }
  uint64_t flow_hash(uint64_t flow) const { return mix64(salt ^ flow); }
  void fill(Arrival& a, Time t, uint64_t flow, uint32_t length) { fill_hashed(a, t, flow_hash(flow), length); }
  void fill_hashed(Arrival& a, Time t, uint64_t hash, uint32_t length) {
    a.pkt = Packet{};
    a.pkt.arrival = t;
    a.pkt.length = length;
    a.pkt.flow_hash = a.pkt.conn_hash = hash;
    a.pkt.cls = cls;
    a.data = nullptr;
    ++emitted;
  }
  uint32_t draw_size() { return constant_size ? constant_size : static_cast<uint32_t>(size.sample_count(rng, 1)); }

  Rng rng;
  Distribution size;
  uint32_t constant_size = 0;  // the size when it is a constant: the per-packet path skips the draw
  uint8_t cls = 0;
  Time start = 0, stop = kNever;
  uint64_t count = 0, emitted = 0, salt = 0, link = 0;
};

// Poisson (exponential gaps) or CBR (constant gaps) packet arrivals; each
// packet belongs to one of `flows` flows, drawn uniformly.
class PacketSource final : public Source {
 public:
  PacketSource(Spec& s, const SourceContext& ctx, bool poisson);
  bool next(Arrival& a) override {
    const Time t = round_ps(t_);
    if (c_.done(t)) return false;
    const uint64_t flow = flows_ == 1 ? 0 : below(c_.rng.next_u64(), flows_);
    c_.fill_hashed(a, t, flow_hashes_.empty() ? c_.flow_hash(flow) : flow_hashes_[flow], c_.draw_size());
    t_ += poisson_ ? -mean_gap_ * std::log(open_unit(c_.rng)) : mean_gap_;
    return true;
  }
  std::vector<std::pair<std::string, uint64_t>> counts() const override { return {{"generated", c_.emitted}}; }
  bool bounded() const override { return c_.stop != kNever || c_.count != 0; }

 private:
  SyntheticCommon c_;
  bool poisson_;
  uint64_t flows_ = 1;
  // Every flow's hash, computed once when there are at most
  // kTabulatedFlows flows (32 KB), instead of a mix64() per packet.
  static constexpr uint64_t kTabulatedFlows = 4096;
  std::vector<uint64_t> flow_hashes_;
  double mean_gap_ = 0;
  double t_ = 0;
};

}  // namespace tracelab::engine
