// The thesis's WLAN ([003 §6.3, ch.7], experiments.md E-THS-9..12): wired
// hosts 0-9 - router - access point - stations 0-9 on 802.11a at 54 Mb/s
// (constant rate, RTS/CTS off, every station at the same distance from the
// AP and in range of every other), the queue disc under test on the AP's
// wireless device: the only buffer that builds up, holding the downloads'
// data and the uploads' ACKs. The wired part has 2 ms one way (1 ms
// host-router at 100 Mb/s, 1 ms router-AP at 1 Gb/s: the router's output is
// 10x its input, so its queue never builds up). TCP NewReno, 1448-byte
// segments (1500-byte IP packets with timestamps), delayed ACKs (2
// segments), a 43-segment receive window.
//
//   tl-ns3-wlan --qdisc='pefd(capacity=30)' --uploads=5 --downloads=5 --duration=100 --out=DIR
//   tl-ns3-wlan --qdisc=fifo --load=10e6 --ratio=1 --duration=1000 --drain=60 --out=DIR
//
// Two workloads. Long-lived: --uploads stations (station -> wired host)
// and --downloads (wired host -> station) unlimited transfers, one per
// station and wired host, all starting at --start and running to the end.
// Mixed (--load > 0): TCP transfers arrive as a Poisson process at
// load / mean size, each a download with probability ratio / (1 + ratio)
// (ratio = lambda_d / lambda_u), between a random wired host and a random
// station, sizes bounded Zipf in segments as the dumbbell's (algorithms.md
// §11: P(k) ~ k^-(alpha+1) on [6, 6906] segments).
//
// Writes DIR/flows.csv, one row per transfer: direction, station, wired
// host, size (0 = long-lived), start, completion (empty if not finished),
// response time, bytes received by the end, its packets that arrived at the
// AP's queue disc and those of them it dropped (data of a download, ACKs of
// an upload), and, sampled every 100 ms while it runs, the sender's mean
// smoothed RTT and usable window (its congestion window capped by the
// receive window); and DIR/summary.json: the ns-3 version, the
// configuration, the AP queue disc's ns-3 and core counters (its high-water
// mark among them) and the drops anywhere else (station and wired FIFOs,
// the 802.11 MAC).
//
// ns-3 details that matter: the AP's MAC queue holds one packet (the flow
// control of WifiNetDevice stops the queue disc above it while that packet
// waits for the medium and its ACK), so the queue disc holds the backlog;
// every other device has a 1000-packet FIFO that never overflows here. The
// queue discs are installed before the addresses are assigned (Assign
// installs ns-3's default FqCoDel on any device without one).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include "scenario.hh"
#include "tl-queue-disc.hh"

using namespace ns3;

namespace {

using tracelab::scenario::BoundedZipf;
using tracelab::scenario::Json;

constexpr uint16_t kFirstPort = 10000;
constexpr uint32_t kWindowSegments = 43;  // the receiver's advertised window, [003 §6.4]
constexpr uint32_t kOtherFifo = 1000;     // packets, every device but the AP's wireless one
const Time kSample = MilliSeconds(100);   // RTT and cwnd sampling period

struct Flow {
  bool down = false;
  uint32_t station = 0, host = 0;
  uint64_t size = 0;  // bytes; 0 = long-lived
  double start = 0;
  double done = -1;
  uint64_t received = 0;
  uint64_t ap_data = 0, ap_acks = 0;      // its data packets, ACKs arriving at the AP's queue disc
  uint64_t lost_data = 0, lost_acks = 0;  // of those, dropped (refused or pushed out)
  // The sender's latest smoothed RTT and cwnd, and their sampled sums.
  double rtt = 0, cwnd = 0;
  double rtt_sum = 0, cwnd_sum = 0;
  uint64_t samples = 0;
  Ptr<BulkSendApplication> sender;
};

std::vector<Flow> g_flows;
std::string g_spec = "fifo";
double g_window = 0;  // the receive window, bytes: what a sender can have in flight

// The whole --qdisc value (CommandLine's own string parsing stops at the
// first space of 'efd(th=30000, capacity=30)').
bool SetSpec(const std::string& value) {
  g_spec = value;
  return true;
}

void OnRx(uint32_t i, Ptr<const Packet> p, const Address&) {
  Flow& f = g_flows[i];
  f.received += p->GetSize();
  if (f.size > 0 && f.done < 0 && f.received >= f.size) f.done = Simulator::Now().GetSeconds();
}

void OnRtt(uint32_t i, Time, Time now) { g_flows[i].rtt = now.GetSeconds(); }
void OnCwnd(uint32_t i, uint32_t, uint32_t now) { g_flows[i].cwnd = now; }

// The sender's socket exists once its application has started.
void ConnectSocket(uint32_t i) {
  Ptr<Socket> socket = g_flows[i].sender->GetSocket();
  if (!socket) return;
  socket->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnRtt, i));
  socket->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, i));
}

// Every kSample: each running flow whose RTT has been measured adds a
// sample; the window it may use is its cwnd capped by the receive window.
void Sample() {
  for (Flow& f : g_flows)
    if (f.rtt > 0 && f.done < 0) {
      f.rtt_sum += f.rtt;
      f.cwnd_sum += std::min(f.cwnd, g_window);
      ++f.samples;
    }
  Simulator::Schedule(kSample, &Sample);
}

// An AP item's flow: a download's data (its destination port is the
// flow's) or an upload's ACK (its source port is: the sink on the wired
// host sends it); nullptr for anything else.
Flow* ApFlowOf(Ptr<const QueueDiscItem> item, bool* ack) {
  Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
  if (!ip || ip->GetHeader().GetProtocol() != 6) return nullptr;
  TcpHeader tcp;
  if (ip->GetPacket()->PeekHeader(tcp) == 0) return nullptr;
  const uint32_t dst = tcp.GetDestinationPort(), src = tcp.GetSourcePort();
  *ack = false;
  if (dst >= kFirstPort && dst - kFirstPort < g_flows.size()) return &g_flows[dst - kFirstPort];
  *ack = true;
  if (src >= kFirstPort && src - kFirstPort < g_flows.size()) return &g_flows[src - kFirstPort];
  return nullptr;
}

// Arrivals at the AP: admitted (Enqueue) or refused (DropBeforeEnqueue).
void OnApArrival(Ptr<const QueueDiscItem> item) {
  bool ack;
  if (Flow* f = ApFlowOf(item, &ack)) ++(ack ? f->ap_acks : f->ap_data);
}

void OnApDrop(Ptr<const QueueDiscItem> item, const char*) {
  bool ack;
  if (Flow* f = ApFlowOf(item, &ack)) ++(ack ? f->lost_acks : f->lost_data);
}

void OnApRefused(Ptr<const QueueDiscItem> item, const char* reason) {
  OnApArrival(item);
  OnApDrop(item, reason);
}

uint64_t g_otherQdiscDrops = 0, g_macDrops = 0, g_phyDrops = 0;
void OnOtherDrop(Ptr<const QueueDiscItem>) { ++g_otherQdiscDrops; }
void OnMacDrop(Ptr<const Packet>) { ++g_macDrops; }
void OnPhyDrop(Ptr<const Packet>) { ++g_phyDrops; }

}  // namespace

int main(int argc, char** argv) {
  std::string out = "wlan-out";
  uint32_t stations = 10, hosts = 10;
  uint32_t uploads = 0, downloads = 0;
  double start = 1;       // long-lived transfers start, seconds
  double load = 0;        // mixed workload, offered bits per second (0 = none)
  double ratio = 1;       // lambda_d / lambda_u
  double duration = 100;  // seconds: the run (long-lived), the arrivals (mixed)
  double drain = 0;       // seconds simulated after the last arrival
  double alpha = 1.0;
  uint32_t minSeg = 6, maxSeg = 6906;
  uint32_t seg = 1448;
  double radius = 10;  // metres from the AP
  std::string dataMode = "OfdmRate54Mbps", controlMode = "OfdmRate24Mbps";
  uint32_t seed = 1, run = 1;
  CommandLine cmd(__FILE__);
  cmd.AddValue("qdisc", "the AP's queue disc, as an engine spec string (capacity 300 by default) [fifo]",
               MakeCallback(&SetSpec));
  cmd.AddValue("uploads", "long-lived uploads (station -> wired host)", uploads);
  cmd.AddValue("downloads", "long-lived downloads (wired host -> station)", downloads);
  cmd.AddValue("start", "long-lived transfers start, seconds", start);
  cmd.AddValue("load", "mixed workload: offered bits per second (0 = none)", load);
  cmd.AddValue("ratio", "mixed workload: download to upload arrival ratio", ratio);
  cmd.AddValue("duration", "seconds: the run (long-lived) or of arrivals (mixed)", duration);
  cmd.AddValue("drain", "seconds simulated after the last arrival", drain);
  cmd.AddValue("alpha", "bounded Zipf exponent of the transfer sizes (segments)", alpha);
  cmd.AddValue("minSeg", "smallest transfer, segments", minSeg);
  cmd.AddValue("maxSeg", "largest transfer, segments", maxSeg);
  cmd.AddValue("segment", "TCP segment size, bytes", seg);
  cmd.AddValue("stations", "wireless stations (and wired hosts)", stations);
  cmd.AddValue("radius", "distance of every station from the AP, metres", radius);
  cmd.AddValue("dataMode", "802.11a data mode of every transmitter", dataMode);
  cmd.AddValue("controlMode", "802.11a mode of control frames", controlMode);
  cmd.AddValue("seed", "RNG seed", seed);
  cmd.AddValue("run", "RNG run", run);
  cmd.AddValue("out", "output directory (flows.csv, summary.json)", out);
  cmd.Parse(argc, argv);
  hosts = stations;
  const std::string spec = g_spec;
  if (duration <= 0 || load < 0 || ratio < 0 || stations == 0 || uploads + downloads > stations ||
      (load == 0 && uploads + downloads == 0) || start >= duration || minSeg == 0 || minSeg > maxSeg) {
    std::fprintf(stderr,
                 "tl-ns3-wlan: needs --duration > 0, --start < --duration, uploads + downloads <= --stations, "
                 "1 <= --minSeg <= --maxSeg and a workload (--uploads/--downloads or --load > 0)\n");
    return 2;
  }
  RngSeedManager::SetSeed(seed);
  RngSeedManager::SetRun(run);

  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(seg));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  g_window = double(kWindowSegments) * seg;
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(kWindowSegments * seg));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
  // One packet in the MAC: the queue disc above holds the backlog.
  Config::SetDefault("ns3::WifiMacQueue::MaxSize", QueueSizeValue(QueueSize("1p")));

  NodeContainer wired, stas, router, ap;
  wired.Create(hosts);
  router.Create(1);
  ap.Create(1);
  stas.Create(stations);

  PointToPointHelper access, uplink;
  access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
  access.SetChannelAttribute("Delay", StringValue("1ms"));
  access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  uplink.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
  uplink.SetChannelAttribute("Delay", StringValue("1ms"));
  uplink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  std::vector<NetDeviceContainer> hostLinks;
  for (uint32_t i = 0; i < hosts; ++i) hostLinks.push_back(access.Install(wired.Get(i), router.Get(0)));
  NetDeviceContainer routerAp = uplink.Install(router.Get(0), ap.Get(0));

  WifiHelper wifi;
  wifi.SetStandard(WIFI_STANDARD_80211a);
  wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", StringValue(dataMode), "ControlMode",
                               StringValue(controlMode), "RtsCtsThreshold", UintegerValue(4692));
  YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
  YansWifiPhyHelper phy;
  phy.SetChannel(channel.Create());
  WifiMacHelper mac;
  const Ssid ssid("tracelab");
  mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid), "ActiveProbing", BooleanValue(false));
  NetDeviceContainer staDevs = wifi.Install(phy, mac, stas);
  mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid));
  NetDeviceContainer apDevs = wifi.Install(phy, mac, ap);
  wifi.AssignStreams(NetDeviceContainer(apDevs, staDevs), 100);

  MobilityHelper mobility;
  Ptr<ListPositionAllocator> positions = CreateObject<ListPositionAllocator>();
  positions->Add(Vector(0, 0, 0));
  for (uint32_t i = 0; i < stations; ++i) {
    const double a = 2 * M_PI * i / stations;
    positions->Add(Vector(radius * std::cos(a), radius * std::sin(a), 0));
  }
  mobility.SetPositionAllocator(positions);
  mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
  mobility.Install(ap);
  mobility.Install(stas);

  InternetStackHelper stack;
  stack.Install(wired);
  stack.Install(router);
  stack.Install(ap);
  stack.Install(stas);

  // Queue discs before the addresses: the large FIFOs first, with their own
  // attributes, then the AP's from the spec (its attributes become the
  // defaults of its type, which the FIFOs already built do not see).
  TrafficControlHelper fifo;
  fifo.SetRootQueueDisc("ns3::TlFifoQueueDisc", "Capacity", UintegerValue(kOtherFifo));
  QueueDiscContainer others;
  for (const NetDeviceContainer& c : hostLinks) others.Add(fifo.Install(c));
  others.Add(fifo.Install(routerAp));
  others.Add(fifo.Install(staDevs));
  TlSpec parsed;
  try {
    parsed = TlParseSpec(spec, 54000000);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tl-ns3-wlan: %s\n", e.what());
    return 2;
  }
  for (const auto& [k, v] : parsed.attributes) Config::SetDefault(parsed.type_name + "::" + k, StringValue(v));
  TrafficControlHelper apTc;
  apTc.SetRootQueueDisc(parsed.type_name);
  Ptr<QueueDisc> qd = apTc.Install(apDevs).Get(0);
  // A chunking queue disc needs a de-chunker behind the link; a station has none.
  if (!DynamicCast<TlCoreQueueDisc>(qd) || DynamicCast<TlChunkQueueDisc>(qd)) {
    std::fprintf(stderr, "tl-ns3-wlan: %s is not a single-packet queue disc; the AP takes those only\n", spec.c_str());
    return 2;
  }

  Ipv4AddressHelper addr;
  std::vector<Ipv4Address> hostAddr, staAddr;
  for (uint32_t i = 0; i < hosts; ++i) {
    addr.SetBase(Ipv4Address(("10.1." + std::to_string(i + 1) + ".0").c_str()), "255.255.255.0");
    hostAddr.push_back(addr.Assign(hostLinks[i]).GetAddress(0));
  }
  addr.SetBase("10.2.0.0", "255.255.255.0");
  addr.Assign(routerAp);
  addr.SetBase("10.3.0.0", "255.255.255.0");
  addr.Assign(apDevs);
  Ipv4InterfaceContainer staIf = addr.Assign(staDevs);
  for (uint32_t i = 0; i < stations; ++i) staAddr.push_back(staIf.GetAddress(i));
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  qd->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnApArrival));
  qd->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&OnApRefused));
  qd->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&OnApDrop));
  for (uint32_t i = 0; i < others.GetN(); ++i)
    others.Get(i)->TraceConnectWithoutContext("Drop", MakeCallback(&OnOtherDrop));
  for (uint32_t i = 0; i < staDevs.GetN() + 1; ++i) {
    Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(i < staDevs.GetN() ? staDevs.Get(i) : apDevs.Get(0));
    dev->GetMac()->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&OnMacDrop));
    dev->GetPhy()->TraceConnectWithoutContext("PhyTxDrop", MakeCallback(&OnPhyDrop));
  }

  // The transfers.
  BoundedZipf sizes(alpha, minSeg, maxSeg);
  const double meanBytes = sizes.Mean() * seg;
  for (uint32_t i = 0; i < downloads; ++i) {
    Flow f;
    f.down = true, f.station = i, f.host = i, f.start = start;
    g_flows.push_back(f);
  }
  for (uint32_t i = 0; i < uploads; ++i) {
    Flow f;
    f.down = false, f.station = downloads + i, f.host = downloads + i, f.start = start;
    g_flows.push_back(f);
  }
  if (load > 0) {
    Ptr<ExponentialRandomVariable> gap = CreateObject<ExponentialRandomVariable>();
    gap->SetAttribute("Mean", DoubleValue(meanBytes * 8 / load));
    Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
    for (double t = gap->GetValue(); t < duration; t += gap->GetValue()) {
      Flow f;
      f.start = t;
      f.down = u->GetValue() < ratio / (1 + ratio);
      f.station = u->GetInteger(0, stations - 1);
      f.host = u->GetInteger(0, hosts - 1);
      f.size = uint64_t(sizes.Draw(u->GetValue())) * seg;
      g_flows.push_back(f);
    }
  }
  if (g_flows.size() > 65535u - kFirstPort) {
    std::fprintf(stderr, "tl-ns3-wlan: more than %u transfers: shorten --duration\n", 65535u - kFirstPort);
    return 2;
  }
  const double end = load > 0 ? duration + drain : duration;
  for (uint32_t i = 0; i < g_flows.size(); ++i) {
    Flow& f = g_flows[i];
    const uint16_t port = uint16_t(kFirstPort + i);
    Ptr<Node> from = f.down ? wired.Get(f.host) : stas.Get(f.station);
    Ptr<Node> to = f.down ? stas.Get(f.station) : wired.Get(f.host);
    const Ipv4Address toAddr = f.down ? staAddr[f.station] : hostAddr[f.host];
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink = sinkHelper.Install(to);
    sink.Start(Seconds(0));
    sink.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
    BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(toAddr, port));
    send.SetAttribute("MaxBytes", UintegerValue(f.size));
    send.SetAttribute("SendSize", UintegerValue(seg));
    ApplicationContainer app = send.Install(from);
    app.Start(Seconds(f.start));
    f.sender = DynamicCast<BulkSendApplication>(app.Get(0));
    Simulator::Schedule(Seconds(f.start) + NanoSeconds(1), &ConnectSocket, i);
  }
  Simulator::Schedule(kSample, &Sample);
  Simulator::Stop(Seconds(end));
  Simulator::Run();

  std::string mk = "mkdir -p '" + out + "'";
  if (std::system(mk.c_str()) != 0) {
    std::fprintf(stderr, "tl-ns3-wlan: cannot create %s\n", out.c_str());
    return 2;
  }
  std::ofstream csv(out + "/flows.csv");
  csv.precision(12);
  csv << "flow,direction,station,host,size_bytes,start_s,completion_s,response_s,received_bytes,ap_data_packets,"
         "ap_ack_packets,lost_data_packets,lost_ack_packets,rtt_mean_s,cwnd_mean_bytes\n";
  uint64_t done = 0, lostData = 0, lostAcks = 0;
  for (uint32_t i = 0; i < g_flows.size(); ++i) {
    const Flow& f = g_flows[i];
    csv << i << ',' << (f.down ? "down" : "up") << ',' << f.station << ',' << f.host << ',' << f.size << ',' << f.start
        << ',';
    if (f.done >= 0) {
      csv << f.done << ',' << f.done - f.start;
      ++done;
    } else {
      csv << ',';
    }
    csv << ',' << f.received << ',' << f.ap_data << ',' << f.ap_acks << ',' << f.lost_data << ',' << f.lost_acks << ',';
    if (f.samples > 0) csv << f.rtt_sum / double(f.samples) << ',' << f.cwnd_sum / double(f.samples);
    else csv << ',';
    csv << '\n';
    lostData += f.lost_data;
    lostAcks += f.lost_acks;
  }
  const QueueDisc::Stats& s = qd->GetStats();
  const tracelab::Counters& c = DynamicCast<TlCoreQueueDisc>(qd)->GetCounters();
  std::ofstream js(out + "/summary.json");
  js << "{\n  \"ns3_version\": " << Json(TL_NS3_VERSION) << ",\n  \"qdisc\": " << Json(spec)
     << ",\n  \"type\": " << Json(parsed.type_name) << ",\n  \"stations\": " << stations
     << ",\n  \"uploads\": " << uploads << ",\n  \"downloads\": " << downloads << ",\n  \"start_s\": " << start
     << ",\n  \"load_bps\": " << load << ",\n  \"ratio\": " << ratio << ",\n  \"duration_s\": " << duration
     << ",\n  \"drain_s\": " << drain << ",\n  \"end_s\": " << end << ",\n  \"seed\": " << seed
     << ",\n  \"run\": " << run << ",\n  \"alpha\": " << alpha << ",\n  \"min_segments\": " << minSeg
     << ",\n  \"max_segments\": " << maxSeg << ",\n  \"mean_flow_bytes\": " << meanBytes << ",\n  \"segment\": " << seg
     << ",\n  \"window_segments\": " << kWindowSegments << ",\n  \"data_mode\": " << Json(dataMode)
     << ",\n  \"control_mode\": " << Json(controlMode) << ",\n  \"radius_m\": " << radius
     << ",\n  \"flows\": " << g_flows.size() << ",\n  \"completed\": " << done
     << ",\n  \"ap\": {\"received\": " << s.nTotalReceivedPackets << ", \"sent\": " << s.nTotalSentPackets
     << ", \"dropped\": " << s.nTotalDroppedPackets << ", \"dropped_data\": " << lostData
     << ", \"dropped_acks\": " << lostAcks << ", \"core_offered\": " << c.offered << ", \"core_served\": " << c.served
     << ", \"core_dropped\": " << c.dropped_total() << ", \"highwater_packets\": " << c.highwater_packets
     << "},\n  \"other_drops\": {\"fifo\": " << g_otherQdiscDrops << ", \"mac\": " << g_macDrops
     << ", \"phy\": " << g_phyDrops << "}\n}\n";
  std::printf("ns-3 %s wlan %s: %zu transfers, %llu completed; AP dropped %u of %u (high-water %llu) -> %s/\n",
              TL_NS3_VERSION, spec.c_str(), g_flows.size(), (unsigned long long)done, s.nTotalDroppedPackets,
              s.nTotalReceivedPackets, (unsigned long long)c.highwater_packets, out.c_str());
  Simulator::Destroy();
  return 0;
}
