#ifndef TRACELAB_TLRUN2CQUEUE_HH
#define TRACELAB_TLRUN2CQUEUE_HH
#include "tlcorequeue.hh"
#include "run2c.hh"
CLICK_DECLS

/*
=c

TLRun2CQueue([CAPACITY, KEYWORDS])

=s queues

Run2C two-level queue (infinite-memory size threshold)

=d

Run2C and Run2CACK (docs/reference/algorithms.md §2.4; core/run2c.hh): a per-flow
counter from the start of the flow; packets are high priority while it is
below THRESHOLD; push-out as EFD.

Ports, IP annotations, the buffer keywords (CAPACITY, BYTES, IN_SERVICE),
the flow table's TABLE_SEED and the handlers: see TLCoreQueue.

Keyword arguments, besides TLCoreQueue's, are:

=over 8

=item THRESHOLD

Bytes. Default 30000.

=item ACK

Boolean, Run2CACK (connection key, ACK progress). Default false.

=item MAX_FLOWS

Flow table size. Default 65536.

=item IDLE_TIMEOUT

Seconds idle before a flow is forgotten (scanned every 5 s). Default 30.

=back

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLRun2CQueue : public TLQueueElement<tracelab::Run2cCore, tracelab::Run2cConfig> {
 public:
  const char* class_name() const override { return "TLRun2CQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  // The flow hash; Run2CACK keys on the connection and reads the ACKs.
  Meta metadata() const override { return _cfg.ack_aware ? kMetaAll : kMetaFlow; }
  // The arrival time only ages flow records (idle timeout and scan, in
  // seconds): a clock tick's resolution is enough.
  ArrivalClock arrival_clock() const override { return kClockCoarse; }
};

CLICK_ENDDECLS
#endif
