// TLCoreQueue: the Click adapter body shared by the tracelab queue elements.
#include <click/config.h>
#include "tlcorequeue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

using tracelab::DropReason;

void TLCoreQueue::read_buffer(Args& args, uint64_t capacity) {
  _buffer.capacity = capacity;
  args.read("CAPACITY", _buffer.capacity).read("BYTES", _bytes).read("IN_SERVICE", AnyArg(), _in_service);
}

int TLCoreQueue::finish_buffer(ErrorHandler* errh) {
  _buffer.granularity = _bytes ? tracelab::Granularity::kBytes : tracelab::Granularity::kPackets;
  bool until_pull = true;
  uint64_t bps = 0;
  if (!_in_service || BoolArg::parse(_in_service, until_pull)) {
    _service_until_pull = until_pull;
    _buffer.in_service_link_bps = until_pull ? 1 : 0;
  } else if (IntArg().parse(_in_service, bps) && bps > 0) {
    _service_until_pull = false;
    _buffer.in_service_link_bps = bps;
  } else {
    return errh->error("IN_SERVICE: expected true, false or a rate in bits per second, not '%s'", _in_service.c_str());
  }
  return 0;
}

int TLCoreQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  return args.complete();
}

int TLCoreQueue::initialize(ErrorHandler* errh) {
  if (_buffer.capacity == 0) return errh->error("CAPACITY must be positive");
  if (_buffer.capacity > (1u << 26)) return errh->error("CAPACITY too large");
  tracelab::QueueCore* core = make_core(errh);
  if (!core) return -1;
  attach(core, _buffer.slots(), true);
  // A rate for IN_SERVICE needs the exact clock on both sides (the end of
  // a transmission is a time); IN_SERVICE true needs none of its own. Under
  // --simtime every read is an event (tl_simulated_clock()), and a warped
  // clock is Click's alone: there every read stays Timestamp::now().
  const bool rate = _buffer.in_service_link_bps > 0 && !_service_until_pull;
  const bool always = tl_simulated_clock() || rate;
  _clock_push = always ? kClockExact : arrival_clock();
  if (_clock_push == kClockCoarse && !tl_unwarped_clock()) _clock_push = kClockExact;
  _clock_pull = always;
  _meta = metadata();
  return 0;
}

void TLCoreQueue::cleanup(CleanupStage stage) {
  // Direct handles: no table to walk, so the packets still queued are
  // taken from the core (every single-packet core serves while it holds one).
  if (_core) {
    tracelab::Packet meta;
    tracelab::Batch out{&meta, 1};
    const tracelab::Time now = pull_time();
    while (_core->length_packets() && _core->dequeue(now, out)) TLHandles::direct_packet(meta.handle)->kill();
  }
  TLCoreElement::cleanup(stage);
}

enum { h_drops, h_full, h_pushed, h_served, h_flows, h_flows_hw, h_probe };

String TLCoreQueue::read_handler(Element* e, void* thunk) {
  TLCoreQueue* q = static_cast<TLCoreQueue*>(e);
  const tracelab::Counters& c = q->_core->counters();
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_drops:
      return String(c.dropped_total());
    case h_full:
      return String(c.dropped[int(DropReason::kBufferFull)]);
    case h_pushed:
      return String(c.dropped[int(DropReason::kPushedOut)]);
    case h_served:
      return String(c.served);
    case h_flows:
      return String(q->flows());
    case h_flows_hw:
      return String(q->flows_highwater());
    case h_probe:
      return String(q->table_longest_probe());
  }
  return String();
}

int TLCoreQueue::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  static_cast<TLCoreQueue*>(e)->_core->reset_counters();  // every counter, as a fresh core's
  return 0;
}

void TLCoreQueue::add_handlers() {
  add_length_handlers();
  add_read_handler("drops", read_handler, h_drops);
  add_read_handler("drops_buffer_full", read_handler, h_full);
  add_read_handler("pushed_out", read_handler, h_pushed);
  add_read_handler("served", read_handler, h_served);
  add_read_handler("flows", read_handler, h_flows);
  add_read_handler("flows_highwater", read_handler, h_flows_hw);
  add_read_handler("table_longest_probe", read_handler, h_probe);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
ELEMENT_PROVIDES(TLCoreQueue)
