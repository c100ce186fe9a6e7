// The ns-3 side of every single-packet core: TlCoreQueueDisc (the shared
// adapter), one TypeId per mechanism with the engine's parameters, and the
// engine spec string as a queue disc factory. See tl-queue-disc.hh.
#include "tl-queue-disc.hh"

#include <cctype>
#include <cstring>
#include <stdexcept>

#include "ns3/boolean.h"
#include "ns3/ipv4-address.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv6-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include "ipv4_meta.hh"
#include "spec.hh"
#include "basicq.hh"
#include "chumq.hh"
#include "chunk_format.hh"
#include "chutq.hh"
#include "lars.hh"
#include "las.hh"
#include "mtq_qtl.hh"
#include "ncq.hh"
#include "run2c.hh"
#include "scfq.hh"
#include "sift.hh"
#include "xprotect.hh"
#include "fifo.hh"
#include "jumbogen_red.hh"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("TlQueueDisc");

// --- the item store ------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(TlItemStore);

TypeId TlItemStore::GetTypeId() {
  static TypeId tid = TypeId("ns3::TlItemStore")
                          .SetParent<Queue<QueueDiscItem>>()
                          .SetGroupName("TrafficControl")
                          .AddConstructor<TlItemStore>();
  return tid;
}

// --- packet metadata -------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(TlMtqQtlTag);

TypeId TlMtqQtlTag::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::TlMtqQtlTag").SetParent<Tag>().SetGroupName("TrafficControl").AddConstructor<TlMtqQtlTag>();
  return tid;
}

void TlMtqQtlTag::Serialize(TagBuffer i) const {
  i.WriteU16(fields.mtq_us);
  i.WriteU32(fields.qtl_ns);
}

void TlMtqQtlTag::Deserialize(TagBuffer i) {
  fields.mtq_us = i.ReadU16();
  fields.qtl_ns = i.ReadU32();
}

void TlMtqQtlTag::Print(std::ostream& os) const { os << "mtq_us=" << fields.mtq_us << " qtl_ns=" << fields.qtl_ns; }

namespace {

// FNV-1a over bytes, continuing from h.
uint64_t Fnv(uint64_t h, const uint8_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 1099511628211ULL;
  }
  return h;
}

// The directional 5-tuple of an IPv6 packet as describe_ipv4 keys IPv4's:
// addresses, ports (first fragment, TCP/UDP), the transport protocol after
// the extension headers; the flow label and traffic class are not part of
// it. flow_hash = FNV-1a of (src, sport, dst, dport, proto) in wire order,
// conn_hash the same with the endpoints ordered.
uint64_t Ipv6TupleHash(const uint8_t* a, const uint8_t* pa, const uint8_t* b, const uint8_t* pb, uint8_t proto) {
  uint64_t h = 1469598103934665603ULL;
  h = Fnv(h, a, 16);
  h = Fnv(h, pa, 2);
  h = Fnv(h, b, 16);
  h = Fnv(h, pb, 2);
  return Fnv(h, &proto, 1);
}

// Fill `p` from the IPv6 packet ip[0..len) (header, then at least the
// extension and transport headers present); length = 40 + payload length.
void DescribeIpv6(const uint8_t* ip, size_t len, size_t total, tracelab::Packet& p) {
  p.length = static_cast<uint32_t>(total);
  uint8_t next = ip[6];
  size_t off = 40;
  bool later_fragment = false;
  // Hop-by-hop, routing, fragment and destination options precede the transport header.
  while ((next == 0 || next == 43 || next == 44 || next == 60) && off + 8 <= len) {
    if (next == 44) later_fragment = ((ip[off + 2] << 8 | ip[off + 3]) & 0xfff8) != 0;
    const size_t ext = next == 44 ? 8 : (ip[off + 1] + 1u) * 8;
    next = ip[off];
    off += ext;
  }
  static const uint8_t kNoPort[2] = {0, 0};
  const uint8_t* sport = kNoPort;
  const uint8_t* dport = kNoPort;
  const uint8_t* l4 = ip + off;
  const size_t l4len = off < len ? len - off : 0;
  if (next == 6 && !later_fragment && l4len >= 20) {
    sport = l4;
    dport = l4 + 2;
    p.flags |= tracelab::kFlagTcp;
    p.tcp_seq = uint32_t(l4[4]) << 24 | uint32_t(l4[5]) << 16 | uint32_t(l4[6]) << 8 | l4[7];
    p.tcp_ack = uint32_t(l4[8]) << 24 | uint32_t(l4[9]) << 16 | uint32_t(l4[10]) << 8 | l4[11];
    const uint8_t f = l4[13];  // FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10
    if (f & 0x02) p.flags |= tracelab::kFlagSyn;
    if (f & 0x01) p.flags |= tracelab::kFlagFin;
    const long payload = long(total) - long(off) - long((l4[12] >> 4) * 4);
    if ((f & 0x10) && payload <= 0 && !(f & 0x07)) p.flags |= tracelab::kFlagPureAck;
  } else if (next == 17 && !later_fragment && l4len >= 4) {
    sport = l4;
    dport = l4 + 2;
  }
  const uint8_t* src = ip + 8;
  const uint8_t* dst = ip + 24;
  p.flow_hash = Ipv6TupleHash(src, sport, dst, dport, next);
  const int order = std::memcmp(src, dst, 16);
  const bool forward = order < 0 || (order == 0 && std::memcmp(sport, dport, 2) <= 0);
  p.conn_hash = forward ? p.flow_hash : Ipv6TupleHash(dst, dport, src, sport, next);
}

}  // namespace

void TlDescribeItem(Ptr<const QueueDiscItem> item, tracelab::Packet& p) {
  Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
  if (!ip) {
    Ptr<const Ipv6QueueDiscItem> ip6 = DynamicCast<const Ipv6QueueDiscItem>(item);
    if (!ip6) {
      p.length = item->GetSize();
      return;
    }
    // The IPv6 header as it goes on the wire, then up to 120 bytes of
    // extension and transport headers.
    uint8_t bytes[40 + 120];
    Buffer b;
    b.AddAtStart(40);
    ip6->GetHeader().Serialize(b.Begin());
    b.CopyData(bytes, 40);
    const uint32_t rest = ip6->GetPacket()->CopyData(bytes + 40, sizeof(bytes) - 40);
    DescribeIpv6(bytes, 40 + rest, 40 + ip6->GetPacket()->GetSize(), p);
    return;
  }
  // The IPv4 header as it will go on the wire, then the transport header:
  // the bytes the Click elements read.
  uint8_t bytes[60 + 60];
  const Ipv4Header& h = ip->GetHeader();
  const uint32_t hl = h.GetSerializedSize();
  Buffer b;
  b.AddAtStart(hl);
  h.Serialize(b.Begin());
  b.CopyData(bytes, hl);
  // Ipv4Header::Serialize writes a 20-byte header (IHL 5, total length =
  // payload + 20) even when it was read with options (GetSerializedSize()
  // is then larger): restore IHL and total length; the options themselves
  // are not kept by ns-3 and no core reads them.
  const uint32_t total = hl + ip->GetPacket()->GetSize();
  bytes[0] = static_cast<uint8_t>(0x40 | (hl / 4));
  bytes[2] = static_cast<uint8_t>(total >> 8);
  bytes[3] = static_cast<uint8_t>(total);
  const uint32_t l4 = ip->GetPacket()->CopyData(bytes + hl, sizeof(bytes) - hl);
  tracelab::describe_ipv4(bytes, hl + l4, p);
}

// --- TlCoreQueueDisc -------------------------------------------------------------

class TlCoreQueueDisc::Sink final : public tracelab::DropSink {
 public:
  explicit Sink(TlCoreQueueDisc* q) : q_(q) {}
  void on_drop(const tracelab::Packet& p, tracelab::DropReason why, tracelab::Time) override { q_->OnCoreDrop(p, why); }

 private:
  TlCoreQueueDisc* q_;
};

NS_OBJECT_ENSURE_REGISTERED(TlCoreQueueDisc);

TypeId TlCoreQueueDisc::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::TlCoreQueueDisc")
          .SetParent<QueueDisc>()
          .SetGroupName("TrafficControl")
          .AddTraceSource("FlowTableSize", "Entries in the mechanism's flow table (0 without one)",
                          MakeTraceSourceAccessor(&TlCoreQueueDisc::m_flows), "ns3::TracedValueCallback::Uint32");
  return tid;
}

TypeId& TlCoreQueueDisc::AddBufferAttributes(TypeId& tid) {
  using tracelab::FullTest;
  using tracelab::Granularity;
  tid.AddAttribute("Capacity",
                   "capacity: packets, or bytes with Granularity=bytes; 0 = the engine's default "
                   "(300 packets, NCQ 100; 300 x 1500 B in byte mode)",
                   UintegerValue(0), MakeUintegerAccessor(&TlCoreQueueDisc::m_capacity),
                   MakeUintegerChecker<uint64_t>(0, 1u << 26))
      .AddAttribute("Granularity", "granularity: packets | bytes", EnumValue(Granularity::kPackets),
                    MakeEnumAccessor<Granularity>(&TlCoreQueueDisc::m_granularity),
                    MakeEnumChecker(Granularity::kPackets, "packets", Granularity::kBytes, "bytes"))
      .AddAttribute("FullTest", "full_test (byte mode): would_overflow | already_full",
                    EnumValue(FullTest::kWouldOverflow), MakeEnumAccessor<FullTest>(&TlCoreQueueDisc::m_fullTest),
                    MakeEnumChecker(FullTest::kWouldOverflow, "would_overflow", FullTest::kAlreadyFull, "already_full"))
      .AddAttribute("MinPacket", "min_packet: bytes, sizes the packet slots in byte mode", UintegerValue(40),
                    MakeUintegerAccessor(&TlCoreQueueDisc::m_minPacket), MakeUintegerChecker<uint32_t>(1))
      .AddAttribute("InService",
                    "in_service: the link rate at which the packet in transmission stays counted in the "
                    "buffer (the thesis model); 0bps = it leaves at dequeue (engine in_service=0). "
                    "Default (18446744073709551615bps): the DataRate of the device the queue disc is "
                    "installed on, read at initialization",
                    DataRateValue(DataRate(kInServiceDeviceRate)), MakeDataRateAccessor(&TlCoreQueueDisc::m_inService),
                    MakeDataRateChecker());
  return tid;
}

TypeId& TlCoreQueueDisc::AddTwoLevelAttributes(TypeId& tid, bool push_out) {
  using tracelab::Discipline;
  tid.AddAttribute("PushOut", "push_out: space priority (false: drop-tail)", BooleanValue(push_out),
                   MakeBooleanAccessor(&TlCoreQueueDisc::m_pushOut), MakeBooleanChecker())
      .AddAttribute("Precheck", "precheck: byte mode, drop an arrival that push-out cannot make fit (AMB-1)",
                    BooleanValue(false), MakeBooleanAccessor(&TlCoreQueueDisc::m_precheck), MakeBooleanChecker())
      .AddAttribute("High", "high: fifo | las, the discipline inside the high virtual queue",
                    EnumValue(Discipline::kFifo), MakeEnumAccessor<Discipline>(&TlCoreQueueDisc::m_high),
                    MakeEnumChecker(Discipline::kFifo, "fifo", Discipline::kLas, "las"))
      .AddAttribute("Low", "low: fifo | las, the discipline inside the low virtual queue", EnumValue(Discipline::kFifo),
                    MakeEnumAccessor<Discipline>(&TlCoreQueueDisc::m_low),
                    MakeEnumChecker(Discipline::kFifo, "fifo", Discipline::kLas, "las"));
  return tid;
}

TypeId& TlCoreQueueDisc::AddFlowAttributes(TypeId& tid, const tracelab::FlowStateConfig& d) {
  tid.AddAttribute("MaxFlows", "max_flows: flow-table entries", UintegerValue(d.max_flows),
                   MakeUintegerAccessor(&TlCoreQueueDisc::m_maxFlows), MakeUintegerChecker<uint32_t>(1))
      .AddAttribute("Gc", "gc: interval of the idle-entry scan; 0s = never scan",
                    TimeValue(FromCoreTime(d.gc_interval)), MakeTimeAccessor(&TlCoreQueueDisc::m_gc), MakeTimeChecker())
      .AddAttribute("Idle", "idle: an entry idle this long is removed at a scan; 0s = never",
                    TimeValue(d.idle_timeout == tracelab::kNever ? Seconds(0) : FromCoreTime(d.idle_timeout)),
                    MakeTimeAccessor(&TlCoreQueueDisc::m_idle), MakeTimeChecker());
  return AddTableSeedAttribute(tid);
}

TypeId& TlCoreQueueDisc::AddTableSeedAttribute(TypeId& tid) {
  tid.AddAttribute("TableSeed", "table_seed: the key of the flow table's hash (no decision depends on it)",
                   UintegerValue(tracelab::kFlowTableSeed), MakeUintegerAccessor(&TlCoreQueueDisc::m_tableSeed),
                   MakeUintegerChecker<uint64_t>());
  return tid;
}

TlCoreQueueDisc::TlCoreQueueDisc() : QueueDisc(QueueDiscSizePolicy::MULTIPLE_QUEUES), m_flows(0) {}

TlCoreQueueDisc::~TlCoreQueueDisc() = default;

void TlCoreQueueDisc::DoDispose() {
  m_wake.Cancel();
  m_slots.clear();
  m_store = nullptr;
  QueueDisc::DoDispose();
}

tracelab::Time TlCoreQueueDisc::ToCoreTime(Time t) { return t.GetPicoSeconds(); }

tracelab::Time TlCoreQueueDisc::ToCoreDuration(Time t) { return t.IsZero() ? tracelab::kNever : ToCoreTime(t); }

Time TlCoreQueueDisc::FromCoreTime(tracelab::Time t) { return PicoSeconds(t); }

tracelab::BufferConfig TlCoreQueueDisc::BufferSettings(uint64_t default_packets) const {
  tracelab::BufferConfig b;
  b.granularity = m_granularity;
  b.capacity = m_capacity
                   ? m_capacity
                   : (m_granularity == tracelab::Granularity::kPackets ? default_packets : default_packets * 1500);
  b.full_test = m_fullTest;
  b.min_packet_bytes = m_minPacket;
  b.in_service_link_bps = m_inService.GetBitRate();
  m_buffer = b;
  return b;
}

tracelab::TwoLevelConfig TlCoreQueueDisc::TwoLevelSettings(uint64_t default_packets) const {
  tracelab::TwoLevelConfig q;
  q.buffer = BufferSettings(default_packets);
  q.push_out = m_pushOut;
  q.byte_pushout_precheck = m_precheck;
  q.high = m_high;
  q.low = m_low;
  return q;
}

tracelab::FlowStateConfig TlCoreQueueDisc::FlowSettings() const {
  tracelab::FlowStateConfig f;
  f.max_flows = m_maxFlows;
  f.gc_interval = ToCoreTime(m_gc);  // 0 = never scan, as in the core
  f.idle_timeout = ToCoreDuration(m_idle);
  f.table_seed = m_tableSeed;
  return f;
}

bool TlCoreQueueDisc::CheckConfig() {
  if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0 || GetNInternalQueues() > 0) {
    NS_LOG_ERROR("a tracelab queue disc has no classes, filters or internal queues of its own");
    return false;
  }
  ResolveInService();
  try {
    m_core = MakeCore();
  } catch (const std::invalid_argument& e) {
    NS_LOG_ERROR(GetInstanceTypeId().GetName() << ": " << e.what());
    return false;
  }
  m_store = CreateObject<TlItemStore>();
  // The core alone decides what fits: the store never refuses.
  m_store->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, UINT32_MAX));
  AddInternalQueue(m_store);
  return true;
}

void TlCoreQueueDisc::ResolveInService() {
  TypeId::AttributeInformation info;
  if (m_inService.GetBitRate() != kInServiceDeviceRate ||
      !GetInstanceTypeId().LookupAttributeByName("InService", &info) ||
      info.checker->GetValueTypeName() != "ns3::DataRateValue")
    return;
  // The traffic-control layer hands the queue disc its device's queue
  // interface before initializing it; the interface is aggregated to the
  // device.
  Ptr<NetDeviceQueueInterface> queues = GetNetDeviceQueueInterface();
  Ptr<NetDevice> device = queues ? queues->GetObject<NetDevice>() : nullptr;
  DataRateValue rate;
  if (device && device->GetAttributeFailSafe("DataRate", rate)) {
    m_inService = rate.Get();
    return;
  }
  m_inService = DataRate(0);
  NS_LOG_WARN(GetInstanceTypeId().GetName()
              << ": no device DataRate to count the packet in transmission at; it leaves the buffer at dequeue "
                 "(set InService to the link's rate)");
}

void TlCoreQueueDisc::InitializeParams() {
  m_sink = std::make_unique<Sink>(this);
  m_core->set_drop_sink(m_sink.get());
  m_batchStorage.resize(BatchCapacity());
  m_batch = tracelab::Batch{m_batchStorage.data(), BatchCapacity()};
  // GetMaxSize() reports the core's buffer.
  const tracelab::BufferConfig& b = m_buffer;
  SetMaxSize(QueueSize(b.granularity == tracelab::Granularity::kPackets ? QueueSizeUnit::PACKETS : QueueSizeUnit::BYTES,
                       static_cast<uint32_t>(b.capacity)));
}

const tracelab::Counters& TlCoreQueueDisc::GetCounters() const {
  NS_ABORT_MSG_IF(!m_core, "GetCounters before the queue disc is initialized");
  return m_core->counters();
}

uint32_t TlCoreQueueDisc::GetFlows() const { return CoreFlows(); }
uint32_t TlCoreQueueDisc::GetFlowsHighwater() const { return CoreFlowsHighwater(); }
uint32_t TlCoreQueueDisc::GetTableLongestProbe() const { return CoreTableLongestProbe(); }

uint32_t TlCoreQueueDisc::Allocate(Ptr<QueueDiscItem> item) {
  uint32_t s;
  if (m_free.empty()) {
    s = static_cast<uint32_t>(m_slots.size());
    m_slots.emplace_back();
  } else {
    s = m_free.back();
    m_free.pop_back();
  }
  m_slots[s].item = item;
  m_slots[s].stored = false;
  return s;
}

void TlCoreQueueDisc::Release(uint32_t slot) {
  m_slots[slot].item = nullptr;
  m_slots[slot].stored = false;
  m_free.push_back(slot);
}

void TlCoreQueueDisc::OnCoreDrop(const tracelab::Packet& p, tracelab::DropReason why) {
  const uint32_t s = static_cast<uint32_t>(p.handle);
  const char* reason = tracelab::drop_reason_name(why);
  if (p.handle == m_arriving) {  // refused on arrival
    m_arrivalDropped = true;
    DropBeforeEnqueue(m_slots[s].item, reason);
    return;  // DoEnqueue releases the slot
  }
  // A queued packet (pushed out, or expired at a dequeue): it leaves the
  // store, then counts as dropped after dequeue, as ns-3's own queue discs
  // do with a packet they remove from their internal queue.
  NS_ASSERT_MSG(m_slots[s].stored, "the core dropped a packet it does not hold");
  Ptr<QueueDiscItem> item = m_store->Take(m_slots[s].where);
  Release(s);
  DropAfterDequeue(item, reason);
}

void TlCoreQueueDisc::NoteFlows() {
  const uint32_t n = CoreFlows();
  if (n != m_flows.Get()) m_flows = n;
}

bool TlCoreQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item) {
  tracelab::Packet p;
  Describe(item, p);
  const tracelab::Time now = ToCoreTime(Simulator::Now());
  p.arrival = now;
  const uint32_t s = Allocate(item);
  p.handle = s;
  m_arriving = s;
  m_arrivalDropped = false;
  Offer(item, p, now);
  m_arriving = UINT64_MAX;
  bool admitted = !m_arrivalDropped;
  if (admitted) {
    admitted = m_store->Put(item, m_slots[s].where);
    NS_ASSERT_MSG(admitted, "the item store refused an admitted packet");
    m_slots[s].stored = true;
  } else {
    Release(s);
  }
  NoteFlows();
  return admitted;
}

Ptr<QueueDiscItem> TlCoreQueueDisc::DoDequeue() {
  const tracelab::Time now = ToCoreTime(Simulator::Now());
  if (!m_core->dequeue(now, m_batch)) {
    NoteFlows();
    // A core waiting on a timer (the chunking cores) is asked again when it
    // says it will be ready. Only a queue disc attached to a device can be
    // woken (Run() hands what it dequeues to the send callback); a driver
    // without one asks next_ready() itself.
    const tracelab::Time ready = m_core->next_ready(now);
    if (ready != tracelab::kNever && ready > now && GetSendCallback() && ready < m_wakeAt) {
      m_wake.Cancel();
      m_wakeAt = ready;
      m_wake = Simulator::Schedule(FromCoreTime(ready - now), &TlCoreQueueDisc::Wake, this);
    }
    return nullptr;
  }
  m_out.clear();
  for (uint32_t i = 0; i < m_batch.count; ++i) {
    const uint32_t s = static_cast<uint32_t>(m_batch.packets[i].handle);
    Ptr<QueueDiscItem> item = m_store->Take(m_slots[s].where);
    Release(s);
    OnServed(item, m_batch.packets[i]);
    m_out.push_back(item);
  }
  NoteFlows();
  return Output(m_out, m_batch, now);
}

Ptr<QueueDiscItem> TlCoreQueueDisc::Output(std::vector<Ptr<QueueDiscItem>>& items, const tracelab::Batch& batch,
                                           tracelab::Time) {
  NS_ASSERT_MSG(batch.count == 1, "a single-packet queue disc got a batch");
  return items[0];
}

void TlCoreQueueDisc::Wake() {
  m_wakeAt = tracelab::kNever;
  Run();
}

// --- the mechanisms ----------------------------------------------------------------

namespace {

using tracelab::FlowStateConfig;
const FlowStateConfig kFlowDefaults{};
const FlowStateConfig kLarsFlowDefaults = tracelab::LarsConfig{}.flows;

}  // namespace

// FIFO (§1).
class TlFifoQueueDisc final : public TlQueueDisc<tracelab::FifoCore, tracelab::BufferConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      TypeId t = TypeId("ns3::TlFifoQueueDisc")
                     .SetParent<TlCoreQueueDisc>()
                     .SetGroupName("TrafficControl")
                     .AddConstructor<TlFifoQueueDisc>();
      return AddBufferAttributes(t);
    }();
    return tid;
  }

 protected:
  tracelab::BufferConfig MakeConfig() const override { return BufferSettings(); }
};
NS_OBJECT_ENSURE_REGISTERED(TlFifoQueueDisc);

// EFD and its variants (§2.1-§2.3): one TypeId per variant, for the
// threshold's unit and default (BEFD and EFDACK 30 000 B, PEFD 20 packets).
template <tracelab::EfdVariant V>
class TlEfdQueueDiscOf : public TlQueueDisc<tracelab::EfdCore, tracelab::EfdConfig> {
 public:
  static TypeId Describe(const char* name) {
    const tracelab::EfdConfig d = V == tracelab::EfdVariant::kPefd     ? tracelab::EfdConfig::pefd()
                                  : V == tracelab::EfdVariant::kEfdAck ? tracelab::EfdConfig::efdack()
                                                                       : tracelab::EfdConfig::befd();
    using tracelab::EfdCounter;
    TypeId t =
        TypeId(name)
            .SetParent<TlCoreQueueDisc>()
            .SetGroupName("TrafficControl")
            .AddAttribute("Th", V == tracelab::EfdVariant::kPefd ? "th: threshold, packets" : "th: threshold, bytes",
                          UintegerValue(d.threshold), MakeUintegerAccessor(&TlEfdQueueDiscOf::m_th),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Counter", "counter: admitted | served (AMB-2)", EnumValue(EfdCounter::kAdmitted),
                          MakeEnumAccessor<EfdCounter>(&TlEfdQueueDiscOf::m_counter),
                          MakeEnumChecker(EfdCounter::kAdmitted, "admitted", EfdCounter::kServed, "served"));
    AddBufferAttributes(t);
    AddTableSeedAttribute(t);
    return AddTwoLevelAttributes(t, true);
  }

 protected:
  tracelab::EfdConfig MakeConfig() const override {
    tracelab::EfdConfig c;
    c.variant = V;
    c.queue = TwoLevelSettings();
    c.threshold = m_th;
    c.counter = m_counter;
    c.table_seed = m_tableSeed;
    return c;
  }
  uint64_t m_th = 0;
  tracelab::EfdCounter m_counter = tracelab::EfdCounter::kAdmitted;
};

class TlEfdQueueDisc final : public TlEfdQueueDiscOf<tracelab::EfdVariant::kBefd> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlEfdQueueDisc").AddConstructor<TlEfdQueueDisc>();
    return tid;
  }
};
class TlPefdQueueDisc final : public TlEfdQueueDiscOf<tracelab::EfdVariant::kPefd> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlPefdQueueDisc").AddConstructor<TlPefdQueueDisc>();
    return tid;
  }
};
class TlEfdAckQueueDisc final : public TlEfdQueueDiscOf<tracelab::EfdVariant::kEfdAck> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlEfdAckQueueDisc").AddConstructor<TlEfdAckQueueDisc>();
    return tid;
  }
};
NS_OBJECT_ENSURE_REGISTERED(TlEfdQueueDisc);
NS_OBJECT_ENSURE_REGISTERED(TlPefdQueueDisc);
NS_OBJECT_ENSURE_REGISTERED(TlEfdAckQueueDisc);

// Run2C and Run2CACK (§2.4).
template <bool Ack>
class TlRun2cQueueDiscOf : public TlQueueDisc<tracelab::Run2cCore, tracelab::Run2cConfig> {
 public:
  static TypeId Describe(const char* name) {
    TypeId t = TypeId(name)
                   .SetParent<TlCoreQueueDisc>()
                   .SetGroupName("TrafficControl")
                   .AddAttribute("Th", "th: threshold, bytes", UintegerValue(tracelab::Run2cConfig{}.threshold),
                                 MakeUintegerAccessor(&TlRun2cQueueDiscOf::m_th), MakeUintegerChecker<uint64_t>());
    AddBufferAttributes(t);
    AddTwoLevelAttributes(t, true);
    return AddFlowAttributes(t, kFlowDefaults);
  }

 protected:
  tracelab::Run2cConfig MakeConfig() const override {
    tracelab::Run2cConfig c;
    c.queue = TwoLevelSettings();
    c.threshold = m_th;
    c.ack_aware = Ack;
    c.flows = FlowSettings();
    return c;
  }
  uint64_t m_th = 0;
};
class TlRun2cQueueDisc final : public TlRun2cQueueDiscOf<false> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlRun2cQueueDisc").AddConstructor<TlRun2cQueueDisc>();
    return tid;
  }
};
class TlRun2cAckQueueDisc final : public TlRun2cQueueDiscOf<true> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlRun2cAckQueueDisc").AddConstructor<TlRun2cAckQueueDisc>();
    return tid;
  }
};
NS_OBJECT_ENSURE_REGISTERED(TlRun2cQueueDisc);
NS_OBJECT_ENSURE_REGISTERED(TlRun2cAckQueueDisc);

// SIFT (§2.5).
class TlSiftQueueDisc final : public TlQueueDisc<tracelab::SiftCore, tracelab::SiftConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      const tracelab::SiftConfig d;
      TypeId t = TypeId("ns3::TlSiftQueueDisc")
                     .SetParent<TlCoreQueueDisc>()
                     .SetGroupName("TrafficControl")
                     .AddConstructor<TlSiftQueueDisc>()
                     .AddAttribute("P", "p: sampling probability per packet", DoubleValue(d.probability),
                                   MakeDoubleAccessor(&TlSiftQueueDisc::m_p), MakeDoubleChecker<double>(0, 1))
                     .AddAttribute("Ts", "ts: samples that make a flow large", UintegerValue(d.sample_threshold),
                                   MakeUintegerAccessor(&TlSiftQueueDisc::m_ts), MakeUintegerChecker<uint32_t>(1))
                     .AddAttribute("Seed", "seed: of the core's RNG", UintegerValue(d.seed),
                                   MakeUintegerAccessor(&TlSiftQueueDisc::m_seed), MakeUintegerChecker<uint64_t>());
      AddBufferAttributes(t);
      AddTwoLevelAttributes(t, true);
      return AddFlowAttributes(t, kFlowDefaults);
    }();
    return tid;
  }

 protected:
  tracelab::SiftConfig MakeConfig() const override {
    tracelab::SiftConfig c;
    c.queue = TwoLevelSettings();
    c.probability = m_p;
    c.sample_threshold = m_ts;
    c.seed = m_seed;
    c.flows = FlowSettings();
    return c;
  }
  double m_p = 0;
  uint32_t m_ts = 1;
  uint64_t m_seed = 1;
};
NS_OBJECT_ENSURE_REGISTERED(TlSiftQueueDisc);

// X-Protect (§2.6).
class TlXProtectQueueDisc final : public TlQueueDisc<tracelab::XProtectCore, tracelab::XProtectConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      const tracelab::XProtectConfig d;
      TypeId t = TypeId("ns3::TlXProtectQueueDisc")
                     .SetParent<TlCoreQueueDisc>()
                     .SetGroupName("TrafficControl")
                     .AddConstructor<TlXProtectQueueDisc>()
                     .AddAttribute("PIns", "p_ins: insertion probability per packet", DoubleValue(d.insert_probability),
                                   MakeDoubleAccessor(&TlXProtectQueueDisc::m_pIns), MakeDoubleChecker<double>(0, 1))
                     .AddAttribute("Th", "th: threshold, bytes", UintegerValue(d.threshold),
                                   MakeUintegerAccessor(&TlXProtectQueueDisc::m_th), MakeUintegerChecker<uint64_t>())
                     .AddAttribute("CountInserting", "count_inserting: the inserting packet counts toward th",
                                   BooleanValue(d.count_inserting_packet),
                                   MakeBooleanAccessor(&TlXProtectQueueDisc::m_countInserting), MakeBooleanChecker())
                     .AddAttribute("Seed", "seed: of the core's RNG", UintegerValue(d.seed),
                                   MakeUintegerAccessor(&TlXProtectQueueDisc::m_seed), MakeUintegerChecker<uint64_t>());
      AddBufferAttributes(t);
      AddTwoLevelAttributes(t, true);
      return AddFlowAttributes(t, kFlowDefaults);
    }();
    return tid;
  }

 protected:
  tracelab::XProtectConfig MakeConfig() const override {
    tracelab::XProtectConfig c;
    c.queue = TwoLevelSettings();
    c.insert_probability = m_pIns;
    c.threshold = m_th;
    c.count_inserting_packet = m_countInserting;
    c.seed = m_seed;
    c.flows = FlowSettings();
    return c;
  }
  double m_pIns = 0;
  uint64_t m_th = 0;
  bool m_countInserting = true;
  uint64_t m_seed = 1;
};
NS_OBJECT_ENSURE_REGISTERED(TlXProtectQueueDisc);

// LAS and LASACK (§3.1).
template <bool Ack>
class TlLasQueueDiscOf : public TlQueueDisc<tracelab::LasCore, tracelab::LasConfig> {
 public:
  static TypeId Describe(const char* name) {
    TypeId t = TypeId(name).SetParent<TlCoreQueueDisc>().SetGroupName("TrafficControl");
    AddBufferAttributes(t);
    return AddFlowAttributes(t, kFlowDefaults);
  }

 protected:
  tracelab::LasConfig MakeConfig() const override {
    tracelab::LasConfig c;
    c.buffer = BufferSettings();
    c.ack_aware = Ack;
    c.flows = FlowSettings();
    return c;
  }
};
class TlLasQueueDisc final : public TlLasQueueDiscOf<false> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlLasQueueDisc").AddConstructor<TlLasQueueDisc>();
    return tid;
  }
};
class TlLasAckQueueDisc final : public TlLasQueueDiscOf<true> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlLasAckQueueDisc").AddConstructor<TlLasAckQueueDisc>();
    return tid;
  }
};
NS_OBJECT_ENSURE_REGISTERED(TlLasQueueDisc);
NS_OBJECT_ENSURE_REGISTERED(TlLasAckQueueDisc);

// LARS (§3.2).
class TlLarsQueueDisc final : public TlQueueDisc<tracelab::LarsCore, tracelab::LarsConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      const tracelab::LarsConfig d;
      TypeId t = TypeId("ns3::TlLarsQueueDisc")
                     .SetParent<TlCoreQueueDisc>()
                     .SetGroupName("TrafficControl")
                     .AddConstructor<TlLarsQueueDisc>()
                     .AddAttribute("Beta", "beta: fading factor per tau, in (0, 1]", DoubleValue(d.beta),
                                   MakeDoubleAccessor(&TlLarsQueueDisc::m_beta), MakeDoubleChecker<double>(0, 1))
                     .AddAttribute("Tau", "tau: time unit of the fading", TimeValue(FromCoreTime(d.tau)),
                                   MakeTimeAccessor(&TlLarsQueueDisc::m_tau), MakeTimeChecker())
                     .AddAttribute("Ack", "ack: per TCP connection, ACKs count ACK progress", BooleanValue(d.ack_aware),
                                   MakeBooleanAccessor(&TlLarsQueueDisc::m_ack), MakeBooleanChecker());
      AddBufferAttributes(t);
      return AddFlowAttributes(t, kLarsFlowDefaults);
    }();
    return tid;
  }

 protected:
  tracelab::LarsConfig MakeConfig() const override {
    tracelab::LarsConfig c;
    c.buffer = BufferSettings();
    c.beta = m_beta;
    c.tau = ToCoreTime(m_tau);
    c.ack_aware = m_ack;
    c.flows = FlowSettings();
    return c;
  }
  double m_beta = 0.5;
  Time m_tau;
  bool m_ack = false;
};
NS_OBJECT_ENSURE_REGISTERED(TlLarsQueueDisc);

// SCFQ (§3.3).
class TlScfqQueueDisc final : public TlQueueDisc<tracelab::ScfqCore, tracelab::ScfqConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      TypeId t = TypeId("ns3::TlScfqQueueDisc")
                     .SetParent<TlCoreQueueDisc>()
                     .SetGroupName("TrafficControl")
                     .AddConstructor<TlScfqQueueDisc>();
      AddBufferAttributes(t);
      return AddTableSeedAttribute(t);
    }();
    return tid;
  }

 protected:
  tracelab::ScfqConfig MakeConfig() const override {
    tracelab::ScfqConfig c;
    c.buffer = BufferSettings();
    c.table_seed = m_tableSeed;
    return c;
  }
};
NS_OBJECT_ENSURE_REGISTERED(TlScfqQueueDisc);

// NCQ and NCQ+ (§4): 100 packets, drop-tail by default.
template <tracelab::NcqVariant V>
class TlNcqQueueDiscOf : public TlQueueDisc<tracelab::NcqCore, tracelab::NcqConfig> {
 public:
  static TypeId Describe(const char* name) {
    const tracelab::NcqConfig d;
    TypeId t = TypeId(name).SetParent<TlCoreQueueDisc>().SetGroupName("TrafficControl");
    if (V == tracelab::NcqVariant::kNcq) {
      t.AddAttribute("SizeThresh", "size_thresh: bytes, favored below", UintegerValue(d.size_thresh),
                     MakeUintegerAccessor(&TlNcqQueueDiscOf::m_sizeThresh), MakeUintegerChecker<uint32_t>());
    } else {
      t.AddAttribute("SizeThresh1", "size_thresh1: bytes, tiny up to", UintegerValue(d.size_thresh1),
                     MakeUintegerAccessor(&TlNcqQueueDiscOf::m_sizeThresh1), MakeUintegerChecker<uint32_t>())
          .AddAttribute("SizeThresh2", "size_thresh2: bytes, small up to", UintegerValue(d.size_thresh2),
                        MakeUintegerAccessor(&TlNcqQueueDiscOf::m_sizeThresh2), MakeUintegerChecker<uint32_t>())
          .AddAttribute("Alpha", "alpha: k = 1 + alpha", DoubleValue(d.alpha),
                        MakeDoubleAccessor(&TlNcqQueueDiscOf::m_alpha), MakeDoubleChecker<double>())
          .AddAttribute(
              "TinyRate", "tiny_rate: favored | incoming", EnumValue(d.tiny_rate),
              MakeEnumAccessor<tracelab::TinyRate>(&TlNcqQueueDiscOf::m_tinyRate),
              MakeEnumChecker(tracelab::TinyRate::kFavored, "favored", tracelab::TinyRate::kIncoming, "incoming"))
          .AddAttribute("FavorAcks", "favor_acks: pure ACKs may be favored", BooleanValue(d.favor_pure_acks),
                        MakeBooleanAccessor(&TlNcqQueueDiscOf::m_favorAcks), MakeBooleanChecker());
    }
    t.AddAttribute("Ncqthresh", "ncqthresh: favored share threshold", DoubleValue(d.ncqthresh1),
                   MakeDoubleAccessor(&TlNcqQueueDiscOf::m_ncqthresh), MakeDoubleChecker<double>());
    AddBufferAttributes(t);
    return AddTwoLevelAttributes(t, false);
  }

 protected:
  tracelab::NcqConfig MakeConfig() const override {
    tracelab::NcqConfig c;
    c.variant = V;
    c.queue = TwoLevelSettings(100);
    c.size_thresh = m_sizeThresh;
    c.size_thresh1 = m_sizeThresh1;
    c.size_thresh2 = m_sizeThresh2;
    c.ncqthresh1 = m_ncqthresh;
    c.alpha = m_alpha;
    c.tiny_rate = m_tinyRate;
    c.favor_pure_acks = m_favorAcks;
    return c;
  }
  uint32_t m_sizeThresh = tracelab::NcqConfig{}.size_thresh;
  uint32_t m_sizeThresh1 = tracelab::NcqConfig{}.size_thresh1;
  uint32_t m_sizeThresh2 = tracelab::NcqConfig{}.size_thresh2;
  double m_ncqthresh = 0;
  double m_alpha = 0;
  tracelab::TinyRate m_tinyRate = tracelab::TinyRate::kFavored;
  bool m_favorAcks = false;
};
class TlNcqQueueDisc final : public TlNcqQueueDiscOf<tracelab::NcqVariant::kNcq> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlNcqQueueDisc").AddConstructor<TlNcqQueueDisc>();
    return tid;
  }
};
class TlNcqPlusQueueDisc final : public TlNcqQueueDiscOf<tracelab::NcqVariant::kNcqPlus> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = Describe("ns3::TlNcqPlusQueueDisc").AddConstructor<TlNcqPlusQueueDisc>();
    return tid;
  }
};
NS_OBJECT_ENSURE_REGISTERED(TlNcqQueueDisc);
NS_OBJECT_ENSURE_REGISTERED(TlNcqPlusQueueDisc);

// MTQ/QTL early discarding (§7): a drop-tail FIFO of `capacity` packets
// that discards an arrival whose local delay estimate (backlog / LinkRate)
// exceeds its MTQ or reaches its QTL, and decreases the QTL of the others.
// The fields come from TlMtqQtlTag.
class TlMtqQtlQueueDisc final : public TlQueueDisc<tracelab::MtqQtlQueue, tracelab::MtqQtlConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      const tracelab::MtqQtlConfig d;
      return TypeId("ns3::TlMtqQtlQueueDisc")
          .SetParent<TlCoreQueueDisc>()
          .SetGroupName("TrafficControl")
          .AddConstructor<TlMtqQtlQueueDisc>()
          .AddAttribute("Capacity", "capacity: packets", UintegerValue(d.capacity_packets),
                        MakeUintegerAccessor(&TlMtqQtlQueueDisc::m_capacity), MakeUintegerChecker<uint64_t>(1))
          .AddAttribute("InService",
                        "in_service: the delay estimate adds the residual of the packet in transmission (AMB-27)",
                        BooleanValue(d.count_in_service), MakeBooleanAccessor(&TlMtqQtlQueueDisc::m_countInService),
                        MakeBooleanChecker())
          .AddAttribute("LinkRate", "the output link's rate C of the delay estimate (the engine: its node's rate)",
                        DataRateValue(DataRate(d.link_bps)), MakeDataRateAccessor(&TlMtqQtlQueueDisc::m_linkRate),
                        MakeDataRateChecker());
    }();
    return tid;
  }

 protected:
  tracelab::MtqQtlConfig MakeConfig() const override {
    tracelab::MtqQtlConfig c;
    c.link_bps = m_linkRate.GetBitRate();
    c.capacity_packets = m_capacity;
    c.count_in_service = m_countInService;
    m_buffer.capacity = m_capacity;  // for GetMaxSize()
    m_buffer.granularity = tracelab::Granularity::kPackets;
    return c;
  }
  void Describe(Ptr<const QueueDiscItem> item, tracelab::Packet& p) const override {
    TlDescribeItem(item, p);
    TlMtqQtlTag tag;
    if (item->GetPacket()->PeekPacketTag(tag)) tracelab::mq::to_packet(tag.fields, p);
  }
  void OnServed(Ptr<QueueDiscItem> item, const tracelab::Packet& p) override {
    if (!(p.flags & tracelab::kFlagHasQtl)) return;
    TlMtqQtlTag tag;
    item->GetPacket()->PeekPacketTag(tag);
    tag.fields.qtl_ns = tracelab::mq::from_packet(p).qtl_ns;
    item->GetPacket()->ReplacePacketTag(tag);
  }

 private:
  bool m_countInService = false;
  DataRate m_linkRate;
};
NS_OBJECT_ENSURE_REGISTERED(TlMtqQtlQueueDisc);

// JumboGen-aware RED with partial drop (§5.3), for core routers. A plain
// packet is dropped with RED's probability; a JumboGram (an IPv4 packet of
// protocol `Proto` whose payload is the chunk_format.hh encoding, as a
// chunking queue disc's TlChunkItem) is selected with dropPercent and, in
// partial mode, loses trailing packets: it is served with the
// shortened payload (and IP total length), as the Click element rewrites it.
class TlJumboGenRedQueueDisc final : public TlQueueDisc<tracelab::JumboGenRed, tracelab::JumboRedConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      using tracelab::JumboRedMode;
      const tracelab::JumboRedConfig d;
      return TypeId("ns3::TlJumboGenRedQueueDisc")
          .SetParent<TlCoreQueueDisc>()
          .SetGroupName("TrafficControl")
          .AddConstructor<TlJumboGenRedQueueDisc>()
          .AddAttribute("Mode", "mode: partial | full | standard (a JumboGram as one packet)", EnumValue(d.mode),
                        MakeEnumAccessor<JumboRedMode>(&TlJumboGenRedQueueDisc::m_mode),
                        MakeEnumChecker(JumboRedMode::kPartialDrop, "partial", JumboRedMode::kFullDrop, "full",
                                        JumboRedMode::kStandard, "standard"))
          .AddAttribute("MinTh", "min_th: queue units (encapsulated packets in partial mode, items otherwise)",
                        DoubleValue(d.min_th), MakeDoubleAccessor(&TlJumboGenRedQueueDisc::m_minTh),
                        MakeDoubleChecker<double>())
          .AddAttribute("MaxTh", "max_th: queue units", DoubleValue(d.max_th),
                        MakeDoubleAccessor(&TlJumboGenRedQueueDisc::m_maxTh), MakeDoubleChecker<double>())
          .AddAttribute("MaxP", "max_p: RED's drop probability at max_th", DoubleValue(d.max_p),
                        MakeDoubleAccessor(&TlJumboGenRedQueueDisc::m_maxP), MakeDoubleChecker<double>())
          .AddAttribute("WQ", "w_q: RED's EWMA weight of the queue length (the seed's α of §4)", DoubleValue(d.w_q),
                        MakeDoubleAccessor(&TlJumboGenRedQueueDisc::m_wQ), MakeDoubleChecker<double>())
          .AddAttribute("MinPktDrop", "min_pkt_drop: share of a selected JumboGram's packets cut at min_th",
                        DoubleValue(d.min_pkt_drop), MakeDoubleAccessor(&TlJumboGenRedQueueDisc::m_minPktDrop),
                        MakeDoubleChecker<double>())
          .AddAttribute("MaxPktDrop", "max_pkt_drop: the share cut at max_th", DoubleValue(d.max_pkt_drop),
                        MakeDoubleAccessor(&TlJumboGenRedQueueDisc::m_maxPktDrop), MakeDoubleChecker<double>())
          .AddAttribute("JgFractionWeight", "jg_fraction_weight: EWMA weight of the JumboGram share of arrivals",
                        DoubleValue(d.jg_fraction_weight),
                        MakeDoubleAccessor(&TlJumboGenRedQueueDisc::m_jgFractionWeight), MakeDoubleChecker<double>())
          .AddAttribute("Capacity", "capacity: queue units, tail drop of the whole arrival", UintegerValue(d.capacity),
                        MakeUintegerAccessor(&TlJumboGenRedQueueDisc::m_capacity), MakeUintegerChecker<uint64_t>(1))
          .AddAttribute("FullDropCountsPackets",
                        "full_drop_counts_packets: in full mode, queue units are encapsulated packets (as partial)",
                        BooleanValue(d.full_drop_counts_packets),
                        MakeBooleanAccessor(&TlJumboGenRedQueueDisc::m_fullDropCountsPackets), MakeBooleanChecker())
          .AddAttribute("RingSlots", "ring_slots: items the queue can hold", UintegerValue(d.ring_slots),
                        MakeUintegerAccessor(&TlJumboGenRedQueueDisc::m_ringSlots),
                        MakeUintegerChecker<uint64_t>(1, 1u << 24))
          .AddAttribute("Seed", "seed: RED's drop draws", UintegerValue(d.seed),
                        MakeUintegerAccessor(&TlJumboGenRedQueueDisc::m_seed), MakeUintegerChecker<uint64_t>())
          .AddAttribute("Proto", "proto: the IPv4 protocol number of JumboGrams", UintegerValue(TlChunkItem::kProtocol),
                        MakeUintegerAccessor(&TlJumboGenRedQueueDisc::m_proto), MakeUintegerChecker<uint8_t>())
          .AddTraceSource("PartialDrop", "a JumboGram lost trailing packets: the item as stored, packets removed",
                          MakeTraceSourceAccessor(&TlJumboGenRedQueueDisc::m_partialDrop),
                          "ns3::TlJumboGenRedQueueDisc::PartialDropCallback");
    }();
    return tid;
  }
  typedef void (*PartialDropCallback)(Ptr<const QueueDiscItem> item, uint16_t removed);

 protected:
  tracelab::JumboRedConfig MakeConfig() const override {
    tracelab::JumboRedConfig c;
    c.mode = m_mode;
    c.min_th = m_minTh;
    c.max_th = m_maxTh;
    c.max_p = m_maxP;
    c.w_q = m_wQ;
    c.min_pkt_drop = m_minPktDrop;
    c.max_pkt_drop = m_maxPktDrop;
    c.jg_fraction_weight = m_jgFractionWeight;
    c.capacity = m_capacity ? m_capacity : c.capacity;
    c.full_drop_counts_packets = m_fullDropCountsPackets;
    c.ring_slots = m_ringSlots;
    c.seed = m_seed;
    m_buffer.capacity = c.capacity;  // for GetMaxSize(): the queue units
    m_buffer.granularity = tracelab::Granularity::kPackets;
    return c;
  }
  void Offer(Ptr<const QueueDiscItem> item, const tracelab::Packet& p, tracelab::Time now) override {
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (!ip || ip->GetHeader().GetProtocol() != m_proto) {
      m_mech->enqueue(p, now);
      return;
    }
    // The core reads and may cut the JumboGram in place: a copy of the
    // payload, in a buffer kept across arrivals.
    const uint32_t len = ip->GetPacket()->GetSize();
    if (m_bytes.size() < len) m_bytes.resize(len);
    ip->GetPacket()->CopyData(m_bytes.data(), len);
    const tracelab::JumboRedResult r = m_mech->enqueue_jumbogram(p, m_bytes.data(), len, now);
    if (r.removed == 0 || !r.queued) return;
    Ipv4Header h = ip->GetHeader();
    h.SetPayloadSize(static_cast<uint16_t>(r.new_length));
    Ptr<Ipv4QueueDiscItem> cut = Create<Ipv4QueueDiscItem>(
        Create<Packet>(m_bytes.data(), static_cast<uint32_t>(r.new_length)), ip->GetAddress(), ip->GetProtocol(), h);
    m_partialDrop(cut, r.removed);
    // ns-3 accounts the arrival as enqueued whole (received = dropped +
    // enqueued bytes): the stored item stays the one that arrived, and the
    // cut one leaves in its place (Output).
    const size_t slot = static_cast<size_t>(p.handle);
    if (m_cut.size() <= slot) m_cut.resize(slot + 1);
    m_cut[slot] = cut;
  }
  Ptr<QueueDiscItem> Output(std::vector<Ptr<QueueDiscItem>>& items, const tracelab::Batch& batch,
                            tracelab::Time now) override {
    Ptr<QueueDiscItem> out = TlCoreQueueDisc::Output(items, batch, now);
    const size_t slot = static_cast<size_t>(batch.packets[0].handle);
    if (slot >= m_cut.size() || !m_cut[slot]) return out;
    Ptr<QueueDiscItem> cut = m_cut[slot];
    m_cut[slot] = nullptr;
    cut->SetTimeStamp(out->GetTimeStamp());
    return cut;
  }

 private:
  tracelab::JumboRedMode m_mode = tracelab::JumboRedMode::kPartialDrop;
  double m_minTh = 0, m_maxTh = 0, m_maxP = 0, m_wQ = 0, m_minPktDrop = 0, m_maxPktDrop = 0, m_jgFractionWeight = 0;
  uint64_t m_ringSlots = 0, m_seed = 0;
  bool m_fullDropCountsPackets = false;
  uint8_t m_proto = TlChunkItem::kProtocol;
  std::vector<uint8_t> m_bytes;
  std::vector<Ptr<QueueDiscItem>> m_cut;  // by slot: the shortened JumboGram to serve for a queued one
  TracedCallback<Ptr<const QueueDiscItem>, uint16_t> m_partialDrop;
};
NS_OBJECT_ENSURE_REGISTERED(TlJumboGenRedQueueDisc);

// --- the chunking queues (§6) ---------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(TlClassTag);

TypeId TlClassTag::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::TlClassTag").SetParent<Tag>().SetGroupName("TrafficControl").AddConstructor<TlClassTag>();
  return tid;
}

namespace {

// "50us/100us/200us" -> picoseconds; empty -> none.
std::vector<tracelab::Time> ParseTimes(const std::string& v, const char* what, bool ascending) {
  std::vector<tracelab::Time> out;
  size_t pos = 0;
  while (pos < v.size()) {
    const size_t slash = std::min(v.find('/', pos), v.size());
    const tracelab::Time t = Time(v.substr(pos, slash - pos)).GetPicoSeconds();
    if (t <= 0) throw std::invalid_argument(std::string(what) + "='" + v + "': each a positive duration");
    if (ascending && !out.empty() && t <= out.back())
      throw std::invalid_argument(std::string(what) + " must be strictly ascending");
    out.push_back(t);
    pos = slash + 1;
  }
  return out;
}

enum class RestartFrom : uint8_t { kHead, kNow };
enum class ExpiredOrder : uint8_t { kFirst, kLast };

}  // namespace

// What BasiCQ, ChuMQ and ChuTQ share: the chunk (MTU, shim, capacity), the
// class budgets, and the chunk packet a dequeue hands over (TlChunkItem).
NS_OBJECT_ENSURE_REGISTERED(TlChunkQueueDisc);

TypeId TlChunkQueueDisc::GetTypeId() {
  static TypeId tid = TypeId("ns3::TlChunkQueueDisc").SetParent<TlCoreQueueDisc>().SetGroupName("TrafficControl");
  return tid;
}

template <typename Core, typename Config>
class TlChunkQueueDiscOf : public TlQueueDisc<Core, Config, TlChunkQueueDisc> {
 public:
  static TypeId& AddChunkAttributes(TypeId& t) {
    using Self = TlChunkQueueDiscOf;
    t.AddAttribute("Mtu", "mtu: chunk MTU, bytes", UintegerValue(9000), MakeUintegerAccessor(&Self::m_mtu),
                   MakeUintegerChecker<uint32_t>(64, 65535))
        .AddAttribute("Shim", "shim: count the 6 + 4N-byte chunk header (false: the seed's 0)", BooleanValue(true),
                      MakeBooleanAccessor(&Self::m_shim), MakeBooleanChecker())
        .AddAttribute("Capacity", "capacity: packets the node holds (class buffers, chunks)", UintegerValue(16384),
                      MakeUintegerAccessor(&Self::m_capacity), MakeUintegerChecker<uint64_t>(1, 1u << 26))
        .AddAttribute("Budgets",
                      "waiting-time budget W_max of each traffic class (TlClassTag), '/'-separated "
                      "(e.g. 50us/100us/200us); a class beyond the list has none (the engine: its class's budget)",
                      StringValue(""), MakeStringAccessor(&Self::m_budgets), MakeStringChecker())
        .AddAttribute("Dechunker",
                      "where chunk packets are addressed (a node running TlDechunkProtocol); "
                      "0.0.0.0 = the first carried packet's destination",
                      Ipv4AddressValue(Ipv4Address::GetAny()), MakeIpv4AddressAccessor(&Self::m_dechunker),
                      MakeIpv4AddressChecker())
        .AddAttribute("TimeUnit", "unit of the chunk header's QTime fields (chunk_format.hh)",
                      TimeValue(NanoSeconds(10)), MakeTimeAccessor(&Self::m_unit), MakeTimeChecker());
    return t;
  }

 protected:
  // The common part of every chunking Config.
  template <typename C>
  void FillChunk(C& c) const {
    c.mtu = m_mtu;
    c.shim = m_shim;
    c.capacity_packets = this->m_capacity;
    m_budgetTimes = ParseTimes(m_budgets, "Budgets", false);
    this->m_buffer.capacity = this->m_capacity;  // for GetMaxSize()
    this->m_buffer.granularity = tracelab::Granularity::kPackets;
  }
  uint32_t BatchCapacity() const override { return tracelab::max_chunk_packets(m_mtu); }
  void Describe(Ptr<const QueueDiscItem> item, tracelab::Packet& p) const override {
    TlDescribeItem(item, p);
    TlClassTag tag;
    if (item->GetPacket()->PeekPacketTag(tag)) p.cls = tag.cls;
    if (p.cls < m_budgetTimes.size()) p.budget = m_budgetTimes[p.cls];
  }
  // One IPv4 packet for the chunk: the carried packets with their IPv4
  // headers, encoded with chunk_format.hh (the Click element's encoding).
  Ptr<QueueDiscItem> Output(std::vector<Ptr<QueueDiscItem>>& items, const tracelab::Batch& batch,
                            tracelab::Time now) override {
    std::vector<std::vector<uint8_t>> bytes(items.size());
    std::vector<tracelab::jg::PacketRef> refs(items.size());
    size_t total = tracelab::jg::header_size(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      Ptr<Packet> c = items[i]->GetPacket()->Copy();
      if (Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(items[i])) c->AddHeader(ip->GetHeader());
      bytes[i].resize(c->GetSize());
      c->CopyData(bytes[i].data(), bytes[i].size());
      refs[i] = tracelab::jg::PacketRef{bytes[i].data(), bytes[i].size(), batch.packets[i].arrival};
      total += bytes[i].size();
    }
    std::vector<uint8_t> out(total);
    tracelab::jg::FormatError err;
    const size_t n =
        tracelab::jg::encode(refs.data(), refs.size(), now, m_unit.GetPicoSeconds(), out.data(), out.size(), err);
    NS_ABORT_MSG_IF(n == 0, "chunk encoding failed: " << tracelab::jg::format_error_name(err));
    Ipv4Header h;
    Ptr<Ipv4QueueDiscItem> first = DynamicCast<Ipv4QueueDiscItem>(items[0]);
    if (first) h.SetSource(first->GetHeader().GetSource());
    h.SetDestination(m_dechunker != Ipv4Address::GetAny() || !first ? m_dechunker
                                                                    : first->GetHeader().GetDestination());
    h.SetProtocol(TlChunkItem::kProtocol);
    h.SetTtl(64);
    h.SetPayloadSize(n);
    return Create<TlChunkItem>(Create<Packet>(out.data(), n), h, items);
  }

  uint32_t m_mtu = 9000;
  bool m_shim = true;
  std::string m_budgets;
  mutable std::vector<tracelab::Time> m_budgetTimes;
  Ipv4Address m_dechunker;
  Time m_unit;
};

// BasiCQ (§6.3).
class TlBasiCQQueueDisc final : public TlChunkQueueDiscOf<tracelab::BasiCQ, tracelab::BasiCQConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      TypeId t = TypeId("ns3::TlBasiCQQueueDisc")
                     .SetParent<TlChunkQueueDisc>()
                     .SetGroupName("TrafficControl")
                     .AddConstructor<TlBasiCQQueueDisc>();
      return AddChunkAttributes(t);
    }();
    return tid;
  }

 protected:
  tracelab::BasiCQConfig MakeConfig() const override {
    tracelab::BasiCQConfig c;
    FillChunk(c);
    return c;
  }
};
NS_OBJECT_ENSURE_REGISTERED(TlBasiCQQueueDisc);

// ChuMQ (§6.4, §6.6).
class TlChuMQQueueDisc final : public TlChunkQueueDiscOf<tracelab::ChuMQ, tracelab::ChuMQConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      using tracelab::ChuMQContention;
      TypeId t =
          TypeId("ns3::TlChuMQQueueDisc")
              .SetParent<TlChunkQueueDisc>()
              .SetGroupName("TrafficControl")
              .AddConstructor<TlChuMQQueueDisc>()
              .AddAttribute("Timers", "timers: one chunking timer per class buffer, ascending",
                            StringValue("50us/100us/200us"), MakeStringAccessor(&TlChuMQQueueDisc::m_timers),
                            MakeStringChecker())
              .AddAttribute("Cea", "cea: the chunking-efficiency-aware extension (§6.6)", BooleanValue(false),
                            MakeBooleanAccessor(&TlChuMQQueueDisc::m_cea), MakeBooleanChecker())
              .AddAttribute("Restart", "restart: head | now (AMB-19)", EnumValue(RestartFrom::kHead),
                            MakeEnumAccessor<RestartFrom>(&TlChuMQQueueDisc::m_restart),
                            MakeEnumChecker(RestartFrom::kHead, "head", RestartFrom::kNow, "now"))
              .AddAttribute("Contention", "contention: timer_first | priority | fifo",
                            EnumValue(ChuMQContention::kTimerFirst),
                            MakeEnumAccessor<ChuMQContention>(&TlChuMQQueueDisc::m_contention),
                            MakeEnumChecker(ChuMQContention::kTimerFirst, "timer_first", ChuMQContention::kPriority,
                                            "priority", ChuMQContention::kFifo, "fifo"));
      return AddChunkAttributes(t);
    }();
    return tid;
  }

 protected:
  tracelab::ChuMQConfig MakeConfig() const override {
    tracelab::ChuMQConfig c;
    FillChunk(c);
    c.timers = ParseTimes(m_timers, "Timers", true);
    c.cea = m_cea;
    c.restart_from_head = m_restart == RestartFrom::kHead;
    c.contention = m_contention;
    return c;
  }

 private:
  std::string m_timers;
  bool m_cea = false;
  RestartFrom m_restart = RestartFrom::kHead;
  tracelab::ChuMQContention m_contention = tracelab::ChuMQContention::kTimerFirst;
};
NS_OBJECT_ENSURE_REGISTERED(TlChuMQQueueDisc);

// ChuTQ (§6.5, §6.6).
class TlChuTQQueueDisc final : public TlChunkQueueDiscOf<tracelab::ChuTQ, tracelab::ChuTQConfig> {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = [] {
      using tracelab::ChuTQPolicy;
      const tracelab::ChuTQConfig d;
      TypeId t =
          TypeId("ns3::TlChuTQQueueDisc")
              .SetParent<TlChunkQueueDisc>()
              .SetGroupName("TrafficControl")
              .AddConstructor<TlChuTQQueueDisc>()
              .AddAttribute(
                  "Policy", "policy: dcf | tpf | cef", EnumValue(ChuTQPolicy::kDCF),
                  MakeEnumAccessor<ChuTQPolicy>(&TlChuTQQueueDisc::m_policy),
                  MakeEnumChecker(ChuTQPolicy::kDCF, "dcf", ChuTQPolicy::kTPF, "tpf", ChuTQPolicy::kCEF, "cef"))
              .AddAttribute("Timers", "timers: one chunking timer per class buffer, ascending",
                            StringValue("50us/100us/200us"), MakeStringAccessor(&TlChuTQQueueDisc::m_timers),
                            MakeStringChecker())
              .AddAttribute("Cea", "cea: the chunking-efficiency-aware extension (§6.6)", BooleanValue(false),
                            MakeBooleanAccessor(&TlChuTQQueueDisc::m_cea), MakeBooleanChecker())
              .AddAttribute("Expired", "expired: first | last, where a packet past its deadline ranks",
                            EnumValue(ExpiredOrder::kFirst),
                            MakeEnumAccessor<ExpiredOrder>(&TlChuTQQueueDisc::m_expired),
                            MakeEnumChecker(ExpiredOrder::kFirst, "first", ExpiredOrder::kLast, "last"))
              .AddAttribute("LinkRate", "the output link's rate, to know when it is blocked (the engine: its node's)",
                            DataRateValue(DataRate(d.link_bps)), MakeDataRateAccessor(&TlChuTQQueueDisc::m_linkRate),
                            MakeDataRateChecker());
      return AddChunkAttributes(t);
    }();
    return tid;
  }

 protected:
  tracelab::ChuTQConfig MakeConfig() const override {
    tracelab::ChuTQConfig c;
    FillChunk(c);
    c.policy = m_policy;
    c.timers = ParseTimes(m_timers, "Timers", true);
    c.cea = m_cea;
    c.expired_first = m_expired == ExpiredOrder::kFirst;
    c.link_bps = m_linkRate.GetBitRate();
    return c;
  }

 private:
  tracelab::ChuTQPolicy m_policy = tracelab::ChuTQPolicy::kDCF;
  std::string m_timers;
  bool m_cea = false;
  ExpiredOrder m_expired = ExpiredOrder::kFirst;
  DataRate m_linkRate;
};
NS_OBJECT_ENSURE_REGISTERED(TlChuTQQueueDisc);

// --- the de-chunker ------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(TlDechunkProtocol);

TypeId TlDechunkProtocol::GetTypeId() {
  static TypeId tid = TypeId("ns3::TlDechunkProtocol").SetParent<IpL4Protocol>().SetGroupName("TrafficControl");
  return tid;
}

void TlDechunkProtocol::DoDispose() {
  m_node = nullptr;
  m_down = DownTargetCallback();
  m_down6 = DownTargetCallback6();
  IpL4Protocol::DoDispose();
}

IpL4Protocol::RxStatus TlDechunkProtocol::Receive(Ptr<Packet> p, const Ipv4Header&, Ptr<Ipv4Interface>) {
  std::vector<uint8_t> buf(p->GetSize());
  p->CopyData(buf.data(), buf.size());
  tracelab::jg::View v;
  if (tracelab::jg::parse(buf.data(), buf.size(), v) != tracelab::jg::FormatError::kOk) {
    ++malformed;
    return RX_CSUM_FAILED;
  }
  ++chunks;
  Ptr<Ipv4L3Protocol> ipv4 = m_node->GetObject<Ipv4L3Protocol>();
  size_t off = tracelab::jg::header_size(v.n);
  for (size_t i = 0; i < v.n; ++i) {
    const uint16_t len = v.pkt_len(i);
    if (len == 0) continue;  // removed by a partial drop
    Ptr<Packet> q = Create<Packet>(buf.data() + off, len);
    off += len;
    Ipv4Header h;
    q->RemoveHeader(h);
    Socket::SocketErrno err;
    Ptr<Ipv4Route> route = ipv4->GetRoutingProtocol()->RouteOutput(q, h, nullptr, err);
    if (!route) {
      ++unroutable;
      continue;
    }
    ++packets;
    ipv4->SendWithHeader(q, h, route);
  }
  return RX_OK;
}

Ptr<TlDechunkProtocol> TlInstallDechunker(Ptr<Node> node) {
  Ptr<TlDechunkProtocol> d = CreateObject<TlDechunkProtocol>();
  d->SetNode(node);
  Ptr<Ipv4L3Protocol> ipv4 = node->GetObject<Ipv4L3Protocol>();
  NS_ABORT_MSG_IF(!ipv4, "TlInstallDechunker: the node has no IPv4 stack");
  ipv4->Insert(d);
  return d;
}

// --- the engine spec string ----------------------------------------------------

namespace {

const std::pair<const char*, const char*> kElements[] = {
    {"fifo", "ns3::TlFifoQueueDisc"},         {"efd", "ns3::TlEfdQueueDisc"},
    {"befd", "ns3::TlEfdQueueDisc"},          {"pefd", "ns3::TlPefdQueueDisc"},
    {"efdack", "ns3::TlEfdAckQueueDisc"},     {"run2c", "ns3::TlRun2cQueueDisc"},
    {"run2cack", "ns3::TlRun2cAckQueueDisc"}, {"sift", "ns3::TlSiftQueueDisc"},
    {"xprotect", "ns3::TlXProtectQueueDisc"}, {"las", "ns3::TlLasQueueDisc"},
    {"lasack", "ns3::TlLasAckQueueDisc"},     {"lars", "ns3::TlLarsQueueDisc"},
    {"scfq", "ns3::TlScfqQueueDisc"},         {"ncq", "ns3::TlNcqQueueDisc"},
    {"ncqplus", "ns3::TlNcqPlusQueueDisc"},   {"mtqqtl", "ns3::TlMtqQtlQueueDisc"},
    {"basicq", "ns3::TlBasiCQQueueDisc"},     {"chumq", "ns3::TlChuMQQueueDisc"},
    {"chutq", "ns3::TlChuTQQueueDisc"},       {"jumbogenred", "ns3::TlJumboGenRedQueueDisc"},
};

// push_out -> PushOut, p_ins -> PIns, th -> Th.
std::string Camel(const std::string& key) {
  std::string out;
  bool up = true;
  for (char c : key) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

}  // namespace

TlSpec TlParseSpec(const std::string& text, uint64_t link_bps) {
  // The syntax is the engine's, parsed by the same code (core/spec.hh):
  // names, keys, quoted and nested values, the column of a syntax error.
  tracelab::Spec parsed;
  try {
    parsed = tracelab::Spec::parse(text);
  } catch (const tracelab::SpecError& e) {
    throw std::invalid_argument(e.what());
  }
  const std::string& name = parsed.name();
  TlSpec spec;
  for (const auto& e : kElements)
    if (name == e.first) spec.type_name = e.second;
  if (spec.type_name.empty()) throw std::invalid_argument("unknown element '" + name + "' in '" + text + "'");
  bool in_service_given = false;
  for (const auto& [key, given] : parsed.params()) {
    std::string value = given;
    in_service_given |= key == "in_service";
    if (key == "in_service" && name == "mtqqtl") {
      // a flag here (count the residual of the packet in service)
    } else if (key == "in_service") {
      const bool on = value == "1" || value == "true";
      value = std::to_string(on ? link_bps : 0) + "bps";
    } else if (value == "never") {
      value = "0s";
    } else if (key == "table_seed") {
      // UintegerValue reads decimal only; the grammar also takes 0x hex.
      uint64_t seed = 0;
      if (!tracelab::parse_seed(value, seed))
        throw std::invalid_argument(name + ": bad value '" + value + "' for TableSeed in '" + text +
                                    "' (a 64-bit value, decimal or 0x hex)");
      value = std::to_string(seed);
    }
    spec.attributes.emplace_back(Camel(key), value);
  }
  // The engine's default (algorithms.md §2): the packet on the wire stays
  // counted in the buffer until its transmission at the node's rate ends.
  TypeId::AttributeInformation in_service;
  if (!in_service_given && name != "mtqqtl" && link_bps &&
      TypeId::LookupByName(spec.type_name).LookupAttributeByName("InService", &in_service))
    spec.attributes.emplace_back("InService", std::to_string(link_bps) + "bps");
  // MTQ/QTL estimates the local delay at its node's link rate, as the engine.
  // So does ChuTQ, to know when its link is blocked.
  if ((name == "mtqqtl" || name == "chutq") && link_bps)
    spec.attributes.emplace_back("LinkRate", std::to_string(link_bps) + "bps");
  // Check every key and value now, with the element's own names in the
  // message (ns-3 would abort on the first one it cannot set).
  const TypeId tid = TypeId::LookupByName(spec.type_name);
  for (const auto& [attr, value] : spec.attributes) {
    TypeId::AttributeInformation info;
    if (!tid.LookupAttributeByName(attr, &info)) {
      std::string known;
      for (TypeId t = tid; t.GetParent() != t && t != QueueDisc::GetTypeId(); t = t.GetParent())
        for (uint32_t i = 0; i < t.GetAttributeN(); ++i) known += (known.empty() ? "" : ", ") + t.GetAttribute(i).name;
      throw std::invalid_argument(name + ": unknown parameter '" + attr + "' in '" + text + "' (" + spec.type_name +
                                  " has: " + known + ")");
    }
    // UintegerValue aborts on a malformed number: check it here.
    const bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    if ((info.checker->GetValueTypeName() == "ns3::UintegerValue" && !digits) ||
        !info.checker->CreateValidValue(StringValue(value)))
      throw std::invalid_argument(name + ": bad value '" + value + "' for " + attr + " in '" + text + "'");
  }
  return spec;
}

ObjectFactory TlSpecFactory(const TlSpec& spec) {
  ObjectFactory f;
  f.SetTypeId(spec.type_name);
  for (const auto& [k, v] : spec.attributes) f.Set(k, StringValue(v));
  return f;
}

std::vector<std::pair<std::string, std::string>> TlKnownElements() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : kElements) out.emplace_back(e.first, e.second);
  return out;
}

}  // namespace ns3
