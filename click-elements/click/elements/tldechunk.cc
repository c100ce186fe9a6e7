// TLDechunk: a thin Click adapter over tracelab::Dechunker.
#include <click/config.h>
#include "tldechunk.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLDechunk::configure(Vector<String>& conf, ErrorHandler* errh) {
  return Args(conf, this, errh).read("HEADROOM", _headroom).complete();
}

void TLDechunk::push(int, Packet* p) {
  const tracelab::Dechunker d(false, 1);
  const tracelab::SplitResult r = d.split(p->data(), p->length(), 0, _split, sizeof(_split) / sizeof(_split[0]));
  if (r.error != tracelab::jg::FormatError::kOk) {
    ++_malformed;
    checked_output_push(1, p);
    return;
  }
  _missing += r.missing;
  for (size_t i = 0; i < r.count; ++i) {
    if (WritablePacket* q = Packet::make(_headroom, p->data() + _split[i].offset, _split[i].length, 0)) {
      q->timestamp_anno() = p->timestamp_anno();
      ++_packets;
      output(0).push(q);
    }
  }
  p->kill();
}

enum { h_packets, h_missing, h_malformed, h_reset };

String TLDechunk::read_handler(Element* e, void* thunk) {
  TLDechunk* d = static_cast<TLDechunk*>(e);
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_packets:
      return String(d->_packets);
    case h_missing:
      return String(d->_missing);
    case h_malformed:
      return String(d->_malformed);
  }
  return String();
}

int TLDechunk::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLDechunk* d = static_cast<TLDechunk*>(e);
  d->_packets = d->_missing = d->_malformed = 0;
  return 0;
}

void TLDechunk::add_handlers() {
  add_read_handler("packets", read_handler, h_packets);
  add_read_handler("missing", read_handler, h_missing);
  add_read_handler("malformed", read_handler, h_malformed);
  add_read_handler("drops", read_handler, h_malformed);
  add_write_handler("reset", write_handler, h_reset, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLDechunk)
