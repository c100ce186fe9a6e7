// TLSiftQueue: Click adapter over tracelab::SiftCore (core/sift.hh).
#include <click/config.h>
#include "tlsiftqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLSiftQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  String table_seed;
  args.read("PROBABILITY", _cfg.probability)
      .read("SAMPLES", _cfg.sample_threshold)
      .read("SEED", _cfg.seed)
      .read("MAX_FLOWS", _cfg.flows.max_flows)
      .read("TABLE_SEED", AnyArg(), table_seed);
  if (args.complete() < 0) return -1;
  if (_cfg.sample_threshold == 0 || _cfg.flows.max_flows == 0)
    return errh->error("SAMPLES and MAX_FLOWS must be positive");
  if (tl_table_seed(table_seed, _cfg.flows.table_seed, errh) < 0) return -1;
  if (!(_cfg.probability >= 0 && _cfg.probability <= 1)) return errh->error("PROBABILITY must be in [0, 1]");
  return check_config(errh);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLSiftQueue)
