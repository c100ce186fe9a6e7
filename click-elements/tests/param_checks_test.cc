// param_checks.hh: every range accepts its boundary values and rejects the
// values just outside, with a message naming the parameter and its value.
#include "param_checks.hh"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace tracelab;

namespace {

// Accepted: an empty message.
template <typename C>
void ok(const C& c) {
  EXPECT_EQ(check_params(c), "");
}

// Refused, naming `param=value`.
template <typename C>
void refused(const C& c, const std::string& named) {
  const std::string e = check_params(c);
  EXPECT_NE(e.find(named), std::string::npos) << "message: '" << e << "' lacks '" << named << "'";
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
}

}  // namespace

TEST(ParamChecks, DefaultsAreAccepted) {
  ok(BufferConfig{});
  ok(FlowStateConfig{});
  ok(EfdConfig::befd());
  ok(EfdConfig::pefd());
  ok(EfdConfig::efdack());
  ok(Run2cConfig{});
  ok(SiftConfig{});
  ok(XProtectConfig{});
  ok(LasConfig{});
  ok(LarsConfig{});
  ok(ScfqConfig{});
  NcqConfig ncq;
  ok(ncq);
  ncq.variant = NcqVariant::kNcq;
  ok(ncq);
  ok(BasiCQConfig{});
  ok(ChuMQConfig{});
  ok(ChuTQConfig{});
  ok(MtqQtlConfig{});
  ok(JumboGenConfig{});
  ok(JumboRedConfig{});
}

TEST(ParamChecks, SiftProbabilityAndTs) {
  SiftConfig c;
  c.probability = 1;
  ok(c);
  c.probability = 1e-9;
  ok(c);
  c.probability = 0;
  refused(c, "p=0");
  c.probability = 1.0000001;
  refused(c, "p=1.0000001");
  c.probability = 2;
  refused(c, "p=2 out of range (0, 1]");
  c.probability = -0.5;
  refused(c, "p=-0.5");
  c.probability = std::nan("");
  refused(c, "p=nan");
  c.probability = 0.01;
  c.sample_threshold = 1;
  ok(c);
  c.sample_threshold = 0;
  refused(c, "ts=0");
}

TEST(ParamChecks, XProtect) {
  XProtectConfig c;
  c.insert_probability = 1;
  ok(c);
  c.insert_probability = 0;
  refused(c, "p_ins=0");
  c.insert_probability = 1.5;
  refused(c, "p_ins=1.5");
  c.insert_probability = 0.01;
  c.threshold = 1;
  ok(c);
  c.threshold = 0;
  refused(c, "th=0");
}

TEST(ParamChecks, EfdAndRun2cThresholds) {
  EfdConfig e = EfdConfig::pefd();
  e.threshold = 1;
  ok(e);
  e.threshold = 0;
  refused(e, "th=0");
  Run2cConfig r;
  r.threshold = 1;
  ok(r);
  r.threshold = 0;
  refused(r, "th=0");
}

TEST(ParamChecks, Buffer) {
  BufferConfig b;
  b.capacity = 1;
  ok(b);
  b.capacity = 1u << 26;
  ok(b);
  b.capacity = 0;
  refused(b, "capacity=0");
  b.capacity = (1u << 26) + 1;
  refused(b, "capacity=67108865");
  b.capacity = 300;
  b.min_packet_bytes = 0;
  refused(b, "min_packet=0");
  b.min_packet_bytes = 1;
  ok(b);
  b.granularity = Granularity::kBytes;
  b.capacity = 1;
  ok(b);
  b.capacity = 0;
  refused(b, "capacity=0");
  // Through a mechanism's configuration.
  SiftConfig s;
  s.queue.buffer.capacity = 0;
  refused(s, "capacity=0");
  LasConfig l;
  l.buffer.capacity = 0;
  refused(l, "capacity=0");
}

TEST(ParamChecks, FlowState) {
  FlowStateConfig f;
  f.max_flows = 1;
  ok(f);
  f.max_flows = 1u << 28;
  ok(f);
  f.max_flows = 0;
  refused(f, "max_flows=0");
  f.max_flows = (1u << 28) + 1;
  refused(f, "max_flows=268435457");
  f.max_flows = 10;
  f.gc_interval = 0;  // never scan
  ok(f);
  f.gc_interval = -1;
  refused(f, "gc=");
  f.gc_interval = kSecond;
  f.idle_timeout = 1;
  ok(f);
  f.idle_timeout = kNever;
  ok(f);
  f.idle_timeout = 0;
  refused(f, "idle=0");
  Run2cConfig r;
  r.flows.max_flows = 0;
  refused(r, "max_flows=0");
}

TEST(ParamChecks, Lars) {
  LarsConfig c;
  c.beta = 1;
  ok(c);
  c.beta = 1e-9;
  ok(c);
  c.beta = 0;
  refused(c, "beta=0");
  c.beta = 1.01;
  refused(c, "beta=1.01");
  c.beta = 0.5;
  c.tau = 1;
  ok(c);
  c.tau = 0;
  refused(c, "tau=0");
}

TEST(ParamChecks, Ncq) {
  NcqConfig c;  // NCQ+
  c.ncqthresh1 = 1;
  ok(c);
  c.ncqthresh1 = 0;
  refused(c, "ncqthresh=0");
  c.ncqthresh1 = 1.1;
  refused(c, "ncqthresh=1.1");
  c.ncqthresh1 = 0.05;
  c.alpha = 0.999;
  ok(c);
  c.alpha = 1;
  refused(c, "alpha=1");
  c.alpha = 0;
  refused(c, "alpha=0");
  c.alpha = 0.1;
  c.size_thresh1 = 149;
  ok(c);
  c.size_thresh1 = 150;
  refused(c, "size_thresh1=150");
  c.size_thresh1 = 0;
  refused(c, "size_thresh1=0");
  c.size_thresh1 = 64;
  c.variant = NcqVariant::kNcq;  // alpha and the NCQ+ thresholds are not read
  c.alpha = 0;
  c.size_thresh1 = 500;
  c.size_thresh = 1;
  ok(c);
  c.size_thresh = 0;
  refused(c, "size_thresh=0");
  c.size_thresh = 150;
  c.ncqthresh1 = 0;
  refused(c, "ncqthresh=0");
}

TEST(ParamChecks, Chunking) {
  BasiCQConfig b;
  b.mtu = 64;
  ok(b);
  b.mtu = 65535;
  ok(b);
  b.mtu = 63;
  refused(b, "mtu=63");
  b.mtu = 65536;
  refused(b, "mtu=65536");
  b.mtu = 9000;
  b.capacity_packets = 1;
  ok(b);
  b.capacity_packets = 0;
  refused(b, "capacity=0");
  ChuMQConfig m;
  m.timers = {1};
  ok(m);
  m.timers = {0};
  refused(m, "timers=0");
  m.timers = {2, 2};
  EXPECT_NE(check_params(m).find("strictly ascending"), std::string::npos);
  m.timers = {};
  EXPECT_NE(check_params(m), "");
  ChuTQConfig t;
  t.link_bps = 0;  // never blocked
  ok(t);
  t.timers = {kMicrosecond, 0};
  refused(t, "timers=0");
}

TEST(ParamChecks, MtqQtl) {
  MtqQtlConfig c;
  c.capacity_packets = 1;
  c.link_bps = 1;
  ok(c);
  c.capacity_packets = 0;
  refused(c, "capacity=0");
  c.capacity_packets = 1;
  c.link_bps = 0;
  refused(c, "rate=0");
}

TEST(ParamChecks, JumboGen) {
  JumboGenConfig c;
  c.mtu = 65535;
  ok(c);
  c.mtu = 65536;
  refused(c, "mtu=65536");
  c.mtu = c.outer_header;
  refused(c, "mtu=20");
  c.mtu = 8192;
  c.jfet = 0;
  refused(c, "jfet=0");
  c.jfet = 1;
  ok(c);
  c.queues = 0;
  refused(c, "queues=0");
  c.queues = 1;
  c.capacity_packets = 0;
  refused(c, "capacity=0");
}

TEST(ParamChecks, JumboRed) {
  JumboRedConfig c;
  c.min_th = 0;
  c.max_th = 0;
  ok(c);
  c.min_th = -1;
  refused(c, "min_th=-1");
  c.min_th = 5;
  c.max_th = 4;
  refused(c, "max_th=4");
  c.max_th = 15;
  c.max_p = 0;
  ok(c);
  c.max_p = 1;
  ok(c);
  c.max_p = 1.5;
  refused(c, "max_p=1.5");
  c.max_p = 0.1;
  c.w_q = 1;
  ok(c);
  c.w_q = 0;
  refused(c, "w_q=0");
  c.w_q = 0.025;
  c.min_pkt_drop = 0;
  c.max_pkt_drop = 1;
  ok(c);
  c.max_pkt_drop = 1.01;
  refused(c, "max_pkt_drop=1.01");
  c.max_pkt_drop = 0.5;
  c.min_pkt_drop = 0.6;
  refused(c, "max_pkt_drop=0.5");
  c.min_pkt_drop = 0.1;
  c.jg_fraction_weight = 0;
  refused(c, "jg_fraction_weight=0");
}
