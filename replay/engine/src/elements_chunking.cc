// Builders of the cores that use chunk_buffer.hh: BasiCQ, ChuMQ, ChuTQ and
// the MTQ/QTL queue.
#include "basicq.hh"
#include "chumq.hh"
#include "chutq.hh"
#include "mtq_qtl.hh"

#include "element_helpers.hh"

namespace tracelab::engine::detail {

namespace {

// `timers=50us/100us/200us`: one chunking timer per class buffer, ascending.
std::vector<Time> timers(Spec& s) {
  const std::string v = s.string("timers", "50us/100us/200us");
  std::vector<Time> out;
  size_t pos = 0;
  while (pos <= v.size()) {
    const size_t slash = std::min(v.find('/', pos), v.size());
    Time t = 0;
    if (!parse_time(v.substr(pos, slash - pos), t) || t <= 0)
      bad(s, "timers='" + v + "': each timer is a positive duration, '/'-separated (50us/100us/200us)");
    if (!out.empty() && t <= out.back()) bad(s, "timers must be strictly ascending");
    out.push_back(t);
    pos = slash + 1;
  }
  return out;
}

size_t chunk_capacity(Spec& s) {
  const uint64_t c = s.count("capacity", 16384);
  if (c == 0 || c > (1u << 26)) bad(s, "capacity must be 1..2^26 packets");
  return c;
}

uint32_t mtu(Spec& s) {
  const uint64_t m = s.bytes("mtu", 9000);
  if (m < 64 || m > 65535) bad(s, "mtu must be 64..65535 bytes");
  return static_cast<uint32_t>(m);
}

}  // namespace

BuiltCore build_basicq(Spec& s, const NodeContext&) {
  BasiCQConfig c;
  c.mtu = mtu(s);
  c.shim = s.flag("shim", c.shim);
  c.capacity_packets = chunk_capacity(s);
  return plain<BasiCQ>(c);
}

BuiltCore build_chumq(Spec& s, const NodeContext&) {
  ChuMQConfig c;
  c.timers = timers(s);
  c.mtu = mtu(s);
  c.shim = s.flag("shim", c.shim);
  c.cea = s.flag("cea", c.cea);
  c.restart_from_head = choice<bool>(s, "restart", "head", {{"head", true}, {"now", false}});
  // At the link-free instant: timer_first, expired buffers then buffers above
  // the MTU, lowest index first [000 §4.2, §7.2.2]; priority, the lowest-index
  // ready buffer; fifo, formed chunks queue in front of the link (§6.2, literal).
  c.contention = choice<ChuMQContention>(s, "contention", "timer_first",
                                         {{"timer_first", ChuMQContention::kTimerFirst},
                                          {"priority", ChuMQContention::kPriority},
                                          {"fifo", ChuMQContention::kFifo}});
  c.capacity_packets = chunk_capacity(s);
  return plain<ChuMQ>(c);
}

BuiltCore build_chutq(Spec& s, const NodeContext& n) {
  ChuTQConfig c;
  c.policy = choice<ChuTQPolicy>(s, "policy", "dcf",
                                 {{"dcf", ChuTQPolicy::kDCF}, {"tpf", ChuTQPolicy::kTPF}, {"cef", ChuTQPolicy::kCEF}});
  c.timers = timers(s);
  c.mtu = mtu(s);
  c.shim = s.flag("shim", c.shim);
  c.cea = s.flag("cea", c.cea);
  c.expired_first = choice<bool>(s, "expired", "first", {{"first", true}, {"last", false}});
  c.link_bps = n.link_bps;  // the core must know when its link is blocked
  c.capacity_packets = chunk_capacity(s);
  return plain<ChuTQ>(c);
}

BuiltCore build_mtqqtl(Spec& s, const NodeContext& n) {
  MtqQtlConfig c;
  c.link_bps = n.link_bps;  // the delay estimate is backlog / this node's rate
  c.capacity_packets = s.count("capacity", c.capacity_packets);
  c.count_in_service = s.flag("in_service", c.count_in_service);
  if (c.capacity_packets == 0) bad(s, "capacity must be positive");
  return plain<MtqQtlQueue>(c);
}

}  // namespace tracelab::engine::detail
