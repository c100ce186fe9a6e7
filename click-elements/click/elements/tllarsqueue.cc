// TLLarsQueue: Click adapter over tracelab::LarsCore (core/lars.hh).
#include <click/config.h>
#include "tllarsqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLLarsQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  double tau = 1.0;
  String table_seed;
  args.read("BETA", _cfg.beta)
      .read("TAU", tau)
      .read("ACK", _cfg.ack_aware)
      .read("MAX_FLOWS", _cfg.flows.max_flows)
      .read("TABLE_SEED", AnyArg(), table_seed);
  if (args.complete() < 0) return -1;
  if (!(_cfg.beta > 0 && _cfg.beta <= 1) || !(tau > 0)) return errh->error("need 0 < BETA <= 1 and TAU > 0");
  if (_cfg.flows.max_flows == 0) return errh->error("MAX_FLOWS must be positive");
  if (tl_table_seed(table_seed, _cfg.flows.table_seed, errh) < 0) return -1;
  _cfg.tau = tracelab::Time(tau * double(tracelab::kSecond));
  return check_config(errh);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLLarsQueue)
