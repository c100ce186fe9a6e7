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

Algorithm 2 (ALGORITHMS.md §2.5; core/sift.hh): each high-priority
packet is sampled with PROBABILITY; a flow with at least SAMPLES sampled
packets is low priority. Seeded: the same SEED gives the same decisions.

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

=item PROBABILITY

p. Default 0.01.

=item SAMPLES

Ts. Default 1.

=item SEED

Default 1.

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

class TLSiftQueue : public TLCoreQueue {
 public:
  const char* class_name() const override { return "TLSiftQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  tracelab::QueueCore* make_core(ErrorHandler* errh) override CLICK_COLD;
  uint64_t flows() const override { return _mech ? _mech->flows() : 0; }
  uint64_t flows_highwater() const override { return _mech ? _mech->flows_highwater() : 0; }

 private:
  tracelab::SiftConfig _cfg;
  tracelab::SiftCore* _mech = nullptr;
};

CLICK_ENDDECLS
#endif
