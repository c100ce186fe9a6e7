// TLJumboGenRed: a thin Click adapter over tracelab::JumboGenRed.
#include <click/config.h>
#include "tljumbogenred.hh"
#include <click/args.hh>
#include <click/error.hh>
#include "param_checks.hh"
#include "chunk_format.hh"
CLICK_DECLS

using tracelab::DropReason;
using tracelab::Time;
namespace jg = tracelab::jg;

int TLJumboGenRed::configure(Vector<String>& conf, ErrorHandler* errh) {
  String mode = "partial";
  uint32_t capacity = 200, slots = 4096;
  if (Args(conf, this, errh)
          .read("MODE", WordArg(), mode)
          .read("MIN_TH", _cfg.min_th)
          .read("MAX_TH", _cfg.max_th)
          .read("MAX_P", _cfg.max_p)
          .read("W_Q", _cfg.w_q)
          .read("MIN_PKT_DROP", _cfg.min_pkt_drop)
          .read("MAX_PKT_DROP", _cfg.max_pkt_drop)
          .read("JG_WEIGHT", _cfg.jg_fraction_weight)
          .read("CAPACITY", capacity)
          .read("SLOTS", slots)
          .read("PROTO", _proto)
          .read("SEED", _cfg.seed)
          .complete() < 0)
    return -1;
  if (mode == "partial") _cfg.mode = tracelab::JumboRedMode::kPartialDrop;
  else if (mode == "full") _cfg.mode = tracelab::JumboRedMode::kFullDrop;
  else if (mode == "standard") _cfg.mode = tracelab::JumboRedMode::kStandard;
  else return errh->error("MODE must be partial, full or standard");
  if (!(_cfg.min_th >= 0 && _cfg.min_th <= _cfg.max_th)) return errh->error("need 0 <= MIN_TH <= MAX_TH");
  if (!(_cfg.max_p >= 0 && _cfg.max_p <= 1 && _cfg.w_q > 0 && _cfg.w_q <= 1))
    return errh->error("MAX_P must lie in [0, 1] and W_Q in (0, 1]");
  if (!(_cfg.min_pkt_drop >= 0 && _cfg.min_pkt_drop <= _cfg.max_pkt_drop && _cfg.max_pkt_drop <= 1))
    return errh->error("need 0 <= MIN_PKT_DROP <= MAX_PKT_DROP <= 1");
  if (capacity == 0 || slots == 0 || slots > (1u << 24)) return errh->error("CAPACITY and SLOTS must be positive");
  _cfg.capacity = capacity;
  _cfg.ring_slots = slots;
  const std::string e = tracelab::check_params(_cfg);
  if (!e.empty()) return errh->error("%s", e.c_str());
  return 0;
}

int TLJumboGenRed::initialize(ErrorHandler*) {
  attach(new tracelab::JumboGenRed(_cfg), static_cast<uint32_t>(_cfg.ring_slots));
  return 0;
}

void TLJumboGenRed::push(int, Packet* p) {
  const Time now = tl_now_ps();
  tracelab::Packet cp;
  cp.length = p->length();
  const uint8_t* d = p->data();
  const bool ipv4 = p->length() >= 20 && (d[0] >> 4) == 4;
  const uint32_t hl = ipv4 ? (d[0] & 0x0F) * 4u : 0;
  const uint32_t total = ipv4 ? jg::rd16(d + 2) : 0;
  if (ipv4 && d[9] == _proto && hl >= 20 && total >= hl && total <= p->length()) {
    // A JumboGram: the core may cut trailing packets in place.
    WritablePacket* w = p->uniqueify();
    if (!w) return;
    if (w->length() > total) w->take(w->length() - total);  // link padding
    cp.length = total;
    cp.handle = _handles.put(w);
    const tracelab::JumboRedResult r = _core->enqueue_jumbogram(cp, w->data() + hl, total - hl, now);
    // Cut whatever the partial drop removed, also when the JumboGram was
    // then dropped (its bytes were already rewritten for the shorter form).
    if (r.new_length != total - hl) {
      uint8_t* o = w->data();
      const uint32_t new_total = hl + static_cast<uint32_t>(r.new_length);
      jg::wr16(o + 2, static_cast<uint16_t>(new_total));
      jg::wr16(o + 10, 0);
      jg::wr16(o + 10, jg::internet_checksum(o, hl));
      w->take(total - new_total);
    }
  } else {
    cp.handle = _handles.put(p);
    _core->enqueue(cp, now);
  }
  pushed();
}

enum { h_units, h_drops, h_red, h_full, h_grams, h_selected, h_partial, h_malformed, h_avg, h_frac };

String TLJumboGenRed::read_handler(Element* e, void* thunk) {
  TLJumboGenRed* q = static_cast<TLJumboGenRed*>(e);
  const tracelab::Counters& c = q->_core->counters();
  const tracelab::JumboRedStats& s = q->_core->stats();
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_units:
      return String(q->_core->length_units());
    case h_drops:
      return String(c.dropped_total());
    case h_red:
      return String(c.dropped[int(DropReason::kEarlyDiscard)]);
    case h_full:
      return String(c.dropped[int(DropReason::kBufferFull)]);
    case h_grams:
      return String(s.jumbograms);
    case h_selected:
      return String(s.selected);
    case h_partial:
      return String(s.partial_dropped);
    case h_malformed:
      return String(s.malformed);
    case h_avg:
      return String(s.avg);
    case h_frac:
      return String(s.jg_fraction);
  }
  return String();
}

int TLJumboGenRed::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLJumboGenRed* q = static_cast<TLJumboGenRed*>(e);
  q->_core->reset_counters();  // counters and counts as a fresh core's; RED's averages stay
  return 0;
}

void TLJumboGenRed::add_handlers() {
  add_length_handlers();
  add_read_handler("length_units", read_handler, h_units);
  add_read_handler("drops", read_handler, h_drops);
  add_read_handler("drops_red", read_handler, h_red);
  add_read_handler("drops_buffer_full", read_handler, h_full);
  add_read_handler("jumbograms", read_handler, h_grams);
  add_read_handler("selected", read_handler, h_selected);
  add_read_handler("partial_dropped", read_handler, h_partial);
  add_read_handler("malformed", read_handler, h_malformed);
  add_read_handler("avg", read_handler, h_avg);
  add_read_handler("jg_fraction", read_handler, h_frac);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLJumboGenRed)
