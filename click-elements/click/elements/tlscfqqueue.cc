// TLScfqQueue: Click adapter over tracelab::ScfqCore (core/scfq.hh).
#include <click/config.h>
#include "tlscfqqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLScfqQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  return args.complete();
}

tracelab::QueueCore* TLScfqQueue::make_core(ErrorHandler*) {
  _cfg.buffer = _buffer;
  return _mech = new tracelab::ScfqCore(_cfg);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLScfqQueue)
