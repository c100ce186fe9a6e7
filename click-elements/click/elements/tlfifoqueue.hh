#ifndef TRACELAB_TLFIFOQUEUE_HH
#define TRACELAB_TLFIFOQUEUE_HH
#include "tlcorequeue.hh"
#include "fifo.hh"
CLICK_DECLS

/*
=c

TLFifoQueue([CAPACITY, KEYWORDS])

=s queues

drop-tail FIFO queue with packet or byte capacity

=d

Drop-tail FIFO (tracelab docs/reference/algorithms.md §1; core/fifo.hh). In byte mode an
arrival is dropped when it would overflow CAPACITY (⚠AMB-1).

Ports, IP annotations, the buffer keywords (CAPACITY, BYTES, IN_SERVICE)
and the handlers: see TLCoreQueue.

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLFifoQueue : public TLQueueElement<tracelab::FifoCore, tracelab::BufferConfig> {
 public:
  const char* class_name() const override { return "TLFifoQueue"; }

 protected:
  // FifoCore reads the length alone, and the time only for IN_SERVICE with a rate.
  Meta metadata() const override { return kMetaLength; }
  ArrivalClock arrival_clock() const override { return kClockNone; }
};

CLICK_ENDDECLS
#endif
