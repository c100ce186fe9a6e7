// JumboGen's edge routers in ns-3 (docs/reference/algorithms.md §5.1, §5.2,
// §5.4; [002 §2-§3]): thin adapters over the cores, no mechanism written
// again.
//
// * TlJumboGenIngressQueueDisc, the root queue disc of an ingress edge's
//   device towards the core: tracelab::JumboGenIngress (jumbogen.hh: one
//   aggregation queue per egress point, the JFET, the JumboGen MTU, ⚠AMB-14's
//   early release) decides; each released JumboGram leaves as one IPv4
//   packet of protocol TlChunkItem::kProtocol whose payload is the
//   chunk_format.hh encoding of the carried packets (each with its IPv4
//   header), so TlJumboGenRedQueueDisc in the core reads and cuts it.
//   The aggregation key is the egress point ([002 fn.3]): AddEgress() maps a
//   destination network to the address of the egress edge, which is the
//   JumboGram's outer destination; the rest of the outer header is the
//   first carried packet's (its source), ECN-capable (ECT(0), [002 §3.3]).
//   A destination outside every added network is its own key and outer
//   destination (the spec's plain copy of the first packet's header).
// * TlJumboGenEgress, the IPv4 protocol of that number on an egress edge:
//   tracelab::Dechunker splits each JumboGram (skipping entries a partial
//   drop removed), tracelab::EgressShaper holds the packets until their
//   release time (shaping on: the spacing they had at the ingress, [002
//   §2.4]; off: all at once) and each is then forwarded along the node's
//   routes unchanged (the JumboGram's hop counted).
//
// Both ends agree on the time unit of QTime/pQTime (TimeUnit, 1 us: the
// ⚠AMB-15 suggestion). Not implemented: setting ECN-CE on carried packets
// of a JumboGram that lost entries ([002 §3.3] "may").
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ns3/event-id.h"
#include "ns3/ip-l4-protocol.h"
#include "ns3/ipv4-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/node.h"

#include "dechunk.hh"
#include "jumbogen.hh"
#include "tl-queue-disc.hh"

namespace ns3 {

class TlJumboGenIngressQueueDisc final : public TlQueueDisc<tracelab::JumboGenIngress, tracelab::JumboGenConfig> {
 public:
  static TypeId GetTypeId();
  // Packets to `network`/`mask` share the aggregation queues of `egress`
  // (a node running TlJumboGenEgress) and are addressed to it.
  void AddEgress(Ipv4Address network, Ipv4Mask mask, Ipv4Address egress);
  // The core's JumboGram counts (valid after initialization).
  const tracelab::JumboGenStats& GetJumboStats() const;
  // QTime of every JumboGram released so far, seconds: sum and maximum.
  double GetQTimeSum() const { return m_qtimeSum; }
  double GetQTimeMax() const { return m_qtimeMax; }

 protected:
  tracelab::JumboGenConfig MakeConfig() const override;
  void Offer(Ptr<const QueueDiscItem> item, const tracelab::Packet& p, tracelab::Time now) override;
  uint32_t BatchCapacity() const override;
  Ptr<QueueDiscItem> Output(std::vector<Ptr<QueueDiscItem>>& items, const tracelab::Batch& batch,
                            tracelab::Time now) override;

 private:
  struct Egress {
    Ipv4Address network;
    Ipv4Mask mask;
    Ipv4Address address;
  };
  const Egress* Find(Ipv4Address dst) const;

  uint32_t m_mtu = 8192;
  Time m_jfet;
  bool m_earlyRelease = false;
  uint32_t m_queues = 64;
  Time m_unit;
  std::vector<Egress> m_egress;
  std::vector<std::vector<uint8_t>> m_bytes;  // per carried packet, reused
  std::vector<tracelab::jg::PacketRef> m_refs;
  std::vector<uint8_t> m_out;
  double m_qtimeSum = 0, m_qtimeMax = 0;
};

class TlJumboGenEgress : public IpL4Protocol {
 public:
  static TypeId GetTypeId();
  TlJumboGenEgress();
  void SetNode(Ptr<Node> node) { m_node = node; }
  int GetProtocolNumber() const override { return TlChunkItem::kProtocol; }
  RxStatus Receive(Ptr<Packet> p, const Ipv4Header& header, Ptr<Ipv4Interface> incoming) override;
  RxStatus Receive(Ptr<Packet>, const Ipv6Header&, Ptr<Ipv6Interface>) override { return RX_ENDPOINT_UNREACH; }
  void SetDownTarget(DownTargetCallback cb) override { m_down = cb; }
  void SetDownTarget6(DownTargetCallback6 cb) override { m_down6 = cb; }
  DownTargetCallback GetDownTarget() const override { return m_down; }
  DownTargetCallback6 GetDownTarget6() const override { return m_down6; }
  const tracelab::Counters& GetShaperCounters() const { return m_shaper->counters(); }

  // JumboGrams split; packets forwarded; entries a partial drop removed;
  // packets the full shaper dropped.
  uint64_t jumbograms = 0, packets = 0, missing = 0, malformed = 0, unroutable = 0, dropped = 0;
  double hold_sum = 0;  // seconds packets waited in the shaper

 protected:
  void DoDispose() override;

 private:
  struct Held {
    Ptr<Packet> packet;
    Ipv4Header header;
  };
  void Build();
  void Release();
  void Forward(Held& h);

  bool m_shaping = true;
  Time m_unit;
  uint32_t m_capacity = 65536;
  Ptr<Node> m_node;
  DownTargetCallback m_down;
  DownTargetCallback6 m_down6;
  std::unique_ptr<tracelab::Dechunker> m_split;
  std::unique_ptr<tracelab::EgressShaper> m_shaper;
  std::vector<Held> m_held;  // by handle
  std::vector<uint32_t> m_free;
  std::vector<uint8_t> m_buf;
  std::vector<tracelab::SplitPacket> m_parts;
  tracelab::Batch m_batch;
  tracelab::Packet m_one;
  EventId m_wake;
};

// A TlJumboGenEgress on `node` (which has an IPv4 stack), shaping or not.
Ptr<TlJumboGenEgress> TlInstallJumboGenEgress(Ptr<Node> node, bool shaping);

}  // namespace ns3
