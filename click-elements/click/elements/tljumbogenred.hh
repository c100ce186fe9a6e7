#ifndef TRACELAB_TLJUMBOGENRED_HH
#define TRACELAB_TLJUMBOGENRED_HH
#include "jumbogen_red.hh"
#include "tlelementutil.hh"
CLICK_DECLS

/*
=c

TLJumboGenRed([KEYWORDS])

=s queues

JumboGen-aware RED queue with partial drop of JumboGrams

=d

A thin adapter over tracelab's JumboGenRed core (docs/reference/algorithms.md §5.3;
core/jumbogen_red.hh states the ambiguity resolutions). A core router's
queue: IPv4 packets of protocol PROTO are JumboGrams (TLJumboGenEncap's
format behind a 20-byte or longer outer header); every other packet is a
plain packet. RED keeps its average over the queue length (in carried
packets with MODE partial); a JumboGram of N packets is selected with
probability (1 - f) p_a / N + f p_a (f: the running fraction of JumboGrams
among arrivals). With MODE partial a selected JumboGram loses Drop_num
trailing packets in place (entries zeroed, bytes cut, not cumulative along
the path): the element shortens the packet and rewrites the outer header's
total length and checksum; with MODE full it is dropped whole; with MODE
standard a JumboGram counts as one packet.

Push input, pull output 0; dropped packets leave on push output 1 if it is
connected, else are killed. Random draws come from a seeded generator:
two runs with the same SEED make the same decisions.

Keyword arguments are:

=over 8

=item MODE

partial, full or standard. Default partial.

=item MIN_TH, MAX_TH

RED thresholds in queue units (carried packets with MODE partial, items
otherwise). Defaults 5 and 15.

=item MAX_P

RED's max_p. Default 0.1.

=item W_Q

RED's averaging weight. Default 0.025 (the JumboGen runs of [002 §4]).

=item MIN_PKT_DROP, MAX_PKT_DROP

Fractions of N a partial drop removes at MIN_TH and at MAX_TH. Defaults 0.1
and 0.5 (not in the seeds).

=item JG_WEIGHT

Weight of the running JumboGram fraction. Default 0.01 (not in the seeds).

=item CAPACITY

Queue capacity in queue units. Default 200.

=item SLOTS

Items (packets and JumboGrams) the queue can hold. Default 4096.

=item PROTO

IP protocol number marking JumboGrams. Default 253.

=item SEED

Integer seed of the random generator. Default 1.

=back

=h length, highwater_length read-only

Items queued now, and the most ever queued.

=h length_units read-only

Queue length in RED's unit.

=h drops read-only

Items dropped whole (drops_red: selected by RED; drops_buffer_full: no
room).

=h jumbograms read-only

JumboGram arrivals.

=h selected read-only

JumboGrams selected by RED (dropped whole or partially).

=h partial_dropped read-only

Packets removed from JumboGrams by partial drops here.

=h malformed read-only

JumboGrams whose header failed to parse (dropped, also in drops).

=h avg read-only

RED's average queue length.

=h jg_fraction read-only

Running fraction of arrivals that are JumboGrams.

=h reset write-only

Zero every counter, as in a fresh element; RED's running averages (avg,
jg_fraction) are state and stay.

=a TLJumboGenEncap, TLJumboGenDecap, RED
*/

class TLJumboGenRed : public TLCoreElement<tracelab::JumboGenRed> {
 public:
  const char* class_name() const override { return "TLJumboGenRed"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  int initialize(ErrorHandler* errh) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  void push(int port, Packet* p) override;

 private:
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;

  tracelab::JumboRedConfig _cfg;
  uint8_t _proto = 253;
};

CLICK_ENDDECLS
#endif
