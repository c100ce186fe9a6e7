// JumboGen's edge/core network ([002 §4]; experiments.md E-JG-0): --edges
// ingress edge routers on the left and as many egress edges on the right,
// each with five external hosts, joined through two core routers C1 -> C2
// (the monitored core link). Every link runs at --rate (250 Mb/s). Flows go
// from left hosts to right hosts (their ACKs back):
//
//   long-term  --long flows: 20 % CBR, 20 % VBR, 60 % TCP (the seed's mix),
//              for the whole run; the first 4 TCP flows and the first CBR
//              flow are the monitored ones;
//   short-term TCP transfers, Poisson arrivals (--shortRate per second),
//              exponential sizes of mean 100 KB ([002 §4]).
//
// --variant=standard: FIFO at the edges, RED (TlJumboGenRedQueueDisc,
// mode standard, w_q 0.005) on both core directions. --variant=fd | pd:
// every edge's device towards the core runs TlJumboGenIngressQueueDisc (one
// aggregation queue per egress edge, --mtu, --jfet), every edge a
// TlJumboGenEgress (--es: egress shaping), and the core RED is JumboGen-aware
// (mode full or partial, w_q 0.025). --floor adds a per-packet processing
// time to every router-to-router link (the device's inter-frame gap: E-JG-5).
// --fdPackets makes full drop count the core queue in encapsulated packets,
// as partial drop does (the spec counts FD's in JumboGrams).
//
// --frame=B (E-JG-1, variant standard): every long-term flow is UDP CBR of
// B-byte Ethernet frames (IP packet B - 38: IFG 12, preamble 8, MAC 14, FCS
// 4), the flows together offering --frameLoad bits per second counted on
// that Ethernet wire; no VBR or TCP (set --shortRate=0).
//
// What the seed leaves out and the defaults here (each a flag): the number
// of edges (2 per side), link delays (2 ms access and edge links, --coreDelay
// 10 ms between C1 and C2), RED min_th 100, max_th 300 packets (so that
// Standard reaches about the seed's 90 % utilisation), max_p 0.1, capacity
// 600, minPktDrop 0.1, maxPktDrop 0.5 of N; CBR 2 Mb/s of 500-B IP
// packets; VBR exponential ON/OFF (means 0.5 s / 0.5 s) at 4 Mb/s of
// 1000-B packets while ON; TCP NewReno, 1460-byte segments without
// timestamps (1500-B packets), ns-3's delayed ACK (2 segments), 256 KB
// buffers; long-term TCP is unlimited.
//
//   tl-ns3-jumbogen --variant=pd --es=1 --duration=20 --out=DIR
//
// Writes DIR/flows.csv (per flow: class, monitored, start, bytes delivered
// over the measured time, UDP packets sent and received, mean one-way delay
// and mean IPDV jitter) and DIR/summary.json (configuration; the core link
// C1 -> C2 over the measured time: packets and bytes per second, utilisation
// mean and std over 100 ms windows, the IP size histogram, RED's counts;
// per edge: JumboGrams, packets encapsulated, mean and max QTime, mean
// ingress wait; egress: packets split, removed entries, shaper hold).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "jumbogen_red.hh"
#include "scenario.hh"
#include "sources.hh"
#include "tl-jumbogen-edge.hh"
#include "tl-queue-disc.hh"

using namespace ns3;

namespace {

using tracelab::scenario::Json;

enum Cls : uint8_t { kCbr, kVbr, kTcp, kShort };
const char* const kClsName[] = {"cbr", "vbr", "tcp", "short"};
constexpr uint16_t kFirstPort = 10000;
constexpr uint32_t kHostsPerEdge = 5;
constexpr double kWindow = 0.1;             // seconds per utilisation sample
constexpr uint32_t kEthernetOverhead = 38;  // bytes of an Ethernet frame beyond its IP packet, IFG included
// IP size histogram bounds on the core link, bytes (the last bucket: above).
const uint32_t kSizeBounds[] = {64, 128, 576, 1500, 4096, 8192, 16384};
constexpr size_t kSizeBuckets = sizeof(kSizeBounds) / sizeof(kSizeBounds[0]) + 1;

struct Flow {
  Cls cls = kTcp;
  bool monitored = false;
  uint32_t src = 0, dst = 0;  // host indices
  double start = 0;
  uint64_t sent = 0, rx = 0, rx_bytes = 0;  // rx_bytes: TCP payload or UDP IP bytes, measured time
  double delay_sum = 0, ipdv_sum = 0, last_delay = -1;
  uint64_t ipdv_n = 0;
};
std::vector<Flow> g_flows;
bool g_measuring = false;
double g_warmup = 1, g_end = 0;

// The core link C1 -> C2, over the measured time.
struct CoreLink {
  uint64_t packets = 0, bytes = 0, window_bytes = 0;
  uint64_t sizes[kSizeBuckets] = {};
  std::vector<double> util;  // per window
  uint64_t rate_bps = 0;
} g_core;

void OnCoreTx(Ptr<const Packet> p) {
  if (!g_measuring) return;
  const uint32_t ip = p->GetSize() - 2;  // without the PPP header
  ++g_core.packets;
  g_core.bytes += ip;
  g_core.window_bytes += p->GetSize();
  size_t b = 0;
  while (b + 1 < kSizeBuckets && ip > kSizeBounds[b]) ++b;
  ++g_core.sizes[b];
}
void SampleUtil() {
  if (g_measuring) g_core.util.push_back(double(g_core.window_bytes) * 8 / (double(g_core.rate_bps) * kWindow));
  g_core.window_bytes = 0;
  if (Simulator::Now().GetSeconds() + kWindow <= g_end + 1e-9) Simulator::Schedule(Seconds(kWindow), &SampleUtil);
}
void StartMeasuring() {
  g_measuring = true;
  g_core.window_bytes = 0;
}

void OnUdpTx(uint32_t i, Ptr<const Packet>) {
  if (g_measuring) ++g_flows[i].sent;
}
// A UDP packet counts when it was sent in the measured time (as OnUdpTx
// counts it), wherever it arrives before the drain ends.
void OnUdpRx(uint32_t i, Ptr<const Packet> p, const Address&) {
  SeqTsHeader stamp;
  if (p->PeekHeader(stamp) == 0) return;
  const double sent = stamp.GetTs().GetSeconds();
  if (sent < g_warmup || sent >= g_end) return;
  Flow& f = g_flows[i];
  const double d = (Simulator::Now() - stamp.GetTs()).GetSeconds();
  ++f.rx;
  f.rx_bytes += p->GetSize() + kTlUdpIpHeaders;
  f.delay_sum += d;
  if (f.last_delay >= 0) f.ipdv_sum += std::fabs(d - f.last_delay), ++f.ipdv_n;
  f.last_delay = d;
}
void OnTcpRx(uint32_t i, Ptr<const Packet> p, const Address&) {
  if (g_measuring) g_flows[i].rx_bytes += p->GetSize();
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = "jumbogen-out", variant = "standard";
  uint32_t edges = 2, longFlows = 40, mtu = 8192, segment = 1460, frame = 0;
  double duration = 20, warmup = 1, shortRate = 25, drain = 0.5, frameLoad = 1e9;
  bool es = true, early = false, fdPackets = false;
  DataRate rate("250Mbps");
  Time jfet = MilliSeconds(1), coreDelay = MilliSeconds(10), edgeDelay = MilliSeconds(2), floor = Seconds(0);
  double minTh = 100, maxTh = 300, maxP = 0.1, minPktDrop = 0.1, maxPktDrop = 0.5, wq = -1;
  uint32_t capacity = 600, seed = 1, run = 1;
  CommandLine cmd(__FILE__);
  cmd.AddValue("variant", "standard | fd | pd", variant);
  cmd.AddValue("es", "egress shaping at the egress edges", es);
  cmd.AddValue("early", "release a full JumboGram at once (AMB-14; false: held until the JFET)", early);
  cmd.AddValue("mtu", "JumboGen MTU, bytes", mtu);
  cmd.AddValue("jfet", "JumboGen frame encapsulation timer", jfet);
  cmd.AddValue("edges", "edge routers per side (5 hosts each)", edges);
  cmd.AddValue("long", "long-term flows (20 % CBR, 20 % VBR, 60 % TCP)", longFlows);
  cmd.AddValue("shortRate", "short-term TCP transfers started per second (0: none)", shortRate);
  cmd.AddValue("duration", "seconds simulated before the drain", duration);
  cmd.AddValue("warmup", "seconds not measured at the start", warmup);
  cmd.AddValue("rate", "rate of every link", rate);
  cmd.AddValue("coreDelay", "propagation delay C1 -> C2", coreDelay);
  cmd.AddValue("edgeDelay", "propagation delay of every other link", edgeDelay);
  cmd.AddValue("floor", "per-packet processing time on router-to-router links (inter-frame gap)", floor);
  cmd.AddValue("minTh", "RED min_th (packets; encapsulated packets in pd)", minTh);
  cmd.AddValue("maxTh", "RED max_th", maxTh);
  cmd.AddValue("maxP", "RED max_p", maxP);
  cmd.AddValue("wq", "RED EWMA weight (default: 0.005 standard, 0.025 JumboGen)", wq);
  cmd.AddValue("minPktDrop", "partial drop: share of N cut at min_th", minPktDrop);
  cmd.AddValue("maxPktDrop", "partial drop: share of N cut at max_th", maxPktDrop);
  cmd.AddValue("capacity", "RED queue capacity (its units)", capacity);
  cmd.AddValue("fdPackets", "full drop counts the core queue in encapsulated packets (as pd)", fdPackets);
  cmd.AddValue("frame", "E-JG-1: every long-term flow is CBR of this Ethernet frame size, bytes (0: the mix)", frame);
  cmd.AddValue("frameLoad", "E-JG-1: bits per second the CBR flows offer together, on the Ethernet wire", frameLoad);
  cmd.AddValue("segment", "TCP segment size, bytes", segment);
  cmd.AddValue("seed", "RNG seed", seed);
  cmd.AddValue("run", "RNG run", run);
  cmd.AddValue("out", "output directory (flows.csv, summary.json)", out);
  cmd.Parse(argc, argv);
  const bool jg = variant == "fd" || variant == "pd";
  if ((!jg && variant != "standard") || duration <= warmup || warmup < 0 || edges == 0 || edges > 50 || longFlows < 5 ||
      rate.GetBitRate() == 0 || mtu < 1600 || mtu > 65535 || !jfet.IsStrictlyPositive() || shortRate < 0 ||
      floor.IsStrictlyNegative() || capacity == 0 || (frame && (jg || frame < 78 || frame > 1538 || frameLoad <= 0))) {
    std::fprintf(stderr,
                 "tl-ns3-jumbogen: needs --variant standard|fd|pd, --duration > --warmup >= 0, 1 to 50 edges, "
                 "--long >= 5, a non-zero rate, 1600 <= --mtu <= 65535, --jfet > 0, --shortRate >= 0, "
                 "--floor >= 0, --capacity > 0 and, with --frame, the standard variant, 78 <= --frame <= 1538 "
                 "and --frameLoad > 0\n");
    return 2;
  }
  if (wq < 0) wq = jg ? 0.025 : 0.005;
  if (std::system(("mkdir -p '" + out + "'").c_str()) != 0) {
    std::fprintf(stderr, "tl-ns3-jumbogen: cannot create %s\n", out.c_str());
    return 2;
  }
  RngSeedManager::SetSeed(seed);
  RngSeedManager::SetRun(run);
  g_warmup = warmup;
  g_end = duration;
  g_core.rate_bps = rate.GetBitRate();

  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 18));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 18));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));

  // Nodes: C1, C2; left edges, right edges; hosts (5 per edge, left then right).
  NodeContainer core(2), left(edges), right(edges), leftHosts(edges * kHostsPerEdge), rightHosts(edges * kHostsPerEdge);
  InternetStackHelper stack;
  for (NodeContainer* c : {&core, &left, &right, &leftHosts, &rightHosts}) stack.Install(*c);

  // Router links carry JumboGrams: an MTU that never fragments one.
  PointToPointHelper routerLink, hostLink;
  routerLink.SetDeviceAttribute("DataRate", DataRateValue(rate));
  routerLink.SetDeviceAttribute("Mtu", UintegerValue(65535));
  routerLink.SetDeviceAttribute("InterframeGap", TimeValue(floor));
  routerLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  hostLink.SetDeviceAttribute("DataRate", DataRateValue(rate));
  hostLink.SetChannelAttribute("Delay", TimeValue(edgeDelay));
  hostLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

  routerLink.SetChannelAttribute("Delay", TimeValue(coreDelay));
  NetDeviceContainer coreDev = routerLink.Install(core.Get(0), core.Get(1));
  routerLink.SetChannelAttribute("Delay", TimeValue(edgeDelay));
  std::vector<NetDeviceContainer> leftUp, rightUp, leftAcc, rightAcc;  // edge side first
  for (uint32_t e = 0; e < edges; ++e) {
    leftUp.push_back(routerLink.Install(left.Get(e), core.Get(0)));
    rightUp.push_back(routerLink.Install(right.Get(e), core.Get(1)));
  }
  for (uint32_t h = 0; h < edges * kHostsPerEdge; ++h) {
    leftAcc.push_back(hostLink.Install(left.Get(h / kHostsPerEdge), leftHosts.Get(h)));
    rightAcc.push_back(hostLink.Install(right.Get(h / kHostsPerEdge), rightHosts.Get(h)));
  }

  // Queue discs before any address. Core: RED both ways.
  const char* mode = variant == "pd" ? "partial" : variant == "fd" ? "full" : "standard";
  TrafficControlHelper red;
  red.SetRootQueueDisc("ns3::TlJumboGenRedQueueDisc", "Mode", StringValue(mode), "MinTh", DoubleValue(minTh), "MaxTh",
                       DoubleValue(maxTh), "MaxP", DoubleValue(maxP), "WQ", DoubleValue(wq), "MinPktDrop",
                       DoubleValue(minPktDrop), "MaxPktDrop", DoubleValue(maxPktDrop), "Capacity",
                       UintegerValue(capacity), "FullDropCountsPackets", BooleanValue(fdPackets), "Seed",
                       UintegerValue(seed));
  QueueDiscContainer coreQd = red.Install(coreDev);
  TrafficControlHelper fifo;
  fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("1000p"));
  TrafficControlHelper ingress;
  ingress.SetRootQueueDisc("ns3::TlJumboGenIngressQueueDisc", "Mtu", UintegerValue(mtu), "Jfet", TimeValue(jfet),
                           "EarlyRelease", BooleanValue(early));
  std::vector<Ptr<TlJumboGenIngressQueueDisc>> ingressQd;  // left edges, then right
  for (std::vector<NetDeviceContainer>* ups : {&leftUp, &rightUp})
    for (NetDeviceContainer& d : *ups) {
      if (jg) ingressQd.push_back(DynamicCast<TlJumboGenIngressQueueDisc>(ingress.Install(d.Get(0)).Get(0)));
      else fifo.Install(d.Get(0));
      fifo.Install(d.Get(1));
    }
  for (std::vector<NetDeviceContainer>* accs : {&leftAcc, &rightAcc})
    for (NetDeviceContainer& d : *accs) fifo.Install(d);

  // Addresses: left edge e's hosts 10.(1+e).h.0/24, right edge e's 10.(101+e).h.0/24.
  Ipv4AddressHelper addr("172.16.0.0", "255.255.255.252");
  addr.Assign(coreDev);
  addr.NewNetwork();
  std::vector<Ipv4Address> leftEdgeAddr, rightEdgeAddr;
  for (uint32_t e = 0; e < edges; ++e) {
    leftEdgeAddr.push_back(addr.Assign(leftUp[e]).GetAddress(0));
    addr.NewNetwork();
    rightEdgeAddr.push_back(addr.Assign(rightUp[e]).GetAddress(0));
    addr.NewNetwork();
  }
  std::vector<Ipv4Address> rightHostAddr;
  for (uint32_t h = 0; h < edges * kHostsPerEdge; ++h) {
    const uint32_t e = h / kHostsPerEdge, k = h % kHostsPerEdge;
    const std::string l = "10." + std::to_string(1 + e) + "." + std::to_string(k) + ".0";
    const std::string r = "10." + std::to_string(101 + e) + "." + std::to_string(k) + ".0";
    Ipv4AddressHelper(l.c_str(), "255.255.255.0").Assign(leftAcc[h]);
    rightHostAddr.push_back(Ipv4AddressHelper(r.c_str(), "255.255.255.0").Assign(rightAcc[h]).GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  std::vector<Ptr<TlJumboGenEgress>> egress;  // left edges, then right
  if (jg) {
    for (NodeContainer* side : {&left, &right})
      for (uint32_t e = 0; e < edges; ++e) egress.push_back(TlInstallJumboGenEgress(side->Get(e), es));
    const Ipv4Mask m16("255.255.0.0");
    for (uint32_t i = 0; i < edges; ++i)
      for (uint32_t e = 0; e < edges; ++e) {
        const std::string l = "10." + std::to_string(1 + e) + ".0.0";
        const std::string r = "10." + std::to_string(101 + e) + ".0.0";
        ingressQd[i]->AddEgress(Ipv4Address(r.c_str()), m16, rightEdgeAddr[e]);
        ingressQd[edges + i]->AddEgress(Ipv4Address(l.c_str()), m16, leftEdgeAddr[e]);
      }
  }
  coreDev.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnCoreTx));

  // Long-term flows: of every 5, one CBR, one VBR, three TCP; host pairs round-robin.
  const uint32_t hosts = edges * kHostsPerEdge;
  for (uint32_t i = 0; i < longFlows; ++i) {
    const Cls c = frame || i % 5 == 0 ? kCbr : i % 5 == 1 ? kVbr : kTcp;
    g_flows.push_back(Flow{c, false, i % hosts, (i + 1) % hosts});
  }
  uint32_t monitoredTcp = 0;
  for (Flow& f : g_flows) {
    if (f.cls == kTcp && monitoredTcp < 4) f.monitored = true, ++monitoredTcp;
    if (f.cls == kCbr && f.src == 0) f.monitored = true;
  }
  // Short-term transfers: Poisson arrivals over the run, exponential sizes (streams 3 000 000 and 3 000 001).
  Ptr<ExponentialRandomVariable> gap = CreateObject<ExponentialRandomVariable>();
  Ptr<ExponentialRandomVariable> size = CreateObject<ExponentialRandomVariable>();
  gap->SetStream(3000000);
  size->SetStream(3000001);
  size->SetAttribute("Mean", DoubleValue(100e3));
  std::vector<uint64_t> shortBytes;
  if (shortRate > 0) {
    gap->SetAttribute("Mean", DoubleValue(1 / shortRate));
    uint32_t k = 0;
    for (double t = gap->GetValue(); t < duration; t += gap->GetValue(), ++k) {
      Flow f{kShort, false, (k * 7) % hosts, (k * 3 + 2) % hosts};
      f.start = t;
      g_flows.push_back(f);
      shortBytes.push_back(std::max<uint64_t>(1, uint64_t(std::llround(size->GetValue()))));
    }
  }
  if (g_flows.size() > 65535u - kFirstPort) {
    std::fprintf(stderr, "tl-ns3-jumbogen: %zu flows, at most %u\n", g_flows.size(), 65535u - kFirstPort);
    return 2;
  }

  Ptr<UniformRandomVariable> tcpStart = CreateObject<UniformRandomVariable>();
  tcpStart->SetAttribute("Max", DoubleValue(0.5));
  tcpStart->SetStream(2000000);
  size_t shortIndex = 0;
  for (uint32_t i = 0; i < g_flows.size(); ++i) {
    Flow& f = g_flows[i];
    const uint16_t port = uint16_t(kFirstPort + i);
    const Address to = InetSocketAddress(rightHostAddr[f.dst], port);
    const bool udp = f.cls == kCbr || f.cls == kVbr;
    PacketSinkHelper sinkHelper(udp ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    Ptr<Application> sink = sinkHelper.Install(rightHosts.Get(f.dst)).Get(0);
    Ptr<Node> src = leftHosts.Get(f.src);
    Ptr<Application> app;
    if (f.cls == kCbr && frame) {
      Ptr<TlOnOffUdpSource> s = CreateObject<TlOnOffUdpSource>();
      s->Configure(to, frame - kEthernetOverhead, Seconds(frame * 8.0 * longFlows / frameLoad), nullptr, nullptr);
      app = s;
    } else if (f.cls == kCbr) {
      Ptr<TlOnOffUdpSource> s = CreateObject<TlOnOffUdpSource>();
      s->Configure(to, 500, Seconds(500.0 * 8 / 2e6), nullptr, nullptr);
      app = s;
    } else if (f.cls == kVbr) {
      Ptr<ExponentialRandomVariable> on = CreateObject<ExponentialRandomVariable>();
      Ptr<ExponentialRandomVariable> off = CreateObject<ExponentialRandomVariable>();
      on->SetAttribute("Mean", DoubleValue(0.5));
      off->SetAttribute("Mean", DoubleValue(0.5));
      Ptr<TlOnOffUdpSource> s = CreateObject<TlOnOffUdpSource>();
      s->Configure(to, 1000, Seconds(1000.0 * 8 / 4e6), on, off);
      s->AssignStreams(2 * int64_t(i));
      app = s;
    } else {
      BulkSendHelper send("ns3::TcpSocketFactory", to);
      send.SetAttribute("MaxBytes", UintegerValue(f.cls == kShort ? shortBytes[shortIndex++] : 0));
      send.SetAttribute("SendSize", UintegerValue(segment));
      app = send.Install(src).Get(0);
    }
    if (udp) {
      src->AddApplication(app);
      f.start = 0;
      app->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnUdpTx, i));
      sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnUdpRx, i));
    } else {
      if (f.cls == kTcp) f.start = tcpStart->GetValue();
      sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnTcpRx, i));
    }
    app->SetStartTime(Seconds(f.start));
    app->SetStopTime(Seconds(duration));
  }

  Simulator::Schedule(Seconds(warmup), &StartMeasuring);
  Simulator::Schedule(Seconds(warmup + kWindow), &SampleUtil);
  Simulator::Schedule(Seconds(duration), [] { g_measuring = false; });
  Simulator::Stop(Seconds(duration + drain));
  Simulator::Run();

  const double measured = duration - warmup;
  std::ofstream csv(out + "/flows.csv");
  csv.precision(9);
  csv << "flow,class,monitored,src,dst,start_s,received_bytes,sent,received,delay_mean_s,jitter_mean_s\n";
  for (uint32_t i = 0; i < g_flows.size(); ++i) {
    const Flow& f = g_flows[i];
    csv << i << ',' << kClsName[f.cls] << ',' << int(f.monitored) << ',' << f.src << ',' << f.dst << ',' << f.start
        << ',' << f.rx_bytes;
    if (f.cls == kCbr || f.cls == kVbr)
      csv << ',' << f.sent << ',' << f.rx << ',' << (f.rx ? f.delay_sum / double(f.rx) : 0.0) << ','
          << (f.ipdv_n ? f.ipdv_sum / double(f.ipdv_n) : 0.0) << '\n';
    else csv << ",,,,\n";
  }

  double utilMean = 0, utilSq = 0;
  for (double u : g_core.util) utilMean += u, utilSq += u * u;
  const double n = double(std::max<size_t>(1, g_core.util.size()));
  utilMean /= n;
  const double utilStd = std::sqrt(std::max(0.0, utilSq / n - utilMean * utilMean));
  std::ofstream js(out + "/summary.json");
  js.precision(12);
  js << "{\n  \"ns3_version\": " << Json(TL_NS3_VERSION) << ",\n  \"variant\": " << Json(variant)
     << ",\n  \"es\": " << (es ? "true" : "false") << ",\n  \"early\": " << (early ? "true" : "false")
     << ",\n  \"mtu\": " << mtu << ",\n  \"jfet_s\": " << jfet.GetSeconds() << ",\n  \"edges\": " << edges
     << ",\n  \"long\": " << longFlows << ",\n  \"short_rate\": " << shortRate
     << ",\n  \"short_flows\": " << shortBytes.size() << ",\n  \"duration_s\": " << duration
     << ",\n  \"warmup_s\": " << warmup << ",\n  \"rate_bps\": " << rate.GetBitRate()
     << ",\n  \"core_delay_s\": " << coreDelay.GetSeconds() << ",\n  \"edge_delay_s\": " << edgeDelay.GetSeconds()
     << ",\n  \"floor_s\": " << floor.GetSeconds() << ",\n  \"frame\": " << frame
     << ",\n  \"frame_load_bps\": " << frameLoad << ",\n  \"red\": {\"mode\": " << Json(mode)
     << ", \"min_th\": " << minTh << ", \"max_th\": " << maxTh << ", \"max_p\": " << maxP << ", \"w_q\": " << wq
     << ", \"min_pkt_drop\": " << minPktDrop << ", \"max_pkt_drop\": " << maxPktDrop << ", \"capacity\": " << capacity
     << ", \"fd_counts_packets\": " << (fdPackets ? "true" : "false") << "},\n  \"seed\": " << seed;
  Ptr<TlCoreQueueDisc> c1 = DynamicCast<TlCoreQueueDisc>(coreQd.Get(0));
  const auto* redCore = dynamic_cast<const tracelab::JumboGenRed*>(c1->GetCore());
  const QueueDisc::Stats& cs = c1->GetStats();
  js << ",\n  \"core\": {\"packets_per_s\": " << double(g_core.packets) / measured
     << ", \"bytes_per_s\": " << double(g_core.bytes) / measured
     << ", \"mean_size\": " << (g_core.packets ? double(g_core.bytes) / double(g_core.packets) : 0.0)
     << ", \"util_mean\": " << utilMean << ", \"util_std\": " << utilStd << ", \"util_samples\": " << g_core.util.size()
     << ", \"sizes\": [";
  for (size_t b = 0; b < kSizeBuckets; ++b) js << (b ? ", " : "") << g_core.sizes[b];
  js << "], \"size_bounds\": [";
  for (size_t b = 0; b + 1 < kSizeBuckets; ++b) js << (b ? ", " : "") << kSizeBounds[b];
  js << "], \"received\": " << cs.nTotalReceivedPackets << ", \"dropped\": " << cs.nTotalDroppedPackets;
  if (redCore)
    js << ", \"jumbograms\": " << redCore->stats().jumbograms << ", \"selected\": " << redCore->stats().selected
       << ", \"partial_dropped\": " << redCore->stats().partial_dropped
       << ", \"malformed\": " << redCore->stats().malformed;
  js << "},\n  \"ingress\": [";
  for (size_t i = 0; i < ingressQd.size(); ++i) {
    const tracelab::JumboGenStats& s = ingressQd[i]->GetJumboStats();
    js << (i ? ", " : "") << "{\"edge\": " << Json((i < edges ? "L" : "R") + std::to_string(i % edges))
       << ", \"jumbograms\": " << s.jumbograms << ", \"encapsulated\": " << s.encapsulated
       << ", \"wire_bytes\": " << s.wire_bytes << ", \"full_closes\": " << s.full_closes
       << ", \"no_queue\": " << s.no_queue << ", \"oversize\": " << s.oversize
       << ", \"wait_mean_s\": " << (s.encapsulated ? double(s.wait_total) * 1e-12 / double(s.encapsulated) : 0.0)
       << ", \"qtime_mean_s\": " << (s.jumbograms ? ingressQd[i]->GetQTimeSum() / double(s.jumbograms) : 0.0)
       << ", \"qtime_max_s\": " << ingressQd[i]->GetQTimeMax() << "}";
  }
  js << "],\n  \"egress\": [";
  for (size_t i = 0; i < egress.size(); ++i) {
    const TlJumboGenEgress& g = *egress[i];
    js << (i ? ", " : "") << "{\"edge\": " << Json((i < edges ? "L" : "R") + std::to_string(i % edges))
       << ", \"jumbograms\": " << g.jumbograms << ", \"packets\": " << g.packets << ", \"missing\": " << g.missing
       << ", \"malformed\": " << g.malformed << ", \"unroutable\": " << g.unroutable << ", \"dropped\": " << g.dropped
       << ", \"hold_mean_s\": " << (g.packets ? g.hold_sum / double(g.packets) : 0.0) << "}";
  }
  js << "]\n}\n";
  std::printf("ns-3 %s JumboGen %s%s: %zu flows, %.0f s; core %.0f pkt/s, utilisation %.3f -> %s/\n", TL_NS3_VERSION,
              variant.c_str(), jg ? (es ? " ES" : " no ES") : "", g_flows.size(), duration,
              double(g_core.packets) / measured, utilMean, out.c_str());
  Simulator::Destroy();
  return 0;
}
