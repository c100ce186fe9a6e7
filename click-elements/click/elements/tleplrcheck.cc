// TLEplrCheck: a thin Click adapter over tracelab::EplrMeter.
#include <click/config.h>
#include "tleplrcheck.hh"
#include <click/args.hh>
#include <click/error.hh>
#include <click/packet_anno.hh>
#include <click/straccum.hh>
#include <vector>
#include "tlelementutil.hh"
CLICK_DECLS

using tracelab::Time;

int TLEplrCheck::configure(Vector<String>& conf, ErrorHandler* errh) {
  String budgets, fixed;
  if (Args(conf, this, errh).read_mp("BUDGETS", AnyArg(), budgets).read("FIXED", AnyArg(), fixed).complete() < 0)
    return -1;
  if (!tl_parse_us_list(budgets, _budgets) || _budgets.empty())
    return errh->error("BUDGETS: one or more microsecond values");
  if (!tl_parse_us_list(fixed, _fixed)) return errh->error("FIXED: microsecond values");
  while (_fixed.size() < _budgets.size()) _fixed.push_back(_fixed.empty() ? 0 : _fixed.back());
  delete _meter;
  _meter = new tracelab::EplrMeter(std::vector<Time>(_budgets.begin(), _budgets.end()));
  tl_origin();
  return 0;
}

size_t TLEplrCheck::group(const Packet* p) const {
  const size_t g = PAINT_ANNO(p);
  return g < size_t(_budgets.size()) ? g : _budgets.size() - 1;
}

void TLEplrCheck::push(int port, Packet* p) {
  const size_t g = group(p);
  if (port == 1) {
    _meter->on_sent(g);
    p->kill();
    return;
  }
  const Time delay = tl_now_ps() - tl_ps(p->timestamp_anno()) - _fixed[g];
  _meter->on_received(g, delay);
  output(0).push(p);
}

enum { h_sent, h_received, h_late, h_eplr, h_worst };

String TLEplrCheck::read_handler(Element* e, void* thunk) {
  TLEplrCheck* c = static_cast<TLEplrCheck*>(e);
  const tracelab::EplrMeter& m = *c->_meter;
  uint64_t sent = 0, received = 0, late = 0;
  double worst = 0;
  StringAccum sa;
  for (size_t g = 0; g < m.groups(); ++g) {
    sent += m.sent(g);
    received += m.received(g);
    late += m.late(g);
    if (m.eplr_at_receiver(g) > worst) worst = m.eplr_at_receiver(g);
    sa << g << ' ' << m.sent(g) << ' ' << m.received(g) << ' ' << m.late(g) << ' ' << m.eplr_at_receiver(g) << '\n';
  }
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_sent:
      return String(sent);
    case h_received:
      return String(received);
    case h_late:
      return String(late);
    case h_eplr:
      return sa.take_string();
    case h_worst:
      return String(worst);
  }
  return String();
}

int TLEplrCheck::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLEplrCheck* c = static_cast<TLEplrCheck*>(e);
  delete c->_meter;
  c->_meter = new tracelab::EplrMeter(std::vector<Time>(c->_budgets.begin(), c->_budgets.end()));
  return 0;
}

void TLEplrCheck::add_handlers() {
  add_read_handler("sent", read_handler, h_sent);
  add_read_handler("received", read_handler, h_received);
  add_read_handler("late", read_handler, h_late);
  add_read_handler("eplr", read_handler, h_eplr);
  add_read_handler("worst", read_handler, h_worst);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLEplrCheck)
