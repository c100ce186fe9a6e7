#include "elements.hh"

#include "element_helpers.hh"

#include "efd.hh"
#include "fifo.hh"
#include "lars.hh"
#include "las.hh"
#include "ncq.hh"
#include "run2c.hh"
#include "scfq.hh"
#include "sift.hh"
#include "xprotect.hh"

namespace tracelab::engine {

namespace {

using detail::bad;
using detail::choice;
using detail::plain;

// Buffer parameters shared by every core built on fifo_buffer.hh.
BufferConfig buffer_config(Spec& s, const NodeContext& node, uint64_t default_capacity = 300) {
  BufferConfig b;
  b.granularity = choice<Granularity>(s, "granularity", "packets",
                                      {{"packets", Granularity::kPackets}, {"bytes", Granularity::kBytes}});
  b.capacity = b.granularity == Granularity::kPackets ? s.count("capacity", default_capacity)
                                                      : s.bytes("capacity", default_capacity * 1500);
  b.full_test =
      choice<FullTest>(s, "full_test", "would_overflow",
                       {{"would_overflow", FullTest::kWouldOverflow}, {"already_full", FullTest::kAlreadyFull}});
  b.min_packet_bytes = static_cast<uint32_t>(s.bytes("min_packet", b.min_packet_bytes));
  if (b.min_packet_bytes == 0) bad(s, "min_packet must be at least 1 byte");
  // The packet on the wire stays counted in the buffer until its
  // transmission ends on this node's link (the spec's semantics, §2, the
  // default); in_service=0 is Click's Queue and ns-3's QueueDisc: it leaves
  // the buffer when the link takes it.
  if (s.flag("in_service", true)) b.in_service_link_bps = node.link_bps;
  if (b.capacity == 0) bad(s, "capacity must be positive");
  if (b.capacity > (1u << 26)) bad(s, "capacity above 2^26");
  return b;
}

TwoLevelConfig two_level(Spec& s, const NodeContext& node, bool push_out = true, uint64_t capacity = 300) {
  TwoLevelConfig q;
  q.buffer = buffer_config(s, node, capacity);
  q.push_out = s.flag("push_out", push_out);
  q.byte_pushout_precheck = s.flag("precheck", false);
  const auto disciplines = {std::pair<const char*, Discipline>{"fifo", Discipline::kFifo}, {"las", Discipline::kLas}};
  q.high = choice<Discipline>(s, "high", "fifo", disciplines);
  q.low = choice<Discipline>(s, "low", "fifo", disciplines);
  return q;
}

FlowStateConfig flow_state(Spec& s, FlowStateConfig f = {}) {
  f.max_flows = static_cast<uint32_t>(s.count("max_flows", f.max_flows));
  f.gc_interval = s.time("gc", f.gc_interval);
  f.idle_timeout = s.time("idle", f.idle_timeout);
  f.table_seed = s.seed("table_seed", f.table_seed);
  if (f.max_flows == 0) bad(s, "max_flows must be positive");
  return f;
}

// Builds core T from its config and exposes T::flows() as the table size.
template <typename T, typename C>
BuiltCore with_table(const C& cfg) {
  detail::check(cfg);
  auto core = std::make_unique<T>(cfg);
  T* raw = core.get();
  BuiltCore b;
  b.flow_table_size = [raw] { return static_cast<uint64_t>(raw->flows()); };
  b.flow_table_longest_probe = [raw] { return static_cast<uint64_t>(raw->table_longest_probe()); };
  b.core = std::move(core);
  return b;
}

BuiltCore build_efd(Spec& s, const NodeContext& n, EfdConfig c) {
  c.queue = two_level(s, n);
  c.threshold = c.variant == EfdVariant::kPefd ? s.count("th", c.threshold) : s.bytes("th", c.threshold);
  c.counter = choice<EfdCounter>(s, "counter", "admitted",
                                 {{"admitted", EfdCounter::kAdmitted}, {"served", EfdCounter::kServed}});
  c.table_seed = s.seed("table_seed", c.table_seed);
  return with_table<EfdCore>(c);
}

BuiltCore build_run2c(Spec& s, const NodeContext& n, bool ack) {
  Run2cConfig c;
  c.queue = two_level(s, n);
  c.threshold = s.bytes("th", c.threshold);
  c.ack_aware = ack;
  c.flows = flow_state(s);
  return with_table<Run2cCore>(c);
}

BuiltCore build_las(Spec& s, const NodeContext& n, bool ack) {
  LasConfig c;
  c.buffer = buffer_config(s, n);
  c.ack_aware = ack;
  c.flows = flow_state(s);
  return with_table<LasCore>(c);
}

BuiltCore build_ncq(Spec& s, const NodeContext& n, NcqVariant v) {
  NcqConfig c;
  c.variant = v;
  c.queue = two_level(s, n, /*push_out=*/false, /*capacity=*/100);
  c.size_thresh = static_cast<uint32_t>(s.bytes("size_thresh", c.size_thresh));
  c.size_thresh1 = static_cast<uint32_t>(s.bytes("size_thresh1", c.size_thresh1));
  c.size_thresh2 = static_cast<uint32_t>(s.bytes("size_thresh2", c.size_thresh2));
  c.ncqthresh1 = s.real("ncqthresh", c.ncqthresh1);
  c.alpha = s.real("alpha", c.alpha);
  c.tiny_rate =
      choice<TinyRate>(s, "tiny_rate", "favored", {{"favored", TinyRate::kFavored}, {"incoming", TinyRate::kIncoming}});
  c.favor_pure_acks = s.flag("favor_acks", false);
  return plain<NcqCore>(c);
}

struct Builder {
  const char* name;
  const char* summary;
  BuiltCore (*build)(Spec&, const NodeContext&);
};

#define BUFFER_PARAMS \
  "capacity=300, granularity=packets|bytes, full_test=would_overflow|already_full, min_packet=40, in_service=1"
#define TWO_LEVEL_PARAMS BUFFER_PARAMS ", push_out=1, precheck=0, high=fifo|las, low=fifo|las"
// The key of the flow table's hash (kFlowTableSeed); no decision depends on it.
#define TABLE_SEED_PARAM "table_seed=0x74726163656c6162"
#define FLOW_PARAMS "max_flows=65536, gc=5s, idle=30s, " TABLE_SEED_PARAM

const Builder kBuilders[] = {
    {"fifo", "fifo(" BUFFER_PARAMS "): drop-tail FIFO (§1)",
     [](Spec& s, const NodeContext& n) { return plain<FifoCore>(buffer_config(s, n)); }},
    {"efd",
     "efd(th=30000 bytes, counter=admitted|served, " TABLE_SEED_PARAM ", " TWO_LEVEL_PARAMS
     "): Early Flow Discard = BEFD (§2.1)",
     [](Spec& s, const NodeContext& n) { return build_efd(s, n, EfdConfig::befd()); }},
    {"befd", "befd(...): the same as efd (§2.2)",
     [](Spec& s, const NodeContext& n) { return build_efd(s, n, EfdConfig::befd()); }},
    {"pefd", "pefd(th=20 packets, ...efd): EFD counting packets (§2.2)",
     [](Spec& s, const NodeContext& n) { return build_efd(s, n, EfdConfig::pefd()); }},
    {"efdack", "efdack(th=30000 bytes, ...efd): EFD per TCP connection, ACKs count ACK progress (§2.2)",
     [](Spec& s, const NodeContext& n) { return build_efd(s, n, EfdConfig::efdack()); }},
    {"run2c", "run2c(th=30000 bytes, " FLOW_PARAMS ", " TWO_LEVEL_PARAMS "): Run2C (§2.4)",
     [](Spec& s, const NodeContext& n) { return build_run2c(s, n, false); }},
    {"run2cack", "run2cack(...run2c): Run2C counting ACK progress (§2.4)",
     [](Spec& s, const NodeContext& n) { return build_run2c(s, n, true); }},
    {"sift", "sift(p=0.01, ts=1, seed=1, " FLOW_PARAMS ", " TWO_LEVEL_PARAMS "): SIFT sampling (§2.5)",
     [](Spec& s, const NodeContext& n) {
       SiftConfig c;
       c.queue = two_level(s, n);
       c.probability = s.real("p", c.probability);
       c.sample_threshold = static_cast<uint32_t>(s.count("ts", c.sample_threshold));
       c.seed = s.count("seed", c.seed);
       c.flows = flow_state(s);
       return with_table<SiftCore>(c);
     }},
    {"xprotect",
     "xprotect(p_ins=0.01, th=30000 bytes, count_inserting=1, seed=1, " FLOW_PARAMS ", " TWO_LEVEL_PARAMS
     "): X-Protect (§2.6)",
     [](Spec& s, const NodeContext& n) {
       XProtectConfig c;
       c.queue = two_level(s, n);
       c.insert_probability = s.real("p_ins", c.insert_probability);
       c.threshold = s.bytes("th", c.threshold);
       c.count_inserting_packet = s.flag("count_inserting", c.count_inserting_packet);
       c.seed = s.count("seed", c.seed);
       c.flows = flow_state(s);
       return with_table<XProtectCore>(c);
     }},
    {"las", "las(" FLOW_PARAMS ", " BUFFER_PARAMS "): Least Attained Service (§3.1)",
     [](Spec& s, const NodeContext& n) { return build_las(s, n, false); }},
    {"lasack", "lasack(...las): LAS per TCP connection, ACKs count ACK progress (§3.1)",
     [](Spec& s, const NodeContext& n) { return build_las(s, n, true); }},
    {"lars",
     "lars(beta=0.5, tau=1s, ack=0, max_flows=65536, gc=5s, idle=never, " TABLE_SEED_PARAM ", " BUFFER_PARAMS
     "): LARS (§3.2)",
     [](Spec& s, const NodeContext& n) {
       LarsConfig c;
       c.buffer = buffer_config(s, n);
       c.beta = s.real("beta", c.beta);
       c.tau = s.time("tau", c.tau);
       c.ack_aware = s.flag("ack", c.ack_aware);
       c.flows = flow_state(s, c.flows);
       if (!(c.beta > 0 && c.beta <= 1)) bad(s, "beta must be in (0, 1]");
       return with_table<LarsCore>(c);
     }},
    {"scfq", "scfq(" TABLE_SEED_PARAM ", " BUFFER_PARAMS "): Self-Clocked Fair Queueing (§3.3)",
     [](Spec& s, const NodeContext& n) {
       ScfqConfig c;
       c.buffer = buffer_config(s, n);
       c.table_seed = s.seed("table_seed", c.table_seed);
       return with_table<ScfqCore>(c);
     }},
    {"ncq", "ncq(size_thresh=150, ncqthresh=0.05, capacity=100, ...): NCQ (§4)",
     [](Spec& s, const NodeContext& n) { return build_ncq(s, n, NcqVariant::kNcq); }},
    {"ncqplus",
     "ncqplus(size_thresh1=64, size_thresh2=150, ncqthresh=0.05, alpha=0.1, tiny_rate=favored|incoming, favor_acks=0, "
     "capacity=100, ...): NCQ+ (§4)",
     [](Spec& s, const NodeContext& n) { return build_ncq(s, n, NcqVariant::kNcqPlus); }},
    {"basicq", "basicq(mtu=9000, shim=1, capacity=16384 packets): BasiCQ chunking (§6.3)", detail::build_basicq},
    {"chumq",
     "chumq(timers=50us/100us/200us, mtu=9000, shim=1, cea=0, restart=head|now, contention=timer_first|priority|fifo, "
     "capacity=16384): ChuMQ (§6.4, §6.6)",
     detail::build_chumq},
    {"chutq",
     "chutq(policy=dcf|tpf|cef, timers=50us/100us/200us, mtu=9000, shim=1, cea=0, expired=first|last, capacity=16384): "
     "ChuTQ (§6.5, §6.6)",
     detail::build_chutq},
    {"mtqqtl", "mtqqtl(capacity=200, in_service=0): drop-tail FIFO with MTQ/QTL early discard (§7)",
     detail::build_mtqqtl},
};

}  // namespace

BuiltCore make_core(const std::string& spec_text, const NodeContext& node) {
  Spec spec = Spec::parse(spec_text);
  for (const Builder& b : kBuilders) {
    if (spec.name() != b.name) continue;
    BuiltCore built;
    try {
      built = b.build(spec, node);
    } catch (const std::invalid_argument& e) {  // a core rejecting its config
      throw SpecError(spec.name() + ": " + e.what() + " in '" + spec_text + "'");
    }
    spec.finish();
    return built;
  }
  std::string names;
  for (const Builder& b : kBuilders) names += (names.empty() ? "" : ", ") + std::string(b.name);
  throw SpecError("unknown element '" + spec.name() + "' in '" + spec_text + "' (known: " + names + ")");
}

std::vector<ElementInfo> known_elements() {
  std::vector<ElementInfo> out;
  for (const Builder& b : kBuilders) out.push_back({b.name, b.summary});
  return out;
}

}  // namespace tracelab::engine
