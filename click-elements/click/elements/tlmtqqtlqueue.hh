#ifndef TRACELAB_TLMTQQTLQUEUE_HH
#define TRACELAB_TLMTQQTLQUEUE_HH
#include "mtq_qtl.hh"
#include "tlelementutil.hh"
CLICK_DECLS

/*
=c

TLMtqQtlQueue([CAPACITY, KEYWORDS])

=s queues

intermediate-node queue of MTQ/QTL early discarding

=d

A thin adapter over tracelab's MtqQtlQueue core (docs/reference/algorithms.md §7;
core/mtq_qtl.hh states the ambiguity resolutions). A drop-tail FIFO in
front of a link of RATE: an arrival is dropped if the buffer is full;
otherwise the local queuing delay d = 8 x backlog bytes / RATE is
estimated, and the packet is dropped if its MTQ is below d, or if its QTL
is not above d; else its QTL is decreased by d. MTQ and QTL are read from
the packet (TLMtqQtlMark's IPv4 option or IPv6 destination option); the
decreased QTL is written back into the packet when it is pulled (IPv4
checksum updated). Packets without the option are only subject to the
buffer limit. Packets must start with their IP header.

RATE should be the rate of the link that drains this queue (a
TLExactUnqueue of the same RATE downstream).

Push input, pull output 0; dropped packets leave on push output 1 if it is
connected, else are killed.

Keyword arguments are:

=over 8

=item CAPACITY

Packets. Default 200 ([004 §4]).

=item RATE

Integer, bits per second of the output link. Default 20000000.

=item IN_SERVICE

Boolean. Add the residual transmission time of the packet on the wire to
d (⚠AMB-27 alternative). Default false.

=back

=h length, highwater_length read-only

Packets queued now, and the most ever queued.

=h drops read-only

Packets dropped, all reasons (drops_overflow, drops_mtq, drops_qtl: by
reason).

=h violations read-only

Packets served after waiting longer than their MTQ, or at least the QTL
they arrived with (the estimate d can be short, e.g. without IN_SERVICE);
violations_mtq, violations_qtl: by field.

=h bad_header read-only

Packets whose MTQ/QTL option could not be parsed (queued as unmarked).

=h served read-only

Packets handed downstream.

=h reset write-only

Zero every counter, as in a fresh element (highwater_length restarts at
the present length).

=a TLMtqQtlMark, TLEplrCheck, TLExactUnqueue
*/

class TLMtqQtlQueue : public TLCoreElement<tracelab::MtqQtlQueue> {
 public:
  const char* class_name() const override { return "TLMtqQtlQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  int initialize(ErrorHandler* errh) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  void push(int port, Packet* p) override;
  // Also writes the decreased QTL back into the packet.
  Packet* pull(int port) override;

 private:
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;

  tracelab::MtqQtlConfig _cfg;
  uint64_t _bad_header = 0;
};

CLICK_ENDDECLS
#endif
