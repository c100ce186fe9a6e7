#ifndef TRACELAB_TLCOREQUEUE_HH
#define TRACELAB_TLCOREQUEUE_HH
#include <click/element.hh>
#include <click/notifier.hh>
#include <click/vector.hh>
#include "fifo_buffer.hh"
#include "queue_core.hh"
#include "tlhandles.hh"
CLICK_DECLS
class Args;

/*
 * TLCoreQueue: the shared body of the tracelab single-packet queue elements
 * (TLFifoQueue, TLEfdQueue, TLRun2CQueue, TLSiftQueue, TLXProtectQueue,
 * TLNcqQueue, TLLasQueue, TLLarsQueue, TLScfqQueue). Not an element itself.
 *
 * PUSH input, PULL output 0, like Click's Queue. Each pushed packet gets a
 * handle in a table sized at initialize() (buffer slots + 1), the core sees
 * a tracelab::Packet built from the IP header (MarkIPHeader/CheckIPHeader
 * upstream) by core/ipv4_meta.hh: length = IP length, flow_hash =
 * directional 5-tuple hash, conn_hash = the same hash with the two
 * endpoints ordered (both directions alike), TCP flags, seq and ack. A
 * packet without an IPv4 header is one flow of its own length (hash 0).
 * Dropped packets (on arrival, or pushed out) leave on the optional PUSH
 * output 1 right after the arrival that caused them, else are killed. Time
 * is the Click clock (simulated under --simtime), in ps.
 *
 * Common keywords: CAPACITY (packets, or bytes with BYTES true), BYTES,
 * IN_SERVICE (bits per second: keep the packet on the wire counted in the
 * buffer and in its flow's state until its transmission at that rate ends,
 * the thesis model of fifo_buffer.hh; 0 = it leaves at the pull, as in
 * Click's Queue). Common handlers: length, highwater_length, drops,
 * drops_buffer_full, pushed_out, served, flows, flows_highwater, reset.
 * `reset` zeroes the drop and service counters reported (highwater values
 * are since start).
 */
class TLCoreQueue : public Element, public tracelab::DropSink {
 public:
  TLCoreQueue() CLICK_COLD;
  ~TLCoreQueue() CLICK_COLD;
  const char* port_count() const override { return "1/1-2"; }
  const char* processing() const override { return "h/lh"; }
  void* cast(const char* name) override;
  int initialize(ErrorHandler* errh) override CLICK_COLD;
  void cleanup(CleanupStage) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  void push(int port, Packet* p) override;
  Packet* pull(int port) override;
  void on_drop(const tracelab::Packet& p, tracelab::DropReason why, tracelab::Time now) override;

 protected:
  // Build the core from the parsed configuration (called by initialize()).
  virtual tracelab::QueueCore* make_core(ErrorHandler* errh) = 0;
  virtual uint64_t flows() const { return 0; }
  virtual uint64_t flows_highwater() const { return 0; }
  // Reads CAPACITY (default `capacity`), BYTES and IN_SERVICE into _buffer.
  void read_buffer(Args& args, uint64_t capacity);

  tracelab::BufferConfig _buffer;
  bool _bytes = false;

 private:
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;

  tracelab::QueueCore* _core = nullptr;
  TLHandles _handles;
  uint64_t _base_drops[int(tracelab::DropReason::kCount)] = {0, 0, 0, 0};
  uint64_t _base_served = 0;
  ActiveNotifier _notifier;
};

CLICK_ENDDECLS
#endif
