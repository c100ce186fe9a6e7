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

Drop-tail FIFO (tracelab ALGORITHMS.md §1; core/fifo.hh). In byte mode an
arrival is dropped when it would overflow CAPACITY (⚠AMB-1).

Push input, pull output 0; dropped packets (on arrival or pushed out)
leave on push output 1 if it is connected, else are killed. Packets should carry an IP header annotation
(CheckIPHeader or MarkIPHeader upstream) so flows can be told apart.

Keyword arguments are:

=over 8

=item CAPACITY

Packets (or bytes with BYTES true). Default 300.

=item BYTES

Boolean. Capacity in bytes. Default false.

=item IN_SERVICE

Integer, bits per second. When positive, the packet being transmitted stays
counted in the buffer (and in its flow's state) until its transmission at
this rate ends, as in the thesis model; 0: it leaves the buffer when pulled,
as in Click's Queue. Default 0.

=back

=h length read-only

Packets queued.

=h highwater_length read-only

Most packets ever queued.

=h drops read-only

Packets dropped, all reasons (drops_buffer_full, pushed_out: by reason).

=h served read-only

Packets handed downstream.

=h reset write-only

Zero drops and served (highwater values stay since start).

=a TLExactUnqueue, Queue
*/

class TLFifoQueue : public TLCoreQueue {
 public:
  const char* class_name() const override { return "TLFifoQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  tracelab::QueueCore* make_core(ErrorHandler* errh) override CLICK_COLD;

 private:
};

CLICK_ENDDECLS
#endif
