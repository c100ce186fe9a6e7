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

LAS / LASACK (ALGORITHMS.md §3.1; core/las.hh): serves the packet of
least attained service first; a full buffer drops the packet with the
largest tag (possibly the arrival).

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

=item ACK

Boolean, LASACK. Default false.

=item MAX_FLOWS

Default 65536.

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

class TLLasQueue : public TLCoreQueue {
 public:
  const char* class_name() const override { return "TLLasQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  tracelab::QueueCore* make_core(ErrorHandler* errh) override CLICK_COLD;
  uint64_t flows() const override { return _mech ? _mech->flows() : 0; }
  uint64_t flows_highwater() const override { return _mech ? _mech->flows_highwater() : 0; }

 private:
  tracelab::LasConfig _cfg;
  tracelab::LasCore* _mech = nullptr;
};

CLICK_ENDDECLS
#endif
