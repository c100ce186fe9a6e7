// TLMtqQtlMark: writes MTQ/QTL into packets (core/mtq_qtl_header.hh).
#include <click/config.h>
#include "tlmtqqtlmark.hh"
#include <click/args.hh>
#include <click/error.hh>
#include <click/packet_anno.hh>
#include <click/straccum.hh>
CLICK_DECLS

namespace mq = tracelab::mq;

static int parse_list(const String& s, uint64_t max, Vector<uint64_t>& out) {
  Vector<String> words;
  cp_spacevec(cp_unquote(s), words);
  for (const String& w : words) {
    uint64_t v;
    if (!IntArg().parse(w, v) || v > max) return -1;
    out.push_back(v);
  }
  return 0;
}

int TLMtqQtlMark::configure(Vector<String>& conf, ErrorHandler* errh) {
  String mtq, qtl;
  if (Args(conf, this, errh).read("MTQ", AnyArg(), mtq).read("QTL", AnyArg(), qtl).complete() < 0) return -1;
  Vector<uint64_t> m, q;
  if (parse_list(mtq, mq::kMtqAbsent - 1, m) < 0)
    return errh->error("MTQ: microseconds per class, each at most %u", unsigned(mq::kMtqAbsent - 1));
  if (parse_list(qtl, (mq::kQtlAbsent - 1) / 1000, q) < 0)
    return errh->error("QTL: microseconds per class, each at most %u", unsigned((mq::kQtlAbsent - 1) / 1000));
  if (m.empty() && q.empty()) return errh->error("set MTQ, QTL or both");
  _mtq_us.clear();
  _qtl_ns.clear();
  for (uint64_t v : m) _mtq_us.push_back(static_cast<uint16_t>(v));
  for (uint64_t v : q) _qtl_ns.push_back(static_cast<uint32_t>(v * 1000));
  return 0;
}

Packet* TLMtqQtlMark::simple_action(Packet* p) {
  const int c = PAINT_ANNO(p);
  mq::Fields f;
  if (!_mtq_us.empty()) f.mtq_us = _mtq_us[c < _mtq_us.size() ? c : _mtq_us.size() - 1];
  if (!_qtl_ns.empty()) f.qtl_ns = _qtl_ns[c < _qtl_ns.size() ? c : _qtl_ns.size() - 1];
  const uint32_t len = p->length();
  // Room for the larger insertion (IPv6: 16 bytes); trimmed back below.
  WritablePacket* w = p->put(mq::kIpv6ExtSize);
  if (!w) return nullptr;
  size_t new_len = len;
  const mq::HeaderError e = mq::mark(w->data(), len, len + mq::kIpv6ExtSize, f, new_len);
  w->take(len + mq::kIpv6ExtSize - new_len);
  if (e != mq::HeaderError::kOk) {
    ++_errors[int(e)];
    checked_output_push(1, w);
    return nullptr;
  }
  ++_marked;
  uint8_t* ip = w->data();
  if ((ip[0] >> 4) == 4) w->set_ip_header(reinterpret_cast<click_ip*>(ip), (ip[0] & 0x0F) * 4u);
  else w->set_network_header(ip, 40);
  return w;
}

enum { h_marked, h_errors, h_reasons };

String TLMtqQtlMark::read_handler(Element* e, void* thunk) {
  TLMtqQtlMark* m = static_cast<TLMtqQtlMark*>(e);
  uint64_t total = 0;
  for (uint64_t n : m->_errors) total += n;
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_marked:
      return String(m->_marked);
    case h_errors:
      return String(total);
    case h_reasons: {
      StringAccum sa;
      for (int r = int(mq::HeaderError::kTruncated); r <= int(mq::HeaderError::kNoRoom); ++r)
        sa << mq::header_error_name(mq::HeaderError(r)) << ' ' << m->_errors[r] << '\n';
      return sa.take_string();
    }
  }
  return String();
}

int TLMtqQtlMark::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLMtqQtlMark* m = static_cast<TLMtqQtlMark*>(e);
  m->_marked = 0;
  for (uint64_t& n : m->_errors) n = 0;
  return 0;
}

void TLMtqQtlMark::add_handlers() {
  add_read_handler("marked", read_handler, h_marked);
  add_read_handler("errors", read_handler, h_errors);
  add_read_handler("error_reasons", read_handler, h_reasons);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLMtqQtlMark)
