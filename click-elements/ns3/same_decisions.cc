// The ns-3 side of the same-decisions test (same_decisions.py): a recorded
// trace goes through one tracelab queue disc, driven by the ns-3 simulator
// on the replay engine's exact link, and every packet's fate is written as
// CSV. same_decisions.py runs the engine on the same trace and requires the
// same fate at the same picosecond for every packet.
//
// Usage: tl-ns3-decisions TRACE RATE_BPS SPEC OUT.csv [mtq_us=N] [qtl_ns=N] [budget=T]
//        tl-ns3-decisions --p2p-burst RATE_BPS PACKETS|TRACE QDISC
//   TRACE  pcap (Ethernet, VLAN tags allowed, or raw IP); IPv4 and IPv6
//          packets are replayed, non-IP frames skipped (as the engine's pcap
//          source does)
//   SPEC   the engine's element spec, e.g. 'efd(capacity=20, th=30000)'
//          (TlParseSpec: the same string selects the queue disc and its
//          attributes)
//   mtq_us, qtl_ns  tag every packet with these MTQ/QTL fields
//          (TlMtqQtlTag), as the engine's class with mtq=, qtl= stamps them
//   budget every packet's waiting-time budget for the chunking queues
//          (their Budgets attribute, class 0), as the engine's class budget
//
// How the times map (the engine's single-node model, replay/engine):
// * the simulator runs at picosecond resolution (Time::SetResolution(PS)),
//   so a core's time (integer ps) and Simulator::Now() are the same number;
// * a packet arrives at its capture time minus the first replayed packet's,
//   read at nanosecond precision;
// * the link serves one packet at a time: a packet pulled at t occupies it
//   for the serialization time of its IP length at RATE, a transmission
//   that follows back to back continuing from the exact end of the one
//   before (ExactLink, as the engine: no per-packet rounding at rates such
//   as 0.3 Mb/s where a byte is not a whole number of ps);
// * order at one instant, as the engine: the pull of a link that becomes
//   free, then arrivals in trace order; an arrival at an idle link is pulled
//   at once;
// * a packet's time is its transmission start (served) or the instant it
//   was dropped (the arrival that caused the drop, or the dequeue that
//   found it expired).
// After every enqueue and dequeue the driver also requires ns-3's view to be
// the core's: packets and bytes held (GetNPackets, GetNBytes), received,
// sent and dropped counts (GetStats), the FlowTableSize trace.
// --p2p-burst checks how a queue disc built by TypeId finds its defaults on
// a real device (run-tests.sh): PACKETS 1000-byte IPv4 packets (or the
// packets of the pcap TRACE) at once into QDISC, the root queue disc of a
// point-to-point device at RATE_BPS (TxQueue 1p, as the dumbbell's), and
// prints its InService after initialization, the core's counts, and its
// flow table just after the burst (entries, longest probe: TableSeed at
// work). QDISC is a TypeId with `,Attr=Value` pairs
// (`ns3::TlFifoQueueDisc,Capacity=30`), or `spec:` and an engine spec.
// The items are Ipv4QueueDiscItems (Ipv6QueueDiscItems) built from the
// trace: the IPv4 (fixed IPv6) header deserialized from the captured bytes,
// the captured bytes after it (IPv6: extension and transport headers), and
// zero padding up to the IP total length.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ns3/data-rate.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/ipv6-l3-protocol.h"
#include "ns3/ipv6-queue-disc-item.h"
#include "ns3/packet.h"
#include "ns3/pcap-file.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/string.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/trace-helper.h"
#include "ns3/simulator.h"

#include "link.hh"
#include "queue_core.hh"
#include "tl-queue-disc.hh"

using namespace ns3;

namespace {

struct Record {
  int64_t arrival = 0;  // ps
  uint32_t length = 0;
  std::string fate = "in_network";
  int64_t at = -1;  // ps: transmission start, or the drop
};

struct Trace {
  std::vector<int64_t> t;  // ps since the first replayed packet
  std::vector<Ptr<QueueDiscItem>> items;
  uint64_t skipped = 0;
};

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "tl-ns3-decisions: %s\n", msg.c_str());
  std::exit(2);
}

Trace Read(const char* path, const TlMtqQtlTag* tag) {
  PcapFile pc;  // ns-3's own reader: microsecond and nanosecond pcaps
  pc.Open(path, std::ios::in);
  if (pc.Fail()) Die(std::string(path) + ": cannot open as a pcap");
  const uint32_t dlt = pc.GetDataLinkType();
  const int64_t tick = pc.IsNanoSecMode() ? 1 : 1000;  // ns per sub-second unit
  Trace tr;
  std::vector<uint8_t> frame(262144);
  int64_t t0 = -1;
  for (;;) {
    uint32_t sec = 0, sub = 0, incl = 0, orig = 0, read = 0;
    pc.Read(frame.data(), frame.size(), sec, sub, incl, orig, read);
    if (pc.Eof() || pc.Fail()) break;
    const uint8_t* d = frame.data();
    size_t off = 0;
    if (dlt == PcapHelper::DLT_EN10MB) {
      if (read < 14) {
        ++tr.skipped;
        continue;
      }
      uint16_t type = uint16_t(d[12] << 8 | d[13]);
      off = 14;
      while ((type == 0x8100 || type == 0x88a8) && read >= off + 4) {
        type = uint16_t(d[off + 2] << 8 | d[off + 3]);
        off += 4;
      }
      if (type != 0x0800 && type != 0x86dd) {
        ++tr.skipped;
        continue;
      }
    } else if (dlt != PcapHelper::DLT_RAW && dlt != 12 /* DLT_RAW (BSD) */ && dlt != 228 /* DLT_IPV4 */ &&
               dlt != 229 /* DLT_IPV6 */) {
      Die(std::string(path) + ": link type " + std::to_string(dlt) + " not supported");
    }
    const uint8_t* ip = d + off;
    const size_t cap = read - off;
    if (cap >= 40 && (ip[0] >> 4) == 6) {
      const size_t total = 40 + (size_t(ip[4]) << 8 | ip[5]);
      const int64_t ns = int64_t(sec) * 1000000000 + int64_t(sub) * tick;
      if (t0 < 0) t0 = ns;
      Ptr<Packet> hp = Create<Packet>(ip, 40);
      Ipv6Header header;
      hp->RemoveHeader(header);
      const size_t rest = std::min(cap, total) - 40;
      Ptr<Packet> payload = Create<Packet>(ip + 40, rest);
      if (total - 40 > rest) payload->AddPaddingAtEnd(total - 40 - rest);
      Ptr<Ipv6QueueDiscItem> item = Create<Ipv6QueueDiscItem>(payload, Address(), Ipv6L3Protocol::PROT_NUMBER, header);
      if (item->GetSize() != total) Die("an item's size differs from its IPv6 length");
      if (tag) payload->AddPacketTag(*tag);
      tr.t.push_back((ns - t0) * 1000);
      tr.items.push_back(item);
      continue;
    }
    if (cap < 20 || (ip[0] >> 4) != 4) {
      ++tr.skipped;
      continue;
    }
    const size_t hl = (ip[0] & 0x0f) * 4u;
    const size_t total = size_t(ip[2]) << 8 | ip[3];
    if (hl < 20 || hl > cap || total < hl) Die("frame with a bad IPv4 header");
    const int64_t ns = int64_t(sec) * 1000000000 + int64_t(sub) * tick;
    if (t0 < 0) t0 = ns;
    Ptr<Packet> hp = Create<Packet>(ip, hl);
    Ipv4Header header;
    hp->RemoveHeader(header);
    const size_t l4cap = std::min(cap, total) - hl;
    Ptr<Packet> payload = Create<Packet>(ip + hl, l4cap);
    if (total - hl > l4cap) payload->AddPaddingAtEnd(total - hl - l4cap);
    Ptr<Ipv4QueueDiscItem> item = Create<Ipv4QueueDiscItem>(payload, Address(), Ipv4L3Protocol::PROT_NUMBER, header);
    if (item->GetSize() != total) Die("an item's size differs from its IP total length");
    if (tag) payload->AddPacketTag(*tag);
    tr.t.push_back((ns - t0) * 1000);
    tr.items.push_back(item);
  }
  pc.Close();
  return tr;
}

// The event loop (see the header): one simulator event per instant.
class Driver {
 public:
  Driver(Ptr<QueueDisc> qd, Trace& tr, uint64_t rate) : qd_(qd), tr_(tr), link_(rate), rec_(tr.items.size()) {
    for (size_t i = 0; i < tr.items.size(); ++i) {
      uid_[tr.items[i]->GetPacket()->GetUid()] = i;
      rec_[i].arrival = tr.t[i];
      rec_[i].length = tr.items[i]->GetSize();
    }
    qd_->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&Driver::Dropped, this));
    qd_->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&Driver::Dropped, this));
    qd_->TraceConnectWithoutContext("FlowTableSize", MakeCallback(&Driver::Flows, this));
  }

  const std::vector<Record>& Run() {
    if (!tr_.t.empty()) Simulator::Schedule(PicoSeconds(tr_.t[0]), &Driver::Step, this);
    Simulator::Run();
    return rec_;
  }

 private:
  int64_t Now() const { return Simulator::Now().GetPicoSeconds(); }

  void Dropped(Ptr<const QueueDiscItem> item, const char* reason) {
    Record& r = rec_.at(uid_.at(item->GetPacket()->GetUid()));
    r.fate = reason;
    r.at = Now();
  }

  const tracelab::QueueCore& Core() const { return *DynamicCast<TlCoreQueueDisc>(qd_)->GetCore(); }

  // The engine's pull schedule (replay/engine/src/engine.cc, pull_at): when
  // the link is free, if the core has something due by then, else when the
  // core says (a chunking timer); asked again at every enqueue.
  void SchedulePull() {
    const int64_t r = Core().next_ready(free_at_);
    pull_at_ = r == tracelab::kNever ? tracelab::kNever : std::max<int64_t>(r, free_at_);
  }

  void Served(Ptr<const QueueDiscItem> item) {
    Record& r = rec_.at(uid_.at(item->GetPacket()->GetUid()));
    r.fate = "delivered";
    r.at = Now();
  }

  void Pull() {
    const int64_t now = Now();
    Ptr<QueueDiscItem> item = qd_->Dequeue();
    if (!item) {
      pull_at_ = Core().next_ready(now);
      if (pull_at_ <= now) Die("next_ready() says ready but the queue disc gave nothing");
      return;
    }
    if (Ptr<TlChunkItem> chunk = DynamicCast<TlChunkItem>(item)) {
      ++chunks_;
      for (const auto& inner : chunk->GetInner()) Served(inner);
    } else {
      Served(item);
    }
    // A chunk's frame: its IPv4 header, the 6 + 4N-byte shim, the packets
    // (the engine: wire bytes + 20 bytes of per-frame overhead).
    free_at_ = link_.send(now, item->GetSize());
    SchedulePull();
  }

  // ns-3's view must be the core's after every operation: the packets and
  // bytes it holds, the flow table, the counters.
  void Check() {
    Ptr<TlCoreQueueDisc> tl = DynamicCast<TlCoreQueueDisc>(qd_);
    const tracelab::QueueCore& core = *tl->GetCore();
    const QueueDisc::Stats& s = qd_->GetStats();
    const tracelab::Counters& c = core.counters();
    if (qd_->GetNPackets() != core.length_packets() || qd_->GetNBytes() != core.length_bytes() ||
        s.nTotalReceivedPackets != c.offered || s.nTotalSentPackets != c.served ||
        s.nTotalDroppedPackets != c.dropped_total() || flows_ != tl->GetFlows())
      Die("ns-3's counts differ from the core's at " + std::to_string(Now()) + " ps: packets " +
          std::to_string(qd_->GetNPackets()) + "/" + std::to_string(core.length_packets()) + ", bytes " +
          std::to_string(qd_->GetNBytes()) + "/" + std::to_string(core.length_bytes()));
  }
  void Flows(uint32_t, uint32_t now) { flows_ = now; }

  void Step() {
    const int64_t now = Now();
    if (pull_at_ == now) Pull();  // pulls first, then arrivals (the engine's order)
    Check();
    while (next_ < tr_.t.size() && tr_.t[next_] == now) {
      qd_->Enqueue(tr_.items[next_++]);
      Check();
      if (free_at_ > now) {
        if (pull_at_ != free_at_) SchedulePull();
      } else {  // an idle link pulls at once if the core is ready
        pull_at_ = Core().next_ready(now);
        if (pull_at_ == now) Pull();
      }
      Check();
    }
    int64_t t = next_ < tr_.t.size() ? tr_.t[next_] : tracelab::kNever;
    t = std::min<int64_t>(t, pull_at_);
    if (t == tracelab::kNever && qd_->GetNPackets() > 0) Die("packets left in the queue with nothing scheduled");
    if (t != tracelab::kNever) Simulator::Schedule(PicoSeconds(t - now), &Driver::Step, this);
  }

 public:
  uint64_t chunks_ = 0;

 private:
  Ptr<QueueDisc> qd_;
  Trace& tr_;
  tracelab::ExactLink link_;
  std::vector<Record> rec_;
  std::map<uint64_t, size_t> uid_;
  size_t next_ = 0;
  int64_t free_at_ = 0;
  int64_t pull_at_ = tracelab::kNever;
  uint32_t flows_ = 0;  // as the FlowTableSize trace says
};

// --p2p-burst: see the header comment.
int P2pBurst(uint64_t rate, const std::string& burst, const std::string& qdisc) {
  ObjectFactory factory;
  try {
    if (qdisc.rfind("spec:", 0) == 0) {
      factory = TlSpecFactory(TlParseSpec(qdisc.substr(5), rate));
    } else {
      size_t at = qdisc.find(',');
      factory.SetTypeId(qdisc.substr(0, at));
      while (at != std::string::npos) {
        const size_t next = qdisc.find(',', at + 1);
        const std::string kv = qdisc.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
        const size_t eq = kv.find('=');
        if (eq == std::string::npos) Die("QDISC attribute without '=': " + kv);
        factory.Set(kv.substr(0, eq), StringValue(kv.substr(eq + 1)));
        at = next;
      }
    }
  } catch (const std::invalid_argument& e) {
    Die(e.what());
  }
  NodeContainer nodes;
  nodes.Create(2);
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate)));
  p2p.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  NetDeviceContainer devices = p2p.Install(nodes);
  Ptr<TrafficControlLayer> tc = CreateObject<TrafficControlLayer>();
  nodes.Get(0)->AggregateObject(tc);
  Ptr<QueueDisc> qd = factory.Create<QueueDisc>();
  tc->SetRootQueueDiscOnDevice(devices.Get(0), qd);
  const bool from_trace = burst.find_first_not_of("0123456789") != std::string::npos;
  const uint64_t packets = from_trace ? 0 : std::strtoull(burst.c_str(), nullptr, 10);
  if (!from_trace && packets == 0) Die("PACKETS must be a positive integer or TRACE a pcap");
  Trace trace;
  if (from_trace) trace = Read(burst.c_str(), nullptr);
  Ptr<TlCoreQueueDisc> core = DynamicCast<TlCoreQueueDisc>(qd);
  uint32_t flows = 0, probe = 0;
  // After the nodes' initialization, which installs and initializes the queue disc.
  Simulator::Schedule(Seconds(0), [&] {
    for (const Ptr<QueueDiscItem>& item : trace.items) tc->Send(devices.Get(0), item);
    for (uint64_t i = 0; i < packets; ++i) {
      Ipv4Header h;
      h.SetSource(Ipv4Address("10.0.0.1"));
      h.SetDestination(Ipv4Address("10.0.0.2"));
      h.SetProtocol(17);
      h.SetPayloadSize(980);
      h.SetTtl(64);
      tc->Send(devices.Get(0), Create<Ipv4QueueDiscItem>(Create<Packet>(980), devices.Get(1)->GetAddress(),
                                                         Ipv4L3Protocol::PROT_NUMBER, h));
    }
    flows = core->GetFlows();
    probe = core->GetTableLongestProbe();
  });
  Simulator::Run();
  DataRateValue in_service;
  qd->GetAttribute("InService", in_service);
  const tracelab::Counters& c = core->GetCounters();
  std::printf("InService=%llubps highwater=%llu offered=%llu served=%llu dropped=%llu flows=%u probe=%u\n",
              (unsigned long long)in_service.Get().GetBitRate(), (unsigned long long)c.highwater_packets,
              (unsigned long long)c.offered, (unsigned long long)c.served, (unsigned long long)c.dropped_total(), flows,
              probe);
  Simulator::Destroy();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--p2p-burst") {
    Time::SetResolution(Time::PS);
    const uint64_t rate = std::strtoull(argv[2], nullptr, 10);
    if (rate == 0) Die("RATE_BPS must be a positive integer");
    return P2pBurst(rate, argv[3], argv[4]);
  }
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: %s TRACE RATE_BPS SPEC OUT.csv [mtq_us=N] [qtl_ns=N] [budget=T]\n"
                 "       %s --p2p-burst RATE_BPS PACKETS|TRACE QDISC\n",
                 argv[0], argv[0]);
    return 2;
  }
  TlMtqQtlTag tag;
  std::string budgets;
  for (int i = 5; i < argc; ++i) {
    const std::string kv = argv[i];
    const uint64_t v = std::strtoull(kv.c_str() + kv.find('=') + 1, nullptr, 10);
    if (kv.rfind("mtq_us=", 0) == 0) tag.fields.mtq_us = static_cast<uint16_t>(v);
    else if (kv.rfind("qtl_ns=", 0) == 0) tag.fields.qtl_ns = static_cast<uint32_t>(v);
    else if (kv.rfind("budget=", 0) == 0) budgets = kv.substr(7);
    else Die("unknown argument " + kv);
  }
  const bool tagged = tag.fields.has_mtq() || tag.fields.has_qtl();
  Time::SetResolution(Time::PS);
  const uint64_t rate = std::strtoull(argv[2], nullptr, 10);
  if (rate == 0) Die("RATE_BPS must be a positive integer");
  Ptr<QueueDisc> qd;
  try {
    TlSpec spec = TlParseSpec(argv[3], rate);
    if (!budgets.empty()) spec.attributes.emplace_back("Budgets", budgets);
    qd = TlSpecFactory(spec).Create<QueueDisc>();
  } catch (const std::invalid_argument& e) {
    Die(e.what());
  }
  qd->Initialize();
  Trace tr = Read(argv[1], tagged ? &tag : nullptr);
  Driver driver(qd, tr, rate);
  const std::vector<Record>& rec = driver.Run();

  std::ofstream out(argv[4]);
  if (!out) Die(std::string("cannot write ") + argv[4]);
  out << "# ns-3 " << TL_NS3_VERSION << ", " << qd->GetInstanceTypeId().GetName() << ", '" << argv[3] << "', " << rate
      << " b/s, " << argv[1] << "\n";
  out << "index,arrival_ps,length,fate,at_ps\n";
  for (size_t i = 0; i < rec.size(); ++i)
    out << i << ',' << rec[i].arrival << ',' << rec[i].length << ',' << rec[i].fate << ',' << rec[i].at << '\n';

  const QueueDisc::Stats& s = qd->GetStats();
  const tracelab::Counters& c = DynamicCast<TlCoreQueueDisc>(qd)->GetCounters();
  std::printf(
      "ns-3 %s %s: received=%u sent=%u dropped=%u (before enqueue %u, after dequeue %u); core offered=%llu "
      "served=%llu dropped=%llu; %llu chunks; skipped %llu non-IPv4 frames\n",
      TL_NS3_VERSION, qd->GetInstanceTypeId().GetName().c_str(), s.nTotalReceivedPackets, s.nTotalSentPackets,
      s.nTotalDroppedPackets, s.nTotalDroppedPacketsBeforeEnqueue, s.nTotalDroppedPacketsAfterDequeue,
      (unsigned long long)c.offered, (unsigned long long)c.served, (unsigned long long)c.dropped_total(),
      (unsigned long long)driver.chunks_, (unsigned long long)tr.skipped);
  Simulator::Destroy();
  return 0;
}
