// A workload model's connections as real ns-3 TCP/UDP applications through a
// tracelab queue disc (issue 18 item 6; `tracelab replay ns3`, which draws
// the schedule from the model with its seeded RNG and reads the outputs).
//
// Topology (algorithms.md §10): clients 0..C-1 - router 11 - router 12 -
// servers 0..S-1; access links --access (100 Mb/s), the bottleneck 11-12 at
// --rate; one-way delays from the model's link delays: x-11 on the client
// links, 11-12 on the bottleneck, 12-w on the intranet servers' links
// (servers 0..S/2-1) and 12-v on the Internet servers' (the legacy model:
// 12-y on all of them). The queue disc given by --qdisc (an engine spec
// string) runs on both directions of the bottleneck (uploads 11->12,
// downloads 12->11), a 300-packet TlFifoQueueDisc on every other device.
// TCP NewReno, 1448-byte segments, delayed ACKs (2), 65 535-byte receive
// buffer, as the dumbbell of the thesis.
//
// The schedule (--schedule, CSV with a header line): one row per train,
//   conn,start_s,client,server,udp,side,bytes,think_s
// rows of a connection consecutive and in order. A TCP connection opens at
// start_s from its client to its server; its trains go one after the other
// (side 0 = the client sends, 1 = the server), each sent when the previous
// one has been received whole plus its think time (the first: once the
// connection is established, plus its think time) — a closed loop: a slow
// response delays the next request. A UDP flow sends its trains on its own
// clock (the trace player of [003 §9.3]): datagrams of at most 1472 payload
// bytes spaced by --udpGap, train k+1 a think time after train k's last
// datagram left; lost datagrams are not resent.
//
// Outputs in --out:
//   connections.csv  conn,client,server,udp,bytes_orig,bytes_resp,start_s,
//                    completion_s,response_s,delivered_orig,delivered_resp
//                    (completion empty: not every byte arrived by --end)
//   packets.csv      one row per packet the bottleneck queue discs handled:
//                    dir (0 upload, 1 download), server, ip_bytes, arrival_s,
//                    fate (delivered or the core's drop reason), sojourn_s
//                    (delivered only)
//   summary.json     the ns-3 version, the configuration, each bottleneck
//                    queue disc's ns-3 and core counters and what it held at
//                    the end.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
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

using tracelab::scenario::Json;

constexpr uint16_t kFirstPort = 10000;
constexpr uint32_t kUdpPayload = 1472;  // 1500-byte IP packets

struct Train {
  uint8_t side = 0;  // 0: the client sends, 1: the server
  uint64_t bytes = 0;
  double think = 0;
};

struct Conn {
  uint32_t id = 0, client = 0, server = 0;
  bool udp = false;
  double start = 0;
  std::vector<Train> trains;
  uint64_t bytes[2] = {0, 0};       // scheduled, per sending side
  uint64_t delivered[2] = {0, 0};   // received, per sending side
  size_t current = 0;               // the train being sent (TCP)
  uint64_t got = 0;                 // bytes of the current train received
  uint64_t pending[2] = {0, 0};     // bytes a side still has to hand its socket
  Ptr<Socket> sock[2];              // client's, server's
  Ptr<Socket> listener;             // TCP: the server's, from the connection's start
  bool silent[2] = {false, false};  // TCP: the socket is in TIME_WAIT or CLOSED
  uint32_t queued = 0;              // its packets in the bottleneck queue discs
  Time lastLeft;                    // when one of them last left one
  double done = -1;
};

std::vector<Conn> g_conns;
std::string g_spec = "fifo";
uint32_t g_segment = 0;  // TCP payload bytes (the TcpSocket default)
Time g_udpGap;

bool SetSpec(const std::string& value) {  // the whole value (CommandLine stops at a space)
  g_spec = value;
  return true;
}

// --- freeing a finished connection's endpoints ---------------------------------

// ns-3 keeps a finished connection's endpoints for the rest of the run (the
// listener; both sockets, closed at completion, in TIME_WAIT for 240 s),
// and Ipv4EndPointDemux::Lookup scans all of a node's endpoints for every
// packet: a run's time grew with the square of its connections (a 260-s
// overloaded run spent 77 % of it in the lookup). Listeners are therefore
// created at the connection's start, and a connection's endpoints go once
// nothing can reach them any more: both TCP sockets silent (TIME_WAIT
// ignores whatever arrives, CLOSED has freed its own endpoint; FIN_WAIT,
// CLOSING and LAST_ACK still send), or a UDP flow's last datagram sent;
// then none of the connection's packets in either bottleneck queue disc or
// having left one in the last kReleaseAfter (the access links drain in well
// under that). A late packet would otherwise meet no endpoint and draw a
// TCP RST or an ICMP port unreachable, and the listener would take a late
// duplicate SYN for a new connection. Schedulers that starve a connection
// (LAS in overload) hold its packets for seconds, hence the check on the
// bottleneck.
// --keepEndpoints turns the release off: the slow reference whose outputs
// the release must leave unchanged (test_ns3_replay.py compares them).
const Time kReleaseAfter = Seconds(2);
bool g_keepEndpoints = false;

using tracelab::scenario::EndpointRelease;  // endpoints.hh

void ReleaseConn(Conn* c) {
  const Time now = Simulator::Now();
  if (c->queued > 0 || now - c->lastLeft < kReleaseAfter) {
    Simulator::Schedule(kReleaseAfter, &ReleaseConn, c);
    return;
  }
  if (c->udp) {
    c->sock[0]->Close();
    c->sock[1]->Close();
    return;
  }
  EndpointRelease::Release(c->sock[0]);
  EndpointRelease::Release(c->sock[1]);
  c->listener->Close();  // a listener closes silently
}

// Once the connection sends nothing more.
void ScheduleRelease(Conn* c) {
  if (!g_keepEndpoints) Simulator::Schedule(kReleaseAfter, &ReleaseConn, c);
}

void OnTcpState(Conn* c, int side, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now) {
  if (c->silent[side] || (now != TcpSocket::TIME_WAIT && now != TcpSocket::CLOSED)) return;
  c->silent[side] = true;
  if (c->silent[1 - side]) ScheduleRelease(c);
}

// --- TCP: trains in turn over one connection -----------------------------------

void Pump(Conn* c, int side) {
  Ptr<Socket> s = c->sock[side];
  while (s && c->pending[side] > 0) {
    const uint32_t room = s->GetTxAvailable();
    if (room == 0) return;  // the send callback resumes
    const uint32_t n = uint32_t(std::min<uint64_t>({c->pending[side], room, 16u * g_segment}));
    const int sent = s->Send(Create<Packet>(n));
    if (sent <= 0) return;
    c->pending[side] -= uint64_t(sent);
  }
}

void StartTrain(Conn* c) {
  const Train& t = c->trains[c->current];
  c->got = 0;
  c->pending[t.side] += t.bytes;
  Pump(c, t.side);
}

void ScheduleTrain(Conn* c) { Simulator::Schedule(Seconds(c->trains[c->current].think), &StartTrain, c); }

void OnTcpRecv(Conn* c, int side, Ptr<Socket> s) {  // side = the receiving party
  while (Ptr<Packet> p = s->Recv()) {
    const uint32_t n = p->GetSize();
    c->delivered[1 - side] += n;
    if (c->done >= 0 || c->current >= c->trains.size()) continue;
    c->got += n;
    if (c->got < c->trains[c->current].bytes) continue;
    if (++c->current == c->trains.size()) {
      c->done = Simulator::Now().GetSeconds();
      c->sock[0]->Close();
      c->sock[1]->Close();
    } else {
      ScheduleTrain(c);
    }
  }
}

void OnSendRoom(Conn* c, int side, Ptr<Socket>, uint32_t) { Pump(c, side); }

void Bind(Conn* c, int side, Ptr<Socket> s) {
  c->sock[side] = s;
  s->SetRecvCallback(MakeBoundCallback(&OnTcpRecv, c, side));
  s->SetSendCallback(MakeBoundCallback(&OnSendRoom, c, side));
  s->TraceConnectWithoutContext("State", MakeBoundCallback(&OnTcpState, c, side));
}

bool AcceptAll(Ptr<Socket>, const Address&) { return true; }

void OnAccepted(Conn* c, Ptr<Socket> s, const Address&) {
  Bind(c, 1, s);
  if (c->trains[0].side == 1) ScheduleTrain(c);
}

void OnConnected(Conn* c, Ptr<Socket>) {
  if (c->trains[0].side == 0) ScheduleTrain(c);
}

void OnConnectFailed(Conn*, Ptr<Socket>) {}

// The server listens from the connection's start: a node's endpoints are
// only the connections under way.
void OpenTcp(Conn* c, Ptr<Node> client, Ptr<Node> server, Ipv4Address serverAddr) {
  const uint16_t port = uint16_t(kFirstPort + c->id);
  c->listener = Socket::CreateSocket(server, TcpSocketFactory::GetTypeId());
  c->listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
  c->listener->Listen();
  c->listener->SetAcceptCallback(MakeCallback(&AcceptAll), MakeBoundCallback(&OnAccepted, c));
  Ptr<Socket> s = Socket::CreateSocket(client, TcpSocketFactory::GetTypeId());
  Bind(c, 0, s);
  s->SetConnectCallback(MakeBoundCallback(&OnConnected, c), MakeBoundCallback(&OnConnectFailed, c));
  s->Bind();
  s->Connect(InetSocketAddress(serverAddr, port));
}

// --- UDP: trains on the sender's own clock ---------------------------------------

void OnUdpRecv(Conn* c, int side, Ptr<Socket> s) {
  while (Ptr<Packet> p = s->Recv()) {
    c->delivered[1 - side] += p->GetSize();
    if (c->done < 0 && c->delivered[0] == c->bytes[0] && c->delivered[1] == c->bytes[1])
      c->done = Simulator::Now().GetSeconds();
  }
}

// Both parties' sockets, bound from the flow's start.
void OpenUdp(Conn* c, Ptr<Node> client, Ptr<Node> server, Ipv4Address serverAddr) {
  const uint16_t port = uint16_t(kFirstPort + c->id);
  for (int side = 0; side < 2; ++side) {
    Ptr<Socket> s = Socket::CreateSocket(side ? server : client, UdpSocketFactory::GetTypeId());
    s->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    s->SetRecvCallback(MakeBoundCallback(&OnUdpRecv, c, side));
    c->sock[side] = s;
  }
  const Ipv4Address clientAddr = client->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
  c->sock[0]->Connect(InetSocketAddress(serverAddr, port));
  c->sock[1]->Connect(InetSocketAddress(clientAddr, port));
}

void SendDatagrams(Conn* c, size_t train, uint64_t left) {
  const Train& t = c->trains[train];
  const uint32_t n = uint32_t(std::min<uint64_t>(left, kUdpPayload));
  c->sock[t.side]->Send(Create<Packet>(n));
  left -= n;
  if (left > 0) {
    Simulator::Schedule(g_udpGap, &SendDatagrams, c, train, left);
  } else if (train + 1 < c->trains.size()) {
    Simulator::Schedule(Seconds(c->trains[train + 1].think), &SendDatagrams, c, train + 1, c->trains[train + 1].bytes);
  } else {
    ScheduleRelease(c);
  }
}

// --- the bottleneck's packets ----------------------------------------------------

std::unordered_map<uint32_t, uint32_t> g_serverOf;  // server address -> server index
std::ofstream g_packets;

struct Seen {
  uint32_t server = UINT32_MAX;
  uint32_t bytes = 0;
};

Seen Classify(Ptr<const QueueDiscItem> item, int dir) {
  Seen s;
  s.bytes = item->GetSize();
  Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
  if (!ip) return s;
  const Ipv4Address a = dir == 0 ? ip->GetHeader().GetDestination() : ip->GetHeader().GetSource();
  auto it = g_serverOf.find(a.Get());
  if (it != g_serverOf.end()) s.server = it->second;
  return s;
}

void Row(int dir, const Seen& s, double arrival, const char* fate, double sojourn) {
  g_packets << dir << ',';
  if (s.server != UINT32_MAX) g_packets << s.server;
  g_packets << ',' << s.bytes << ',' << arrival << ',' << fate << ',';
  if (sojourn >= 0) g_packets << sojourn;
  g_packets << '\n';
}

// An item the core pushes out leaves the queue disc's store like a served one
// (ns-3 fires Dequeue for it), then DropAfterDequeue: each direction's latest
// dequeued item is held back until the next event tells which it was.
struct Pending {
  Ptr<const QueueDiscItem> item;
  Seen seen;
  double arrival = 0, sojourn = 0;
};
Pending g_pending[2];

void Flush(int dir) {
  Pending& p = g_pending[dir];
  if (p.item) Row(dir, p.seen, p.arrival, "delivered", p.sojourn);
  p.item = nullptr;
}

void OnDequeued(int dir, Ptr<const QueueDiscItem> item) {
  Flush(dir);
  const double arrival = item->GetTimeStamp().GetSeconds();
  g_pending[dir] = Pending{item, Classify(item, dir), arrival, Simulator::Now().GetSeconds() - arrival};
}

void OnRefused(int dir, Ptr<const QueueDiscItem> item, const char* why) {
  Flush(dir);
  Row(dir, Classify(item, dir), Simulator::Now().GetSeconds(), why, -1);
}

void OnDroppedQueued(int dir, Ptr<const QueueDiscItem> item, const char* why) {
  if (g_pending[dir].item == item) g_pending[dir].item = nullptr;  // not served after all
  Flush(dir);
  Row(dir, Classify(item, dir), item->GetTimeStamp().GetSeconds(), why, -1);
}

// Each connection's packets in the bottleneck, for the endpoints' release.
// A packet of connection i carries the server's port kFirstPort + i: the
// destination on uploads, the source on downloads (the client's TCP port is
// ephemeral). A pushed-out item leaves through Dequeue too.
Conn* ConnOf(Ptr<const QueueDiscItem> item, int dir) {
  uint32_t src, dst;
  if (!tracelab::scenario::ItemPorts(item, true, src, dst)) return nullptr;
  const uint32_t port = dir == 0 ? dst : src;
  if (port < kFirstPort || port - kFirstPort >= g_conns.size()) return nullptr;
  return &g_conns[port - kFirstPort];
}

void OnQueued(int dir, Ptr<const QueueDiscItem> item) {
  if (Conn* c = ConnOf(item, dir)) ++c->queued;
}

void OnLeft(int dir, Ptr<const QueueDiscItem> item) {
  if (Conn* c = ConnOf(item, dir)) {
    --c->queued;
    c->lastLeft = Simulator::Now();
  }
}

// --- the schedule ------------------------------------------------------------------

bool ReadSchedule(const std::string& path, uint32_t clients, uint32_t servers, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read (" + std::strerror(errno) + ")";
    return false;
  }
  std::string line;
  std::getline(in, line);
  if (line != "conn,start_s,client,server,udp,side,bytes,think_s") {
    error = path + ": line 1: expected the header conn,start_s,client,server,udp,side,bytes,think_s";
    return false;
  }
  for (uint64_t no = 2; std::getline(in, line); ++no) {
    if (line.empty()) continue;
    for (char& ch : line)
      if (ch == ',') ch = ' ';
    std::istringstream row(line);
    uint64_t id, client, server, udp, side, bytes;
    double start, think;
    std::string rest;
    if (!(row >> id >> start >> client >> server >> udp >> side >> bytes >> think) || (row >> rest) ||
        client >= clients || server >= servers || udp > 1 || side > 1 || bytes == 0 || start < 0 || think < 0) {
      error = path + ": line " + std::to_string(no) + ": not a train of this topology";
      return false;
    }
    if (id != g_conns.size() && (g_conns.empty() || id != g_conns.back().id)) {
      error = path + ": line " + std::to_string(no) + ": connections must be numbered 0, 1, ... in order";
      return false;
    }
    if (id == g_conns.size()) {
      Conn c;
      c.id = uint32_t(id);
      c.start = start;
      c.client = uint32_t(client);
      c.server = uint32_t(server);
      c.udp = udp == 1;
      g_conns.push_back(std::move(c));
    }
    Conn& c = g_conns.back();
    c.trains.push_back(Train{uint8_t(side), bytes, think});
    c.bytes[side] += bytes;
  }
  if (g_conns.size() > 65535u - kFirstPort) {
    error = path + ": more than " + std::to_string(65535u - kFirstPort) + " connections (one port each)";
    return false;
  }
  return true;
}

// A TcpSocket attribute's default, as Config::SetDefault or the command line left it.
uint32_t TcpDefault(const std::string& name) {
  TypeId::AttributeInformation info;
  NS_ABORT_UNLESS(TypeId::LookupByName("ns3::TcpSocket").LookupAttributeByName(name, &info));
  return uint32_t(DynamicCast<const UintegerValue>(info.initialValue)->Get());
}

std::string QueueJson(Ptr<QueueDisc> qd) {
  const QueueDisc::Stats& s = qd->GetStats();
  const tracelab::Counters& c = DynamicCast<TlCoreQueueDisc>(qd)->GetCounters();
  std::ostringstream o;
  o << "{\"received\": " << s.nTotalReceivedPackets << ", \"sent\": " << s.nTotalSentPackets
    << ", \"dropped\": " << s.nTotalDroppedPackets
    << ", \"dropped_before_enqueue\": " << s.nTotalDroppedPacketsBeforeEnqueue
    << ", \"dropped_after_dequeue\": " << s.nTotalDroppedPacketsAfterDequeue
    << ", \"queued_at_end\": " << qd->GetNPackets() << ", \"core_offered\": " << c.offered
    << ", \"core_served\": " << c.served << ", \"core_dropped\": " << c.dropped_total()
    << ", \"flows_highwater\": " << DynamicCast<TlCoreQueueDisc>(qd)->GetFlowsHighwater() << "}";
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string schedule, out = "model-replay-out";
  uint64_t rate = 10000000;
  std::string access = "100Mbps";
  double end = 0;
  uint32_t clients = 10, servers = 10, seed = 1;
  double clientDelay = 0, coreDelay = 0, intranetDelay = 0.0005, internetDelay = 0.05;
  double udpGap = 0;
  // The thesis's TCP; before Parse, so --ns3::TcpSocket::DelAckCount=1 and the
  // like override them.
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(65535));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
  CommandLine cmd(__FILE__);
  cmd.AddValue("schedule", "the connection schedule (CSV, see the top of model_replay.cc)", schedule);
  cmd.AddValue("qdisc", "the bottleneck's queue disc, an engine spec string [fifo]", MakeCallback(&SetSpec));
  cmd.AddValue("rate", "bottleneck rate, bits per second", rate);
  cmd.AddValue("access", "access link rate", access);
  cmd.AddValue("clients", "client hosts", clients);
  cmd.AddValue("servers", "server hosts (the first half intranet, the rest Internet)", servers);
  cmd.AddValue("clientDelay", "one-way delay of the client links x-11, seconds", clientDelay);
  cmd.AddValue("coreDelay", "one-way delay of the bottleneck 11-12, seconds", coreDelay);
  cmd.AddValue("intranetDelay", "one-way delay of the intranet servers' links 12-w, seconds", intranetDelay);
  cmd.AddValue("internetDelay", "one-way delay of the Internet servers' links 12-v, seconds", internetDelay);
  cmd.AddValue("udpGap", "spacing of a UDP train's datagrams, seconds (0: their time on the access link)", udpGap);
  cmd.AddValue("end", "simulated seconds", end);
  cmd.AddValue("seed", "ns-3 RNG seed (TCP's own random choices)", seed);
  cmd.AddValue("keepEndpoints", "never free a finished connection's endpoints (slower, same outputs)", g_keepEndpoints);
  cmd.AddValue("out", "output directory", out);
  cmd.Parse(argc, argv);
  const std::string spec = g_spec;
  std::string error;
  if (schedule.empty() || end <= 0 || clients == 0 || servers < 2) {
    std::fprintf(stderr, "tl-ns3-model-replay: give --schedule, --end > 0, --clients >= 1, --servers >= 2\n");
    return 2;
  }
  if (!ReadSchedule(schedule, clients, servers, error)) {
    std::fprintf(stderr, "tl-ns3-model-replay: %s\n", error.c_str());
    return 2;
  }
  RngSeedManager::SetSeed(seed);
  g_segment = TcpDefault("SegmentSize");
  const DataRate accessRate(access);
  g_udpGap = udpGap > 0 ? Seconds(udpGap) : accessRate.CalculateBytesTxTime(1502);

  PointToPointHelper clientLink, core, intranet, internet;
  for (auto* h : {&clientLink, &intranet, &internet}) {
    h->SetDeviceAttribute("DataRate", DataRateValue(accessRate));
    h->SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  }
  clientLink.SetChannelAttribute("Delay", TimeValue(Seconds(clientDelay)));
  intranet.SetChannelAttribute("Delay", TimeValue(Seconds(intranetDelay)));
  internet.SetChannelAttribute("Delay", TimeValue(Seconds(internetDelay)));
  core.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate)));
  core.SetChannelAttribute("Delay", TimeValue(Seconds(coreDelay)));
  core.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

  // Built by hand: the servers' links differ by scope.
  NodeContainer routers, clientNodes, serverNodes;
  routers.Create(2);
  clientNodes.Create(clients);
  serverNodes.Create(servers);
  InternetStackHelper stack;
  stack.InstallAll();
  NetDeviceContainer bottleneck = core.Install(routers.Get(0), routers.Get(1));
  std::vector<NetDeviceContainer> clientDevs, serverDevs;
  for (uint32_t i = 0; i < clients; ++i) clientDevs.push_back(clientLink.Install(clientNodes.Get(i), routers.Get(0)));
  for (uint32_t i = 0; i < servers; ++i)
    serverDevs.push_back((i < servers / 2 ? intranet : internet).Install(serverNodes.Get(i), routers.Get(1)));

  // Queue discs before the addresses (Assign installs FqCoDel on a device without one).
  TlSpec parsed;
  try {
    parsed = TlParseSpec(spec, rate);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tl-ns3-model-replay: %s\n", e.what());
    return 2;
  }
  for (const auto& [k, v] : parsed.attributes) Config::SetDefault(parsed.type_name + "::" + k, StringValue(v));
  TrafficControlHelper bottleneckTc;
  bottleneckTc.SetRootQueueDisc(parsed.type_name);
  Ptr<QueueDisc> qd[2] = {bottleneckTc.Install(bottleneck.Get(0)).Get(0),
                          bottleneckTc.Install(bottleneck.Get(1)).Get(0)};
  if (DynamicCast<TlChunkQueueDisc>(qd[0])) {
    std::fprintf(stderr, "tl-ns3-model-replay: chunking queue discs need a de-chunker: use tl-ns3-dumbbell\n");
    return 2;
  }
  TrafficControlHelper fifo;
  fifo.SetRootQueueDisc("ns3::TlFifoQueueDisc");
  for (auto* set : {&clientDevs, &serverDevs})
    for (NetDeviceContainer& c : *set) fifo.Install(c);

  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.0");
  addr.Assign(bottleneck);
  std::vector<Ipv4Address> serverAddr;
  addr.SetBase("10.1.0.0", "255.255.255.0");
  for (NetDeviceContainer& c : clientDevs) {
    addr.Assign(c);
    addr.NewNetwork();
  }
  addr.SetBase("10.2.0.0", "255.255.255.0");
  for (uint32_t i = 0; i < servers; ++i) {
    serverAddr.push_back(addr.Assign(serverDevs[i]).GetAddress(0));
    g_serverOf[serverAddr.back().Get()] = i;
    addr.NewNetwork();
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  std::string mk = "mkdir -p '" + out + "'";
  if (std::system(mk.c_str()) != 0) {
    std::fprintf(stderr, "tl-ns3-model-replay: cannot create %s\n", out.c_str());
    return 2;
  }
  g_packets.open(out + "/packets.csv");
  g_packets << "dir,server,ip_bytes,arrival_s,fate,sojourn_s\n";
  g_packets.precision(12);
  for (int dir = 0; dir < 2; ++dir) {
    qd[dir]->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnDequeued, dir));
    qd[dir]->TraceConnectWithoutContext("DropBeforeEnqueue", MakeBoundCallback(&OnRefused, dir));
    qd[dir]->TraceConnectWithoutContext("DropAfterDequeue", MakeBoundCallback(&OnDroppedQueued, dir));
    qd[dir]->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnQueued, dir));
    qd[dir]->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnLeft, dir));
  }

  // A UDP flow's first datagram is scheduled here, after its sockets' opening
  // (same time when its think time is 0: the opening goes first).
  for (Conn& c : g_conns) {
    Ptr<Node> client = clientNodes.Get(c.client), server = serverNodes.Get(c.server);
    if (c.udp) {
      Simulator::Schedule(Seconds(c.start), &OpenUdp, &c, client, server, serverAddr[c.server]);
      Simulator::Schedule(Seconds(c.start + c.trains[0].think), &SendDatagrams, &c, size_t(0), c.trains[0].bytes);
    } else {
      Simulator::Schedule(Seconds(c.start), &OpenTcp, &c, client, server, serverAddr[c.server]);
    }
  }
  Simulator::Stop(Seconds(end));
  Simulator::Run();
  Flush(0);
  Flush(1);
  g_packets.close();
  if (!g_packets) {
    std::fprintf(stderr, "tl-ns3-model-replay: cannot write %s/packets.csv\n", out.c_str());
    return 4;
  }

  std::ofstream csv(out + "/connections.csv");
  csv.precision(12);
  csv << "conn,client,server,udp,bytes_orig,bytes_resp,start_s,completion_s,response_s,delivered_orig,"
         "delivered_resp\n";
  uint64_t done = 0;
  for (const Conn& c : g_conns) {
    csv << c.id << ',' << c.client << ',' << c.server << ',' << int(c.udp) << ',' << c.bytes[0] << ',' << c.bytes[1]
        << ',' << c.start << ',';
    if (c.done >= 0) {
      csv << c.done << ',' << c.done - c.start;
      ++done;
    } else {
      csv << ',';
    }
    csv << ',' << c.delivered[0] << ',' << c.delivered[1] << '\n';
  }
  std::ofstream js(out + "/summary.json");
  js.precision(12);
  js << "{\n  \"ns3_version\": " << Json(TL_NS3_VERSION) << ",\n  \"qdisc\": " << Json(spec)
     << ",\n  \"type\": " << Json(parsed.type_name) << ",\n  \"rate_bps\": " << rate
     << ",\n  \"access\": " << Json(access) << ",\n  \"clients\": " << clients << ",\n  \"servers\": " << servers
     << ",\n  \"delays_s\": {\"x-11\": " << clientDelay << ", \"11-12\": " << coreDelay
     << ", \"12-w\": " << intranetDelay << ", \"12-v\": " << internetDelay << "},\n  \"segment\": " << g_segment
     << ",\n  \"initial_cwnd_segments\": " << TcpDefault("InitialCwnd")
     << ",\n  \"delayed_ack_count\": " << TcpDefault("DelAckCount") << ",\n  \"udp_gap_s\": " << g_udpGap.GetSeconds()
     << ",\n  \"end_s\": " << end << ",\n  \"seed\": " << seed << ",\n  \"connections\": " << g_conns.size()
     << ",\n  \"completed\": " << done << ",\n  \"bottleneck\": {\"upload\": " << QueueJson(qd[0])
     << ",\n                 \"download\": " << QueueJson(qd[1]) << "}\n}\n";
  csv.close();
  js.close();
  if (!csv || !js) {
    std::fprintf(stderr, "tl-ns3-model-replay: cannot write %s\n", out.c_str());
    return 4;
  }
  std::printf("ns-3 %s model replay %s: %zu connections, %llu completed -> %s/\n", TL_NS3_VERSION, spec.c_str(),
              g_conns.size(), (unsigned long long)done, out.c_str());
  Simulator::Destroy();
  return 0;
}
