// TLJumboGenDecap: a thin Click adapter over tracelab::Dechunker + EgressShaper.
#include <click/config.h>
#include "tljumbogendecap.hh"
#include <click/args.hh>
#include <click/error.hh>
#include "chunk_format.hh"
#include "tltime.hh"
CLICK_DECLS

using tracelab::Time;
namespace jg = tracelab::jg;

static constexpr Time kJumboTimeUnit = tracelab::kMicrosecond;  // chunk_format.hh

TLJumboGenDecap::TLJumboGenDecap() : _timer(this) {}

void* TLJumboGenDecap::cast(const char* name) {
  if (strcmp(name, ActiveNotifier::EMPTY_NOTIFIER) == 0) return static_cast<Notifier*>(&_notifier);
  return Element::cast(name);
}

int TLJumboGenDecap::configure(Vector<String>& conf, ErrorHandler* errh) {
  if (Args(conf, this, errh)
          .read("SHAPING", _shaping)
          .read("ECN", _ecn)
          .read("CAPACITY", _capacity)
          .read("PROTO", _proto)
          .read("HEADROOM", _headroom)
          .complete() < 0)
    return -1;
  if (_capacity == 0 || _capacity > (1u << 24)) return errh->error("CAPACITY must be between 1 and 2^24");
  return 0;
}

int TLJumboGenDecap::initialize(ErrorHandler*) {
  tl_origin();
  _core = new tracelab::EgressShaper(_capacity);
  _core->set_drop_sink(this);
  _handles.init(_capacity + 1);
  _timer.initialize(this);
  _notifier.initialize(Notifier::EMPTY_NOTIFIER, router());
  return 0;
}

void TLJumboGenDecap::cleanup(CleanupStage) {
  _handles.clear();
  delete _core;
  _core = nullptr;
}

void TLJumboGenDecap::on_drop(const tracelab::Packet& p, tracelab::DropReason, Time) { _handles.drop(p.handle); }

void TLJumboGenDecap::arm(Time now) { tl_arm(_core->next_ready(now), now, _timer, _notifier); }

void TLJumboGenDecap::hold(Packet* p, Time release, Time now) {
  tracelab::Packet cp;
  cp.length = p->length();
  cp.handle = _handles.put(p);
  _core->enqueue_at(cp, release, now);
  _handles.flush_drops(this, 2);  // no such port: capacity drops are killed
}

void TLJumboGenDecap::push(int, Packet* p) {
  const Time now = tl_now_ps();
  const uint8_t* d = p->data();
  const bool ipv4 = p->length() >= 20 && (d[0] >> 4) == 4;
  const uint32_t hl = ipv4 ? (d[0] & 0x0F) * 4u : 0;
  if (!ipv4 || d[9] != _proto || hl < 20) {
    ++_passed;
    hold(p, now, now);
    arm(now);
    return;
  }
  const uint32_t total = jg::rd16(d + 2);
  const tracelab::Dechunker dechunker(_shaping, kJumboTimeUnit);
  tracelab::SplitResult r;
  if (total < hl || total > p->length()) r.error = jg::FormatError::kTruncated;
  else r = dechunker.split(d + hl, total - hl, now, _split, sizeof(_split) / sizeof(_split[0]));
  if (r.error != jg::FormatError::kOk) {
    ++_malformed;
    checked_output_push(1, p);
    return;
  }
  ++_grams;
  _missing += r.missing;
  for (size_t i = 0; i < r.count; ++i) {
    WritablePacket* q = Packet::make(_headroom, d + hl + _split[i].offset, _split[i].length, 0);
    if (!q) {
      ++_lost;
      continue;
    }
    uint8_t* ip = q->data();
    const bool inner_v4 =
        q->length() >= 20 && (ip[0] >> 4) == 4 && (ip[0] & 0x0F) >= 5 && (ip[0] & 0x0F) * 4u <= q->length();
    if (_ecn && r.missing && inner_v4 && ((ip[1] & 3) == 1 || (ip[1] & 3) == 2)) {
      ip[1] |= 3;
      jg::wr16(ip + 10, 0);
      jg::wr16(ip + 10, jg::internet_checksum(ip, (ip[0] & 0x0F) * 4u));
      ++_ce;
    }
    if (inner_v4) q->set_ip_header(reinterpret_cast<click_ip*>(ip), (ip[0] & 0x0F) * 4u);
    q->timestamp_anno() = p->timestamp_anno();
    ++_packets;
    hold(q, _split[i].release, now);
  }
  p->kill();
  arm(now);
}

Packet* TLJumboGenDecap::pull(int) {
  const Time now = tl_now_ps();
  tracelab::Packet store[1];
  tracelab::Batch out{store, 1};
  if (!_core->dequeue(now, out)) {
    arm(now);
    return nullptr;
  }
  arm(now);
  return _handles.take(store[0].handle);
}

void TLJumboGenDecap::run_timer(Timer*) { arm(tl_now_ps()); }

enum { h_length, h_highwater, h_drops, h_grams, h_packets, h_passed, h_missing, h_ce, h_malformed };

String TLJumboGenDecap::read_handler(Element* e, void* thunk) {
  TLJumboGenDecap* u = static_cast<TLJumboGenDecap*>(e);
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_length:
      return String(u->_core->length_packets());
    case h_highwater:
      return String(u->_core->counters().highwater_packets);
    case h_drops:
      return String(u->_core->counters().dropped_total() - u->_base_drops + u->_lost);
    case h_grams:
      return String(u->_grams);
    case h_packets:
      return String(u->_packets);
    case h_passed:
      return String(u->_passed);
    case h_missing:
      return String(u->_missing);
    case h_ce:
      return String(u->_ce);
    case h_malformed:
      return String(u->_malformed);
  }
  return String();
}

int TLJumboGenDecap::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLJumboGenDecap* u = static_cast<TLJumboGenDecap*>(e);
  u->_base_drops = u->_core->counters().dropped_total();
  u->_grams = u->_packets = u->_passed = u->_missing = u->_ce = u->_malformed = u->_lost = 0;
  return 0;
}

void TLJumboGenDecap::add_handlers() {
  add_read_handler("length", read_handler, h_length);
  add_read_handler("highwater_length", read_handler, h_highwater);
  add_read_handler("drops", read_handler, h_drops);
  add_read_handler("jumbograms", read_handler, h_grams);
  add_read_handler("packets", read_handler, h_packets);
  add_read_handler("passed", read_handler, h_passed);
  add_read_handler("missing", read_handler, h_missing);
  add_read_handler("ce_marked", read_handler, h_ce);
  add_read_handler("malformed", read_handler, h_malformed);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLJumboGenDecap)
