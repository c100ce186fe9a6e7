#ifndef TRACELAB_TLNCQQUEUE_HH
#define TRACELAB_TLNCQQUEUE_HH
#include "tlcorequeue.hh"
#include "ncq.hh"
CLICK_DECLS

/*
=c

TLNcqQueue([CAPACITY, KEYWORDS])

=s queues

NCQ / NCQ+ short-packets-first queue

=d

NCQ and NCQ+ (docs/reference/algorithms.md §4 with its corrections of the pseudo-code;
core/ncq.hh): short packets get strict priority within running favor
rates. Drop-tail by default (⚠AMB-12).

Ports, IP annotations, the buffer keywords (CAPACITY, BYTES, IN_SERVICE)
and the handlers: see TLCoreQueue.

Keyword arguments, besides TLCoreQueue's, are:

=over 8

=item CAPACITY

As in TLCoreQueue, but the default is 100.

=item VARIANT

ncq or ncqplus. Default ncqplus.

=item SIZE_THRESH

NCQ size limit (<). Default 150.

=item SIZE_THRESH1

NCQ+ tiny (<=). Default 64.

=item SIZE_THRESH2

NCQ+ small (<=). Default 150.

=item THRESH1

ncqthresh1. Default 0.05.

=item ALPHA

Default 0.1.

=item TINY_RATE

favored or incoming (⚠AMB-11b). Default favored.

=item FAVOR_ACKS

Boolean (⚠AMB-10). Default false.

=item PUSHOUT

Boolean (⚠AMB-12). Default false.

=back

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLNcqQueue : public TLQueueElement<tracelab::NcqCore, tracelab::NcqConfig> {
 public:
  const char* class_name() const override { return "TLNcqQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  // NcqCore reads the length and the pure-ACK flag, no hash, no time.
  Meta metadata() const override { return kMetaTcp; }
  ArrivalClock arrival_clock() const override { return kClockNone; }
};

CLICK_ENDDECLS
#endif
