#ifndef TRACELAB_TLEPLRCHECK_HH
#define TRACELAB_TLEPLRCHECK_HH
#include <click/element.hh>
#include "mtq_qtl.hh"
CLICK_DECLS

/*
=c

TLEplrCheck(BUDGETS [, KEYWORDS])

=s measurement

receiver-side check of end-to-end queuing-delay budgets (EPLR)

=d

The receiver side of MTQ/QTL experiments (docs/reference/algorithms.md §7; EplrMeter in
core/mtq_qtl.hh). Input 1 takes a copy of every packet sent (Tee it at the
sender; counted, then killed). Input 0 takes the packets that arrive; each
passes on to output 0. A packet's group is its PAINT annotation; its
queuing delay is now - its timestamp annotation (the send time: put
SetTimestamp at the sender) - FIXED[group] (the path's fixed delay). It is
late when that exceeds BUDGETS[group]. Per group:

  EPLR = (sent - received + late) / sent

Every packet sent and not received counts as discarded, so read the EPLR
after the network has drained. Groups beyond the last entry of BUDGETS use
the last one.

Keyword arguments are:

=over 8

=item BUDGETS

Space-separated acceptable total queuing delay D per group, microseconds.
Required.

=item FIXED

Space-separated fixed path delay per group, microseconds (subtracted from
the measured delay, [004 §5.3]). Default 0 for every group.

=back

=h sent read-only

Packets sent (input 1).

=h received read-only

Packets received (input 0).

=h late read-only

Packets received beyond their group's budget.

=h eplr read-only

One line per group: group, sent, received, late, EPLR.

=h worst read-only

The largest EPLR over the groups (the max-min objective).

=h reset write-only

Zero the counters.

=a TLMtqQtlMark, TLMtqQtlQueue
*/

class TLEplrCheck : public Element {
 public:
  TLEplrCheck() CLICK_COLD {}
  ~TLEplrCheck() CLICK_COLD { delete _meter; }
  const char* class_name() const override { return "TLEplrCheck"; }
  const char* port_count() const override { return "2/1"; }
  const char* processing() const override { return PUSH; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  void push(int port, Packet* p) override;

 private:
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;
  size_t group(const Packet* p) const;

  Vector<tracelab::Time> _budgets, _fixed;
  tracelab::EplrMeter* _meter = nullptr;
};

CLICK_ENDDECLS
#endif
