// TLScfqQueue: Click adapter over tracelab::ScfqCore (core/scfq.hh). Everything but the
// class and its TABLE_SEED is TLCoreQueue's and TLQueueElement's.
#include <click/config.h>
#include "tlscfqqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLScfqQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  String table_seed;
  args.read("TABLE_SEED", AnyArg(), table_seed);
  if (args.complete() < 0) return -1;
  if (tl_table_seed(table_seed, _cfg.table_seed, errh) < 0) return -1;
  return check_config(errh);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLScfqQueue)
