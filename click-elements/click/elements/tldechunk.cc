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

int TLDechunk::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLDechunk* d = static_cast<TLDechunk*>(e);
  d->_packets = d->_missing = d->_malformed = 0;
  return 0;
}

void TLDechunk::add_handlers() {
  add_data_handlers("packets", Handler::f_read, &_packets);
  add_data_handlers("missing", Handler::f_read, &_missing);
  add_data_handlers("malformed", Handler::f_read, &_malformed);
  add_data_handlers("drops", Handler::f_read, &_malformed);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLDechunk)
