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

Early Flow Discard, thesis Algorithm 3 (docs/reference/algorithms.md §2.1-§2.3;
core/efd.hh states every ambiguity resolution): flow entries exist only
while the flow has packets queued; a flow's packets are high priority while
its counter is below THRESHOLD; a full buffer pushes out the last
low-priority packet for a high-priority arrival.

Ports, IP annotations, the buffer keywords (CAPACITY, BYTES, IN_SERVICE),
the flow table's TABLE_SEED and the handlers: see TLCoreQueue.

Keyword arguments, besides TLCoreQueue's, are:

=over 8

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

=a TLCoreQueue, TLExactUnqueue, Queue
*/

class TLEfdQueue : public TLQueueElement<tracelab::EfdCore, tracelab::EfdConfig> {
 public:
  const char* class_name() const override { return "TLEfdQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  // The flow hash; EFDACK keys on the connection and reads the ACKs. No
  // EFD variant reads the time (no idle scan).
  Meta metadata() const override { return _cfg.variant == tracelab::EfdVariant::kEfdAck ? kMetaAll : kMetaFlow; }
  ArrivalClock arrival_clock() const override { return kClockNone; }

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
};

CLICK_ENDDECLS
#endif
