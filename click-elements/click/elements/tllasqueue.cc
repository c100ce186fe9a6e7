// TLLasQueue: Click adapter over tracelab::LasCore (core/las.hh).
#include <click/config.h>
#include "tllasqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLLasQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  String table_seed;
  args.read("ACK", _cfg.ack_aware).read("MAX_FLOWS", _cfg.flows.max_flows).read("TABLE_SEED", AnyArg(), table_seed);
  if (args.complete() < 0) return -1;
  if (_cfg.flows.max_flows == 0) return errh->error("MAX_FLOWS must be positive");
  if (tl_table_seed(table_seed, _cfg.flows.table_seed, errh) < 0) return -1;
  return check_config(errh);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLLasQueue)
