#ifndef TRACELAB_TLSIFTQUEUE_HH
#define TRACELAB_TLSIFTQUEUE_HH
#include "tlcorequeue.hh"
#include "sift.hh"
CLICK_DECLS

/*
=c

TLSiftQueue([CAPACITY, KEYWORDS])

=s queues

SIFT-like probabilistic sampling two-level queue

=d

Algorithm 2 (docs/reference/algorithms.md §2.5; core/sift.hh): each high-priority
packet is sampled with PROBABILITY; a flow with at least SAMPLES sampled
packets is low priority. Seeded: the same SEED gives the same decisions.

Ports, IP annotations, the buffer keywords (CAPACITY, BYTES, IN_SERVICE),
the flow table's TABLE_SEED and the handlers: see TLCoreQueue.

Keyword arguments, besides TLCoreQueue's, are:

=over 8

=item PROBABILITY

p. Default 0.01.

=item SAMPLES

Ts. Default 1.

=item SEED

Seed of the sampling draws. Default 1.

=item MAX_FLOWS

Flow-table size; a sampled packet finding it full is not recorded.
Default 65536.

=back

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLSiftQueue : public TLQueueElement<tracelab::SiftCore, tracelab::SiftConfig> {
 public:
  const char* class_name() const override { return "TLSiftQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  Meta metadata() const override { return kMetaFlow; }  // keys on the flow hash
  // The arrival time only ages flow records (idle timeout and scan, in
  // seconds): a clock tick's resolution is enough.
  ArrivalClock arrival_clock() const override { return kClockCoarse; }
};

CLICK_ENDDECLS
#endif
