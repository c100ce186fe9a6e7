#ifndef TRACELAB_TLLARSQUEUE_HH
#define TRACELAB_TLLARSQUEUE_HH
#include "tlcorequeue.hh"
#include "lars.hh"
CLICK_DECLS

/*
=c

TLLarsQueue([CAPACITY, KEYWORDS])

=s queues

LARS (least attained recent service) queue

=d

LARS (docs/reference/algorithms.md §3.2; core/lars.hh): LAS whose per-flow volume
fades by BETA every TAU seconds (both NOT IN SEEDS: log the values used).

Ports, IP annotations, the buffer keywords (CAPACITY, BYTES, IN_SERVICE),
the flow table's TABLE_SEED and the handlers: see TLCoreQueue.

Keyword arguments, besides TLCoreQueue's, are:

=over 8

=item BETA

Default 0.5.

=item TAU

Seconds (may be fractional). Default 1.

=item ACK

Boolean. Default false.

=item MAX_FLOWS

Default 65536.

=back

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLLarsQueue : public TLQueueElement<tracelab::LarsCore, tracelab::LarsConfig> {
 public:
  const char* class_name() const override { return "TLLarsQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  // The flow hash; the ACK-aware variant keys on the connection.
  Meta metadata() const override { return _cfg.ack_aware ? kMetaAll : kMetaFlow; }
};

CLICK_ENDDECLS
#endif
