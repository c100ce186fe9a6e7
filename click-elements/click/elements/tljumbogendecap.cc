// TLJumboGenDecap: a thin Click adapter over tracelab::Dechunker + EgressShaper.
#include <click/config.h>
#include "tljumbogendecap.hh"
#include <click/args.hh>
#include <click/error.hh>
#include "chunk_format.hh"
CLICK_DECLS

using tracelab::Time;
namespace jg = tracelab::jg;

static constexpr Time kJumboTimeUnit = tracelab::kMicrosecond;  // chunk_format.hh

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
  attach(new tracelab::EgressShaper(_capacity), _capacity);
  return 0;
}

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

String TLJumboGenDecap::drops_handler(Element* e, void*) {
  TLJumboGenDecap* u = static_cast<TLJumboGenDecap*>(e);
  return String(u->_core->counters().dropped_total() + u->_lost);
}

int TLJumboGenDecap::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLJumboGenDecap* u = static_cast<TLJumboGenDecap*>(e);
  u->_core->reset_counters();
  u->_grams = u->_packets = u->_passed = u->_missing = u->_ce = u->_malformed = u->_lost = 0;
  return 0;
}

void TLJumboGenDecap::add_handlers() {
  add_length_handlers();
  add_read_handler("drops", drops_handler);
  add_data_handlers("jumbograms", Handler::f_read, &_grams);
  add_data_handlers("packets", Handler::f_read, &_packets);
  add_data_handlers("passed", Handler::f_read, &_passed);
  add_data_handlers("missing", Handler::f_read, &_missing);
  add_data_handlers("ce_marked", Handler::f_read, &_ce);
  add_data_handlers("malformed", Handler::f_read, &_malformed);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLJumboGenDecap)
