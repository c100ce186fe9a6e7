// TLExactUnqueue: a thin Click adapter over tracelab::ExactLink.
#include <click/config.h>
#include "tlexactunqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
#include <click/standard/scheduleinfo.hh>
#include "tltime.hh"
CLICK_DECLS

TLExactUnqueue::TLExactUnqueue() : _task(this), _timer(this) {}

int TLExactUnqueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  if (Args(conf, this, errh).read_mp("RATE", _rate).read("EXTRA", _extra).complete() < 0) return -1;
  if (_rate == 0) return errh->error("RATE must be positive (bits per second)");
  return 0;
}

int TLExactUnqueue::initialize(ErrorHandler* errh) {
  tl_origin();
  _link = new tracelab::ExactLink(_rate);
  ScheduleInfo::initialize_task(this, &_task, errh);
  _timer.initialize(this);
  _signal = Notifier::upstream_empty_signal(this, 0, &_task);
  return 0;
}

void TLExactUnqueue::cleanup(CleanupStage) {
  delete _link;
  _link = nullptr;
}

// Pull one packet and start sending it at `start`.
bool TLExactUnqueue::send_one(tracelab::Time start) {
  Packet* p = input(0).pull();
  if (!p) return false;
  if (_link->packets() == 0) _first = start;
  _link->send(start, p->length() + _extra);
  output(0).push(p);
  _timer.schedule_at(tl_timestamp_ceil(_link->busy_until()));
  return true;
}

// The task pulls when the link is idle and upstream has something (the
// notifier wakes it): the packet starts now.
bool TLExactUnqueue::run_task(Task*) {
  const tracelab::Time now = tl_now_ps();
  if (!_link->idle_at(now) || _timer.scheduled()) return false;
  if (send_one(now)) return true;
  if (_signal) _task.fast_reschedule();
  return false;
}

// The link became free: pull at once and start at the exact end of the
// previous packet. Click fires the timer at the next nanosecond (or later,
// by the driver's jitter); the packet was waiting, so the link's schedule,
// not the timer's firing time, is its start: no rounding, no drift.
void TLExactUnqueue::run_timer(Timer*) {
  if (!send_one(_link->busy_until())) _task.reschedule();
}

enum { h_count, h_bytes, h_busy, h_span, h_reset };

String TLExactUnqueue::read_handler(Element* e, void* thunk) {
  TLExactUnqueue* u = static_cast<TLExactUnqueue*>(e);
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_count:
      return String(u->_link->packets() - u->_base_packets);
    case h_bytes:
      return String(u->_link->bytes() - u->_base_bytes);
    case h_busy:
      return String(static_cast<int64_t>(u->_link->busy_until()));
    case h_span:
      return String(static_cast<int64_t>(u->_link->busy_until() - u->_first));
  }
  return String();
}

int TLExactUnqueue::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLExactUnqueue* u = static_cast<TLExactUnqueue*>(e);
  u->_base_packets = u->_link->packets();
  u->_base_bytes = u->_link->bytes();
  return 0;
}

void TLExactUnqueue::add_handlers() {
  add_read_handler("count", read_handler, h_count);
  add_read_handler("bytes", read_handler, h_bytes);
  add_read_handler("busy_until", read_handler, h_busy);
  add_read_handler("span", read_handler, h_span);
  add_write_handler("reset", write_handler, h_reset, Handler::BUTTON);
  add_task_handlers(&_task);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLExactUnqueue)
