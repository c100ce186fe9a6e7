#ifndef TRACELAB_TLLASQUEUE_HH
#define TRACELAB_TLLASQUEUE_HH
#include "tlcorequeue.hh"
#include "las.hh"
CLICK_DECLS

/*
=c

TLLasQueue([CAPACITY, KEYWORDS])

=s queues

LAS (least attained service) queue with LAS buffer management

=d

LAS / LASACK (docs/reference/algorithms.md §3.1; core/las.hh): serves the packet of
least attained service first; a full buffer drops the packet with the
largest tag (possibly the arrival).

Ports, IP annotations, the buffer keywords (CAPACITY, BYTES, IN_SERVICE),
the flow table's TABLE_SEED and the handlers: see TLCoreQueue.

Keyword arguments, besides TLCoreQueue's, are:

=over 8

=item ACK

Boolean, LASACK. Default false.

=item MAX_FLOWS

Default 65536.

=back

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLLasQueue : public TLQueueElement<tracelab::LasCore, tracelab::LasConfig> {
 public:
  const char* class_name() const override { return "TLLasQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  // The flow hash; LASACK keys on the connection and reads the ACKs.
  Meta metadata() const override { return _cfg.ack_aware ? kMetaAll : kMetaFlow; }
  // The arrival time only ages flow records (idle timeout and scan, in
  // seconds): a clock tick's resolution is enough.
  ArrivalClock arrival_clock() const override { return kClockCoarse; }
};

CLICK_ENDDECLS
#endif
