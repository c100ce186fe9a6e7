// JumboGen's edge routers in ns-3: see tl-jumbogen-edge.hh.
#include "tl-jumbogen-edge.hh"

#include <algorithm>
#include <string>

#include "ns3/boolean.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/uinteger.h"

#include "chunk_format.hh"

namespace ns3 {

// --- ingress --------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(TlJumboGenIngressQueueDisc);

TypeId TlJumboGenIngressQueueDisc::GetTypeId() {
  static TypeId tid = [] {
    using Self = TlJumboGenIngressQueueDisc;
    const tracelab::JumboGenConfig d;
    return TypeId("ns3::TlJumboGenIngressQueueDisc")
        .SetParent<TlCoreQueueDisc>()
        .SetGroupName("TrafficControl")
        .AddConstructor<Self>()
        .AddAttribute("Mtu", "mtu: JumboGen MTU, bytes (outer IPv4 header + 6 + 4N + the packets)",
                      UintegerValue(d.mtu), MakeUintegerAccessor(&Self::m_mtu),
                      MakeUintegerChecker<uint32_t>(64, 65535))
        .AddAttribute("Jfet", "jfet: JumboGen frame encapsulation timer", TimeValue(MilliSeconds(1)),
                      MakeTimeAccessor(&Self::m_jfet), MakeTimeChecker())
        .AddAttribute("EarlyRelease", "early_release_when_full (AMB-14): release a full JumboGram at once",
                      BooleanValue(d.early_release_when_full), MakeBooleanAccessor(&Self::m_earlyRelease),
                      MakeBooleanChecker())
        .AddAttribute("Queues", "queues: aggregation queue slots (egress points x classes)", UintegerValue(d.queues),
                      MakeUintegerAccessor(&Self::m_queues), MakeUintegerChecker<uint32_t>(1, 65536))
        .AddAttribute("Capacity", "capacity: packets held in all queues", UintegerValue(d.capacity_packets),
                      MakeUintegerAccessor(&Self::m_capacity), MakeUintegerChecker<uint64_t>(1, 1u << 24))
        .AddAttribute("TimeUnit", "unit of the JumboGram's QTime fields (the egress must use the same)",
                      TimeValue(MicroSeconds(1)), MakeTimeAccessor(&Self::m_unit), MakeTimeChecker());
  }();
  return tid;
}

void TlJumboGenIngressQueueDisc::AddEgress(Ipv4Address network, Ipv4Mask mask, Ipv4Address egress) {
  m_egress.push_back(Egress{network.CombineMask(mask), mask, egress});
}

const tracelab::JumboGenStats& TlJumboGenIngressQueueDisc::GetJumboStats() const {
  NS_ABORT_MSG_IF(!m_mech, "TlJumboGenIngressQueueDisc: not initialized");
  return m_mech->stats();
}

const TlJumboGenIngressQueueDisc::Egress* TlJumboGenIngressQueueDisc::Find(Ipv4Address dst) const {
  for (const Egress& e : m_egress)
    if (dst.CombineMask(e.mask) == e.network) return &e;
  return nullptr;
}

tracelab::JumboGenConfig TlJumboGenIngressQueueDisc::MakeConfig() const {
  tracelab::JumboGenConfig c;
  c.mtu = m_mtu;
  c.jfet = ToCoreTime(m_jfet);
  c.early_release_when_full = m_earlyRelease;
  c.queues = m_queues;
  c.capacity_packets = m_capacity ? m_capacity : c.capacity_packets;
  m_buffer.capacity = c.capacity_packets;  // for GetMaxSize()
  m_buffer.granularity = tracelab::Granularity::kPackets;
  return c;
}

// The key of the aggregation queue: the egress point's address, or the
// destination itself when no egress network holds it.
void TlJumboGenIngressQueueDisc::Offer(Ptr<const QueueDiscItem> item, const tracelab::Packet& p, tracelab::Time now) {
  Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
  uint64_t key = 0;
  if (ip) {
    const Ipv4Address dst = ip->GetHeader().GetDestination();
    const Egress* e = Find(dst);
    key = e ? e->address.Get() : dst.Get();
  }
  m_mech->enqueue_to(p, key, now);
}

uint32_t TlJumboGenIngressQueueDisc::BatchCapacity() const { return m_mech ? m_mech->max_batch() : m_mtu / 5; }

Ptr<QueueDiscItem> TlJumboGenIngressQueueDisc::Output(std::vector<Ptr<QueueDiscItem>>& items,
                                                      const tracelab::Batch& batch, tracelab::Time) {
  if (m_bytes.size() < items.size()) m_bytes.resize(items.size());
  m_refs.resize(items.size());
  size_t total = tracelab::jg::header_size(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    Ptr<Packet> c = items[i]->GetPacket()->Copy();
    if (Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(items[i])) c->AddHeader(ip->GetHeader());
    m_bytes[i].resize(c->GetSize());
    c->CopyData(m_bytes[i].data(), m_bytes[i].size());
    m_refs[i] = tracelab::jg::PacketRef{m_bytes[i].data(), m_bytes[i].size(), batch.packets[i].arrival};
    total += m_bytes[i].size();
  }
  const tracelab::Time released = m_mech->last_released();
  const double qtime = double(released - batch.packets[0].arrival) * 1e-12;
  m_qtimeSum += qtime;
  m_qtimeMax = std::max(m_qtimeMax, qtime);
  m_out.resize(total);
  tracelab::jg::FormatError err;
  const size_t n = tracelab::jg::encode(m_refs.data(), m_refs.size(), released, m_unit.GetPicoSeconds(), m_out.data(),
                                        m_out.size(), err);
  NS_ABORT_MSG_IF(n == 0, "JumboGram encoding failed: " << tracelab::jg::format_error_name(err));
  Ipv4Header h;
  Ptr<Ipv4QueueDiscItem> first = DynamicCast<Ipv4QueueDiscItem>(items[0]);
  Ipv4Address dst;
  if (first) {
    h.SetSource(first->GetHeader().GetSource());
    dst = first->GetHeader().GetDestination();
    if (const Egress* e = Find(dst)) dst = e->address;
  }
  h.SetDestination(dst);
  h.SetProtocol(TlChunkItem::kProtocol);
  h.SetTtl(64);
  h.SetEcn(Ipv4Header::ECN_ECT0);
  h.SetPayloadSize(static_cast<uint16_t>(n));
  return Create<TlChunkItem>(Create<Packet>(m_out.data(), n), h, items);
}

// --- egress ---------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(TlJumboGenEgress);

TypeId TlJumboGenEgress::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::TlJumboGenEgress")
          .SetParent<IpL4Protocol>()
          .SetGroupName("TrafficControl")
          .AddConstructor<TlJumboGenEgress>()
          .AddAttribute("Shaping", "release the packets with their ingress spacing (false: all at once)",
                        BooleanValue(true), MakeBooleanAccessor(&TlJumboGenEgress::m_shaping), MakeBooleanChecker())
          .AddAttribute("TimeUnit", "unit of the JumboGram's QTime fields (the ingress's)", TimeValue(MicroSeconds(1)),
                        MakeTimeAccessor(&TlJumboGenEgress::m_unit), MakeTimeChecker())
          .AddAttribute("Capacity", "packets the shaper holds (drop-tail)", UintegerValue(65536),
                        MakeUintegerAccessor(&TlJumboGenEgress::m_capacity),
                        MakeUintegerChecker<uint32_t>(1, 1u << 24));
  return tid;
}

TlJumboGenEgress::TlJumboGenEgress() { m_batch.packets = &m_one, m_batch.capacity = 1; }

void TlJumboGenEgress::DoDispose() {
  m_wake.Cancel();
  m_held.clear();
  m_node = nullptr;
  m_down = DownTargetCallback();
  m_down6 = DownTargetCallback6();
  IpL4Protocol::DoDispose();
}

void TlJumboGenEgress::Build() {
  m_split = std::make_unique<tracelab::Dechunker>(m_shaping, m_unit.GetPicoSeconds());
  m_shaper = std::make_unique<tracelab::EgressShaper>(m_capacity);
  m_held.resize(m_capacity);
  m_free.clear();
  for (uint32_t i = m_capacity; i-- > 0;) m_free.push_back(i);
}

IpL4Protocol::RxStatus TlJumboGenEgress::Receive(Ptr<Packet> p, const Ipv4Header&, Ptr<Ipv4Interface>) {
  if (!m_split) Build();
  const tracelab::Time now = Simulator::Now().GetPicoSeconds();
  m_buf.resize(p->GetSize());
  p->CopyData(m_buf.data(), m_buf.size());
  tracelab::jg::View v;
  if (tracelab::jg::parse(m_buf.data(), m_buf.size(), v) != tracelab::jg::FormatError::kOk) {
    ++malformed;
    return RX_CSUM_FAILED;
  }
  m_parts.resize(v.n);
  const tracelab::SplitResult r = m_split->split(m_buf.data(), m_buf.size(), now, m_parts.data(), m_parts.size());
  if (r.error != tracelab::jg::FormatError::kOk) {
    ++malformed;
    return RX_CSUM_FAILED;
  }
  ++jumbograms;
  missing += r.missing;
  for (size_t i = 0; i < r.count; ++i) {
    const tracelab::SplitPacket& s = m_parts[i];
    if (m_free.empty()) {  // the shaper is full: drop-tail
      ++dropped;
      continue;
    }
    const uint32_t slot = m_free.back();
    m_free.pop_back();
    Held& h = m_held[slot];
    h.packet = Create<Packet>(m_buf.data() + s.offset, s.length);
    h.packet->RemoveHeader(h.header);
    tracelab::Packet q;
    q.handle = slot;
    q.length = s.length;
    m_shaper->enqueue_at(q, s.release, now);
  }
  Release();
  return RX_OK;
}

void TlJumboGenEgress::Release() {
  const tracelab::Time now = Simulator::Now().GetPicoSeconds();
  while (m_shaper->dequeue(now, m_batch)) {
    const uint32_t slot = static_cast<uint32_t>(m_one.handle);
    hold_sum += double(now - m_one.arrival) * 1e-12;
    Forward(m_held[slot]);
    m_held[slot] = Held{};
    m_free.push_back(slot);
  }
  const tracelab::Time next = m_shaper->next_ready(now);
  if (next == tracelab::kNever || m_wake.IsPending()) return;
  m_wake = Simulator::Schedule(PicoSeconds(next - now), &TlJumboGenEgress::Release, this);
}

void TlJumboGenEgress::Forward(Held& h) {
  Ptr<Ipv4L3Protocol> ipv4 = m_node->GetObject<Ipv4L3Protocol>();
  Socket::SocketErrno err;
  Ptr<Ipv4Route> route = ipv4->GetRoutingProtocol()->RouteOutput(h.packet, h.header, nullptr, err);
  if (!route) {
    ++unroutable;
    return;
  }
  ++packets;
  ipv4->SendWithHeader(h.packet, h.header, route);
}

Ptr<TlJumboGenEgress> TlInstallJumboGenEgress(Ptr<Node> node, bool shaping) {
  Ptr<TlJumboGenEgress> e = CreateObject<TlJumboGenEgress>();
  e->SetAttribute("Shaping", BooleanValue(shaping));
  e->SetNode(node);
  Ptr<Ipv4L3Protocol> ipv4 = node->GetObject<Ipv4L3Protocol>();
  NS_ABORT_MSG_IF(!ipv4, "TlInstallJumboGenEgress: the node has no IPv4 stack");
  ipv4->Insert(e);
  return e;
}

}  // namespace ns3
