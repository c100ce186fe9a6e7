// The thesis's wired dumbbell with real TCP ([003 §4.4], experiments.md
// E-THS-2..4): senders 1-5 - router - 10 Mb/s - router - receivers 8-12,
// 100 Mb/s access links, 1 ms on every link, a 300-packet bottleneck buffer
// run by any tracelab queue disc, FIFO elsewhere; TCP NewReno, 1448-byte
// segments (1500-byte IP packets with timestamps), delayed ACKs, 65 KB
// receive window. Flows arrive as a Poisson process between random
// sender/receiver pairs, sizes bounded Zipf in segments (algorithms.md §11:
// P(k) ~ k^-(alpha+1) on [min, max]; alpha 1.0, 6 to 6906 segments = 10 MB:
// mean 39.4 segments, close to the seeds' 40 MSS).
//
//   tl-ns3-dumbbell --qdisc='efd(th=30000)' --load=8e6 --duration=100 --out=DIR
//
// Writes DIR/flows.csv, one row per flow: size, start, completion (empty if
// the flow did not finish by the end), response time, the bytes and
// packets of it the bottleneck queue disc dropped, and its longest interval
// without progress (the lock-out metric of E-THS-5: the longest gap between
// its start and successive deliveries to the receiver, up to completion or
// the end of the run); and DIR/summary.json:
// the ns-3 version, the configuration, the queue disc's counters and its
// flow-table size (time-weighted mean, max). The queue disc is the engine
// spec string (TlParseSpec): 'fifo', 'efd(th=30000)', 'las', 'lars', ...
//
// Optional: a CBR flow (--cbrRate, E-THS-6) of --cbrSize-byte UDP/IP packets
// from the first sender to the first receiver, from --cbrStart to the end of
// the arrivals; summary.json then gives its packets sent, received and
// dropped at the bottleneck and its inter-arrival times at the receiver.
// --delay sets every link's propagation delay (0 for the M/G/1 setup of
// E-THS-7). --exactLoad tunes the arrival rate to the drawn sizes so that
// the run offers --load (algorithms.md §11: "load set by tuning λ").
// --subflows writes DIR/subflows.csv: the bottleneck's subflows (E-THS-8,
// [003 §5.3]) — a flow's packets from the one that finds none of its
// packets in the buffer to the departure of its last one, the core's view
// (a served packet counts until its transmission at the bottleneck rate
// ends, as the cores count the packet in service). --probe adds one transfer
// of that many segments from the first sender to the first receiver at
// --probeStart and writes its congestion window (the TCP socket's
// CongestionWindow trace) to DIR/cwnd.csv.
//
// ns-3 details that matter: the root queue disc is installed before the
// addresses are assigned (Ipv4AddressHelper::Assign installs its default
// FqCoDel on any device without one), the bottleneck device has a 1-packet
// transmit queue (so the queue disc, not the device, holds the backlog;
// one packet waits in the device while another is on the wire), and the
// left router's bottleneck device is GetLeft()->GetDevice(0).
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
#include "ns3/point-to-point-layout-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "scenario.hh"
#include "endpoints.hh"
#include "tl-queue-disc.hh"

using namespace ns3;

namespace {

using tracelab::scenario::BoundedZipf;

struct Flow {
  uint32_t src = 0, dst = 0;
  uint16_t port = 0;
  uint64_t size = 0;  // bytes
  double start = 0;
  double done = -1;
  uint64_t received = 0;
  uint64_t lost_bytes = 0, lost_packets = 0;
  double last_progress = 0;  // start, then the time of the latest delivery
  double max_stall = 0;      // longest interval without progress
};

std::vector<Flow> g_flows;
std::string g_spec = "fifo";

// The whole --qdisc value (CommandLine's own string parsing stops at the
// first space of 'efd(th=30000, capacity=300)').
bool SetSpec(const std::string& value) {
  g_spec = value;
  return true;
}
uint16_t g_firstPort = 10000;

// Each flow's receiving and sending applications.
std::vector<Ptr<PacketSink>> g_sinks;
std::vector<Ptr<BulkSendApplication>> g_senders;

// A finished flow's endpoints are freed (endpoints.hh: ns-3 scans every
// endpoint of a node per packet; E-THS-7's 600-s runs spent most of their
// time in that lookup before).
using tracelab::scenario::EndpointRelease;

// A flow's endpoints go once nothing can reach them any more: the
// receiver's connection is CLOSED (the sink closes on the sender's FIN; its
// FIN acknowledged or given up on, so it sends nothing more), then none of
// the flow's packets is in the bottleneck or left it in the last
// kReleaseAfter (the rest of the path drains in well under that). A late
// packet would otherwise meet no endpoint and draw a RST: the sender's
// TIME_WAIT ignores the receiver's retransmitted FINs, the listener a late
// duplicate. Schedulers that starve a flow (NCQ, LAS in overload) hold its
// retransmissions for seconds, hence the check on the bottleneck.
const Time kReleaseAfter = Seconds(2);
std::vector<uint32_t> g_queued;  // per flow: its packets in the bottleneck queue disc
std::vector<Time> g_lastLeft;    // per flow: when one of them last left it

void ReleaseFlow(uint32_t i) {
  const Time now = Simulator::Now();
  if (g_queued[i] > 0 || now - g_lastLeft[i] < kReleaseAfter) {
    Simulator::Schedule(kReleaseAfter, &ReleaseFlow, i);
    return;
  }
  EndpointRelease::Release(g_senders[i]->GetSocket());
  g_sinks[i]->GetListeningSocket()->Close();  // a listener closes silently
}

void OnReceiverState(uint32_t i, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now) {
  if (now == TcpSocket::CLOSED) Simulator::Schedule(kReleaseAfter, &ReleaseFlow, i);
}

void OnRx(uint32_t i, Ptr<const Packet> p, const Address&) {
  Flow& f = g_flows[i];
  const double now = Simulator::Now().GetSeconds();
  if (f.done < 0) {
    f.max_stall = std::max(f.max_stall, now - f.last_progress);
    f.last_progress = now;
  }
  f.received += p->GetSize();
  if (f.done < 0 && f.received >= f.size) {
    f.done = Simulator::Now().GetSeconds();
    for (const Ptr<Socket>& s : g_sinks[i]->GetAcceptedSockets())
      s->TraceConnectWithoutContext("State", MakeBoundCallback(&OnReceiverState, i));
  }
}

// The CBR flow: packets sent, dropped at the bottleneck, arrival times.
constexpr uint16_t kCbrPort = 9;
struct Cbr {
  uint64_t sent = 0, dropped = 0;
  std::vector<double> arrivals;
};
Cbr g_cbr;

void OnCbrTx(Ptr<const Packet>) { ++g_cbr.sent; }
void OnCbrRx(Ptr<const Packet>, const Address&) { g_cbr.arrivals.push_back(Simulator::Now().GetSeconds()); }

// A bottleneck drop: the flow is the TCP destination port of the data
// packet, the CBR flow's the UDP port kCbrPort.
void OnDrop(Ptr<const QueueDiscItem> item, const char*) {
  Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
  if (!ip) return;
  if (ip->GetHeader().GetProtocol() == 17) {
    UdpHeader udp;
    if (ip->GetPacket()->PeekHeader(udp) != 0 && udp.GetDestinationPort() == kCbrPort) ++g_cbr.dropped;
    return;
  }
  if (ip->GetHeader().GetProtocol() != 6) return;
  TcpHeader tcp;
  if (ip->GetPacket()->PeekHeader(tcp) == 0) return;
  const uint32_t port = tcp.GetDestinationPort();
  if (port < g_firstPort || port - g_firstPort >= g_flows.size()) return;
  Flow& f = g_flows[port - g_firstPort];
  f.lost_bytes += item->GetSize();
  ++f.lost_packets;
}

// Time-weighted flow-table size.
struct Level {
  double last_t = 0, area = 0;
  uint32_t value = 0, max = 0;
  void Set(uint32_t, uint32_t v) {
    const double now = Simulator::Now().GetSeconds();
    area += value * (now - last_t);
    last_t = now;
    value = v;
    max = std::max(max, v);
  }
};
Level g_table;

// Subflows at the bottleneck: per flow, the packets it has in the buffer
// and the subflow they belong to.
struct Subflow {
  double start = 0;
  uint64_t packets = 0, bytes = 0, high_packets = 0;
};
struct SubflowState {
  uint32_t in_buffer = 0;
  Subflow current;
};
uint64_t g_th = 0;  // the queue disc's Th (bytes): a packet is HIGH while the subflow's earlier bytes are below it
uint64_t g_bottleneckBps = 0;
std::vector<SubflowState> g_subflowState;
std::vector<std::pair<uint32_t, Subflow>> g_subflows;  // (flow, subflow), in order of their end

// The flow index of a bottleneck item (its TCP destination port), or -1.
int64_t FlowOf(Ptr<const QueueDiscItem> item) {
  uint32_t src, port;
  if (!tracelab::scenario::ItemPorts(item, false, src, port)) return -1;
  if (port < g_firstPort || port - g_firstPort >= g_flows.size()) return -1;
  return port - g_firstPort;
}

void SubflowLeave(uint32_t flow) {
  SubflowState& st = g_subflowState[flow];
  if (--st.in_buffer == 0) g_subflows.emplace_back(flow, st.current);
}

void OnSubflowEnqueue(Ptr<const QueueDiscItem> item) {
  const int64_t flow = FlowOf(item);
  if (flow < 0) return;
  SubflowState& st = g_subflowState[flow];
  if (st.in_buffer++ == 0) st.current = Subflow{Simulator::Now().GetSeconds(), 0, 0, 0};
  if (st.current.bytes < g_th) ++st.current.high_packets;
  ++st.current.packets;
  st.current.bytes += item->GetSize();
}

// Served: the core counts the packet until its transmission ends. A packet
// the core pushes out leaves the queue disc's store too (Dequeue fires for
// it), then DropAfterDequeue fires in the same call: that one leaves at once
// instead, so the latest Dequeue's leave is kept to be cancelled.
EventId g_subflowLeave;
Ptr<const QueueDiscItem> g_subflowLeaving;
void OnSubflowDequeue(Ptr<const QueueDiscItem> item) {
  const int64_t flow = FlowOf(item);
  if (flow < 0) return;
  const Time tx = Seconds(double(item->GetSize()) * 8 / double(g_bottleneckBps));
  g_subflowLeaving = item;
  g_subflowLeave = Simulator::Schedule(tx, &SubflowLeave, uint32_t(flow));
}

void OnSubflowPushOut(Ptr<const QueueDiscItem> item, const char*) {
  const int64_t flow = FlowOf(item);
  if (flow < 0) return;
  if (item == g_subflowLeaving) g_subflowLeave.Cancel();
  SubflowLeave(uint32_t(flow));
}

// The bottleneck's packets of each flow, for the endpoints' release. An
// item that is not one flow's TCP segment (a chunk) is not counted, so a
// flow whose packets left in chunks is never released: it only costs time.
// Every item leaves through Dequeue, a pushed-out one too.
void OnQueued(Ptr<const QueueDiscItem> item) {
  const int64_t flow = FlowOf(item);
  if (flow >= 0) ++g_queued[flow];
}
void OnLeft(Ptr<const QueueDiscItem> item) {
  const int64_t flow = FlowOf(item);
  if (flow < 0) return;
  --g_queued[flow];
  g_lastLeft[flow] = Simulator::Now();
}

// The probe transfer's congestion window: (time, bytes) at every change.
std::vector<std::pair<double, uint32_t>> g_cwnd;
void OnCwnd(uint32_t, uint32_t now) { g_cwnd.emplace_back(Simulator::Now().GetSeconds(), now); }
void ConnectCwnd(Ptr<BulkSendApplication> app) {
  Ptr<Socket> socket = app->GetSocket();
  if (socket) socket->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = "dumbbell-out";
  double load = 8e6;      // offered bits per second
  double duration = 100;  // seconds of flow arrivals
  double drain = 60;      // seconds after the last arrival
  double alpha = 1.0;     // bounded Zipf exponent
  uint32_t minSeg = 6, maxSeg = 6906;
  uint32_t seg = 1448;
  uint32_t seed = 1, run = 1;
  uint32_t hosts = 5;
  std::string delay = "1ms";
  double cbrRate = 0, cbrStart = 10;
  uint32_t cbrSize = 1500;
  bool exactLoad = false, subflows = false;
  uint32_t probe = 0;
  double probeStart = 1;
  CommandLine cmd(__FILE__);
  cmd.AddValue("qdisc", "bottleneck queue disc, as an engine spec string (capacity 300 by default) [fifo]",
               MakeCallback(&SetSpec));
  cmd.AddValue("load", "offered load, bits per second (8e6 underload, 15e6 overload)", load);
  cmd.AddValue("duration", "seconds of flow arrivals", duration);
  cmd.AddValue("drain", "seconds simulated after the last arrival", drain);
  cmd.AddValue("alpha", "bounded Zipf exponent of the flow sizes (segments)", alpha);
  cmd.AddValue("minSeg", "smallest flow, segments", minSeg);
  cmd.AddValue("maxSeg", "largest flow, segments", maxSeg);
  cmd.AddValue("segment", "TCP segment size, bytes", seg);
  cmd.AddValue("hosts", "senders (and receivers)", hosts);
  cmd.AddValue("delay", "propagation delay of every link", delay);
  cmd.AddValue("cbrRate", "CBR flow, IP bits per second (0 = none)", cbrRate);
  cmd.AddValue("cbrStart", "CBR flow start, seconds", cbrStart);
  cmd.AddValue("cbrSize", "CBR packet size, IP bytes", cbrSize);
  cmd.AddValue("exactLoad", "tune the arrival rate so that the drawn sizes offer exactly --load", exactLoad);
  cmd.AddValue("subflows", "write the bottleneck's subflows to subflows.csv", subflows);
  cmd.AddValue("probe", "a probe transfer of this many segments, its cwnd in cwnd.csv (0 = none)", probe);
  cmd.AddValue("probeStart", "probe transfer start, seconds", probeStart);
  cmd.AddValue("seed", "RNG seed", seed);
  cmd.AddValue("run", "RNG run", run);
  cmd.AddValue("out", "output directory (flows.csv, summary.json)", out);
  cmd.Parse(argc, argv);
  const std::string spec = g_spec;
  if (load < 0 || duration <= 0 || (probe > 0 && probeStart >= duration + drain)) {
    std::fprintf(stderr, "tl-ns3-dumbbell: needs --load >= 0, --duration > 0 and --probeStart before the end\n");
    return 2;
  }
  if (cbrRate > 0 && (cbrSize < 29 || cbrStart >= duration)) {
    std::fprintf(stderr, "tl-ns3-dumbbell: the CBR flow needs --cbrSize >= 29 and --cbrStart < --duration\n");
    return 2;
  }
  RngSeedManager::SetSeed(seed);
  RngSeedManager::SetRun(run);

  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(seg));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(65535));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));

  const uint64_t bottleneck = 10000000;
  PointToPointHelper access, core;
  access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
  access.SetChannelAttribute("Delay", StringValue(delay));
  access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  core.SetDeviceAttribute("DataRate", DataRateValue(DataRate(bottleneck)));
  core.SetChannelAttribute("Delay", StringValue(delay));
  core.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  PointToPointDumbbellHelper d(hosts, access, hosts, access, core);
  InternetStackHelper stack;
  d.InstallStack(stack);

  // Queue discs before the addresses: the bottleneck's from the spec, FIFO
  // (300 packets) on every other device.
  Ptr<NetDevice> bottleneckDev = d.GetLeft()->GetDevice(0);
  TlSpec parsed;
  try {
    parsed = TlParseSpec(spec, bottleneck);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tl-ns3-dumbbell: %s\n", e.what());
    return 2;
  }
  for (const auto& [k, v] : parsed.attributes) Config::SetDefault(parsed.type_name + "::" + k, StringValue(v));
  TrafficControlHelper bottleneckTc;
  bottleneckTc.SetRootQueueDisc(parsed.type_name);
  QueueDiscContainer qdc = bottleneckTc.Install(bottleneckDev);
  Ptr<QueueDisc> qd = qdc.Get(0);
  TrafficControlHelper fifo;
  fifo.SetRootQueueDisc("ns3::TlFifoQueueDisc");
  for (auto n = NodeList::Begin(); n != NodeList::End(); ++n)
    for (uint32_t i = 0; i < (*n)->GetNDevices(); ++i) {
      Ptr<NetDevice> dev = (*n)->GetDevice(i);
      if (dev != bottleneckDev && DynamicCast<PointToPointNetDevice>(dev)) fifo.Install(dev);
    }
  d.AssignIpv4Addresses(Ipv4AddressHelper("10.1.0.0", "255.255.255.0"), Ipv4AddressHelper("10.2.0.0", "255.255.255.0"),
                        Ipv4AddressHelper("10.3.0.0", "255.255.255.0"));
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  // A chunking queue disc's chunks are split at the right router.
  Ptr<TlDechunkProtocol> dechunker;
  if (DynamicCast<TlChunkQueueDisc>(qd)) {
    dechunker = TlInstallDechunker(d.GetRight());
    qd->SetAttribute("Dechunker", Ipv4AddressValue(d.GetRight()->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal()));
  }

  qd->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&OnDrop));
  qd->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&OnDrop));
  qd->TraceConnectWithoutContext("FlowTableSize", MakeCallback(&Level::Set, &g_table));

  // The workload: Poisson arrivals at load / mean size. With --exactLoad
  // the rate is tuned to the sizes drawn: the arrival epochs of the
  // process at the nominal rate are scaled so that the first n flows,
  // whose sizes sum closest to load x duration, arrive in [0, duration)
  // (the (n+1)-th at duration): a Poisson process given n arrivals.
  BoundedZipf sizes(alpha, minSeg, maxSeg);
  const double meanBytes = sizes.Mean() * seg;
  Ptr<ExponentialRandomVariable> gap = CreateObject<ExponentialRandomVariable>();
  gap->SetAttribute("Mean", DoubleValue(load > 0 ? meanBytes * 8 / load : 1.0));
  Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
  struct Arrival {
    double t;
    uint32_t src, dst, segments;
  };
  std::vector<Arrival> arrivals;
  const double target = load * duration / 8;  // bytes, for --exactLoad
  double bytes = 0;
  for (double t = gap->GetValue(); load > 0; t += gap->GetValue()) {
    if (!exactLoad && t >= duration) break;
    Arrival a{t, 0, 0, 0};
    a.src = u->GetInteger(0, hosts - 1);
    a.dst = u->GetInteger(0, hosts - 1);
    a.segments = sizes.Draw(u->GetValue());
    const double next = bytes + double(a.segments) * seg;
    if (exactLoad && next >= target) {
      // n flows: the sum just below the target, or with this flow when that is closer;
      // the epochs scaled so that the (n+1)-th arrival falls at `duration`.
      const bool take = next - target < target - bytes;
      if (take) arrivals.push_back(a);
      const double end = take ? t + gap->GetValue() : t;
      for (Arrival& x : arrivals) x.t *= duration / end;
      break;
    }
    bytes = next;
    arrivals.push_back(a);
  }
  for (const Arrival& a : arrivals) {
    Flow f;
    f.src = a.src;
    f.dst = a.dst;
    f.size = uint64_t(a.segments) * seg;
    f.start = a.t;
    f.last_progress = a.t;
    f.port = uint16_t(g_firstPort + g_flows.size());
    if (f.port < g_firstPort) {
      std::fprintf(stderr, "tl-ns3-dumbbell: more than %u flows: shorten --duration\n", 65535u - g_firstPort);
      return 2;
    }
    g_flows.push_back(f);
  }
  for (uint32_t i = 0; i < g_flows.size(); ++i) {
    const Flow& f = g_flows[i];
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), f.port));
    ApplicationContainer sink = sinkHelper.Install(d.GetRight(f.dst));
    // Listening from the flow's start: a node's endpoints are only the flows under way.
    sink.Start(Seconds(f.start));
    sink.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
    g_sinks.push_back(DynamicCast<PacketSink>(sink.Get(0)));
    BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(d.GetRightIpv4Address(f.dst), f.port));
    send.SetAttribute("MaxBytes", UintegerValue(f.size));
    send.SetAttribute("SendSize", UintegerValue(seg));
    ApplicationContainer app = send.Install(d.GetLeft(f.src));
    app.Start(Seconds(f.start));
    g_senders.push_back(DynamicCast<BulkSendApplication>(app.Get(0)));
  }
  if (cbrRate > 0) {
    // OnOff's DataRate counts its payload: scaled so the IP packets make cbrRate.
    const uint32_t payload = cbrSize - 28;
    OnOffHelper cbr("ns3::UdpSocketFactory", InetSocketAddress(d.GetRightIpv4Address(0), kCbrPort));
    cbr.SetConstantRate(DataRate(uint64_t(cbrRate * payload / cbrSize)), payload);
    ApplicationContainer app = cbr.Install(d.GetLeft(0));
    app.Start(Seconds(cbrStart));
    app.Stop(Seconds(duration));
    app.Get(0)->TraceConnectWithoutContext("Tx", MakeCallback(&OnCbrTx));
    PacketSinkHelper sinkHelper("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), kCbrPort));
    ApplicationContainer sink = sinkHelper.Install(d.GetRight(0));
    sink.Start(Seconds(0));
    sink.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnCbrRx));
  }
  if (probe > 0) {
    const uint16_t port = g_firstPort - 1;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sinkHelper.Install(d.GetRight(0)).Start(Seconds(0));
    BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(d.GetRightIpv4Address(0), port));
    send.SetAttribute("MaxBytes", UintegerValue(uint64_t(probe) * seg));
    send.SetAttribute("SendSize", UintegerValue(seg));
    ApplicationContainer app = send.Install(d.GetLeft(0));
    app.Start(Seconds(probeStart));
    // The socket exists once the application has started.
    Simulator::Schedule(Seconds(probeStart) + NanoSeconds(1), &ConnectCwnd,
                        DynamicCast<BulkSendApplication>(app.Get(0)));
  }
  g_queued.assign(g_flows.size(), 0);
  g_lastLeft.assign(g_flows.size(), Seconds(0));
  qd->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnQueued));
  qd->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnLeft));
  if (subflows) {
    g_th = 0;
    UintegerValue th;
    if (qd->GetAttributeFailSafe("Th", th)) g_th = th.Get();
    g_bottleneckBps = bottleneck;
    g_subflowState.resize(g_flows.size());
    qd->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnSubflowEnqueue));
    qd->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnSubflowDequeue));
    qd->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&OnSubflowPushOut));
  }
  const double end = duration + drain;
  Simulator::Stop(Seconds(end));
  Simulator::Run();
  g_table.Set(0, g_table.value);
  for (Flow& f : g_flows)
    if (f.done < 0) f.max_stall = std::max(f.max_stall, end - f.last_progress);

  std::string mk = "mkdir -p '" + out + "'";
  if (std::system(mk.c_str()) != 0) {
    std::fprintf(stderr, "tl-ns3-dumbbell: cannot create %s\n", out.c_str());
    return 2;
  }
  std::ofstream csv(out + "/flows.csv");
  csv << "flow,src,dst,size_bytes,start_s,completion_s,response_s,lost_bytes,lost_packets,max_stall_s\n";
  uint64_t done = 0;
  for (uint32_t i = 0; i < g_flows.size(); ++i) {
    const Flow& f = g_flows[i];
    csv << i << ',' << f.src << ',' << f.dst << ',' << f.size << ',' << f.start << ',';
    if (f.done >= 0) {
      csv << f.done << ',' << f.done - f.start;
      ++done;
    } else {
      csv << ',';
    }
    csv << ',' << f.lost_bytes << ',' << f.lost_packets << ',' << f.max_stall << '\n';
  }
  if (subflows) {
    // Subflows still in the buffer at the end are cut there.
    for (uint32_t i = 0; i < g_subflowState.size(); ++i)
      if (g_subflowState[i].in_buffer > 0) g_subflows.emplace_back(i, g_subflowState[i].current);
    std::ofstream sf(out + "/subflows.csv");
    sf.precision(12);
    sf << "flow,start_s,packets,bytes,high_packets\n";
    for (const auto& [flow, sub] : g_subflows)
      sf << flow << ',' << sub.start << ',' << sub.packets << ',' << sub.bytes << ',' << sub.high_packets << '\n';
  }
  if (probe > 0) {
    std::ofstream cw(out + "/cwnd.csv");
    cw.precision(12);
    cw << "time_s,cwnd_bytes\n";
    for (const auto& [t, w] : g_cwnd) cw << t << ',' << w << '\n';
  }
  double offered = 0;
  for (const Flow& f : g_flows) offered += double(f.size);
  const QueueDisc::Stats& s = qd->GetStats();
  const tracelab::Counters& c = DynamicCast<TlCoreQueueDisc>(qd)->GetCounters();
  std::ofstream js(out + "/summary.json");
  auto q = [](const std::string& v) {  // a JSON string
    std::string o = "\"";
    for (char ch : v) o += (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
    return o + "\"";
  };
  js << "{\n  \"ns3_version\": " << q(TL_NS3_VERSION) << ",\n  \"qdisc\": " << q(spec)
     << ",\n  \"type\": " << q(parsed.type_name) << ",\n  \"load_bps\": " << load << ",\n  \"duration_s\": " << duration
     << ",\n  \"drain_s\": " << drain << ",\n  \"delay\": " << q(delay) << ",\n  \"seed\": " << seed
     << ",\n  \"run\": " << run << ",\n  \"alpha\": " << alpha << ",\n  \"min_segments\": " << minSeg
     << ",\n  \"max_segments\": " << maxSeg << ",\n  \"mean_flow_bytes\": " << meanBytes << ",\n  \"segment\": " << seg
     << ",\n  \"exact_load\": " << (exactLoad ? "true" : "false") << ",\n  \"offered_bytes\": " << offered
     << ",\n  \"flows\": " << g_flows.size() << ",\n  \"completed\": " << done
     << ",\n  \"bottleneck\": {\"received\": " << s.nTotalReceivedPackets << ", \"sent\": " << s.nTotalSentPackets
     << ", \"dropped\": " << s.nTotalDroppedPackets
     << ", \"dropped_before_enqueue\": " << s.nTotalDroppedPacketsBeforeEnqueue
     << ", \"dropped_after_dequeue\": " << s.nTotalDroppedPacketsAfterDequeue << ", \"core_offered\": " << c.offered
     << ", \"core_served\": " << c.served << ", \"core_dropped\": " << c.dropped_total()
     << ", \"highwater_packets\": " << c.highwater_packets << "},\n  \"flow_table\": {\"mean\": " << g_table.area / end
     << ", \"max\": " << g_table.max << "}";
  if (dechunker)
    js << ",\n  \"dechunker\": {\"chunks\": " << dechunker->chunks << ", \"packets\": " << dechunker->packets
       << ", \"malformed\": " << dechunker->malformed << ", \"unroutable\": " << dechunker->unroutable << "}";
  if (cbrRate > 0) {
    // Inter-arrival times at the receiver: mean, CoV and quantiles.
    std::vector<double> gaps;
    for (size_t i = 1; i < g_cbr.arrivals.size(); ++i) gaps.push_back(g_cbr.arrivals[i] - g_cbr.arrivals[i - 1]);
    double mean = 0, var = 0;
    for (double g : gaps) mean += g;
    if (!gaps.empty()) mean /= double(gaps.size());
    for (double g : gaps) var += (g - mean) * (g - mean);
    if (gaps.size() > 1) var /= double(gaps.size() - 1);
    std::sort(gaps.begin(), gaps.end());
    auto quantile = [&gaps](double p) { return gaps.empty() ? 0.0 : gaps[size_t(p * double(gaps.size() - 1))]; };
    js << ",\n  \"cbr\": {\"rate_bps\": " << cbrRate << ", \"size\": " << cbrSize << ", \"start_s\": " << cbrStart
       << ", \"sent\": " << g_cbr.sent << ", \"received\": " << g_cbr.arrivals.size()
       << ", \"dropped\": " << g_cbr.dropped << ", \"interarrival\": {\"mean\": " << mean
       << ", \"cov\": " << (mean > 0 ? std::sqrt(var) / mean : 0.0) << ", \"p01\": " << quantile(0.01)
       << ", \"p50\": " << quantile(0.5) << ", \"p99\": " << quantile(0.99)
       << ", \"max\": " << (gaps.empty() ? 0.0 : gaps.back()) << "}}";
  }
  js << "\n}\n";
  std::printf(
      "ns-3 %s dumbbell %s, load %.1f Mb/s: %zu flows, %llu completed; bottleneck dropped %u of %u; "
      "flow table mean %.2f max %u -> %s/\n",
      TL_NS3_VERSION, spec.c_str(), load / 1e6, g_flows.size(), (unsigned long long)done, s.nTotalDroppedPackets,
      s.nTotalReceivedPackets, g_table.area / end, g_table.max, out.c_str());
  Simulator::Destroy();
  return 0;
}
