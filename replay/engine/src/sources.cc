#include "sources.hh"

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <queue>
#include <stdexcept>

#include "decode.hh"
#include "distributions.hh"
#include "rng.hh"
#include "spec.hh"
#include "synthetic_sources.hh"

namespace tracelab::engine {

namespace {

// A packets- or flows-per-second value: 312500, 1.5M, 2.5e5.
double parse_per_second(Spec& s, const char* key) {
  const std::string v = s.string(key, "");
  uint64_t n = 0;
  if (parse_count(v, n) && n > 0) return static_cast<double>(n);
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !(d > 0))
    throw SpecError(s.name() + ": " + key + "='" + v + "' is not a positive rate (e.g. 1.5M, 312500)");
  return d;
}

// ---------------------------------------------------------------- class rules

// `dscp=46->0; port=5060->1; net=10.0.0.0/8->2; size<=200->1; else->3`:
// the first rule that matches gives the class; no match gives class 0.
class ClassRules {
 public:
  void parse(const std::string& text);
  uint8_t classify(const Decoded& d) const;

 private:
  enum class Field : uint8_t {
    kDscp,
    kPort,
    kSport,
    kDport,
    kProto,
    kNet,
    kSrc,
    kDst,
    kSizeLe,
    kSizeLt,
    kSizeGe,
    kSizeGt,
    kElse
  };
  struct Rule {
    Field field;
    uint32_t value = 0;
    uint8_t version = 0;  // for CIDR rules
    uint8_t addr[16] = {0};
    uint32_t prefix = 0;
    uint8_t cls = 0;
  };
  static bool in_net(const Rule& r, const Decoded& d, const uint8_t* addr) {
    if (d.ip_version != r.version) return false;
    uint32_t bits = r.prefix;
    for (int i = 0; bits > 0; ++i, bits = bits >= 8 ? bits - 8 : 0) {
      const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
      if ((addr[i] & mask) != (r.addr[i] & mask)) return false;
    }
    return true;
  }
  std::vector<Rule> rules_;
};

void ClassRules::parse(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) continue;
    auto bad = [&](const std::string& why) {
      throw SpecError("class rule '" + item + "': " + why +
                      " (form: MATCH->CLASS; MATCH = dscp=N, port=N, sport=N, dport=N, proto=tcp|udp|N, "
                      "net=CIDR, src=CIDR, dst=CIDR, size<=N, size<N, size>=N, size>N, else)");
    };
    const size_t arrow = item.find("->");
    if (arrow == std::string::npos) bad("missing '->CLASS'");
    Rule r;
    uint64_t cls = 0;
    if (!parse_count(item.substr(arrow + 2), cls) || cls > 255) bad("class must be 0..255");
    r.cls = static_cast<uint8_t>(cls);
    const std::string match = item.substr(0, arrow);
    static const struct {
      const char* prefix;
      Field field;
    } kForms[] = {{"size<=", Field::kSizeLe}, {"size>=", Field::kSizeGe}, {"size<", Field::kSizeLt},
                  {"size>", Field::kSizeGt},  {"dscp=", Field::kDscp},    {"sport=", Field::kSport},
                  {"dport=", Field::kDport},  {"port=", Field::kPort},    {"proto=", Field::kProto},
                  {"net=", Field::kNet},      {"src=", Field::kSrc},      {"dst=", Field::kDst}};
    bool found = false;
    if (match == "else") {
      r.field = Field::kElse;
      found = true;
    }
    for (const auto& f : kForms) {
      if (found || match.rfind(f.prefix, 0) != 0) continue;
      found = true;
      r.field = f.field;
      const std::string v = match.substr(std::strlen(f.prefix));
      uint64_t n = 0;
      if (f.field == Field::kNet || f.field == Field::kSrc || f.field == Field::kDst) {
        const size_t slash = v.find('/');
        const std::string host = v.substr(0, slash);
        if (inet_pton(AF_INET, host.c_str(), r.addr) == 1) {
          r.version = 4;
        } else if (inet_pton(AF_INET6, host.c_str(), r.addr) == 1) {
          r.version = 6;
        } else {
          bad("'" + host + "' is not an IPv4 or IPv6 address");
        }
        const uint32_t max_prefix = r.version == 4 ? 32 : 128;
        r.prefix = max_prefix;
        if (slash != std::string::npos && (!parse_count(v.substr(slash + 1), n) || n > max_prefix))
          bad("bad prefix length");
        if (slash != std::string::npos) r.prefix = static_cast<uint32_t>(n);
      } else if (f.field == Field::kProto && (v == "tcp" || v == "udp" || v == "icmp")) {
        r.value = v == "tcp" ? 6 : v == "udp" ? 17 : 1;
      } else {
        if (!parse_count(v, n) || n > 0xffffffffULL) bad("'" + v + "' is not a number");
        r.value = static_cast<uint32_t>(n);
      }
    }
    if (!found) bad("unknown match");
    rules_.push_back(r);
  }
}

uint8_t ClassRules::classify(const Decoded& d) const {
  for (const Rule& r : rules_) {
    bool hit = false;
    switch (r.field) {
      case Field::kDscp:
        hit = d.dscp == r.value;
        break;
      case Field::kPort:
        hit = d.has_ports && (d.sport == r.value || d.dport == r.value);
        break;
      case Field::kSport:
        hit = d.has_ports && d.sport == r.value;
        break;
      case Field::kDport:
        hit = d.has_ports && d.dport == r.value;
        break;
      case Field::kProto:
        hit = d.proto == r.value;
        break;
      case Field::kNet:
        hit = in_net(r, d, d.src) || in_net(r, d, d.dst);
        break;
      case Field::kSrc:
        hit = in_net(r, d, d.src);
        break;
      case Field::kDst:
        hit = in_net(r, d, d.dst);
        break;
      case Field::kSizeLe:
        hit = d.ip_length <= r.value;
        break;
      case Field::kSizeLt:
        hit = d.ip_length < r.value;
        break;
      case Field::kSizeGe:
        hit = d.ip_length >= r.value;
        break;
      case Field::kSizeGt:
        hit = d.ip_length > r.value;
        break;
      case Field::kElse:
        hit = true;
        break;
    }
    if (hit) return r.cls;
  }
  return 0;
}

uint8_t tcp_packet_flags(const Decoded& d) {
  if (d.proto != 6 || !d.has_ports) return 0;
  uint8_t f = kFlagTcp;
  const bool syn = d.tcp_flags & 0x02, fin = d.tcp_flags & 0x01, rst = d.tcp_flags & 0x04, ack = d.tcp_flags & 0x10;
  if (syn) f |= kFlagSyn;
  if (fin) f |= kFlagFin;
  if (ack && !syn && !fin && !rst && d.tcp_payload == 0) f |= kFlagPureAck;
  return f;
}

// ---------------------------------------------------------------- pcap

class PcapFile {
 public:
  explicit PcapFile(const std::string& path) : path_(path) {
    char err[PCAP_ERRBUF_SIZE] = {0};
    p_ = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
    if (!p_) throw std::runtime_error("cannot read pcap '" + path + "': " + err);
  }
  ~PcapFile() { pcap_close(p_); }
  PcapFile(const PcapFile&) = delete;
  PcapFile& operator=(const PcapFile&) = delete;
  int linktype() const { return pcap_datalink(p_); }
  // Only packets matching the BPF expression are returned by next().
  void set_filter(const std::string& expr) {
    bpf_program prog;
    if (pcap_compile(p_, &prog, expr.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
      throw SpecError("pcap filter '" + expr + "': " + pcap_geterr(p_));
    const int r = pcap_setfilter(p_, &prog);
    pcap_freecode(&prog);
    if (r != 0) throw SpecError("pcap filter '" + expr + "': " + pcap_geterr(p_));
  }
  // 1 = a packet, 0 = end of file; throws on a read error (e.g. a truncated record).
  bool next(pcap_pkthdr*& hdr, const u_char*& data) {
    const int r = pcap_next_ex(p_, &hdr, &data);
    if (r == 1) return true;
    if (r == PCAP_ERROR_BREAK) return false;
    throw std::runtime_error("pcap '" + path_ + "': " + pcap_geterr(p_) + " (after packet " + std::to_string(read_) +
                             ")");
  }
  uint64_t read_ = 0;

 private:
  std::string path_;
  pcap_t* p_ = nullptr;
};

int64_t ts_ns(const pcap_pkthdr* h) {
  return static_cast<int64_t>(h->ts.tv_sec) * 1000000000LL + h->ts.tv_usec;  // tv_usec holds ns here
}

class PcapSource final : public Source {
 public:
  PcapSource(Spec& s, const SourceContext& ctx) {
    path_ = s.string("path", "");
    if (path_.empty()) throw SpecError("pcap: path= is required");
    rules_.parse(s.string("classes", ""));
    start_ = s.time("start", 0);
    limit_ = s.count("count", 0);
    const bool by_speed = s.has("speed"), by_rate = s.has("rate"), by_load = s.has("load");
    if (by_speed + by_rate + by_load > 1) throw SpecError("pcap: give at most one of speed=, rate=, load=");
    const double speed = s.real("speed", 1.0);
    const uint64_t rate = s.rate("rate", 0);
    const double load = s.real("load", 0.0);
    const uint64_t link = s.rate("link", ctx.link_bps);
    if (by_speed && !(speed > 0)) throw SpecError("pcap: speed must be positive");
    if (by_load && !(load > 0)) throw SpecError("pcap: load must be positive");
    filter_ = s.string("filter", "");
    file_ = open_file();
    if (!linktype_supported(file_->linktype()))
      throw std::runtime_error("pcap '" + path_ + "': link type " + std::to_string(file_->linktype()) +
                               " is not supported (Ethernet, raw IP, loopback, Linux SLL/SLL2 are)");
    if (by_speed) {
      scale_ = 1.0 / speed;
      speedup_ = speed;
    }
    if (by_rate || by_load) {
      const double target = by_rate ? static_cast<double>(rate) : load * static_cast<double>(link);
      const double recorded = recorded_bps();
      scale_ = recorded / target;
      speedup_ = target / recorded;
      file_ = open_file();  // rewind
    }
  }

  bool next(Arrival& a) override {
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    for (;;) {
      if (limit_ && emitted_ >= limit_) return false;
      if (!file_->next(h, data)) return false;
      ++file_->read_;
      Decoded d;
      const DecodeResult r = decode_frame(file_->linktype(), data, h->caplen, h->len, d);
      if (r != DecodeResult::kOk) {
        ++skipped_[static_cast<int>(r)];
        continue;
      }
      const int64_t ns = ts_ns(h);
      if (!have_first_) {
        first_ns_ = ns;
        have_first_ = true;
      }
      int64_t rel = ns - first_ns_;
      if (rel < last_rel_) {  // a timestamp going backwards: replay it at the previous time
        ++backwards_;
        rel = last_rel_;
      }
      last_rel_ = rel;
      a.pkt = Packet{};
      exact_ = replay_time(rel);
      a.pkt.arrival = on_clock();
      a.pkt.length = d.ip_length;
      a.pkt.flow_hash = d.flow_hash;
      a.pkt.conn_hash = d.conn_hash;
      a.pkt.tcp_seq = d.tcp_seq;
      a.pkt.tcp_ack = d.tcp_ack;
      a.pkt.flags = tcp_packet_flags(d);
      a.pkt.cls = rules_.classify(d);
      a.data = data;
      a.caplen = h->caplen;
      a.wire_len = h->len;
      a.ts_sec = h->ts.tv_sec;
      a.ts_nsec = h->ts.tv_usec;
      ++emitted_;
      return true;
    }
  }

  // The replay time of a packet `rel` ns after the first, before any idle
  // time is skipped: exact at the recorded speed; scaled in double where
  // the scaled time fits the clock (as ever: the same results), beyond it
  // divided by the speed-up in long double (exact for x1000).
  WideTime replay_time(int64_t rel) const {
    if (scale_ == 1.0) return static_cast<WideTime>(start_) + static_cast<WideTime>(rel) * kNanosecond;
    const double limit = static_cast<double>(kLastInstant - start_);
    if (rel <= std::numeric_limits<Time>::max() / kNanosecond) {
      const double scaled = static_cast<double>(rel * kNanosecond) * scale_;
      if (scaled < limit) return start_ + round_ps(scaled);
    }
    const long double scaled = static_cast<long double>(rel) * kNanosecond / speedup_;
    return static_cast<WideTime>(start_) + static_cast<WideTime>(std::floor(scaled + 0.5L));
  }
  // The last packet's time on the engine's clock: moved earlier by the idle
  // time skipped so far, held at kLastInstant while it lies beyond.
  Time on_clock() const {
    const WideTime t = exact_ - moved_;
    return t > kLastInstant ? kLastInstant : static_cast<Time>(t);
  }

  bool movable() const override { return true; }
  WideTime exact_time() const override { return exact_ - moved_; }
  Time move_earlier(WideTime d) override {
    moved_ += d;
    return on_clock();
  }

  std::vector<std::pair<std::string, uint64_t>> counts() const override {
    std::vector<std::pair<std::string, uint64_t>> c = {{"read", file_->read_}, {"replayed", emitted_}};
    for (int r = 1; r < 4; ++r)
      c.emplace_back(std::string("skipped_") + decode_result_name(DecodeResult(r)), skipped_[r]);
    c.emplace_back("timestamp_backwards_clamped", backwards_);
    return c;
  }
  int linktype() const override { return file_->linktype(); }
  bool bounded() const override { return true; }

 private:
  std::unique_ptr<PcapFile> open_file() {
    auto f = std::make_unique<PcapFile>(path_);
    if (!filter_.empty()) f->set_filter(filter_);
    return f;
  }

  // Mean bit rate of the IP packets of the file over its recorded span.
  double recorded_bps() {
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    double bits = 0;
    int64_t first = 0, last = 0;
    bool any = false;
    while (file_->next(h, data)) {
      Decoded d;
      if (decode_frame(file_->linktype(), data, h->caplen, h->len, d) != DecodeResult::kOk) continue;
      const int64_t ns = ts_ns(h);
      if (!any) first = last = ns;
      any = true;
      if (ns > last) last = ns;
      bits += 8.0 * d.ip_length;
    }
    if (!any || last == first)
      throw SpecError("pcap '" + path_ + "': cannot time-scale a trace whose IP packets span zero time");
    return bits / (static_cast<double>(last - first) * 1e-9);
  }

  std::string path_;
  std::string filter_;  // BPF expression; packets it rejects are never seen
  std::unique_ptr<PcapFile> file_;
  ClassRules rules_;
  Time start_ = 0;
  uint64_t limit_ = 0, emitted_ = 0, backwards_ = 0;
  uint64_t skipped_[4] = {0, 0, 0, 0};
  double scale_ = 1.0;
  double speedup_ = 1.0;  // 1 / scale_, as given when given (speed=)
  bool have_first_ = false;
  int64_t first_ns_ = 0, last_rel_ = 0;
  WideTime exact_ = 0;  // the last packet's replay time, idle skips not applied
  WideTime moved_ = 0;  // idle time the engine skipped (move_earlier())
};

// ---------------------------------------------------------------- synthetic

// A next-packet time and its flow, ordered for a min-heap (ties: lower id).
struct Pending {
  double t;
  uint64_t id;
  bool operator>(const Pending& o) const { return t > o.t || (t == o.t && id > o.id); }
};

// `flows` independent ON/OFF flows, each sending packets at a constant peak
// rate while ON ([004 §4]: exponential ON/OFF, CBR during ON). An ON period
// D drawn from `on` is a burst of N = max(1, round(D/gap)) packets one gap
// apart; the OFF period begins one gap after the burst's last packet. This
// is the rule of ns-2's Application/Traffic/Exponential and /Pareto
// (tools/expoo.cc, pareto.cc), which the seed's ns-2.27 ran: a burst holds
// E[on]/gap packets up to rounding (50.009 for 50 in E-MTQ's flows), so
// `rate=` is the mean rate, to 0.012 % there. A packet at the ON start and
// one per gap while inside D would send floor(D/gap) + 1 packets,
// 1/(1 − e^(−gap/E[on])) = 50.50 for exponential D: 1 % above `rate=`.
// (For ON periods of a few gaps the burst of at least one packet and the
// rounding make the mean exceed `rate=`: E[on] = 1 gap gives 1.35 packets.)
// A flow starts ON with probability E[on]/(E[on]+E[off]) with a fresh
// period (not the stationary residual), so the aggregate starts near its
// mean rate.
class OnOffSource final : public Source {
 public:
  OnOffSource(Spec& s, const SourceContext& ctx)
      : c_(s, ctx, "200"),
        on_(Distribution::parse(s.string("on", "exp(350ms)"), Distribution::Unit::kTime, "onoff on")),
        off_(Distribution::parse(s.string("off", "exp(650ms)"), Distribution::Unit::kTime, "onoff off")) {
    const uint64_t flows = s.count("flows", 1);
    if (flows == 0) throw SpecError("onoff: flows must be positive");
    const bool by_rate = s.has("rate"), by_peak = s.has("peak");
    if (by_rate == by_peak) throw SpecError("onoff: give exactly one of rate= (mean bits/s per flow) or peak=");
    double peak = by_peak ? static_cast<double>(s.rate("peak", 0)) : 0;
    if (by_rate) peak = static_cast<double>(s.rate("rate", 0)) * (on_.mean() + off_.mean()) / on_.mean();
    gap_ = 8.0 * c_.size.mean() * 1e12 / peak;
    flows_.resize(flows);
    std::vector<Pending> init;
    init.reserve(flows);
    const double p_on = on_.mean() / (on_.mean() + off_.mean());
    for (uint64_t i = 0; i < flows; ++i) {
      double t = static_cast<double>(c_.start);
      if (!c_.rng.bernoulli(p_on)) t += off_.sample(c_.rng);
      flows_[i].burst_left = draw_burst();
      init.push_back({t, i});
    }
    heap_ = decltype(heap_)(std::greater<Pending>(), std::move(init));
  }
  bool next(Arrival& a) override {
    const Pending p = heap_.top();
    const Time t = round_ps(p.t);
    if (c_.done(t)) return false;
    heap_.pop();
    c_.fill(a, t, p.id, c_.draw_size());
    Flow& f = flows_[p.id];
    double nt = p.t + gap_;
    if (--f.burst_left == 0) {  // burst sent: OFF from one gap after its last packet
      nt += off_.sample(c_.rng);
      f.burst_left = draw_burst();
    }
    heap_.push({nt, p.id});
    return true;
  }
  std::vector<std::pair<std::string, uint64_t>> counts() const override { return {{"generated", c_.emitted}}; }
  bool bounded() const override { return c_.stop != kNever || c_.count != 0; }

 private:
  struct Flow {
    uint64_t burst_left = 0;  // packets of the current burst not yet sent
  };
  // Packets in the burst of a fresh ON period: max(1, round(D/gap)), as
  // ns-2's `int(burstlen + .5)`; capped where a heavy tail exceeds 2^62.
  uint64_t draw_burst() {
    const double gaps = std::floor(on_.sample(c_.rng) / gap_ + 0.5);
    return gaps < 1 ? 1 : gaps >= 0x1p62 ? uint64_t{1} << 62 : static_cast<uint64_t>(gaps);
  }
  SyntheticCommon c_;
  Distribution on_, off_;
  double gap_ = 0;
  std::vector<Flow> flows_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> heap_;
};

// Poisson flow arrivals; each flow sends `size` packets (a count
// distribution) of `pkt` bytes at its own `peak` rate, open loop.
class FlowSource final : public Source {
 public:
  FlowSource(Spec& s, const SourceContext& ctx)
      : c_(s, ctx, "1500"),
        npkts_(Distribution::parse(s.string("packets", "bzipf(1.1,6,6667)"), Distribution::Unit::kBytes,
                                   "flows packets")) {
    const bool by_rate = s.has("rate"), by_load = s.has("load");
    if (by_rate == by_load) throw SpecError("flows: give exactly one of rate= (flows/s) or load=");
    const double peak = static_cast<double>(s.rate("peak", 100000000ULL));
    double per_s = 0;
    if (by_rate) {
      per_s = parse_per_second(s, "rate");
    } else {
      const double load = s.real("load", 0);
      if (!(load > 0)) throw SpecError("flows: load must be positive");
      per_s = load * static_cast<double>(c_.link) / (8.0 * c_.size.mean() * npkts_.mean());
    }
    mean_flow_gap_ = 1e12 / per_s;
    gap_ = 8.0 * c_.size.mean() * 1e12 / peak;
    next_flow_ = static_cast<double>(c_.start) - mean_flow_gap_ * std::log(open_unit(c_.rng));
  }
  bool next(Arrival& a) override {
    // A new flow arrives before (or with) the earliest pending packet.
    while (round_ps(next_flow_) < c_.stop && (heap_.empty() || next_flow_ <= heap_.top().t)) {
      remaining_.push_back(npkts_.sample_count(c_.rng, 1));
      heap_.push({next_flow_, remaining_.size() - 1});
      next_flow_ += -mean_flow_gap_ * std::log(open_unit(c_.rng));
    }
    if (heap_.empty() || (c_.count && c_.emitted >= c_.count)) return false;
    const Pending p = heap_.top();
    heap_.pop();
    c_.fill(a, round_ps(p.t), p.id, c_.draw_size());
    if (--remaining_[p.id] > 0) heap_.push({p.t + gap_, p.id});
    return true;
  }
  std::vector<std::pair<std::string, uint64_t>> counts() const override {
    return {{"generated", c_.emitted}, {"flows_started", remaining_.size()}};
  }
  bool bounded() const override { return c_.stop != kNever || c_.count != 0; }

 private:
  SyntheticCommon c_;
  Distribution npkts_;
  double mean_flow_gap_ = 0, gap_ = 0, next_flow_ = 0;
  std::vector<uint64_t> remaining_;  // packets left per flow id (ids are never reused)
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> heap_;
};

// ---------------------------------------------------------------- workload model

// Open-loop connections of a workload model (models/*.model.json, docs/reference/algorithms.md
// §10; translated to this spec by tracelab.replay.model_source). Per
// connection, from the model's own parameters:
//   * start: flow inter-arrivals from the fitted `gap` distribution, its mean
//     rescaled to 1/rate (or to the rate that makes `load` of `link`);
//   * scope: intranet or internet, with probability = the scope's share of
//     the bytes; size S from the fitted `size` (bytes, seen as IP bytes);
//   * direction split: S·up bytes from the initiator (upload, orig side),
//     the rest from the responder (download); each side sends
//     n = B/mean(packet size) packets, rounded stochastically so that
//     E[n]·mean = B exactly, with sizes drawn from its histogram;
//   * timing: trains alternate between the parties, the initiator first;
//     a train's size comes from the side's histogram, and its packets go in
//     flights of the delayed-ACK slow start (docs/reference/algorithms.md Eq. 5.10: 1, 2, 3,
//     4, 6, 9, ...) one RTT apart; inside a flight consecutive packets are
//     spaced by their serialization at `peak` plus the side's pacing per
//     packet (drawn once per train; negative values of the decomposition
//     count as 0); a train starts after the side's warm-up (think time).
// Not modelled: TCP feedback (loss, retransmission, receiver window) — the
// stream is the same whatever the network does with it.
class ModelSource final : public Source {
 public:
  ModelSource(Spec& s, const SourceContext& ctx)
      : rng_(s.count("seed", mix64(ctx.seed * 0x100000001b3ULL + ctx.index))),
        size_(Distribution::parse(s.string("size", ""), Distribution::Unit::kBytes, "model size")),
        gap_(Distribution::parse(s.string("gap", "exp(1s)"), Distribution::Unit::kTime, "model gap")) {
    salt_ = mix64(ctx.index + 0x5eed) ^ ctx.seed;
    if (!s.has("size")) throw SpecError("model: size= (the flow-size distribution, bytes) is required");
    if (!(size_.mean() > 0) || !std::isfinite(size_.mean()))
      throw SpecError("model: size must have a positive, finite mean");
    if (!(gap_.mean() > 0) || !std::isfinite(gap_.mean()))
      throw SpecError("model: gap must have a positive, finite mean");
    const uint64_t c = s.count("cls", 0);
    if (c > 252) throw SpecError("model: cls must be 0..252 (the model uses cls..cls+3)");
    const bool by_rate = s.has("rate"), by_load = s.has("load");
    if (by_rate && by_load) throw SpecError("model: give at most one of rate= (connections/s) or load=");
    const uint64_t link = s.rate("link", ctx.link_bps);
    double per_s = 1e12 / gap_.mean();  // neither: the fitted inter-arrivals as they are
    if (by_rate) per_s = parse_per_second(s, "rate");
    if (by_load) {
      const double load = s.real("load", 0);
      if (!(load > 0)) throw SpecError("model: load must be positive");
      per_s = load * static_cast<double>(link) / (8.0 * size_.mean());
    }
    gap_.scale_by(1e12 / per_s / gap_.mean());
    peak_ps_per_bit_ = 1e12 / static_cast<double>(s.rate("peak", 1000000000ULL));
    start_ = s.time("start", 0);
    stop_ = s.time("stop", kNever);
    if (stop_ <= start_) throw SpecError("model: stop must be after start");
    limit_ = s.count("count", 0);
    double total = 0;
    static const char* kScopes[2] = {"intranet", "internet"};
    for (int k = 0; k < 2; ++k) {
      scopes_[k] = parse_scope(s.string(kScopes[k], ""), kScopes[k], static_cast<uint8_t>(c + 2 * k));
      total += scopes_[k].share;
    }
    if (!(total > 0)) throw SpecError("model: intranet= and internet= give no traffic (shares sum to 0)");
    p_intranet_ = scopes_[0].share / total;
    next_flow_ = static_cast<double>(start_) + gap_.sample(rng_);
  }

  bool next(Arrival& a) override {
    while (round_ps(next_flow_) < stop_ && (heap_.empty() || next_flow_ <= heap_.top().t)) {
      start_connection(next_flow_);
      next_flow_ += gap_.sample(rng_);
    }
    if (heap_.empty() || (limit_ && emitted_ >= limit_)) return false;
    const Pending p = heap_.top();
    heap_.pop();
    Conn& c = conns_[p.id];
    const Scope& sc = scopes_[c.scope];
    const Side& side = sc.side[c.turn];
    const uint32_t len = static_cast<uint32_t>(side.size.sample_count(rng_, 1));
    a.pkt = Packet{};
    a.pkt.arrival = round_ps(p.t);
    a.pkt.length = len;
    a.pkt.conn_hash = mix64(salt_ ^ c.uid);
    a.pkt.flow_hash = mix64(a.pkt.conn_hash + c.turn);  // one flow per direction
    a.pkt.cls = side.cls;
    a.data = nullptr;
    ++emitted_;
    --c.left[c.turn];
    --c.train_left;
    double t = p.t;
    if (c.train_left > 0 && --c.flight_left > 0) {
      t += len * 8 * peak_ps_per_bit_ + c.pace;
    } else if (c.train_left > 0) {  // the next flight, one RTT after the first packet of this one
      c.flight_left = std::min<uint64_t>(flight_size(++c.flight), c.train_left);
      c.flight_start = std::max(t + len * 8 * peak_ps_per_bit_, c.flight_start + sc.rtt);
      t = c.flight_start;
    } else if (c.left[0] + c.left[1] > 0) {  // the other party's turn, if it has anything left
      if (c.left[1 - c.turn] > 0) c.turn = static_cast<uint8_t>(1 - c.turn);
      t += len * 8 * peak_ps_per_bit_ + begin_train(c, sc);
      c.flight_start = t;
    } else {
      free_.push_back(p.id);
      return true;
    }
    heap_.push({t, p.id});
    return true;
  }

  std::vector<std::pair<std::string, uint64_t>> counts() const override {
    return {{"generated", emitted_}, {"connections_started", started_}, {"connections_without_packets", empty_}};
  }
  bool bounded() const override { return stop_ != kNever || limit_ != 0; }

 private:
  struct Side {
    Distribution size, train, warmup, pacing;
    bool has_train = false;
    uint8_t cls = 0;
  };
  struct Scope {
    double share = 0, up = 0;
    double rtt = 0;  // ps
    Side side[2];    // [0] responder (download), [1] initiator (upload)
  };
  struct Conn {
    uint64_t uid = 0;
    uint64_t left[2] = {0, 0};  // packets still to send, per side
    uint64_t train_left = 0, flight_left = 0;
    uint32_t flight = 0;
    uint8_t scope = 0, turn = 0;
    double pace = 0, flight_start = 0;
  };

  // `scope(share=S, up=U, rtt=T, orig_size=hist(...), orig_train=hist(...),
  // orig_warmup=quantiles(...), orig_pacing=quantiles(...), resp_...)`.
  static Scope parse_scope(const std::string& text, const char* name, uint8_t cls) {
    Scope sc;
    if (text.empty()) return sc;  // no traffic in this scope
    Spec s = Spec::parse(text);
    const std::string where = std::string("model ") + name;
    if (s.name() != "scope") throw SpecError(where + ": expected scope(share=..., up=..., ...)");
    sc.share = s.real("share", 0);
    sc.up = s.real("up", 0);
    sc.rtt = static_cast<double>(s.time("rtt", 0));
    if (!(sc.share >= 0) || !(sc.up >= 0 && sc.up <= 1)) throw SpecError(where + ": need share >= 0 and 0 <= up <= 1");
    static const char* kSides[2] = {"resp", "orig"};
    for (int k = 0; k < 2; ++k) {
      const std::string p = kSides[k];
      Side& side = sc.side[k];
      side.cls = static_cast<uint8_t>(cls + k);
      side.size =
          Distribution::parse(s.string(p + "_size", "hist()"), Distribution::Unit::kBytes, where + " " + p + "_size");
      side.has_train = s.has(p + "_train");
      side.train =
          Distribution::parse(s.string(p + "_train", "1"), Distribution::Unit::kBytes, where + " " + p + "_train");
      side.warmup =
          Distribution::parse(s.string(p + "_warmup", "0s"), Distribution::Unit::kTime, where + " " + p + "_warmup");
      side.pacing =
          Distribution::parse(s.string(p + "_pacing", "0s"), Distribution::Unit::kTime, where + " " + p + "_pacing");
      const double bytes_share = k == 1 ? sc.up : 1 - sc.up;
      if (sc.share > 0 && bytes_share > 0 && !(side.size.mean() > 0))
        throw SpecError(where + ": " + p + "_size has no packets but the side carries bytes");
    }
    s.finish();
    return sc;
  }

  // Delayed-ACK slow start, docs/reference/algorithms.md Eq. 5.10: floor(2^((n-1)/2) + 2^((n-2)/2)), n from 1.
  static uint64_t flight_size(uint32_t index) {
    const double n = static_cast<double>(std::min<uint32_t>(index, 60)) + 1;
    return static_cast<uint64_t>(std::pow(2.0, (n - 1) / 2) + std::pow(2.0, (n - 2) / 2));
  }

  // floor(x) + Bernoulli(frac(x)): an integer with mean exactly x.
  uint64_t stochastic_round(double x) {
    const double f = std::floor(x);
    return static_cast<uint64_t>(f) + (rng_.uniform() < x - f ? 1 : 0);
  }

  // Draws the next train of side `c.turn`; returns its warm-up (ps).
  double begin_train(Conn& c, const Scope& sc) {
    const Side& side = sc.side[c.turn];
    const uint64_t want = side.has_train ? side.train.sample_count(rng_, 1) : c.left[c.turn];
    c.train_left = std::min(want, c.left[c.turn]);
    c.flight = 0;
    c.flight_left = std::min<uint64_t>(flight_size(0), c.train_left);
    c.pace = std::max(0.0, side.pacing.sample(rng_));
    return std::max(0.0, side.warmup.sample(rng_));
  }

  void start_connection(double t) {
    ++started_;
    const uint8_t k = rng_.uniform() < p_intranet_ ? 0 : 1;
    const Scope& sc = scopes_[k];
    const double bytes = size_.sample(rng_);
    Conn c;
    c.uid = started_;
    c.scope = k;
    for (int side = 0; side < 2; ++side) {
      const double b = bytes * (side == 1 ? sc.up : 1 - sc.up);
      c.left[side] = b > 0 ? stochastic_round(b / sc.side[side].size.mean()) : 0;
    }
    if (c.left[0] + c.left[1] == 0) {
      ++empty_;
      return;
    }
    c.turn = c.left[1] > 0 ? 1 : 0;  // the initiator speaks first
    begin_train(c, sc);              // the first train starts with the connection: no warm-up
    c.flight_start = t;
    uint64_t id;
    if (free_.empty()) {
      id = conns_.size();
      conns_.push_back(c);
    } else {
      id = free_.back();
      free_.pop_back();
      conns_[id] = c;
    }
    heap_.push({t, id});
  }

  Rng rng_;
  Distribution size_, gap_;
  Scope scopes_[2];
  double p_intranet_ = 0, peak_ps_per_bit_ = 0, next_flow_ = 0;
  Time start_ = 0, stop_ = kNever;
  uint64_t limit_ = 0, emitted_ = 0, started_ = 0, empty_ = 0, salt_ = 0;
  std::vector<Conn> conns_;
  std::vector<uint64_t> free_;  // connection slots to reuse
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> heap_;
};

}  // namespace

SyntheticCommon::SyntheticCommon(Spec& s, const SourceContext& ctx, const char* size_default)
    : rng(s.count("seed", mix64(ctx.seed * 0x100000001b3ULL + ctx.index))),
      size(Distribution::parse(s.string("size", size_default), Distribution::Unit::kBytes, s.name() + " size")) {
  const uint64_t c = s.count("cls", 0);
  if (c > 255) throw SpecError(s.name() + ": cls must be 0..255");
  cls = static_cast<uint8_t>(c);
  start = s.time("start", 0);
  stop = s.time("stop", kNever);
  count = s.count("count", 0);
  if (stop <= start) throw SpecError(s.name() + ": stop must be after start");
  salt = mix64(ctx.index + 0x5eed) ^ ctx.seed;
  link = s.rate("link", ctx.link_bps);
  if (size.is_constant()) constant_size = static_cast<uint32_t>(size.sample_count(rng, 1));  // draws nothing
}

PacketSource::PacketSource(Spec& s, const SourceContext& ctx, bool poisson) : c_(s, ctx, "64"), poisson_(poisson) {
  flows_ = s.count("flows", 1);
  if (flows_ == 0) throw SpecError(s.name() + ": flows must be positive");
  if (flows_ <= kTabulatedFlows)
    for (uint64_t f = 0; f < flows_; ++f) flow_hashes_.push_back(c_.flow_hash(f));
  const bool by_rate = s.has("rate"), by_load = s.has("load"), by_interval = !poisson && s.has("interval");
  if (by_rate + by_load + by_interval != 1)
    throw SpecError(s.name() + ": give exactly one of rate= (packets/s), load=" +
                    (poisson ? std::string("") : std::string(", interval=")));
  double gap_ps = 0;
  if (by_interval) {
    gap_ps = static_cast<double>(s.time("interval", 0));
  } else if (by_rate) {
    gap_ps = 1e12 / parse_per_second(s, "rate");
  } else {
    const double load = s.real("load", 0);
    if (!(load > 0)) throw SpecError(s.name() + ": load must be positive");
    gap_ps = 8.0 * c_.size.mean() * 1e12 / (load * static_cast<double>(c_.link));
  }
  if (!(gap_ps > 0)) throw SpecError(s.name() + ": the packet rate is too high for picosecond time");
  mean_gap_ = gap_ps;
  t_ = static_cast<double>(c_.start);
  if (poisson_) t_ += -mean_gap_ * std::log(open_unit(c_.rng));
}

std::unique_ptr<Source> make_source(const std::string& spec_text, const SourceContext& ctx) {
  Spec s = Spec::parse(spec_text);
  std::unique_ptr<Source> src;
  if (s.name() == "pcap") {
    src = std::make_unique<PcapSource>(s, ctx);
  } else if (s.name() == "poisson" || s.name() == "cbr") {
    src = std::make_unique<PacketSource>(s, ctx, s.name() == "poisson");
  } else if (s.name() == "onoff") {
    src = std::make_unique<OnOffSource>(s, ctx);
  } else if (s.name() == "flows") {
    src = std::make_unique<FlowSource>(s, ctx);
  } else if (s.name() == "model") {
    src = std::make_unique<ModelSource>(s, ctx);
  } else {
    throw SpecError("unknown source '" + s.name() + "' in '" + spec_text +
                    "' (known: pcap, poisson, cbr, onoff, flows, model)");
  }
  // hops=A-B: the packets enter at node A and leave after node B (cross traffic).
  const std::string hops = s.string("hops", "");
  uint64_t first = 0, last = ctx.nodes - 1;
  if (!hops.empty()) {
    const size_t dash = hops.find('-');
    if (!parse_count(hops.substr(0, dash), first) ||
        (dash != std::string::npos && !parse_count(hops.substr(dash + 1), last)))
      throw SpecError(s.name() + ": hops='" + hops + "' is not N or A-B (node indices from 0)");
    if (dash == std::string::npos) last = first;
  }
  if (first > last || last >= ctx.nodes)
    throw SpecError(s.name() + ": hops='" + hops + "' outside the " + std::to_string(ctx.nodes) +
                    " node(s) of the run");
  s.finish();
  src->spec_ = spec_text;
  src->first_node_ = static_cast<uint32_t>(first);
  src->last_node_ = static_cast<uint32_t>(last);
  return src;
}

std::vector<std::pair<std::string, std::string>> known_sources() {
  return {
      {"pcap",
       "pcap(path=F, speed=X | rate=BPS | load=L, link=10G, classes='MATCH->CLASS; ...', filter='BPF', start=0s, "
       "count=N, hops=A-B)"},
      {"poisson", "poisson(rate=PPS | load=L, size=DIST, cls=0, flows=1, start=0s, stop=T, count=N, seed=S, hops=A-B)"},
      {"cbr", "cbr(rate=PPS | load=L | interval=T, size=DIST, cls=0, flows=1, start, stop, count, hops)"},
      {"onoff",
       "onoff(flows=N, rate=BPS (mean per flow) | peak=BPS, on=exp(350ms), off=exp(650ms), size=200, cls, start, stop, "
       "hops)"},
      {"flows", "flows(rate=FPS | load=L, packets=bzipf(1.1,6,6667), size=1500, peak=100M, cls, start, stop, hops)"},
      {"model",
       "model(size=DIST, gap=DIST, rate=CPS | load=L, intranet='scope(...)', internet='scope(...)', peak=1G, "
       "cls, start, stop, count, hops) -- from a workload model: tracelab replay run --model M.model.json"}};
}

}  // namespace tracelab::engine
