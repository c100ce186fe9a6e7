// TLEfdQueue: Click adapter over tracelab::EfdCore (core/efd.hh).
#include <click/config.h>
#include "tlefdqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLEfdQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 300);
  String variant = "befd", counter = "admitted", high = "fifo", low = "fifo";
  String table_seed;
  int64_t threshold = -1;
  args.read("VARIANT", WordArg(), variant)
      .read("THRESHOLD", threshold)
      .read("COUNTER", WordArg(), counter)
      .read("HIGH", WordArg(), high)
      .read("LOW", WordArg(), low)
      .read("PUSHOUT", _cfg.queue.push_out)
      .read("PRECHECK", _cfg.queue.byte_pushout_precheck)
      .read("TABLE_SEED", AnyArg(), table_seed);
  if (args.complete() < 0) return -1;
  if (variant == "pefd") _cfg = merge(tracelab::EfdConfig::pefd(), _cfg);
  else if (variant == "efdack") _cfg = merge(tracelab::EfdConfig::efdack(), _cfg);
  else if (variant != "befd") return errh->error("VARIANT must be befd, pefd or efdack");
  if (tl_table_seed(table_seed, _cfg.table_seed, errh) < 0) return -1;
  if (threshold >= 0) _cfg.threshold = uint64_t(threshold);
  if (counter == "served") _cfg.counter = tracelab::EfdCounter::kServed;
  else if (counter != "admitted") return errh->error("COUNTER must be admitted or served");
  if (parse_discipline(high, _cfg.queue.high) < 0 || parse_discipline(low, _cfg.queue.low) < 0)
    return errh->error("HIGH and LOW must be fifo or las");
  return check_config(errh);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLEfdQueue)
