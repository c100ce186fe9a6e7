// MTQ/QTL's chain ([004 §4], Fig. 3; experiments.md E-MTQ-0): nodes
// N1 -> N2 -> N3 -> N4, every link 20 Mb/s without propagation delay, the
// queue under test (an engine spec string, 'mtqqtl(capacity=200,
// in_service=1)' by default) on the outputs of N1, N2 and N3. Groups of
// real-time flows cross a run of those nodes (Table 1: model 1 =
// 120@0-2,120@0,120@1,120@2; model 2 = 80@0-2,80@0-1,80@1-2,80@2,80@0,
// node 0 = N1). Every flow is exponential ON/OFF (means 350 ms / 650 ms),
// CBR while ON at the rate that makes an 80 kb/s mean, 200-byte IP packets
// (TlOnOffUdpSource, sources.hh); a group's source and sink hosts sit on
// 10 Gb/s links at its first and after its last node. Each packet carries
// the MTQ/QTL fields (TlMtqQtlTag) when --mtq or --qtl is given.
//
//   tl-ns3-mtq-chain --groups=120@0-2,120@0,120@1,120@2 --d=10 --mtq=3.3 --duration=20 --out=DIR
//
// The sources stop at --duration; the run goes on for --drain seconds so
// every packet is delivered or discarded. A packet's queueing delay is its
// one-way delay minus its transmission times (no propagation delay); it is
// late when that exceeds the group's acceptable delay D. Writes
// DIR/groups.csv (per group: flows, packets sent, received, late, discarded
// by cause, EPLR = (discarded + late) / sent, the largest queueing delay)
// and DIR/summary.json (configuration; per node the packets served, the
// drops by cause and the mean sojourn time in the queue disc).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "sources.hh"
#include "tl-queue-disc.hh"

using namespace ns3;

namespace {

constexpr uint32_t kNodes = 3;  // queueing nodes N1..N3
constexpr uint16_t kFirstPort = 10000;
constexpr uint32_t kPacket = 200;  // IP bytes
const char* const kCauses[] = {"buffer_full", "early_discard", "budget_expired"};

struct Group {
  uint32_t flows = 0, first = 0, last = 0;  // queueing nodes crossed: first..last
  uint64_t sent = 0, received = 0, late = 0;
  uint64_t discarded[3] = {0, 0, 0};  // by cause, at any node
  double max_queueing = 0;
  Time fixed;  // transmission times along its path
};
std::vector<Group> g_groups;
std::vector<uint32_t> g_groupOfPort;  // port - kFirstPort -> group
Time g_budget;
TlMtqQtlTag g_tag;
bool g_tagged = false;

struct NodeStats {
  uint64_t served = 0, drops[3] = {0, 0, 0};
  double sojourn_sum = 0;
};
NodeStats g_node[kNodes];

std::string g_spec = "mtqqtl(capacity=200, in_service=1)";
bool SetSpec(const std::string& v) {
  g_spec = v;
  return true;
}
std::string g_groupSpec = "120@0-2,120@0,120@1,120@2";
bool SetGroups(const std::string& v) {
  g_groupSpec = v;
  return true;
}

// "F@A-B" or "F@A": F flows crossing queueing nodes A..B (0-based).
bool ParseGroups(const std::string& text) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    Group g;
    unsigned f = 0, a = 0, b = 0;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%u@%u-%u%c", &f, &a, &b, &tail) != 3) {
      if (std::sscanf(item.c_str(), "%u@%u%c", &f, &a, &tail) != 2) return false;
      b = a;
    }
    if (f == 0 || a > b || b >= kNodes) return false;
    g.flows = f, g.first = a, g.last = b;
    g_groups.push_back(g);
  }
  return !g_groups.empty();
}

int64_t GroupOf(Ptr<const QueueDiscItem> item) {
  Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
  UdpHeader udp;
  if (!ip || ip->GetHeader().GetProtocol() != 17 || ip->GetPacket()->PeekHeader(udp) == 0) return -1;
  const uint32_t port = udp.GetDestinationPort();
  if (port < kFirstPort || port - kFirstPort >= g_groupOfPort.size()) return -1;
  return g_groupOfPort[port - kFirstPort];
}

void OnDrop(uint32_t node, Ptr<const QueueDiscItem> item, const char* reason) {
  for (uint32_t c = 0; c < 3; ++c)
    if (std::strcmp(reason, kCauses[c]) == 0) {
      ++g_node[node].drops[c];
      const int64_t g = GroupOf(item);
      if (g >= 0) ++g_groups[g].discarded[c];
    }
}
void OnDequeue(uint32_t node, Ptr<const QueueDiscItem>) { ++g_node[node].served; }
void OnSojourn(uint32_t node, Time t) { g_node[node].sojourn_sum += t.GetSeconds(); }

// The MTQ/QTL fields go on as the packet leaves its application.
void OnTx(uint32_t g, Ptr<const Packet> p) {
  ++g_groups[g].sent;
  if (g_tagged) p->AddPacketTag(g_tag);
}

void OnRx(uint32_t g, Ptr<const Packet> p, const Address&) {
  SeqTsHeader stamp;
  if (p->PeekHeader(stamp) == 0) return;
  Group& grp = g_groups[g];
  const Time queueing = Simulator::Now() - stamp.GetTs() - grp.fixed;
  ++grp.received;
  if (queueing > g_budget) ++grp.late;
  grp.max_queueing = std::max(grp.max_queueing, queueing.GetSeconds());
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = "mtq-chain-out";
  double duration = 20, drain = 0.5;
  double d_ms = 10, mtq_ms = -1, qtl_ms = -1;
  double on_ms = 350, off_ms = 650, mean_kbps = 80;
  uint32_t seed = 1, run = 1;
  CommandLine cmd(__FILE__);
  cmd.AddValue("qdisc", "queue disc at N1, N2, N3, an engine spec string [mtqqtl(capacity=200, in_service=1)]",
               MakeCallback(&SetSpec));
  cmd.AddValue("groups", "flows@first-last queueing nodes, comma-separated [120@0-2,120@0,120@1,120@2]",
               MakeCallback(&SetGroups));
  cmd.AddValue("d", "acceptable total queueing delay D, ms", d_ms);
  cmd.AddValue("mtq", "MTQ of every packet, ms (< 0: none)", mtq_ms);
  cmd.AddValue("qtl", "QTL of every packet, ms (< 0: none)", qtl_ms);
  cmd.AddValue("on", "mean ON time, ms", on_ms);
  cmd.AddValue("off", "mean OFF time, ms", off_ms);
  cmd.AddValue("rate", "mean rate of a flow, kb/s", mean_kbps);
  cmd.AddValue("duration", "seconds the sources send", duration);
  cmd.AddValue("drain", "seconds simulated after --duration", drain);
  cmd.AddValue("seed", "RNG seed", seed);
  cmd.AddValue("run", "RNG run", run);
  cmd.AddValue("out", "output directory (groups.csv, summary.json)", out);
  cmd.Parse(argc, argv);
  if (!ParseGroups(g_groupSpec) || duration <= 0 || drain < 0 || d_ms < 0 || on_ms <= 0 || off_ms < 0 ||
      mean_kbps <= 0 || mtq_ms > 65.535 || qtl_ms > 4294.967) {
    std::fprintf(stderr,
                 "tl-ns3-mtq-chain: needs --groups as F@A-B,... (nodes 0-2), --duration > 0, --drain >= 0, "
                 "positive times and rate, --mtq <= 65.535 ms, --qtl <= 4294.967 ms\n");
    return 2;
  }
  const DataRate link("20Mbps"), hostLink("10Gbps");
  TlSpec parsed;
  try {
    parsed = TlParseSpec(g_spec, link.GetBitRate());
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tl-ns3-mtq-chain: %s\n", e.what());
    return 2;
  }
  if (std::system(("mkdir -p '" + out + "'").c_str()) != 0) {
    std::fprintf(stderr, "tl-ns3-mtq-chain: cannot create %s\n", out.c_str());
    return 2;
  }
  RngSeedManager::SetSeed(seed);
  RngSeedManager::SetRun(run);
  g_budget = Seconds(d_ms / 1e3);
  if (mtq_ms >= 0) g_tag.fields.mtq_us = uint16_t(std::llround(mtq_ms * 1e3));
  if (qtl_ms >= 0) g_tag.fields.qtl_ns = uint32_t(std::llround(qtl_ms * 1e6));
  g_tagged = mtq_ms >= 0 || qtl_ms >= 0;
  for (const auto& [k, v] : parsed.attributes) Config::SetDefault(parsed.type_name + "::" + k, StringValue(v));

  NodeContainer chain(kNodes + 1);
  InternetStackHelper stack;
  stack.Install(chain);
  PointToPointHelper core, hosts;
  core.SetDeviceAttribute("DataRate", DataRateValue(link));
  core.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
  core.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  hosts.SetDeviceAttribute("DataRate", DataRateValue(hostLink));
  hosts.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
  hosts.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  TrafficControlHelper under, other;
  under.SetRootQueueDisc(parsed.type_name);
  other.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("1000p"));
  std::vector<NetDeviceContainer> links;
  Ptr<QueueDisc> qd[kNodes];
  for (uint32_t n = 0; n < kNodes; ++n) {
    links.push_back(core.Install(chain.Get(n), chain.Get(n + 1)));
    qd[n] = under.Install(links[n].Get(0)).Get(0);
    other.Install(links[n].Get(1));
  }
  NodeContainer src, dst;
  src.Create(g_groups.size());
  dst.Create(g_groups.size());
  stack.Install(src);
  stack.Install(dst);
  std::vector<NetDeviceContainer> srcLinks, dstLinks;
  for (uint32_t g = 0; g < g_groups.size(); ++g) {
    srcLinks.push_back(hosts.Install(src.Get(g), chain.Get(g_groups[g].first)));
    dstLinks.push_back(hosts.Install(dst.Get(g), chain.Get(g_groups[g].last + 1)));
    other.Install(srcLinks.back());
    other.Install(dstLinks.back());
  }
  Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
  for (const NetDeviceContainer& d : links) addr.Assign(d), addr.NewNetwork();
  std::vector<Ipv4Address> dstAddr;
  for (uint32_t g = 0; g < g_groups.size(); ++g) {
    addr.Assign(srcLinks[g]);
    addr.NewNetwork();
    dstAddr.push_back(addr.Assign(dstLinks[g]).GetAddress(0));
    addr.NewNetwork();
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  for (uint32_t n = 0; n < kNodes; ++n) {
    qd[n]->TraceConnectWithoutContext("DropBeforeEnqueue", MakeBoundCallback(&OnDrop, n));
    qd[n]->TraceConnectWithoutContext("DropAfterDequeue", MakeBoundCallback(&OnDrop, n));
    qd[n]->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnDequeue, n));
    qd[n]->TraceConnectWithoutContext("SojournTime", MakeBoundCallback(&OnSojourn, n));
  }

  // CBR while ON at mean / ON share; RNG streams 2 per flow in creation order.
  const double onShare = on_ms / (on_ms + off_ms);
  const Time interval = Seconds(kPacket * 8 / (mean_kbps * 1e3 / onShare));
  const Time wire = Seconds(double(kPacket + 2) * 8 / double(link.GetBitRate()));
  const Time hostWire = Seconds(double(kPacket + 2) * 8 / double(hostLink.GetBitRate()));
  int64_t stream = 0;
  uint32_t flow = 0;
  for (uint32_t g = 0; g < g_groups.size(); ++g) {
    Group& grp = g_groups[g];
    grp.fixed = hostWire * 2 + wire * int64_t(grp.last - grp.first + 1);
    for (uint32_t i = 0; i < grp.flows; ++i, ++flow) {
      const uint16_t port = uint16_t(kFirstPort + flow);
      if (port < kFirstPort) {
        std::fprintf(stderr, "tl-ns3-mtq-chain: at most %u flows\n", 65535u - kFirstPort);
        return 2;
      }
      g_groupOfPort.push_back(g);
      Ptr<ExponentialRandomVariable> on = CreateObject<ExponentialRandomVariable>();
      on->SetAttribute("Mean", DoubleValue(on_ms / 1e3));
      Ptr<ExponentialRandomVariable> off = CreateObject<ExponentialRandomVariable>();
      off->SetAttribute("Mean", DoubleValue(off_ms / 1e3));
      Ptr<TlOnOffUdpSource> app = CreateObject<TlOnOffUdpSource>();
      app->Configure(InetSocketAddress(dstAddr[g], port), kPacket, interval, on, off);
      stream += app->AssignStreams(stream);
      src.Get(g)->AddApplication(app);
      app->SetStartTime(Seconds(0));
      app->SetStopTime(Seconds(duration));
      app->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, g));
      PacketSinkHelper sinkHelper("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
      Ptr<Application> sink = sinkHelper.Install(dst.Get(g)).Get(0);
      sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, g));
    }
  }
  Simulator::Stop(Seconds(duration + drain));
  Simulator::Run();

  std::ofstream csv(out + "/groups.csv");
  csv.precision(9);
  csv << "group,flows,first_node,last_node,sent,received,late,buffer_full,early_discard,budget_expired,eplr,"
         "max_queueing_s\n";
  for (uint32_t g = 0; g < g_groups.size(); ++g) {
    const Group& x = g_groups[g];
    const uint64_t discarded = x.discarded[0] + x.discarded[1] + x.discarded[2];
    csv << g << ',' << x.flows << ',' << x.first << ',' << x.last << ',' << x.sent << ',' << x.received << ',' << x.late
        << ',' << x.discarded[0] << ',' << x.discarded[1] << ',' << x.discarded[2] << ','
        << (x.sent ? double(discarded + x.late) / double(x.sent) : 0.0) << ',' << x.max_queueing << '\n';
  }
  std::ofstream js(out + "/summary.json");
  js.precision(12);
  js << "{\n  \"ns3_version\": \"" << TL_NS3_VERSION << "\",\n  \"qdisc\": \"" << g_spec << "\",\n  \"groups\": \""
     << g_groupSpec << "\",\n  \"d_ms\": " << d_ms << ",\n  \"mtq_ms\": " << mtq_ms << ",\n  \"qtl_ms\": " << qtl_ms
     << ",\n  \"on_ms\": " << on_ms << ",\n  \"off_ms\": " << off_ms << ",\n  \"mean_kbps\": " << mean_kbps
     << ",\n  \"duration_s\": " << duration << ",\n  \"drain_s\": " << drain << ",\n  \"seed\": " << seed
     << ",\n  \"run\": " << run << ",\n  \"nodes\": [";
  for (uint32_t n = 0; n < kNodes; ++n) {
    const NodeStats& s = g_node[n];
    js << (n ? ", " : "") << "{\"served\": " << s.served << ", \"buffer_full\": " << s.drops[0]
       << ", \"early_discard\": " << s.drops[1] << ", \"budget_expired\": " << s.drops[2]
       << ", \"mean_sojourn_s\": " << (s.served ? s.sojourn_sum / double(s.served) : 0.0) << "}";
  }
  js << "]\n}\n";
  std::printf("ns-3 %s MTQ/QTL chain %s, groups %s, D %g ms -> %s/\n", TL_NS3_VERSION, g_spec.c_str(),
              g_groupSpec.c_str(), d_ms, out.c_str());
  Simulator::Destroy();
  return 0;
}
