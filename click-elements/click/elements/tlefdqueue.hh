#ifndef TRACELAB_TLEFDQUEUE_HH
#define TRACELAB_TLEFDQUEUE_HH
#include "tlcorequeue.hh"
#include "efd.hh"
CLICK_DECLS

/*
=c

TLEfdQueue([CAPACITY, KEYWORDS])

=s queues

EFD (Early Flow Discard) two-level queue and its variants

=d

Early Flow Discard, thesis Algorithm 3 (ALGORITHMS.md §2.1-§2.3;
core/efd.hh states every ambiguity resolution): flow entries exist only
while the flow has packets queued; a flow's packets are high priority while
its counter is below THRESHOLD; a full buffer pushes out the last
low-priority packet for a high-priority arrival.

Push input, pull output 0; dropped packets (on arrival or pushed out)
leave on push output 1 if it is connected, else are killed. Packets should carry an IP header annotation
(CheckIPHeader or MarkIPHeader upstream) so flows can be told apart.

Keyword arguments are:

=over 8

=item CAPACITY

Packets (or bytes with BYTES true). Default 300.

=item BYTES

Boolean. Default false.

=item IN_SERVICE

Integer, bits per second. When positive, the packet being transmitted stays
counted in the buffer (and in its flow's state) until its transmission at
this rate ends, as in the thesis model; 0: it leaves the buffer when pulled,
as in Click's Queue. Default 0.

=item VARIANT

befd (bytes, 5-tuple), pefd (packets), efdack (connection, ACK progress). Default befd.

=item THRESHOLD

th, bytes (packets for pefd). Default 30000 (20 for pefd).

=item COUNTER

admitted or served (⚠AMB-2). Default admitted.

=item HIGH

fifo or las order in the high queue. Default fifo.

=item LOW

fifo or las. Default fifo.

=item PUSHOUT

Boolean. Default true; false = drop-tail.

=item PRECHECK

Boolean, byte-mode push-out pre-check (⚠AMB-1). Default false.

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

class TLEfdQueue : public TLCoreQueue {
 public:
  const char* class_name() const override { return "TLEfdQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  tracelab::QueueCore* make_core(ErrorHandler* errh) override CLICK_COLD;
  uint64_t flows() const override { return _mech ? _mech->flows() : 0; }
  uint64_t flows_highwater() const override { return _mech ? _mech->flows_highwater() : 0; }

 private:
  // Variant defaults, keeping what the user set explicitly.
  static tracelab::EfdConfig merge(tracelab::EfdConfig variant, const tracelab::EfdConfig& user) {
    variant.queue = user.queue;
    return variant;
  }
  static int parse_discipline(const String& s, tracelab::Discipline& d) {
    if (s == "fifo") d = tracelab::Discipline::kFifo;
    else if (s == "las") d = tracelab::Discipline::kLas;
    else return -1;
    return 0;
  }
  tracelab::EfdConfig _cfg;
  tracelab::EfdCore* _mech = nullptr;
};

CLICK_ENDDECLS
#endif
