#ifndef TRACELAB_TLXPROTECTQUEUE_HH
#define TRACELAB_TLXPROTECTQUEUE_HH
#include "tlcorequeue.hh"
#include "xprotect.hh"
CLICK_DECLS

/*
=c

TLXProtectQueue([CAPACITY, KEYWORDS])

=s queues

X-Protect two-level queue (probabilistic flow insertion)

=d

X-Protect (docs/reference/algorithms.md §2.6; core/xprotect.hh): an untracked flow is
inserted with PROBABILITY; a tracked flow is low priority once THRESHOLD
bytes have been counted since insertion; idle entries are scanned out.

Ports, IP annotations, the buffer keywords (CAPACITY, BYTES, IN_SERVICE),
the flow table's TABLE_SEED and the handlers: see TLCoreQueue.

Keyword arguments, besides TLCoreQueue's, are:

=over 8

=item PROBABILITY

p_ins. Default 0.01.

=item THRESHOLD

Bytes. Default 30000.

=item COUNT_INSERTING

Boolean (⚠AMB-6). Default true.

=item SEED

Seed of the insertion draws. Default 1.

=item MAX_FLOWS

Flow-table size; a flow drawn for insertion when it is full stays
untracked (high priority). Default 65536.

=back

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLXProtectQueue : public TLQueueElement<tracelab::XProtectCore, tracelab::XProtectConfig> {
 public:
  const char* class_name() const override { return "TLXProtectQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  Meta metadata() const override { return kMetaFlow; }  // keys on the flow hash
  // The arrival time only ages flow records (idle timeout and scan, in
  // seconds): a clock tick's resolution is enough.
  ArrivalClock arrival_clock() const override { return kClockCoarse; }
};

CLICK_ENDDECLS
#endif
