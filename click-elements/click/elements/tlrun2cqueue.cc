// TLRun2CQueue: Click adapter over tracelab::Run2cCore (core/run2c.hh).
#include <click/config.h>
#include "tlrun2cqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLRun2CQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  uint32_t idle = 30;
  String table_seed;
  args.read("THRESHOLD", _cfg.threshold)
      .read("ACK", _cfg.ack_aware)
      .read("MAX_FLOWS", _cfg.flows.max_flows)
      .read("IDLE_TIMEOUT", idle)
      .read("TABLE_SEED", AnyArg(), table_seed);
  if (args.complete() < 0) return -1;
  _cfg.flows.idle_timeout = tracelab::Time(idle) * tracelab::kSecond;
  if (_cfg.flows.max_flows == 0) return errh->error("MAX_FLOWS must be positive");
  if (tl_table_seed(table_seed, _cfg.flows.table_seed, errh) < 0) return -1;
  return check_config(errh);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLRun2CQueue)
