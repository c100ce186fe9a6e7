// NCQ's multi-bottleneck topology ([001 §4.2], Fig. 4; experiments.md
// E-NCQ-0): three routers in a chain, R1 -> R2 -> R3. R1's link to R2 is the
// bottleneck of VoIP and FTP, R2's link to R3 that of VoIP, sensors and FTP:
//
//   VoIP     hosts at R1 -> hosts at R3   (both bottlenecks)
//   sensors  hosts at R2 -> hosts at R3   (R2)
//   FTP      flow i: i % 3 = 0 R1 -> R3 (both), 1 R1 -> R2 (R1's cross
//            traffic), 2 R2 -> R3 (R2's cross traffic)
//
// Every flow has its own source and sink host, each on a 1 Mb/s access link
// whose propagation delay steps deterministically through 8, 9, ..., 12 ms;
// Bernoulli packet errors (0.01) on both ends of the VoIP source and sink
// access links (the seed's mobile VoIP users). The queue under test runs at
// R1 and R2 (the engine spec string, TlParseSpec: 'fifo(capacity=100)',
// 'ncq', 'ncqplus', ...), ns-3's FifoQueueDisc (100 packets, the seed's
// queue size) on every other device. What the seed leaves out and the
// defaults here: the bottleneck rate (--bottleneck, 30 Mb/s) and the core
// links' delay (--coreDelay, 5 ms). TCP: NewReno, 1000-byte segments without
// timestamps (1040-byte IP packets), as ns-2's defaults: an ACK per segment,
// initial window 2 segments, receive window 20 segments. Sources: sources.hh.
//
//   tl-ns3-ncq --qdisc=ncqplus --voip=6 --sensors=6 --ftp=108 --duration=60 --out=DIR
//
// The run measures --duration seconds: the UDP sources stop then, and the
// simulation goes on for --drain seconds (0.25) with the FTP flows still
// sending, so that every UDP packet sent is either received or lost.
//
// Writes DIR/flows.csv (one row per flow: class, routers, access delays,
// active window, UDP packets sent/received and one-way delays, TCP payload
// bytes received by the end of the measured time, drops at R1 and R2,
// packets lost to link errors) and DIR/summary.json (configuration, per
// bottleneck: the queue disc's counts, and over the measured time the link's
// utilisation and per class the packets that arrived, their bytes and the
// drops — class "other" holds TCP packets without payload; NCQ's R, favored
// counts and ncqthresh2). --log writes DIR/udp_tx.csv: every UDP packet's
// flow and send time (the sources' test).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "ncq.hh"
#include "scenario.hh"
#include "sources.hh"
#include "tl-queue-disc.hh"

using namespace ns3;

namespace {

using tracelab::scenario::Json;

enum Cls : uint8_t { kVoip, kSensor, kFtp, kOther };
const char* const kClsName[] = {"voip", "sensor", "ftp", "other"};
constexpr uint16_t kFirstPort = 10000;

struct Flow {
  Cls cls = kOther;
  uint32_t ingress = 0, egress = 0;  // router index: 0 = R1, 1 = R2, 2 = R3
  double src_delay_ms = 0, dst_delay_ms = 0;
  double start = 0, stop = 0;
  uint64_t sent = 0;      // UDP packets
  uint64_t rx = 0;        // UDP packets
  uint64_t rx_bytes = 0;  // UDP: IP bytes; TCP: payload bytes delivered
  double delay_sum = 0, delay_min = std::numeric_limits<double>::infinity(), delay_max = 0;
  uint64_t drops[2] = {0, 0};  // at R1, R2
  uint64_t link_errors = 0;
};
std::vector<Flow> g_flows;

struct ClassCount {
  uint64_t arrivals = 0, bytes = 0, drops = 0;
};
struct Bottleneck {
  Ptr<QueueDisc> qd;
  ClassCount cls[4];
  // At the end of the measured time (before the drain).
  ClassCount measured[4];
  uint64_t sent_packets = 0, sent_bytes = 0;
};
Bottleneck g_bn[2];
bool g_measuring = true;  // TCP deliveries count until the end of the measured time

void EndMeasuring() {
  g_measuring = false;
  for (Bottleneck& b : g_bn) {
    std::copy(std::begin(b.cls), std::end(b.cls), std::begin(b.measured));
    b.sent_packets = b.qd->GetStats().nTotalSentPackets;
    b.sent_bytes = b.qd->GetStats().nTotalSentBytes;
  }
}
std::ofstream g_txLog;

std::string g_spec = "fifo(capacity=100)";
bool SetSpec(const std::string& value) {
  g_spec = value;
  return true;
}

// The flow of an item at a bottleneck (its UDP or TCP destination port, -1
// for none) and its class: a TCP packet without payload (handshake, FIN) is
// the FTP flow's but of class "other", so that "ftp" counts data segments.
struct Owner {
  int64_t flow = -1;
  Cls cls = kOther;
};
Owner OwnerOf(Ptr<const QueueDiscItem> item) {
  Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
  if (!ip) return {};
  uint16_t port = 0;
  bool data = true;
  if (ip->GetHeader().GetProtocol() == 17) {
    UdpHeader udp;
    if (ip->GetPacket()->PeekHeader(udp) == 0) return {};
    port = udp.GetDestinationPort();
  } else if (ip->GetHeader().GetProtocol() == 6) {
    TcpHeader tcp;
    if (ip->GetPacket()->PeekHeader(tcp) == 0) return {};
    port = tcp.GetDestinationPort();
    data = ip->GetPacket()->GetSize() > tcp.GetSerializedSize();
  } else {
    return {};
  }
  if (port < kFirstPort || port - kFirstPort >= int64_t(g_flows.size())) return {};
  const int64_t flow = port - kFirstPort;
  return {flow, data ? g_flows[flow].cls : kOther};
}

// An arrival is an enqueue or a drop before it; a push-out (after dequeue)
// is a drop of a packet that arrived earlier.
void OnArrival(uint32_t b, Ptr<const QueueDiscItem> item) {
  ClassCount& c = g_bn[b].cls[OwnerOf(item).cls];
  ++c.arrivals;
  c.bytes += item->GetSize();
}
void OnDropBefore(uint32_t b, Ptr<const QueueDiscItem> item, const char*) {
  const Owner o = OwnerOf(item);
  ClassCount& c = g_bn[b].cls[o.cls];
  ++c.arrivals;
  c.bytes += item->GetSize();
  ++c.drops;
  if (o.flow >= 0) ++g_flows[o.flow].drops[b];
}
void OnDropAfter(uint32_t b, Ptr<const QueueDiscItem> item, const char*) {
  const Owner o = OwnerOf(item);
  ++g_bn[b].cls[o.cls].drops;
  if (o.flow >= 0) ++g_flows[o.flow].drops[b];
}

void OnUdpTx(uint32_t i, Ptr<const Packet>) {
  ++g_flows[i].sent;
  if (g_txLog.is_open()) g_txLog << i << ',' << Simulator::Now().GetSeconds() << '\n';
}

void OnUdpRx(uint32_t i, Ptr<const Packet> p, const Address&) {
  SeqTsHeader stamp;
  if (p->PeekHeader(stamp) == 0) return;
  Flow& f = g_flows[i];
  const double d = (Simulator::Now() - stamp.GetTs()).GetSeconds();
  ++f.rx;
  f.rx_bytes += p->GetSize() + kTlUdpIpHeaders;
  f.delay_sum += d;
  f.delay_min = std::min(f.delay_min, d);
  f.delay_max = std::max(f.delay_max, d);
}

void OnTcpRx(uint32_t i, Ptr<const Packet> p, const Address&) {
  if (g_measuring) g_flows[i].rx_bytes += p->GetSize();
}

void OnLinkError(uint32_t i, Ptr<const Packet>) { ++g_flows[i].link_errors; }

}  // namespace

int main(int argc, char** argv) {
  std::string out = "ncq-out";
  uint32_t voip = 6, sensors = 6, ftp = 108;
  double duration = 60;
  double drain = 0.25;
  DataRate bnRate("30Mbps"), accRate("1Mbps");
  Time coreDelay = MilliSeconds(5);
  double errorRate = 0.01;
  uint32_t capacity = 100, segment = 1000;
  uint32_t seed = 1, run = 1;
  bool log = false;
  CommandLine cmd(__FILE__);
  cmd.AddValue("qdisc", "queue disc at R1 and R2, as an engine spec string [fifo(capacity=100)]",
               MakeCallback(&SetSpec));
  cmd.AddValue("voip", "VoIP calls, R1 -> R3", voip);
  cmd.AddValue("sensors", "sensor flows, R2 -> R3", sensors);
  cmd.AddValue("ftp", "FTP flows (a third each R1 -> R3, R1 -> R2, R2 -> R3)", ftp);
  cmd.AddValue("duration", "seconds measured: the UDP sources stop, TCP deliveries count until then", duration);
  cmd.AddValue("drain", "seconds simulated after --duration, for the UDP packets in flight", drain);
  cmd.AddValue("bottleneck", "rate of the R1 -> R2 and R2 -> R3 links", bnRate);
  cmd.AddValue("access", "rate of every access link", accRate);
  cmd.AddValue("coreDelay", "propagation delay of the router links", coreDelay);
  cmd.AddValue("errorRate", "Bernoulli packet error rate on the VoIP access links", errorRate);
  cmd.AddValue("capacity", "packets of every other queue", capacity);
  cmd.AddValue("segment", "TCP segment size, bytes (IP packet = segment + 40)", segment);
  cmd.AddValue("log", "write every UDP packet's send time to udp_tx.csv", log);
  cmd.AddValue("seed", "RNG seed", seed);
  cmd.AddValue("run", "RNG run", run);
  cmd.AddValue("out", "output directory (flows.csv, summary.json)", out);
  cmd.Parse(argc, argv);
  const uint64_t flows = uint64_t(voip) + sensors + ftp;
  if (duration <= 0 || drain < 0 || bnRate.GetBitRate() == 0 || accRate.GetBitRate() == 0 || flows == 0 ||
      flows > 65535 - kFirstPort || errorRate < 0 || errorRate >= 1 || capacity == 0) {
    std::fprintf(
        stderr,
        "tl-ns3-ncq: needs --duration > 0, --drain >= 0, non-zero rates, 1 to %u flows, 0 <= --errorRate < 1 and "
        "--capacity > 0\n",
        65535u - kFirstPort);
    return 2;
  }
  TlSpec parsed;
  try {
    parsed = TlParseSpec(g_spec, bnRate.GetBitRate());
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tl-ns3-ncq: %s\n", e.what());
    return 2;
  }
  if (std::system(("mkdir -p '" + out + "'").c_str()) != 0) {
    std::fprintf(stderr, "tl-ns3-ncq: cannot create %s\n", out.c_str());
    return 2;
  }
  RngSeedManager::SetSeed(seed);
  RngSeedManager::SetRun(run);

  // ns-2's TCP defaults, the seed's simulator: NewReno, an ACK per segment,
  // initial window 2, window 20 packets; no timestamps (1040-byte packets).
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(20 * segment));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  for (const auto& [k, v] : parsed.attributes) Config::SetDefault(parsed.type_name + "::" + k, StringValue(v));

  NodeContainer routers(3);
  InternetStackHelper stack;
  stack.Install(routers);
  PointToPointHelper core, access;
  core.SetDeviceAttribute("DataRate", DataRateValue(bnRate));
  core.SetChannelAttribute("Delay", TimeValue(coreDelay));
  core.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  access.SetDeviceAttribute("DataRate", DataRateValue(accRate));
  access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

  // Links in creation order; the queue discs go on before any address (the
  // address helper installs its default queue disc on a device without one).
  std::vector<NetDeviceContainer> links;
  links.push_back(core.Install(routers.Get(0), routers.Get(1)));
  links.push_back(core.Install(routers.Get(1), routers.Get(2)));
  TrafficControlHelper under;
  under.SetRootQueueDisc(parsed.type_name);
  for (uint32_t b = 0; b < 2; ++b) g_bn[b].qd = under.Install(links[b].Get(0)).Get(0);
  TrafficControlHelper other;
  other.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(capacity) + "p"));
  other.Install(links[0].Get(1));
  other.Install(links[1].Get(1));

  for (uint32_t i = 0; i < voip; ++i) g_flows.push_back(Flow{kVoip, 0, 2});
  for (uint32_t i = 0; i < sensors; ++i) g_flows.push_back(Flow{kSensor, 1, 2});
  const uint32_t ftpPath[3][2] = {{0, 2}, {0, 1}, {1, 2}};
  for (uint32_t i = 0; i < ftp; ++i) g_flows.push_back(Flow{kFtp, ftpPath[i % 3][0], ftpPath[i % 3][1]});

  NodeContainer src, dst;
  src.Create(flows);
  dst.Create(flows);
  stack.Install(src);
  stack.Install(dst);
  std::vector<NetDeviceContainer> srcLinks, dstLinks;
  uint32_t host = 0;
  auto accessLink = [&](Ptr<Node> h, Ptr<Node> r, double& delay_ms) {
    delay_ms = 8 + double(host++ % 5);  // 8 ... 12 ms, deterministically
    access.SetChannelAttribute("Delay", TimeValue(MilliSeconds(delay_ms)));
    NetDeviceContainer d = access.Install(h, r);
    other.Install(d);
    return d;
  };
  for (uint32_t i = 0; i < flows; ++i) {
    Flow& f = g_flows[i];
    srcLinks.push_back(accessLink(src.Get(i), routers.Get(f.ingress), f.src_delay_ms));
    dstLinks.push_back(accessLink(dst.Get(i), routers.Get(f.egress), f.dst_delay_ms));
  }
  Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
  for (const NetDeviceContainer& d : links) addr.Assign(d), addr.NewNetwork();
  std::vector<Ipv4Address> dstAddr;
  for (uint32_t i = 0; i < flows; ++i) {
    addr.Assign(srcLinks[i]);
    addr.NewNetwork();
    dstAddr.push_back(addr.Assign(dstLinks[i]).GetAddress(0));
    addr.NewNetwork();
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  for (uint32_t b = 0; b < 2; ++b) {
    g_bn[b].qd->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnArrival, b));
    g_bn[b].qd->TraceConnectWithoutContext("DropBeforeEnqueue", MakeBoundCallback(&OnDropBefore, b));
    g_bn[b].qd->TraceConnectWithoutContext("DropAfterDequeue", MakeBoundCallback(&OnDropAfter, b));
  }
  if (log) {
    g_txLog.open(out + "/udp_tx.csv");
    g_txLog.precision(12);
    g_txLog << "flow,time_s\n";
  }

  // Sources, sinks and link errors. RNG streams: VoIP i 2i and 2i + 1, the
  // error models from 1 000 000, the FTP start times 2 000 000.
  Ptr<UniformRandomVariable> ftpStart = CreateObject<UniformRandomVariable>();
  ftpStart->SetAttribute("Max", DoubleValue(1.0));
  ftpStart->SetStream(2000000);
  int64_t errorStream = 1000000;
  uint32_t sensorIndex = 0;
  for (uint32_t i = 0; i < flows; ++i) {
    Flow& f = g_flows[i];
    const uint16_t port = uint16_t(kFirstPort + i);
    const Address to = InetSocketAddress(dstAddr[i], port);
    const bool udp = f.cls != kFtp;
    PacketSinkHelper sinkHelper(udp ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    Ptr<Application> sink = sinkHelper.Install(dst.Get(i)).Get(0);
    sink->SetStartTime(Seconds(0));
    Ptr<Application> app;
    if (f.cls == kVoip) {
      f.start = 0, f.stop = duration;
      app = TlInstallVoip(src.Get(i), to, TlVoipParams{}, 2 * int64_t(i));
      for (const NetDeviceContainer* d : {&srcLinks[i], &dstLinks[i]})
        for (uint32_t e = 0; e < 2 && errorRate > 0; ++e) {
          TlAddPacketErrors(d->Get(e), errorRate, errorStream++);
          d->Get(e)->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&OnLinkError, i));
        }
    } else if (f.cls == kSensor) {
      const auto [start, stop] = TlSensorWindow(sensorIndex++, sensors, duration);
      f.start = start, f.stop = stop;
      app = TlInstallSensor(src.Get(i), to, TlSensorParams{}, Seconds(start), Seconds(stop));
    } else {
      f.start = ftpStart->GetValue(), f.stop = duration + drain;  // sending on while UDP drains
      app = TlInstallFtp(src.Get(i), to, segment);
    }
    if (f.cls != kSensor) {  // a sensor's window is set at its installation
      app->SetStartTime(Seconds(f.start));
      app->SetStopTime(Seconds(f.stop));
    }
    if (udp) {
      app->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnUdpTx, i));
      sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnUdpRx, i));
    } else {
      sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnTcpRx, i));
    }
  }

  Simulator::Schedule(Seconds(duration), &EndMeasuring);
  Simulator::Stop(Seconds(duration + drain));
  Simulator::Run();
  if (g_txLog.is_open()) g_txLog.close();

  std::ofstream csv(out + "/flows.csv");
  csv.precision(9);
  csv << "flow,class,ingress,egress,src_delay_ms,dst_delay_ms,start_s,stop_s,sent,received,received_bytes,"
         "delay_mean_s,delay_min_s,delay_max_s,drops_r1,drops_r2,link_errors\n";
  for (uint32_t i = 0; i < flows; ++i) {
    const Flow& f = g_flows[i];
    csv << i << ',' << kClsName[f.cls] << ",R" << f.ingress + 1 << ",R" << f.egress + 1 << ',' << f.src_delay_ms << ','
        << f.dst_delay_ms << ',' << f.start << ',' << f.stop << ',';
    if (f.cls == kFtp) csv << ",," << f.rx_bytes << ",,,";
    else
      csv << f.sent << ',' << f.rx << ',' << f.rx_bytes << ',' << (f.rx ? f.delay_sum / double(f.rx) : 0.0) << ','
          << (f.rx ? f.delay_min : 0.0) << ',' << f.delay_max;
    csv << ',' << f.drops[0] << ',' << f.drops[1] << ',' << f.link_errors << '\n';
  }

  std::ofstream js(out + "/summary.json");
  js.precision(12);
  js << "{\n  \"ns3_version\": " << Json(TL_NS3_VERSION) << ",\n  \"qdisc\": " << Json(g_spec)
     << ",\n  \"type\": " << Json(parsed.type_name) << ",\n  \"voip\": " << voip << ",\n  \"sensors\": " << sensors
     << ",\n  \"ftp\": " << ftp << ",\n  \"duration_s\": " << duration << ",\n  \"drain_s\": " << drain
     << ",\n  \"bottleneck_bps\": " << bnRate.GetBitRate() << ",\n  \"access_bps\": " << accRate.GetBitRate()
     << ",\n  \"core_delay_s\": " << coreDelay.GetSeconds() << ",\n  \"error_rate\": " << errorRate
     << ",\n  \"capacity\": " << capacity << ",\n  \"segment\": " << segment << ",\n  \"seed\": " << seed
     << ",\n  \"run\": " << run << ",\n  \"bottlenecks\": [";
  for (uint32_t b = 0; b < 2; ++b) {
    const Bottleneck& bn = g_bn[b];
    const QueueDisc::Stats& s = bn.qd->GetStats();
    // The link carries each packet with its 2-byte PPP header.
    const double util = double(bn.sent_bytes + 2 * bn.sent_packets) * 8 / (double(bnRate.GetBitRate()) * duration);
    js << (b ? ", " : "") << "{\"router\": \"R" << b + 1 << "\", \"received\": " << s.nTotalReceivedPackets
       << ", \"sent\": " << s.nTotalSentPackets << ", \"dropped\": " << s.nTotalDroppedPackets
       << ", \"measured_sent\": " << bn.sent_packets << ", \"measured_sent_bytes\": " << bn.sent_bytes
       << ", \"utilisation\": " << util << ", \"classes\": {";
    for (uint32_t c = 0; c < 4; ++c) {
      const ClassCount& k = bn.measured[c];
      js << (c ? ", " : "") << Json(kClsName[c]) << ": {\"arrivals\": " << k.arrivals << ", \"bytes\": " << k.bytes
         << ", \"drops\": " << k.drops << "}";
    }
    js << "}";
    Ptr<TlCoreQueueDisc> tl = DynamicCast<TlCoreQueueDisc>(g_bn[b].qd);
    const auto* ncq = dynamic_cast<const tracelab::NcqCore*>(tl->GetCore());
    if (ncq)
      js << ", \"ncq\": {\"received\": " << ncq->received() << ", \"favored_tiny\": " << ncq->favored_tiny()
         << ", \"favored_small\": " << ncq->favored_small() << ", \"ncqthresh2\": " << ncq->ncqthresh2() << "}";
    js << "}";
  }
  js << "]\n}\n";
  std::printf("ns-3 %s NCQ topology %s: %u VoIP, %u sensors, %u FTP, %.0f s; R1 dropped %u of %u, R2 %u of %u -> %s/\n",
              TL_NS3_VERSION, g_spec.c_str(), voip, sensors, ftp, duration, g_bn[0].qd->GetStats().nTotalDroppedPackets,
              g_bn[0].qd->GetStats().nTotalReceivedPackets, g_bn[1].qd->GetStats().nTotalDroppedPackets,
              g_bn[1].qd->GetStats().nTotalReceivedPackets, out.c_str());
  Simulator::Destroy();
  return 0;
}
