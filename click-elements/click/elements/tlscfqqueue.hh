#ifndef TRACELAB_TLSCFQQUEUE_HH
#define TRACELAB_TLSCFQQUEUE_HH
#include "tlcorequeue.hh"
#include "scfq.hh"
CLICK_DECLS

/*
=c

TLScfqQueue([CAPACITY, KEYWORDS])

=s queues

SCFQ (self-clocked fair queueing) with drop-tail

=d

Self-Clocked Fair Queueing, equal weights, per 5-tuple (docs/reference/algorithms.md §3.3;
core/scfq.hh); drop-tail on overflow.

Ports, IP annotations, the keywords (CAPACITY, BYTES, IN_SERVICE,
TABLE_SEED) and the handlers: see TLCoreQueue.

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLScfqQueue : public TLQueueElement<tracelab::ScfqCore, tracelab::ScfqConfig> {
 public:
  const char* class_name() const override { return "TLScfqQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  // ScfqCore keys on the flow hash; its tags do not read the time.
  Meta metadata() const override { return kMetaFlow; }
  ArrivalClock arrival_clock() const override { return kClockNone; }
};

CLICK_ENDDECLS
#endif
