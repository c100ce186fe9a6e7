#ifndef TRACELAB_TLCOREQUEUE_HH
#define TRACELAB_TLCOREQUEUE_HH
#include <type_traits>
#include <click/error.hh>
#include "fifo_buffer.hh"
#include "ipv4_meta.hh"
#include "param_checks.hh"
#include "spec.hh"
#include "tlelementutil.hh"
CLICK_DECLS
class Args;

/*
=c

TLCoreQueue

=s queues

tracelab queue element superclass

=d

TLCoreQueue is the part every tracelab single-packet queue shares
(TLFifoQueue, TLEfdQueue, TLRun2CQueue, TLSiftQueue, TLXProtectQueue,
TLNcqQueue, TLLasQueue, TLLarsQueue, TLScfqQueue): the ports, the buffer
keywords and the handlers described here. It is not an element itself; each
of those elements documents its mechanism and its own keywords.

Push input, pull output 0, like Queue. Dropped packets (on arrival, or
pushed out of the buffer) leave on push output 1, right after the arrival
that caused them, if it is connected, else are killed.

Packets should carry an IP header annotation (CheckIPHeader or MarkIPHeader
upstream) so flows can be told apart: the mechanism sees the IP length, a
hash of the directional 5-tuple (the flow), the same hash with the two
endpoints ordered (the TCP connection, both directions alike), the TCP
flags, sequence and acknowledgment numbers. A packet without an IPv4 header
is one flow of its own length (hash 0). Time is the Click clock (simulated
under --simtime), in picoseconds. In real time the elements whose
mechanism only ages flow records by seconds (TLRun2CQueue, TLSiftQueue,
TLXProtectQueue, TLLasQueue: idle timeouts) read it on arrival to the
kernel's last clock tick (CLOCK_REALTIME_COARSE, 4 ms at 250 Hz), a
quarter of the cost of an exact read; with IN_SERVICE a rate, under
--simtime or a warped clock they read it exactly.

Keyword arguments common to every tracelab queue are:

=over 8

=item CAPACITY

Packets, or bytes with BYTES true. Default 300 unless the element says
otherwise.

=item BYTES

Boolean. Capacity in bytes. In byte mode an arrival is dropped when it would
overflow CAPACITY (⚠AMB-1, core/fifo_buffer.hh). Default false.

=item IN_SERVICE

Boolean, or a link rate in bits per second: how long the packet handed
downstream stays counted in the buffer, in its high-water and in its flow's
state (algorithms.md §2: until its transmission ends). True, the default:
until the next pull, the moment the element downstream (TLExactUnqueue,
Unqueue, ToDevice) asks for another packet because it is done with this
one; with TLExactUnqueue that is exactly the end of the transmission, so a
full buffer of CAPACITY reads CAPACITY in highwater_length, as in the
engine. A rate: until its transmission at this rate ends, measured on the
Click clock (the thesis model with a known link, as the engine's
in_service). False (or 0): it leaves the buffer when pulled, as in Click's
Queue and an ns-3 QueueDisc.

=item TABLE_SEED

Elements with a flow table only (TLEfdQueue, TLRun2CQueue, TLSiftQueue,
TLXProtectQueue, TLLasQueue, TLLarsQueue, TLScfqQueue): the key of the
table's hash (core/efd_flow_table.hh flow_table_hash), a 64-bit value,
decimal or 0x hex: set a secret one against traffic crafted to collide
under the default. No decision depends on it. Default 0x74726163656c6162.

=back

=h length, highwater_length read-only

Packets queued now, and the most ever queued.

=h drops read-only

Packets dropped, all reasons.

=h drops_buffer_full read-only

Packets dropped because the buffer was full on their arrival.

=h pushed_out read-only

Packets pushed out of the buffer by a later arrival.

=h served read-only

Packets handed downstream.

=h flows read-only

Flow-table entries now; 0 for mechanisms without per-flow state
(TLFifoQueue, TLNcqQueue).

=h flows_highwater read-only

Most flow-table entries ever.

=h table_longest_probe read-only

The flow table's longest probe now: the most entries one lookup walks (0
without a table). Flows whose keys share a bucket under one TABLE_SEED
spread under another, so this shows the seed at work; no decision depends
on it. Walked when read (every bucket), nothing per packet.

=h reset write-only

Zero every counter, as in a fresh element: drops, drops_buffer_full,
pushed_out, served, highwater_length (restarts at the present length) and
flows_highwater (the flow table keeps its entries; restarts at their number).

=a TLFifoQueue, TLEfdQueue, TLRun2CQueue, TLSiftQueue, TLXProtectQueue,
TLNcqQueue, TLLasQueue, TLLarsQueue, TLScfqQueue, TLExactUnqueue, Queue
*/
class TLCoreQueue : public TLCoreElement<tracelab::QueueCore> {
 public:
  // The buffer keywords only; elements with keywords of their own override
  // it and call read_buffer().
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  int initialize(ErrorHandler* errh) override CLICK_COLD;
  void cleanup(CleanupStage stage) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  // The core's handles are the Click packets themselves (TLHandles direct
  // handles).
  void on_drop(const tracelab::Packet& p, tracelab::DropReason, tracelab::Time) override {
    _handles.drop_direct(p.handle);
  }

  // What a core reads of an arrival's headers, each level a superset of the
  // one before: the length; + TCP flags, seq, ack; + the flow hash; + the
  // connection hash (describe_ipv4's every field).
  enum Meta : uint8_t { kMetaLength, kMetaTcp, kMetaFlow, kMetaAll };
  // What a core's enqueue() needs of the arrival's time: nothing (FIFO,
  // EFD, NCQ, SCFQ); the time to a clock tick, for cores that only age flow
  // records by seconds (idle timeouts and scans: Run2C, SIFT, X-Protect,
  // LAS; tl_coarse_now_ps()); or the exact time (LARS's decay by the
  // inter-arrival gap).
  enum ArrivalClock : uint8_t { kClockNone, kClockCoarse, kClockExact };

 protected:
  // Build the core from the parsed configuration (called by initialize()).
  virtual tracelab::QueueCore* make_core(ErrorHandler* errh) = 0;
  virtual uint64_t flows() const { return 0; }
  virtual uint64_t flows_highwater() const { return 0; }
  virtual uint64_t table_longest_probe() const { return 0; }
  // Asked once, by initialize(), after make_core(). The fields the core
  // reads (a lower level skips the tuple hashes: bench.sh, TLFifoQueue
  // -30 ns/packet); and what its enqueue() needs of the time. Dequeue()
  // reads it only for IN_SERVICE; initialize() makes both exact for
  // IN_SERVICE with a rate and under --simtime, and push exact under a
  // warped clock, where every read is Click's (tl_unwarped_clock()).
  virtual Meta metadata() const { return kMetaAll; }
  virtual ArrivalClock arrival_clock() const { return kClockExact; }
  // Reads CAPACITY (default `capacity`), BYTES and IN_SERVICE's text. Args
  // assigns them when the element's configure() completes; check_config()
  // then finishes the buffer from them (finish_buffer()).
  void read_buffer(Args& args, uint64_t capacity);
  // BYTES and IN_SERVICE into _buffer and _service_until_pull.
  int finish_buffer(ErrorHandler* errh) CLICK_COLD;
  // The time a dequeue() is given: the clock when it is read in pull, else
  // the last arrival's (IN_SERVICE true under a core that reads the clock
  // on arrival: the packet's hold then starts at a time on that clock), else 0.
  tracelab::Time pull_time() const { return _clock_pull ? tl_now_ps() : _last_push_ps; }

  tracelab::BufferConfig _buffer;
  bool _bytes = false;
  String _in_service;
  // IN_SERVICE true: the core holds the pulled packet as if sent at 1 b/s
  // (8 s a byte) and retires it at the next dequeue(), which the core takes
  // as the link being free: the next pull. A core given time 0 (no clock
  // read) never sees that end; one that reads the clock on arrival would
  // retire it at an arrival only after 8 s a byte without a pull.
  bool _service_until_pull = true;
  // Set by initialize(): the hot path's choices.
  Meta _meta = kMetaAll;
  ArrivalClock _clock_push = kClockExact;
  bool _clock_pull = true;
  tracelab::Time _last_push_ps = 0;  // kept only when push reads the clock and pull does not

 private:
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;
};

// The metadata of level M of packet p into `cp` (describe_ipv4 for IPv4,
// else the length alone). describe_ipv4 fills a local; the fields above M
// are never read, so once it is inlined (flatten: it is too large for GCC
// to inline by itself) the compiler drops their computation, the hashes
// being pure arithmetic (bench.sh: TLFifoQueue -30 ns/packet). push()
// inlines it (push() is flattened too); elsewhere it is static: a direct
// call, not one through the package's PLT.
template <TLCoreQueue::Meta M>
[[gnu::flatten]] static void tl_describe(const Packet* p, tracelab::Packet& cp) {
  if (!p->has_network_header()) {
    cp.length = p->length();
    return;
  }
  tracelab::Packet d;
  tracelab::describe_ipv4(p->network_header(), p->end_data() - p->network_header(), d);
  cp.length = d.length;
  if (M >= TLCoreQueue::kMetaTcp) {
    cp.flags = d.flags;
    cp.tcp_seq = d.tcp_seq;
    cp.tcp_ack = d.tcp_ack;
  }
  if (M >= TLCoreQueue::kMetaFlow) cp.flow_hash = d.flow_hash;
  if (M >= TLCoreQueue::kMetaAll) cp.conn_hash = d.conn_hash;
}

// TABLE_SEED's text (null: not given) into `seed`, read with the engine's
// grammar (core/spec.hh parse_seed: decimal or 0x hex; Click's IntArg would
// read a leading 0 as octal), so that one seed means one table layout in
// every adapter.
inline int tl_table_seed(const String& text, uint64_t& seed, ErrorHandler* errh) {
  if (!text) return 0;
  if (!tracelab::parse_seed(std::string_view(text.data(), text.length()), seed))
    return errh->error("TABLE_SEED: expected a 64-bit value, decimal or 0x hex, not '%s'", text.c_str());
  return 0;
}

// Where a mechanism's configuration keeps its buffer: the FIFO's is the
// buffer itself, the two-level cores' (EfdConfig, ...) `queue.buffer`, the
// sorted cores' (LasConfig, ...) `buffer`.
inline tracelab::BufferConfig& tl_buffer_of(tracelab::BufferConfig& c) { return c; }
template <typename Config>
auto tl_buffer_of(Config& c) -> decltype((c.queue.buffer)) {
  return c.queue.buffer;
}
template <typename Config>
auto tl_buffer_of(Config& c) -> decltype((c.buffer)) {
  return c.buffer;
}

// Whether a core keeps a flow table (has flows() and flows_highwater()).
template <typename Core, typename = void>
struct TLHasFlows : std::false_type {};
template <typename Core>
struct TLHasFlows<Core, std::void_t<decltype(&Core::flows), decltype(&Core::flows_highwater)>> : std::true_type {};

// The typed half of every queue element: an element's configure() reads
// its buffer keywords (read_buffer()) and its mechanism's into `_cfg`;
// initialize() then builds `Core(_cfg)` with the buffer in place, and the
// flows handlers read the core's flow table when it keeps one.
template <typename Core, typename Config>
class TLQueueElement : public TLCoreQueue {
 public:
  // The packet path calls the concrete core (its enqueue/dequeue are final:
  // direct, inlinable calls) and reads only what initialize() found the
  // core needs; it decides exactly as through QueueCore.
  void push(int port, Packet* p) override;
  Packet* pull(int port) override;
  // The buffer keywords only (TLFifoQueue, TLScfqQueue), then check_config().
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD {
    if (TLCoreQueue::configure(conf, errh) < 0) return -1;
    return check_config(errh);
  }

 protected:
  // The end of every configure(), after Args completed: the buffer
  // finished, then the ranges of param_checks.hh on `_cfg` with it in place.
  int check_config(ErrorHandler* errh) {
    if (finish_buffer(errh) < 0) return -1;
    Config c = _cfg;
    tl_buffer_of(c) = _buffer;
    const std::string e = tracelab::check_params(c);
    return e.empty() ? 0 : errh->error("%s", e.c_str());
  }
  tracelab::QueueCore* make_core(ErrorHandler*) override {
    tl_buffer_of(_cfg) = _buffer;
    return _mech = new Core(_cfg);
  }
  uint64_t flows() const override {
    if constexpr (TLHasFlows<Core>::value) return _mech ? _mech->flows() : 0;
    else return 0;
  }
  uint64_t flows_highwater() const override {
    if constexpr (TLHasFlows<Core>::value) return _mech ? _mech->flows_highwater() : 0;
    else return 0;
  }
  uint64_t table_longest_probe() const override {
    if constexpr (TLHasFlows<Core>::value) return _mech ? _mech->table_longest_probe() : 0;
    else return 0;
  }

  Config _cfg;
  Core* _mech = nullptr;  // owned as TLCoreQueue's core
};

// Flattened: the metadata, the core's enqueue() and everything it calls
// inlined into one function (bench.sh, 9 interleaved runs: TLFifoQueue
// -0.8, TLEfdQueue -2.0 ns/packet).
template <typename Core, typename Config>
[[gnu::flatten]] void TLQueueElement<Core, Config>::push(int, Packet* p) {
  const tracelab::Time now = _clock_push == kClockExact    ? tl_now_ps()
                             : _clock_push == kClockCoarse ? tl_coarse_now_ps()
                                                           : 0;
  tracelab::Packet cp;
  cp.handle = TLHandles::direct_handle(p);
  cp.arrival = now;
  switch (_meta) {
    case kMetaLength:
      tl_describe<kMetaLength>(p, cp);
      break;
    case kMetaTcp:
      tl_describe<kMetaTcp>(p, cp);
      break;
    case kMetaFlow:
      tl_describe<kMetaFlow>(p, cp);
      break;
    default:
      tl_describe<kMetaAll>(p, cp);
      break;
  }
  _last_push_ps = now;
  _mech->enqueue(cp, now);
  _handles.flush_drops(this, 1);
  // wake() does nothing on an awake notifier; testing first saves the
  // out-of-line call (ActiveNotifier::set_active) when the puller is awake.
  if (_mech->length_packets() && !_notifier.active()) _notifier.wake();
}

template <typename Core, typename Config>
Packet* TLQueueElement<Core, Config>::pull(int) {
  tracelab::Packet meta;
  tracelab::Batch out{&meta, 1};
  if (!_mech->dequeue(pull_time(), out)) {
    _notifier.sleep();
    return nullptr;
  }
  return TLHandles::direct_packet(meta.handle);
}

CLICK_ENDDECLS
#endif
