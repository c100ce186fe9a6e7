// TLLasQueue: Click adapter over tracelab::LasCore (core/las.hh).
#include <click/config.h>
#include "tllasqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLLasQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  args.read("ACK", _cfg.ack_aware).read("MAX_FLOWS", _cfg.flows.max_flows);
  if (args.complete() < 0) return -1;
  if (_cfg.flows.max_flows == 0) return errh->error("MAX_FLOWS must be positive");
  return check_config(errh);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLLasQueue)
