#include "engine.hh"

#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "basicq.hh"
#include "chumq.hh"
#include "chutq.hh"
#include "efd.hh"
#include "elements.hh"
#include "fifo.hh"
#include "lars.hh"
#include "las.hh"
#include "mtq_qtl.hh"
#include "ncq.hh"
#include "run2c.hh"
#include "scfq.hh"
#include "sift.hh"
#include "sources.hh"
#include "spec.hh"
#include "synthetic_sources.hh"
#include "xprotect.hh"

namespace tracelab::engine {

namespace {

// Growable FIFO ring: after it has grown to the run's peak, pushes and pops
// allocate nothing.
template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const T& front() const { return buf_[head_]; }
  void push(const T& v) {
    if (size_ > mask_) grow();
    buf_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  T pop() {
    T v = buf_[head_];
    head_ = (head_ + 1) & mask_;
    --size_;
    return v;
  }

 private:
  [[gnu::noinline]] void grow() {  // out of the flattened loops (see core_broke())
    std::vector<T> bigger(buf_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & mask_];
    buf_.swap(bigger);
    head_ = 0;
    mask_ = buf_.size() - 1;
  }
  std::vector<T> buf_ = std::vector<T>(64);
  size_t head_ = 0, size_ = 0, mask_ = 63;
};

// What the engine remembers of a packet while it is in the network; the
// core's Packet::handle is the index of this record. No uint8_t fields: a
// store through a character type may alias any object, so the compiler
// would reload every vector's pointer after writing one. engine_bench
// instructions/packet: efd 634 -> 629, fifo 512 -> 503, chutq 633 -> 637
// (code layout) (4eb5bcb; docs/performance-history.md, engine step 3).
struct Record {
  Time created = 0;
  Time node_arrival = 0;
  Time queued = 0;  // queueing delay accumulated over the nodes crossed so far
  uint64_t uid = 0;
  uint32_t length = 0;
  uint16_t cls = 0;
  uint16_t exit_node = 0;
  bool measured = false;
  bool in_use = false;
};

// A recorded packet's bytes, kept beside its Record only with out_pcap.
struct Frame {
  std::vector<uint8_t> bytes;  // the captured part
  uint32_t wire_len = 0;
};

struct InFlight {
  Time at;
  Packet pkt;
};

// A packet on its last link needs no more than its record: 16 bytes per
// delivery instead of a whole Packet.
struct Delivery {
  Time at;
  uint64_t slot;
};

// Cores that keep a flow table expose its size as flows().
template <class C, class = void>
struct HasFlows : std::false_type {};
template <class C>
struct HasFlows<C, std::void_t<decltype(std::declval<const C&>().flows())>> : std::true_type {};

}  // namespace

struct Engine::Impl {
  struct Node;

  // Routes a core's drops back to the engine with the node they happened at.
  struct Sink final : DropSink {
    Impl* engine = nullptr;
    uint32_t node = 0;
    void on_drop(const Packet& p, DropReason why, Time now) override { engine->dropped_at(node, p, why, now); }
  };

  struct Node {
    NodeConfig cfg;
    BuiltCore built;
    QueueCore* core = nullptr;
    Time link_free_at = 0;
    Time pull_at = kNever;
    Time ps_per_byte = 0;  // exact picoseconds per byte, or 0 if not whole
    // Otherwise the exact end of the last transmission is link_free_at - 1
    // + end_frac / rate when end_frac > 0: a transmission that follows back
    // to back continues from there, so a busy period of any length ends at
    // exactly ceil(start + 8e12 * bytes / rate), without per-packet rounding.
    uint64_t end_frac = 0;
    std::vector<Packet> storage;
    Batch batch;
    Ring<InFlight> inbound;     // on the wire from the previous node
    Ring<Delivery> delivering;  // on the wire from this node to their destination
    Sink sink;
    uint64_t offered = 0, transmissions = 0, tx_packets = 0, wire_bytes = 0;
    uint64_t min_tx = UINT64_MAX, max_tx = 0;
    Time busy = 0;
    __int128 queue_delay_sum = 0;
    LevelTracker table;
  };

  struct Pending {
    Arrival a;
    bool valid = false;
  };

  // What the ingress stamps on a packet of a class, looked up once per
  // packet from a table indexed by class instead of the configuration.
  struct Ingress {
    Time budget = kNever;
    uint16_t mtq = 0;
    uint8_t flags = 0;
  };

  RunConfig cfg;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<Pending> pending;
  std::vector<Time> source_at;  // next arrival of each source, kNever when exhausted
  Ingress ingress[256];
  std::vector<Record> recs;
  std::vector<uint32_t> free_slots;
  std::vector<Frame> frames;  // by record slot, only with out_pcap
  std::vector<ClassStats> class_stats;
  Detail detail;
  pcap_t* dead = nullptr;
  pcap_dumper_t* dumper = nullptr;
  int64_t epoch_ns = 0;
  bool have_epoch = false;
  WideTime idle_skipped = 0;  // see RunResult::idle_skipped
  bool ran = false;
  // One source into one node without out_pcap or per-packet detail: the
  // packet itself says all a record would (its node arrival is its
  // creation, its class and length are on it), so no records are kept and
  // a delivery is counted when its transmission starts (see pull()).
  bool lean = false;
  uint64_t offered = 0, delivered = 0, dropped = 0;
  Time first_arrival = kNever, last_arrival = 0, last_delivery = 0;

  explicit Impl(const RunConfig& c) : cfg(c) {
    if (cfg.nodes.empty()) throw SpecError("a run needs at least one node");
    if (cfg.nodes.size() > 255) throw SpecError("at most 255 nodes in series");
    if (cfg.sources.empty()) throw SpecError("a run needs at least one source");
    if (cfg.batch_capacity == 0) throw SpecError("batch_capacity must be positive");
    for (size_t k = 0; k < cfg.nodes.size(); ++k) {
      auto n = std::make_unique<Node>();
      n->cfg = cfg.nodes[k];
      if (n->cfg.rate_bps == 0) throw SpecError("node " + std::to_string(k) + ": link rate must be positive");
      n->built = make_core(n->cfg.element, NodeContext{n->cfg.rate_bps});
      n->core = n->built.core.get();
      if (8000000000000ULL % n->cfg.rate_bps == 0)
        n->ps_per_byte = static_cast<Time>(8000000000000ULL / n->cfg.rate_bps);
      n->storage.resize(cfg.batch_capacity);
      n->batch.packets = n->storage.data();
      n->batch.capacity = cfg.batch_capacity;
      n->sink.engine = this;
      n->sink.node = static_cast<uint32_t>(k);
      n->core->set_drop_sink(&n->sink);
      nodes.push_back(std::move(n));
    }
    int linktype = -2;
    for (size_t i = 0; i < cfg.sources.size(); ++i) {
      SourceContext ctx{cfg.nodes[0].rate_bps, cfg.seed, static_cast<uint32_t>(i),
                        static_cast<uint32_t>(cfg.nodes.size())};
      sources.push_back(make_source(cfg.sources[i], ctx));
      if (!sources.back()->bounded() && cfg.until == kNever)
        throw SpecError("source '" + cfg.sources[i] + "' never ends: give it stop= or count=, or set until");
      const int lt = sources.back()->linktype();
      if (!cfg.out_pcap.empty() && (lt < 0 || (linktype != -2 && lt != linktype)))
        throw SpecError("out_pcap needs every source to be a pcap of one link type ('" + cfg.sources[i] + "')");
      linktype = lt;
    }
    if (cfg.classes.size() > 256) throw SpecError("at most 256 classes");
    for (size_t c = 0; c < cfg.classes.size(); ++c) {
      const Time mtq = cfg.classes[c].mtq;
      // The MTQ header field carries whole microseconds (mtq_qtl.hh).
      if (mtq != kNever && (mtq % kMicrosecond != 0 || mtq / kMicrosecond >= 0xffff))
        throw SpecError("class " + std::to_string(c) + ": mtq must be whole microseconds below 65.535 ms");
      stats_for(static_cast<uint8_t>(c));
      const ClassConfig& cc = cfg.classes[c];
      Ingress& in = ingress[c];
      in.budget = cc.qtl != kNever ? cc.qtl : cc.budget;
      if (cc.qtl != kNever) in.flags |= kFlagHasQtl;
      if (mtq != kNever) {
        in.mtq = static_cast<uint16_t>(mtq / kMicrosecond);
        in.flags |= kFlagHasMtq;
      }
    }
    if (!cfg.out_pcap.empty()) {
      dead = pcap_open_dead_with_tstamp_precision(linktype, 262144, PCAP_TSTAMP_PRECISION_NANO);
      dumper = dead ? pcap_dump_open(dead, cfg.out_pcap.c_str()) : nullptr;
      if (!dumper)
        throw std::runtime_error("cannot write '" + cfg.out_pcap + "': " + (dead ? pcap_geterr(dead) : "pcap"));
    }
    pending.resize(sources.size());
    source_at.assign(sources.size(), kNever);
  }

  [[noreturn]] void throw_write_error(int err) const {
    throw std::runtime_error("cannot write '" + cfg.out_pcap + "': " + std::strerror(err));
  }

  ~Impl() {
    if (dumper) pcap_dump_close(dumper);
    if (dead) pcap_close(dead);
  }

  ClassStats& stats_for(uint8_t cls) {
    while (cls >= class_stats.size()) {
      class_stats.emplace_back(cfg.max_delay_samples);
      const size_t c = class_stats.size() - 1;
      class_stats.back().budget = c < cfg.classes.size() ? cfg.classes[c].budget : kNever;
    }
    return class_stats[cls];
  }

  uint32_t allocate() {
    if (free_slots.empty()) {
      recs.emplace_back();
      if (dumper) frames.emplace_back();
      return static_cast<uint32_t>(recs.size() - 1);
    }
    const uint32_t s = free_slots.back();
    free_slots.pop_back();
    return s;
  }
  void release(uint32_t slot) {
    recs[slot].in_use = false;
    free_slots.push_back(slot);
  }

  // Src: the source's type when the caller knows it (PacketSource is
  // `final`, so its next() is called directly and inlined), else Source.
  template <class Src = Source>
  void refill(size_t i) {
    pending[i].valid = static_cast<Src&>(*sources[i]).next(pending[i].a);
    source_at[i] = pending[i].valid ? pending[i].a.pkt.arrival : kNever;
  }

  // ------------------------------------------------------------ events
  //
  // The per-packet functions are templates on the core type. A run whose
  // nodes all hold FIFO, EFD or ChuTQ, and every lean single-node run
  // (run_lean: any core; every core is `final`), calls the core directly,
  // so the compiler inlines enqueue/dequeue/next_ready into the loop; any
  // other run uses Core = QueueCore and its virtual calls. Both do the
  // same thing.
  // engine_bench efd(capacity=300): 890 -> 769 instructions/packet
  // (76ac93a; docs/performance-history.md, engine step 2).

  template <class Core>
  static Core& core_of(Node& n) {
    return static_cast<Core&>(*n.core);
  }

  template <class Core>
  static void track_table(Node& n, Time now) {
    if constexpr (HasFlows<Core>::value) {
      n.table.set(now, static_cast<uint64_t>(core_of<Core>(n).flows()));
    } else if (n.built.flow_table_size) {
      n.table.set(now, n.built.flow_table_size());
    }
  }

  template <class Core>
  static void peak_table(Node& n) {
    if constexpr (HasFlows<Core>::value) {
      n.table.peak(static_cast<uint64_t>(core_of<Core>(n).flows()));
    } else if (n.built.flow_table_size) {
      n.table.peak(n.built.flow_table_size());
    }
  }

  // `p.arrival` is `now` already (the caller's): storing it here, just
  // before the core copies the packet with 16-byte loads, made each of
  // those loads wait for the 8-byte store instead of taking it from the
  // store buffer (a failed store forward). engine_bench CPU seconds for
  // 0.5 virtual s, min of 5 alternated runs: fifo 0.237 -> 0.234, las
  // 0.404 -> 0.396.
  template <class Core, bool Lean>
  void offer(uint32_t k, const Packet& p, Time now) {
    Node& n = *nodes[k];
    Core& core = core_of<Core>(n);
    if constexpr (!Lean) recs[p.handle].node_arrival = now;
    ++n.offered;
    core.enqueue(p, now);
    if (n.link_free_at > now) {
      track_table<Core>(n, now);
      // The link pulls when it is free; this packet may make that pull due
      // (nothing can be due earlier than the link-free instant).
      if (n.pull_at != n.link_free_at) schedule_pull<Core>(n);
      return;
    }
    // An idle link pulls at once: the same as a pull event at `now`, which
    // would be the next event anyway, without a trip through the loop.
    n.pull_at = core.next_ready(now);
    if (n.pull_at != now) {
      track_table<Core>(n, now);
      return;
    }
    // The pull records the table size at this same instant, so the size
    // after the enqueue was held for no time: only its peak counts.
    peak_table<Core>(n);
    pull<Core, Lean>(k, now);
  }

  template <class Core, bool Lean, class Src = Source>
  void from_source(size_t i, Time now) {
    Arrival& a = pending[i].a;
    Source& src = *sources[i];
    if (offered == 0) {
      first_arrival = now;
      for (auto& n : nodes) n->table.start(now);
    }
    last_arrival = now;
    const bool measured = is_measured(now);
    ClassStats& cs = stats_for(a.pkt.cls);
    if (measured) {
      ++cs.offered;
      cs.offered_bytes += a.pkt.length;
      ++cs.in_network;
    }
    Packet& p = a.pkt;  // the source refills it only after the offer
    if constexpr (!Lean) {
      const uint32_t slot = allocate();
      Record& r = recs[slot];
      r.created = now;
      r.queued = 0;
      r.uid = offered;
      r.length = a.pkt.length;
      r.cls = a.pkt.cls;
      r.exit_node = static_cast<uint16_t>(src.last_node());
      r.measured = measured;
      r.in_use = true;
      if (dumper) {
        frames[slot].bytes.assign(a.data, a.data + a.caplen);
        frames[slot].wire_len = a.wire_len;
        if (!have_epoch) {
          epoch_ns = a.ts_sec * 1000000000LL + a.ts_nsec - now / kNanosecond;
          have_epoch = true;
        }
      }
      if (cfg.detail) {
        detail.source.push_back(static_cast<uint32_t>(i));
        detail.length.push_back(r.length);
        detail.cls.push_back(static_cast<uint8_t>(r.cls));
        detail.fate.push_back(255);
        detail.node.push_back(0);
        detail.created.push_back(now);
        detail.end.push_back(0);
        detail.queue_delay.push_back(0);
        detail.flow.push_back(a.pkt.flow_hash);
      }
      p.handle = slot;
    }
    ++offered;
    if (p.cls < cfg.classes.size()) {
      const Ingress& in = ingress[p.cls];
      p.budget = in.budget;
      p.flags |= in.flags;
      if (in.flags & kFlagHasMtq) p.mtq = in.mtq;
    }
    offer<Core, Lean>(src.first_node(), p, now);
    refill<Src>(i);
  }

  bool is_measured(Time created) const { return created >= cfg.measure_from && created < cfg.measure_until; }

  // The next pull of a busy link: when it is free, if the core has
  // something to send by then, else when the core says. Cores change state
  // only when called, so their answer for a future instant holds until the
  // next enqueue (which asks again). An empty core schedules nothing: the
  // arrival that fills it pulls at once if the link is idle by then, which
  // saves the pull that found nothing at the end of every transmission.
  // A core holding the packet on the wire in its buffer (§2) has nothing to
  // send but is pulled when that transmission ends, which retires it: its
  // occupancy and flow table then shrink at the right instant. Asking for
  // retire_at_or_after(link_free_at) rather than retire_at() spares the
  // core a division per packet (EFD's RTF, engine_bench).
  template <class Core>
  static void schedule_pull(Node& n) {
    const Core& core = core_of<Core>(n);
    const Time r = core.next_ready(n.link_free_at);
    if (r != kNever) n.pull_at = std::max(r, n.link_free_at);
    else n.pull_at = core.retire_at_or_after(n.link_free_at);
  }

  // Serialization at a rate that does not divide 8e12: carries the
  // fraction of a picosecond from a back-to-back predecessor (see end_frac).
  static Time exact_serialization(Node& n, uint64_t bytes, Time now) {
    const bool carry = n.end_frac != 0 && now == n.link_free_at;
    const Time start = carry ? now - 1 : now;
    const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8000000000000ULL + (carry ? n.end_frac : 0);
    const Time whole = static_cast<Time>(num / n.cfg.rate_bps);
    n.end_frac = static_cast<uint64_t>(num % n.cfg.rate_bps);
    return start + whole + (n.end_frac ? 1 : 0) - now;
  }

  // The per-packet loops are flattened (every call inlined): what they
  // reach only on a broken core, a first packet or a growing buffer is
  // kept out of line (noinline, which flatten respects), so their hot
  // code is smaller (loop_single<FifoCore> was 29.6 KB). engine_bench CPU
  // s for 0.5 virtual s, min of 5 alternated runs: efd 0.349 -> 0.339,
  // las 0.416 -> 0.403.
  [[noreturn, gnu::cold, gnu::noinline]] void core_broke(uint32_t k, const char* what) const {
    throw std::logic_error("node " + std::to_string(k) + " (" + nodes[k]->cfg.element + "): " + what);
  }

  template <class Core, bool Lean>
  void pull(uint32_t k, Time now) {
    Node& n = *nodes[k];
    Core& core = core_of<Core>(n);
    const bool got = core.dequeue(now, n.batch);
    track_table<Core>(n, now);
    if (!got) {
      const Time next = core.next_ready(now);
      if (next <= now) core_broke(k, "next_ready() says ready but dequeue() returned nothing");
      n.pull_at = next;
      return;
    }
    if (n.batch.count == 0 || n.batch.count > n.batch.capacity) core_broke(k, "dequeue() returned a bad batch");
    const uint64_t bytes = uint64_t{n.batch.wire_bytes} + n.cfg.overhead_bytes;
    // At rates that divide 8e12 (1/10/40/100 Gb/s...) a byte is a whole
    // number of picoseconds: multiply instead of dividing.
    Time ser = n.ps_per_byte ? static_cast<Time>(bytes) * n.ps_per_byte : exact_serialization(n, bytes, now);
    if (ser < n.cfg.min_service) {
      ser = n.cfg.min_service;
      n.end_frac = 0;
    }
    const Time end = now + ser;
    n.link_free_at = end;
    schedule_pull<Core>(n);
    n.busy += ser;
    ++n.transmissions;
    n.tx_packets += n.batch.count;
    n.wire_bytes += n.batch.wire_bytes;
    if (n.batch.wire_bytes < n.min_tx) n.min_tx = n.batch.wire_bytes;
    if (n.batch.wire_bytes > n.max_tx) n.max_tx = n.batch.wire_bytes;
    const Time arrive = end + n.cfg.prop_delay;
    if constexpr (Lean) {
      // Deliveries change nothing but the metrics and come in transmission
      // order on one link, so they are counted now, in the order the ring
      // would give them. One arriving after `until` is never delivered: it
      // waits in the ring, where it is counted as in flight.
      for (uint32_t j = 0; j < n.batch.count; ++j) {
        const Packet& p = n.batch.packets[j];
        const Time queued = now - p.arrival;
        n.queue_delay_sum += queued;
        if (arrive <= cfg.until) {
          ++delivered;
          last_delivery = arrive;
          if (is_measured(p.arrival)) count_delivery(class_stats[p.cls], p.length, queued, arrive - p.arrival);
        } else {
          n.delivering.push({arrive, 0});
        }
      }
      return;
    }
    for (uint32_t j = 0; j < n.batch.count; ++j) {
      const Packet& p = n.batch.packets[j];
      Record& r = recs[p.handle];
      r.queued += now - r.node_arrival;
      n.queue_delay_sum += now - r.node_arrival;
      if (r.exit_node == k) {
        n.delivering.push({arrive, p.handle});
      } else {
        nodes[k + 1]->inbound.push({arrive, p});
      }
    }
  }

  // A measured packet's delivery in its class's metrics.
  static void count_delivery(ClassStats& cs, uint32_t length, Time queued, Time latency) {
    --cs.in_network;
    ++cs.delivered;
    cs.delivered_bytes += length;
    cs.queue_delay.add(queued);
    cs.latency.add(latency);
    if (queued > cs.budget) {
      ++cs.violations;
      cs.excess.add(queued - cs.budget);
    }
  }

  void deliver(uint64_t slot, uint32_t k, Time t) {
    Record& r = recs[slot];
    ++delivered;
    last_delivery = t;
    if (r.measured) count_delivery(class_stats[r.cls], r.length, r.queued, t - r.created);
    if (cfg.detail) {
      detail.fate[r.uid] = 0;
      detail.node[r.uid] = static_cast<uint8_t>(k);
      detail.end[r.uid] = t;
      detail.queue_delay[r.uid] = r.queued;
    }
    if (dumper) {
      const int64_t ns =
          epoch_ns + (idle_skipped == 0 ? t / kNanosecond : static_cast<int64_t>((t + idle_skipped) / kNanosecond));
      pcap_pkthdr h{};
      h.ts.tv_sec = ns / 1000000000LL;
      h.ts.tv_usec = ns % 1000000000LL;  // nanoseconds: the dump was opened with nano precision
      const Frame& f = frames[slot];
      h.caplen = static_cast<uint32_t>(f.bytes.size());
      h.len = f.wire_len;
      pcap_dump(reinterpret_cast<u_char*>(dumper), &h, f.bytes.data());
      // pcap_dump returns nothing: its stdio stream keeps the error (a full
      // disk, a file size limit), seen here at the first failed write.
      if (ferror(pcap_dump_file(dumper))) throw_write_error(errno);
    }
    release(static_cast<uint32_t>(slot));
  }

  void dropped_at(uint32_t k, const Packet& p, DropReason why, Time now) {
    ++dropped;
    if (lean) {  // p.arrival is its creation (see `lean`)
      if (is_measured(p.arrival)) count_drop(class_stats[p.cls], why);
      return;
    }
    Record& r = recs[p.handle];
    if (!r.in_use) throw std::logic_error("node " + std::to_string(k) + ": drop of a packet not in the network");
    if (r.measured) count_drop(class_stats[r.cls], why);
    if (cfg.detail) {
      detail.fate[r.uid] = static_cast<uint8_t>(1 + static_cast<int>(why));
      detail.node[r.uid] = static_cast<uint8_t>(k);
      detail.end[r.uid] = now;
      detail.queue_delay[r.uid] = r.queued;
    }
    release(static_cast<uint32_t>(p.handle));
  }

  static void count_drop(ClassStats& cs, DropReason why) {
    --cs.in_network;
    ++cs.dropped[static_cast<int>(why)];
  }

  // ------------------------------------------------------------ loop

  // Out of line: see core_broke().
  [[noreturn, gnu::cold, gnu::noinline]] static void went_back() {
    throw std::logic_error("event in the past: a source or core went back in time");
  }

  // One node: its deliveries are already in time order.
  void flush_one_node(Ring<Delivery>& d, Time upto) {
    while (!d.empty() && d.front().at <= upto) {
      const Delivery f = d.pop();
      deliver(f.slot, 0, f.at);
    }
  }

  // Deliveries change nothing but the metrics, so rather than being events
  // of their own they are flushed, in time order, before the first event
  // that is later than them: the same order as processing them first at
  // equal times, without a trip through the loop per packet.
  void flush_deliveries(Time upto) {
    if (nodes.size() == 1) return flush_one_node(nodes[0]->delivering, upto);
    for (;;) {
      Node* first = nullptr;
      uint32_t k_first = 0;
      for (uint32_t k = 0; k < nodes.size(); ++k) {
        Node& n = *nodes[k];
        if (!n.delivering.empty() && n.delivering.front().at <= upto &&
            (first == nullptr || n.delivering.front().at < first->delivering.front().at))
          first = &n, k_first = k;
      }
      if (first == nullptr) return;
      const Delivery f = first->delivering.pop();
      deliver(f.slot, k_first, f.at);
    }
  }

  template <class Core>
  [[gnu::flatten]] Time loop() {
    enum Kind { kNone, kPull, kArrive, kSource };
    Time now = 0;
    for (;;) {
      Time best = kNever;
      Kind kind = kNone;
      size_t which = 0;
      // Strict '<' in this order gives pulls, then link arrivals, then
      // source arrivals at equal times (see engine.hh).
      for (size_t k = 0; k < nodes.size(); ++k)
        if (nodes[k]->pull_at < best) best = nodes[k]->pull_at, kind = kPull, which = k;
      for (size_t k = 1; k < nodes.size(); ++k)
        if (!nodes[k]->inbound.empty() && nodes[k]->inbound.front().at < best)
          best = nodes[k]->inbound.front().at, kind = kArrive, which = k;
      for (size_t i = 0; i < source_at.size(); ++i)
        if (source_at[i] < best) best = source_at[i], kind = kSource, which = i;
      if (kind == kNone || best > cfg.until) {
        flush_deliveries(cfg.until);  // kNever: all of them
        return cfg.until != kNever ? cfg.until : std::max(now, last_delivery);
      }
      if (best < now) went_back();
      flush_deliveries(best);
      if (best > kSkipAbove && kind == kSource && skip_idle(now, which)) continue;
      now = best;
      switch (kind) {
        case kPull:
          pull<Core, false>(static_cast<uint32_t>(which), now);
          break;
        case kArrive: {
          InFlight f = nodes[which]->inbound.pop();
          f.pkt.arrival = now;  // at this node
          offer<Core, false>(static_cast<uint32_t>(which), f.pkt, now);
          break;
        }
        case kSource:
          from_source<Core, false>(which, now);
          break;
        case kNone:
          break;
      }
    }
  }

  // One source into one node (the benchmark's shape, and most single-link
  // runs): the same events in the same order as loop(), with the choice of
  // the next event reduced to one comparison (a pull goes first at equal
  // times) and no inbound links to look at. The end test is one comparison
  // with `last` (no event, kNever, lies beyond it too). A lean run's ring
  // holds only deliveries after `until` (pull() counts the others), which
  // no flush up to `until` takes: it flushes nothing.
  template <class Core, bool Lean, class Src = Source>
  [[gnu::flatten]] Time loop_single() {
    Node& n = *nodes[0];
    const Time last = std::min(cfg.until, kNever - 1);
    Time now = 0;
    for (;;) {
      const Time source = source_at[0];
      const bool is_pull = n.pull_at <= source;
      const Time best = is_pull ? n.pull_at : source;
      if (best > last) {
        if constexpr (!Lean) flush_one_node(n.delivering, cfg.until);  // kNever: all of them
        return cfg.until != kNever ? cfg.until : std::max(now, last_delivery);
      }
      if (best < now) went_back();
      if constexpr (!Lean) flush_one_node(n.delivering, best);
      if (best > kSkipAbove && !is_pull && skip_idle(now, 0)) continue;
      now = best;
      if (is_pull) {
        pull<Core, Lean>(0, now);
      } else {
        from_source<Core, Lean, Src>(0, now);
      }
    }
  }

  // Skipping idle time. A recorded trace may span more than the clock's
  // 2^63 ps (106 days). When the next event is a source arrival beyond
  // 2^62 ps and the network is empty (nothing queued, on a link or in
  // flight, no pull due), an idle gap longer than 2^60 ps (13 days) is cut
  // to 2^60 ps: every source moves its arrivals earlier by the excess, and
  // the engine adds it to idle_skipped. The cores then see a 13-day idle
  // gap for a longer one, which changes nothing they decide (their flow
  // timeouts and fading are seconds), and every time stays an exact
  // integer. Returns true after a skip; throws when the source's arrival
  // lies beyond the clock and cannot be brought onto it.
  static constexpr Time kSkipAbove = Time{1} << 62;
  static constexpr Time kSkipTo = Time{1} << 60;

  [[gnu::cold]] bool skip_idle(Time now, size_t which) {
    const Time idle_from = std::max(now, last_delivery);
    bool empty = offered > 0 && cfg.until == kNever && cfg.measure_from == 0 && cfg.measure_until == kNever;
    for (const auto& n : nodes)
      empty = empty && n->pull_at == kNever && n->inbound.empty() && n->delivering.empty() &&
              n->core->length_packets() == 0 && n->core->retire_at() == kNever && n->link_free_at <= idle_from;
    WideTime next = 0;
    bool any = false;
    for (size_t i = 0; i < sources.size(); ++i) {
      if (source_at[i] == kNever) continue;
      empty = empty && sources[i]->movable();
      if (!sources[i]->movable()) continue;
      const WideTime t = sources[i]->exact_time();
      next = any ? std::min(next, t) : t;
      any = true;
    }
    if (empty && any && next - idle_from > kSkipTo) {
      const WideTime d = next - idle_from - kSkipTo;
      for (size_t i = 0; i < sources.size(); ++i)
        if (source_at[i] != kNever) pending[i].a.pkt.arrival = source_at[i] = sources[i]->move_earlier(d);
      idle_skipped += d;
      return true;
    }
    Source& src = *sources[which];
    if (source_at[which] == kLastInstant && src.movable() && src.exact_time() > kLastInstant)
      throw std::runtime_error("source '" + src.spec() + "': a packet " +
                               std::to_string(static_cast<int64_t>((src.exact_time() - idle_from) / kSecond / 86400)) +
                               " days after the one before lies beyond the engine's clock (2^63 ps, 106 days), and "
                               "the clock skips idle time only in a run without until or a measure window whose "
                               "network is empty before such a gap: replay it faster (speed=) or cut it (count=)");
    return false;
  }

  template <class Core>
  Time run_loop() {
    if (nodes.size() != 1 || sources.size() != 1) return loop<Core>();
    return lean ? loop_single<Core, true>() : loop_single<Core, false>();
  }

  template <class Core>
  bool all_nodes_are() const {
    for (const auto& n : nodes)
      if (dynamic_cast<const Core*>(n->core) == nullptr) return false;
    return true;
  }

  // The lean single-node loop (the benchmark's shape) calls every core
  // directly (each is `final`), not through QueueCore's virtual functions
  // and the flow-table size's std::function. engine_bench
  // instructions/packet: run2c 743 -> 625, las 826 -> 702, lars 980 -> 852,
  // scfq 827 -> 679 (docs/performance-history.md, engine step 5). Other
  // runs keep the three cores below: one loop per core and shape costs
  // compile time for runs that are not per-packet bound.
  template <class Core, class... Rest>
  Time run_lean() {
    if (all_nodes_are<Core>()) return lean_source<Core>();
    if constexpr (sizeof...(Rest) > 0) {
      return run_lean<Rest...>();
    } else {
      return loop_single<QueueCore, true>();
    }
  }

  // A Poisson or CBR source (engine_bench's) is called directly too, its
  // next() inlined into the loop. engine_bench instructions/packet: see
  // docs/performance-history.md, engine step 9.
  template <class Core>
  Time lean_source() {
    if (dynamic_cast<const PacketSource*>(sources[0].get()) != nullptr) return loop_single<Core, true, PacketSource>();
    return loop_single<Core, true>();
  }

  RunResult run() {
    if (ran) throw std::logic_error("Engine::run() can be called once");
    ran = true;
    lean = nodes.size() == 1 && sources.size() == 1 && sources[0]->last_node() == 0 && !dumper && !cfg.detail;
    const auto wall0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < sources.size(); ++i) refill(i);
    const Time end = lean ? run_lean<EfdCore, FifoCore, ChuTQ, Run2cCore, SiftCore, XProtectCore, LasCore, LarsCore,
                                     ScfqCore, NcqCore, BasiCQ, ChuMQ, MtqQtlQueue>()
                     : all_nodes_are<EfdCore>()  ? run_loop<EfdCore>()
                     : all_nodes_are<FifoCore>() ? run_loop<FifoCore>()
                     : all_nodes_are<ChuTQ>()    ? run_loop<ChuTQ>()
                                                 : run_loop<QueueCore>();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (dumper && pcap_dump_flush(dumper) != 0) throw_write_error(errno);
    return result(end, wall);
  }

  static ClassResult class_result(ClassStats& s, const std::string& name) {
    ClassResult c;
    c.name = name;
    c.budget = s.budget;
    c.offered = s.offered;
    c.offered_bytes = s.offered_bytes;
    c.delivered = s.delivered;
    c.delivered_bytes = s.delivered_bytes;
    for (int d = 0; d < kDropReasons; ++d) c.dropped[d] = s.dropped[d];
    c.dropped_total = s.dropped_total();
    c.queued_end = s.in_network;
    c.violations = s.violations;
    c.r_v = s.delivered ? static_cast<double>(s.violations) / static_cast<double>(s.delivered) : 0;
    c.eplr = s.offered ? static_cast<double>(c.dropped_total + s.violations) / static_cast<double>(s.offered) : 0;
    c.queue_delay = s.queue_delay.summarize();
    c.latency = s.latency.summarize();
    c.excess = s.excess.summarize();
    return c;
  }

  RunResult result(Time end, double wall) {
    RunResult res;
    res.offered = offered;
    res.delivered = delivered;
    res.dropped = dropped;
    res.first_arrival = offered ? first_arrival : 0;
    res.last_arrival = last_arrival + idle_skipped;
    res.end_time = end + idle_skipped;
    res.idle_skipped = idle_skipped;
    uint64_t in_use = 0;  // records of packets in the network (none kept when lean)
    for (const Record& r : recs) in_use += r.in_use;
    std::string broken;
    for (size_t k = 0; k < nodes.size(); ++k) {
      Node& n = *nodes[k];
      const Counters& c = n.core->counters();
      const uint64_t len = n.core->length_packets();
      res.queued += len;
      res.in_flight += n.inbound.size() + n.delivering.size();
      if (c.offered != n.offered || c.offered != c.served + c.dropped_total() + len)
        broken += "node " + std::to_string(k) + ": engine offered " + std::to_string(n.offered) + ", core offered " +
                  std::to_string(c.offered) + " != served " + std::to_string(c.served) + " + dropped " +
                  std::to_string(c.dropped_total()) + " + queued " + std::to_string(len) + "; ";
    }
    if (offered != delivered + dropped + res.queued + res.in_flight || (!lean && in_use != res.queued + res.in_flight))
      broken += "offered " + std::to_string(offered) + " != delivered " + std::to_string(delivered) + " + dropped " +
                std::to_string(dropped) + " + queued " + std::to_string(res.queued) + " + in flight " +
                std::to_string(res.in_flight) + " (records in use " + std::to_string(in_use) + "); ";
    if (!broken.empty()) throw ConservationError("conservation violated: " + broken);

    for (size_t c = 0; c < class_stats.size(); ++c) {
      const std::string name =
          c < cfg.classes.size() && !cfg.classes[c].name.empty() ? cfg.classes[c].name : "class" + std::to_string(c);
      res.classes.push_back(class_result(class_stats[c], name));
    }
    // "all" is the union of the classes, merged once here rather than
    // recorded twice per packet.
    ClassStats overall(cfg.max_delay_samples);
    for (const ClassStats& cs : class_stats) {
      overall.offered += cs.offered;
      overall.offered_bytes += cs.offered_bytes;
      overall.delivered += cs.delivered;
      overall.delivered_bytes += cs.delivered_bytes;
      for (int d = 0; d < kDropReasons; ++d) overall.dropped[d] += cs.dropped[d];
      overall.violations += cs.violations;
      overall.in_network += cs.in_network;
      overall.queue_delay.merge(cs.queue_delay);
      overall.latency.merge(cs.latency);
      overall.excess.merge(cs.excess);
    }
    res.overall = class_result(overall, "all");

    if (cfg.measure_until != kNever) {
      res.span = cfg.measure_until - cfg.measure_from;
    } else {
      res.span = res.last_arrival > res.first_arrival ? res.last_arrival - res.first_arrival
                                                      : res.end_time - res.first_arrival;
    }
    const double span_s = res.span > 0 ? static_cast<double>(res.span) * 1e-12 : 0;
    for (auto& np : nodes) {
      Node& n = *np;
      n.table.finish(end);
      const Counters& c = n.core->counters();
      NodeResult r;
      r.element = n.cfg.element;
      r.rate_bps = n.cfg.rate_bps;
      r.prop_delay = n.cfg.prop_delay;
      r.offered = c.offered;
      r.enqueued = c.enqueued;
      r.served = c.served;
      for (int d = 0; d < kDropReasons; ++d) r.dropped[d] = c.dropped[d];
      r.queued_end = n.core->length_packets();
      r.highwater_packets = c.highwater_packets;
      r.highwater_bytes = c.highwater_bytes;
      r.transmissions = n.transmissions;
      r.wire_bytes = n.wire_bytes;
      if (n.transmissions) {
        r.mean_transmission_bytes = static_cast<double>(n.wire_bytes) / static_cast<double>(n.transmissions);
        r.mean_packets_per_transmission = static_cast<double>(n.tx_packets) / static_cast<double>(n.transmissions);
        r.min_transmission_bytes = n.min_tx;
        r.max_transmission_bytes = n.max_tx;
      }
      r.busy = n.busy;
      if (n.tx_packets) r.mean_queue_delay = static_cast<double>(n.queue_delay_sum) / static_cast<double>(n.tx_packets);
      if (span_s > 0) {
        r.utilization = static_cast<double>(n.busy) * 1e-12 / span_s;
        r.eta = static_cast<double>(n.transmissions) / span_s / cfg.router_pps;
        r.out_bps = static_cast<double>(n.wire_bytes) * 8 / span_s;
      }
      r.has_flow_table = static_cast<bool>(n.built.flow_table_size);
      r.flow_table_mean = n.table.mean();
      r.flow_table_max = n.table.max();
      r.flow_table_time_at = n.table.time_at_level();
      if (n.built.flow_table_longest_probe) r.flow_table_longest_probe = n.built.flow_table_longest_probe();
      res.nodes.push_back(std::move(r));
    }
    if (span_s > 0) {
      res.mpps_in = static_cast<double>(offered) / span_s / 1e6;
      res.mpps_out = static_cast<double>(nodes.back()->transmissions) / span_s / 1e6;
    }
    res.wall_seconds = wall;
    res.wall_mpps = wall > 0 ? static_cast<double>(offered) / wall / 1e6 : 0;
    for (auto& s : sources) res.sources.emplace_back(s->spec(), s->counts());
    res.detail = std::move(detail);
    return res;
  }
};

Engine::Engine(const RunConfig& cfg) : impl_(std::make_unique<Impl>(cfg)) {}
Engine::~Engine() = default;
RunResult Engine::run() { return impl_->run(); }

}  // namespace tracelab::engine
