// tracelab queueing cores as ns-3 queue discs: thin adapters over the
// header-only cores of click-elements/core (no mechanism is written again).
//
// TlCoreQueueDisc is the part every queue disc shares (like the Click
// package's TLCoreQueue): it turns a QueueDiscItem into the core's
// Packet (tracelab::describe_ipv4, the same bytes-to-metadata function the
// Click elements use), offers it to the core, and maps every decision back
// to ns-3:
//   * the arrival is admitted  -> it enters the internal item store
//                                 (QueueDisc "Enqueue", PacketsInQueue);
//   * the arrival is dropped   -> DropBeforeEnqueue(item, reason);
//   * a queued packet is pushed out or expires
//                              -> it leaves the store ("Dequeue" of the
//                                 store) and DropAfterDequeue(item, reason);
//   * the core serves a packet -> DoDequeue returns it (a chunking core's
//                                 batch: one TlChunkItem carrying them).
// The reason strings are the core's (drop_reason_name: buffer_full,
// pushed_out, early_discard, budget_expired). Time is Simulator::Now() in
// picoseconds. The store keeps the items in no particular order: the core
// alone decides what leaves and when.
//
// One class per mechanism, each with the engine spec parser's parameters as
// attributes (the engine key in CamelCase: th -> Th, push_out -> PushOut),
// the same units and defaults (replay/engine/src/elements.cc); see
// click-elements/ns3/README.md for the table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ns3/data-rate.h"
#include "ns3/fatal-error.h"
#include "ns3/ip-l4-protocol.h"
#include "ns3/node.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/queue-disc.h"
#include "ns3/queue.h"
#include "ns3/tag.h"
#include "ns3/traced-value.h"

#include "efd.hh"
#include "efd_flow_table.hh"
#include "fifo_buffer.hh"
#include "mtq_qtl_header.hh"
#include "param_checks.hh"
#include "queue_core.hh"

namespace ns3 {

// The internal queue of a TlCoreQueueDisc: a bag of the admitted items,
// each found again through the iterator kept with its core handle. Only the
// queue disc puts items in and takes them out; it exists so that ns-3's own
// queue disc statistics and traces (Enqueue, Dequeue, PacketsInQueue,
// BytesInQueue, SojournTime) count what the core holds.
class TlItemStore : public Queue<QueueDiscItem> {
 public:
  static TypeId GetTypeId();
  using Where = Queue<QueueDiscItem>::Iterator;

  bool Put(Ptr<QueueDiscItem> item, Where& where) { return DoEnqueue(GetContainer().end(), item, where); }
  Ptr<QueueDiscItem> Take(Where where) { return DoDequeue(where); }

  // The generic Queue interface (not used by the queue disc).
  bool Enqueue(Ptr<QueueDiscItem> item) override { return DoEnqueue(GetContainer().end(), item); }
  Ptr<QueueDiscItem> Dequeue() override { return DoDequeue(GetContainer().begin()); }
  Ptr<QueueDiscItem> Remove() override { return DoRemove(GetContainer().begin()); }
  Ptr<const QueueDiscItem> Peek() const override { return DoPeek(GetContainer().begin()); }
};

// Fill `p` (length, hashes, TCP fields and flags) from an ns-3 item the way
// the Click elements do from the IP bytes: an Ipv4QueueDiscItem is
// serialized (IPv4 header + the first 60 bytes of its payload) and handed
// to tracelab::describe_ipv4; an Ipv6QueueDiscItem is keyed the same way by
// its directional 5-tuple (128-bit addresses, ports and transport protocol
// after the extension headers; the flow label aside); any other item is one
// flow (hash 0) of its size.
void TlDescribeItem(Ptr<const QueueDiscItem> item, tracelab::Packet& p);

// The MTQ and QTL header fields of [004] (algorithms.md §7) on an ns-3
// packet: ns-3's TCP/IP stack adds no such IPv6 option, so a packet tag
// carries the same fields (mtq_qtl_header.hh: MTQ whole microseconds, QTL
// nanoseconds, absent = all ones). Whoever marks the packets (an
// application, a marker at the ingress) adds it; TlMtqQtlQueueDisc reads
// it on arrival and writes the decreased QTL back when it serves the packet.
class TlMtqQtlTag : public Tag {
 public:
  static TypeId GetTypeId();
  TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  uint32_t GetSerializedSize() const override { return 6; }
  void Serialize(TagBuffer i) const override;
  void Deserialize(TagBuffer i) override;
  void Print(std::ostream& os) const override;

  tracelab::mq::Fields fields;
};

class TlCoreQueueDisc : public QueueDisc {
 public:
  static TypeId GetTypeId();
  TlCoreQueueDisc();
  ~TlCoreQueueDisc() override;

  // The core's counters (offered, enqueued, served, dropped by reason,
  // highwater); valid after initialization.
  const tracelab::Counters& GetCounters() const;
  const tracelab::QueueCore* GetCore() const { return m_core.get(); }
  // Flow-table entries now and at most (0 for cores without a table).
  uint32_t GetFlows() const;
  uint32_t GetFlowsHighwater() const;
  // The flow table's longest probe now: the most entries one lookup walks
  // (0 without a table). It shows TableSeed at work (keys sharing a bucket
  // under one seed spread under another); no decision depends on it.
  // Walked when asked, nothing per packet.
  uint32_t GetTableLongestProbe() const;

  // The attribute registrars the mechanisms share (engine defaults unless
  // given): the buffer (capacity, granularity, full_test, min_packet,
  // in_service), the two-level queue (push_out, precheck, high, low) and the
  // flow-state table (max_flows, gc, idle, table_seed) and the table seed
  // alone (EFD's and SCFQ's tables, which have no idle scan).
  static TypeId& AddBufferAttributes(TypeId& tid);
  static TypeId& AddTwoLevelAttributes(TypeId& tid, bool push_out);
  static TypeId& AddFlowAttributes(TypeId& tid, const tracelab::FlowStateConfig& defaults);
  static TypeId& AddTableSeedAttribute(TypeId& tid);

 protected:
  void DoDispose() override;
  // Build the core from the attributes (called once, at initialization).
  virtual std::unique_ptr<tracelab::QueueCore> MakeCore() = 0;
  virtual uint32_t CoreFlows() const { return 0; }
  virtual uint32_t CoreFlowsHighwater() const { return 0; }
  virtual uint32_t CoreTableLongestProbe() const { return 0; }
  // The core's view of an arriving item (default: TlDescribeItem), and what
  // the core changed in a served packet, to write back (default: nothing).
  virtual void Describe(Ptr<const QueueDiscItem> item, tracelab::Packet& p) const { TlDescribeItem(item, p); }
  // Offer the arrival to the core (default: QueueCore::enqueue); a core with
  // another entry point for some items (JumboGen RED's JumboGrams) overrides it.
  virtual void Offer(Ptr<const QueueDiscItem>, const tracelab::Packet& p, tracelab::Time now) {
    m_core->enqueue(p, now);
  }
  virtual void OnServed(Ptr<QueueDiscItem>, const tracelab::Packet&) {}
  // Packets one dequeue may hand over (a chunking core's chunk: more than
  // one), and the item that leaves for them (default: the one packet).
  virtual uint32_t BatchCapacity() const { return 1; }
  virtual Ptr<QueueDiscItem> Output(std::vector<Ptr<QueueDiscItem>>& items, const tracelab::Batch& batch,
                                    tracelab::Time now);

  // The configuration pieces the attributes describe.
  tracelab::BufferConfig BufferSettings(uint64_t default_packets = 300) const;
  tracelab::TwoLevelConfig TwoLevelSettings(uint64_t default_packets = 300) const;
  tracelab::FlowStateConfig FlowSettings() const;
  static tracelab::Time ToCoreTime(Time t);      // ns-3 Time -> ps
  static tracelab::Time ToCoreDuration(Time t);  // the same, 0 = never
  static Time FromCoreTime(tracelab::Time t);    // ps -> ns-3 Time

  // Attributes (members so that every registrar can point at them).
  uint64_t m_capacity = 0;  // 0: the mechanism's default (see BufferSettings)
  tracelab::Granularity m_granularity = tracelab::Granularity::kPackets;
  tracelab::FullTest m_fullTest = tracelab::FullTest::kWouldOverflow;
  uint32_t m_minPacket = 40;
  // InService's default is no rate but "the rate of the device this queue
  // disc is installed on", resolved at initialization (ResolveInService):
  // a queue disc built by TypeId then counts the packet in transmission as
  // the spec does (algorithms.md §2), as TlParseSpec's does. No link runs
  // at 2^64-1 b/s, so the value cannot be one a user meant.
  static constexpr uint64_t kInServiceDeviceRate = UINT64_MAX;
  DataRate m_inService{kInServiceDeviceRate};
  bool m_pushOut = true;
  bool m_precheck = false;
  tracelab::Discipline m_high = tracelab::Discipline::kFifo;
  tracelab::Discipline m_low = tracelab::Discipline::kFifo;
  uint32_t m_maxFlows = 1u << 16;
  Time m_gc;
  Time m_idle;
  uint64_t m_tableSeed = tracelab::kFlowTableSeed;
  mutable tracelab::BufferConfig m_buffer;  // the last BufferSettings(): the core's (GetMaxSize)

 private:
  class Sink;
  struct Slot {
    Ptr<QueueDiscItem> item;
    TlItemStore::Where where;
    bool stored = false;
  };

  bool DoEnqueue(Ptr<QueueDiscItem> item) override;
  Ptr<QueueDiscItem> DoDequeue() override;
  bool CheckConfig() override;
  void InitializeParams() override;
  // Replaces InService's default by the DataRate of the device the queue
  // disc is installed on (PointToPoint, CSMA); 0bps, with a warning, where
  // there is none. An InService the user set is left as set.
  void ResolveInService();

  void OnCoreDrop(const tracelab::Packet& p, tracelab::DropReason why);
  uint32_t Allocate(Ptr<QueueDiscItem> item);
  void Release(uint32_t slot);
  void NoteFlows();
  void Wake();

  std::unique_ptr<tracelab::QueueCore> m_core;
  std::unique_ptr<Sink> m_sink;
  Ptr<TlItemStore> m_store;
  std::vector<Slot> m_slots;
  std::vector<uint32_t> m_free;
  std::vector<tracelab::Packet> m_batchStorage;
  tracelab::Batch m_batch;
  uint64_t m_arriving = UINT64_MAX;  // the slot being offered
  bool m_arrivalDropped = false;
  EventId m_wake;
  tracelab::Time m_wakeAt = tracelab::kNever;
  std::vector<Ptr<QueueDiscItem>> m_out;
  TracedValue<uint32_t> m_flows;  // FlowTableSize
};

// What every chunking queue disc (TlBasiCQQueueDisc, TlChuMQQueueDisc,
// TlChuTQQueueDisc) is: a dequeue hands over one TlChunkItem.
class TlChunkQueueDisc : public TlCoreQueueDisc {
 public:
  static TypeId GetTypeId();
};

// The traffic class of a packet for the chunking queue discs (Packet::cls:
// which budget of their Budgets attribute applies); absent = class 0.
class TlClassTag : public Tag {
 public:
  static TypeId GetTypeId();
  TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  uint32_t GetSerializedSize() const override { return 1; }
  void Serialize(TagBuffer i) const override { i.WriteU8(cls); }
  void Deserialize(TagBuffer i) override { cls = i.ReadU8(); }
  void Print(std::ostream& os) const override { os << "cls=" << unsigned(cls); }

  uint8_t cls = 0;
};

// What a chunking queue disc hands the device for one chunk: an IPv4 packet
// (protocol TlChunkItem::kProtocol, to the de-chunking node) whose payload
// is the chunk in the chunk_format.hh encoding (the 6 + 4N-byte shim, then
// the packets, each with its IPv4 header). The items it carries stay
// reachable (GetInner) for tracing; TlDechunkProtocol splits the chunk at
// the receiving node.
class TlChunkItem : public Ipv4QueueDiscItem {
 public:
  static constexpr uint8_t kProtocol = 253;  // RFC 3692 experimentation
  TlChunkItem(Ptr<Packet> p, const Ipv4Header& h, std::vector<Ptr<QueueDiscItem>> inner)
      : Ipv4QueueDiscItem(p, Address(), 0x0800, h), m_inner(std::move(inner)) {}
  const std::vector<Ptr<QueueDiscItem>>& GetInner() const { return m_inner; }

 private:
  std::vector<Ptr<QueueDiscItem>> m_inner;
};

// The receiving end of a chunking queue disc: splits each chunk packet
// (protocol TlChunkItem::kProtocol, addressed to this node) with
// chunk_format.hh and forwards every packet it carries along this node's
// routes, unchanged (no TTL decrement: the chunk's hop counted). No
// egress shaping (dechunk.hh's EgressShaper), no local delivery of the
// carried packets. Install with TlInstallDechunker(node).
class TlDechunkProtocol : public IpL4Protocol {
 public:
  static TypeId GetTypeId();
  void SetNode(Ptr<Node> node) { m_node = node; }
  int GetProtocolNumber() const override { return TlChunkItem::kProtocol; }
  RxStatus Receive(Ptr<Packet> p, const Ipv4Header& header, Ptr<Ipv4Interface> incoming) override;
  RxStatus Receive(Ptr<Packet>, const Ipv6Header&, Ptr<Ipv6Interface>) override { return RX_ENDPOINT_UNREACH; }
  void SetDownTarget(DownTargetCallback cb) override { m_down = cb; }
  void SetDownTarget6(DownTargetCallback6 cb) override { m_down6 = cb; }
  DownTargetCallback GetDownTarget() const override { return m_down; }
  DownTargetCallback6 GetDownTarget6() const override { return m_down6; }

  uint64_t chunks = 0, packets = 0, malformed = 0, unroutable = 0;

 protected:
  void DoDispose() override;

 private:
  Ptr<Node> m_node;
  DownTargetCallback m_down;
  DownTargetCallback6 m_down6;
};
Ptr<TlDechunkProtocol> TlInstallDechunker(Ptr<Node> node);

// One queue disc per core: Core built from Config, which MakeConfig() fills
// from the attributes.
template <typename Core, typename Config, typename Base = TlCoreQueueDisc>
class TlQueueDisc : public Base {
 protected:
  virtual Config MakeConfig() const = 0;
  // A configuration outside the ranges of param_checks.hh is fatal, with
  // the message naming the parameter (NS_LOG_ERROR, CheckConfig()'s path
  // for a core's own invalid_argument, is silent in optimized builds).
  std::unique_ptr<tracelab::QueueCore> MakeCore() override {
    const Config cfg = MakeConfig();
    const std::string e = tracelab::check_params(cfg);
    if (!e.empty()) NS_FATAL_ERROR(this->GetInstanceTypeId().GetName() << ": " << e);
    auto core = std::make_unique<Core>(cfg);
    m_mech = core.get();
    return core;
  }
  uint32_t CoreFlows() const override {
    if constexpr (HasFlows::value) return m_mech ? m_mech->flows() : 0;
    else return 0;
  }
  uint32_t CoreFlowsHighwater() const override {
    if constexpr (HasFlows::value) return m_mech ? m_mech->flows_highwater() : 0;
    else return 0;
  }
  uint32_t CoreTableLongestProbe() const override {
    if constexpr (HasFlows::value) return m_mech ? m_mech->table_longest_probe() : 0;
    else return 0;
  }
  Core* m_mech = nullptr;  // owned by TlCoreQueueDisc

 private:
  template <typename C, typename = void>
  struct Flows : std::false_type {};
  template <typename C>
  struct Flows<C, std::void_t<decltype(&C::flows), decltype(&C::flows_highwater)>> : std::true_type {};
  using HasFlows = Flows<Core>;
};

// The engine's spec string (`efd(capacity=300, th=30000)`) as a queue disc
// type and attribute values: the element name selects the TypeId
// (TlKnownElements), each key the attribute of the same name in CamelCase.
// `in_service=1`, and its absence as in the engine (algorithms.md §2),
// becomes InService = `link_bps` (the engine uses its node's link rate;
// `in_service=0` gives 0bps; for mtqqtl it stays a flag, and LinkRate =
// `link_bps` is added), `idle=never` becomes Idle = 0s. The syntax is parsed by the
// engine's own parser (core/spec.hh): what the engine rejects as malformed
// is rejected here with the same message. Throws std::invalid_argument on
// a malformed spec, an unknown element, key or value.
struct TlSpec {
  std::string type_name;                                        // "ns3::TlEfdQueueDisc"
  std::vector<std::pair<std::string, std::string>> attributes;  // ("Th", "30000")
};
TlSpec TlParseSpec(const std::string& spec, uint64_t link_bps);
// The factory of that queue disc with those attributes set.
ObjectFactory TlSpecFactory(const TlSpec& spec);
// Every element name TlParseSpec knows, with its TypeId name.
std::vector<std::pair<std::string, std::string>> TlKnownElements();

}  // namespace ns3
