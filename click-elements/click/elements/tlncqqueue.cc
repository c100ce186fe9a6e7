// TLNcqQueue: Click adapter over tracelab::NcqCore (core/ncq.hh).
#include <click/config.h>
#include "tlncqqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
CLICK_DECLS

int TLNcqQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  Args args(conf, this, errh);
  read_buffer(args, 100);
  String variant = "ncqplus", tiny = "favored";
  args.read("VARIANT", WordArg(), variant)
      .read("SIZE_THRESH", _cfg.size_thresh)
      .read("SIZE_THRESH1", _cfg.size_thresh1)
      .read("SIZE_THRESH2", _cfg.size_thresh2)
      .read("THRESH1", _cfg.ncqthresh1)
      .read("ALPHA", _cfg.alpha)
      .read("TINY_RATE", WordArg(), tiny)
      .read("FAVOR_ACKS", _cfg.favor_pure_acks)
      .read("PUSHOUT", _cfg.queue.push_out);
  if (args.complete() < 0) return -1;
  if (variant == "ncq") _cfg.variant = tracelab::NcqVariant::kNcq;
  else if (variant != "ncqplus") return errh->error("VARIANT must be ncq or ncqplus");
  if (tiny == "incoming") _cfg.tiny_rate = tracelab::TinyRate::kIncoming;
  else if (tiny != "favored") return errh->error("TINY_RATE must be favored or incoming");
  if (_cfg.size_thresh1 >= _cfg.size_thresh2) return errh->error("SIZE_THRESH1 must be below SIZE_THRESH2");
  return check_config(errh);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLNcqQueue)
