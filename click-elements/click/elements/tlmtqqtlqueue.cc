// TLMtqQtlQueue: a thin Click adapter over tracelab::MtqQtlQueue.
#include <click/config.h>
#include "tlmtqqtlqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
#include "param_checks.hh"
#include "mtq_qtl_header.hh"
CLICK_DECLS

using tracelab::Time;
namespace mq = tracelab::mq;

int TLMtqQtlQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  uint32_t capacity = 200;
  if (Args(conf, this, errh)
          .read_p("CAPACITY", capacity)
          .read("RATE", _cfg.link_bps)
          .read("IN_SERVICE", _cfg.count_in_service)
          .complete() < 0)
    return -1;
  if (capacity == 0 || capacity > (1u << 24)) return errh->error("CAPACITY must be between 1 and 2^24");
  if (_cfg.link_bps == 0) return errh->error("RATE must be positive (bits per second)");
  _cfg.capacity_packets = capacity;
  const std::string e = tracelab::check_params(_cfg);
  if (!e.empty()) return errh->error("%s", e.c_str());
  return 0;
}

int TLMtqQtlQueue::initialize(ErrorHandler*) {
  attach(new tracelab::MtqQtlQueue(_cfg), static_cast<uint32_t>(_cfg.capacity_packets));
  return 0;
}

// IP-level length: the total length field where it is consistent.
static uint32_t ip_length(const Packet* p) {
  const uint8_t* d = p->data();
  if (p->length() >= 20 && (d[0] >> 4) == 4) {
    const uint32_t t = uint32_t(d[2]) << 8 | d[3];
    if (t >= 20 && t <= p->length()) return t;
  } else if (p->length() >= 40 && (d[0] >> 4) == 6) {
    const uint32_t t = 40 + (uint32_t(d[4]) << 8 | d[5]);
    if (t <= p->length()) return t;
  }
  return p->length();
}

void TLMtqQtlQueue::push(int, Packet* p) {
  const Time now = tl_now_ps();
  tracelab::Packet cp;
  cp.length = ip_length(p);
  mq::Fields f;
  const mq::HeaderError e = mq::decode(p->data(), p->length(), f);
  if (e == mq::HeaderError::kOk) mq::to_packet(f, cp);
  else if (e != mq::HeaderError::kAbsent) ++_bad_header;
  cp.handle = _handles.put(p);
  cp.arrival = now;
  _core->enqueue(cp, now);
  pushed();
}

Packet* TLMtqQtlQueue::pull(int) {
  tracelab::Packet meta;
  Packet* p = pull_one(meta);
  if (!p || !(meta.flags & tracelab::kFlagHasQtl)) return p;
  // Write the decreased QTL back, in place (the option is there: it was read).
  WritablePacket* w = p->uniqueify();
  if (!w) return nullptr;
  size_t new_len;
  mq::mark(w->data(), w->length(), w->length(), mq::from_packet(meta), new_len);
  return w;
}

enum { h_drops, h_overflow, h_mtq, h_qtl, h_viol, h_viol_mtq, h_viol_qtl, h_bad, h_served };

String TLMtqQtlQueue::read_handler(Element* e, void* thunk) {
  TLMtqQtlQueue* q = static_cast<TLMtqQtlQueue*>(e);
  const tracelab::Counters& c = q->_core->counters();
  const tracelab::MtqQtlStats& s = q->_core->stats();
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_drops:
      return String(c.dropped_total());
    case h_overflow:
      return String(s.overflow_drops);
    case h_mtq:
      return String(s.mtq_drops);
    case h_qtl:
      return String(s.qtl_drops);
    case h_viol:
      return String(s.mtq_violations + s.qtl_violations);
    case h_viol_mtq:
      return String(s.mtq_violations);
    case h_viol_qtl:
      return String(s.qtl_violations);
    case h_bad:
      return String(q->_bad_header);
    case h_served:
      return String(c.served);
  }
  return String();
}

int TLMtqQtlQueue::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLMtqQtlQueue* q = static_cast<TLMtqQtlQueue*>(e);
  q->_core->reset_counters();  // every counter and statistic, as a fresh core's
  q->_bad_header = 0;
  return 0;
}

void TLMtqQtlQueue::add_handlers() {
  add_length_handlers();
  add_read_handler("drops", read_handler, h_drops);
  add_read_handler("drops_overflow", read_handler, h_overflow);
  add_read_handler("drops_mtq", read_handler, h_mtq);
  add_read_handler("drops_qtl", read_handler, h_qtl);
  add_read_handler("violations", read_handler, h_viol);
  add_read_handler("violations_mtq", read_handler, h_viol_mtq);
  add_read_handler("violations_qtl", read_handler, h_viol_qtl);
  add_read_handler("bad_header", read_handler, h_bad);
  add_read_handler("served", read_handler, h_served);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLMtqQtlQueue)
