// TLFifoQueue: Click adapter over tracelab::FifoCore (core/fifo.hh).
#include <click/config.h>
#include "tlfifoqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLFifoQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  return args.complete();
}

tracelab::QueueCore* TLFifoQueue::make_core(ErrorHandler*) {
  return new tracelab::FifoCore(_buffer);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLFifoQueue)
