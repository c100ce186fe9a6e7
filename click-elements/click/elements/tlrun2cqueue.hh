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

Run2C and Run2CACK (ALGORITHMS.md §2.4; core/run2c.hh): a per-flow
counter from the start of the flow; packets are high priority while it is
below THRESHOLD; push-out as EFD.

Push input, pull output 0; dropped packets (on arrival or pushed out)
leave on push output 1 if it is connected, else are killed. Packets should carry an IP header annotation
(CheckIPHeader or MarkIPHeader upstream) so flows can be told apart.

Keyword arguments are:

=over 8

=item CAPACITY

Default 300.

=item BYTES

Boolean. Default false.

=item IN_SERVICE

Integer, bits per second. When positive, the packet being transmitted stays
counted in the buffer (and in its flow's state) until its transmission at
this rate ends, as in the thesis model; 0: it leaves the buffer when pulled,
as in Click's Queue. Default 0.

=item THRESHOLD

Bytes. Default 30000.

=item ACK

Boolean, Run2CACK (connection key, ACK progress). Default false.

=item MAX_FLOWS

Flow table size. Default 65536.

=item IDLE_TIMEOUT

Seconds idle before a flow is forgotten (scanned every 5 s). Default 30.

=back

=h length read-only

Packets queued.

=h highwater_length read-only

Most packets ever queued.

=h drops read-only

Packets dropped, all reasons (drops_buffer_full, pushed_out: by reason).

=h served read-only

Packets handed downstream.

=h flows read-only

Flow-table entries now (flows_highwater: most ever).

=h reset write-only

Zero drops and served (highwater values stay since start).

=a TLExactUnqueue, Queue
*/

class TLRun2CQueue : public TLCoreQueue {
 public:
  const char* class_name() const override { return "TLRun2CQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  tracelab::QueueCore* make_core(ErrorHandler* errh) override CLICK_COLD;
  uint64_t flows() const override { return _mech ? _mech->flows() : 0; }
  uint64_t flows_highwater() const override { return _mech ? _mech->flows_highwater() : 0; }

 private:
  tracelab::Run2cConfig _cfg;
  tracelab::Run2cCore* _mech = nullptr;
};

CLICK_ENDDECLS
#endif
