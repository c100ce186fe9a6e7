#ifndef TRACELAB_TLJUMBOGENDECAP_HH
#define TRACELAB_TLJUMBOGENDECAP_HH
#include "dechunk.hh"
#include "tlelementutil.hh"
CLICK_DECLS

/*
=c

TLJumboGenDecap([KEYWORDS])

=s encapsulation

JumboGen egress: decapsulates JumboGrams and shapes the packets out

=d

A thin adapter over tracelab's Dechunker and EgressShaper
(docs/reference/algorithms.md §5.4; core/dechunk.hh). An IPv4 packet of protocol PROTO is
a JumboGram (TLJumboGenEncap's format); its outer header is removed and
the packets it carries are restored byte for byte. With SHAPING, packet i
of a JumboGram arriving at t0 is released at t0 + (pQTime_i - pQTime_0)
(the spacing it had at the ingress, [002 §2.4]); without, all at t0. A
later JumboGram never overtakes an earlier one. Every other packet passes
through, released on arrival. Entries emptied by a partial drop upstream
are skipped and counted; with ECN, the restored packets of such a
JumboGram whose ECN field is ECT(0) or ECT(1) are marked CE (congestion on
the path, [002 §3.3]).

Push input, pull output 0. A malformed JumboGram (truncated, bad checksum,
lengths that do not add up) leaves unchanged on push output 1 if it is
connected, else is killed; it is counted either way. A Timer wakes the
downstream puller at each release time.

Keyword arguments are:

=over 8

=item SHAPING

Boolean. Default true.

=item ECN

Boolean. Mark CE on ECN-capable packets of JumboGrams that lost entries.
Default false.

=item CAPACITY

Packets held for release at most; more are dropped. Default 65536.

=item PROTO

IP protocol number marking JumboGrams. Default 253.

=item HEADROOM

Headroom of the packets made, bytes. Default 64.

=back

=h length, highwater_length read-only

Packets held for release now, and the most ever held.

=h drops read-only

Packets dropped because CAPACITY was reached (malformed JumboGrams are
counted apart).

=h jumbograms read-only

JumboGrams decapsulated.

=h packets read-only

Packets restored from JumboGrams.

=h passed read-only

Packets that were not JumboGrams.

=h missing read-only

Entries removed by partial drops upstream.

=h ce_marked read-only

Restored packets marked CE.

=h malformed read-only

JumboGrams that failed to parse.

=h reset write-only

Zero the counters.

=a TLJumboGenEncap, TLJumboGenRed, TLDechunk
*/

class TLJumboGenDecap : public TLTimedElement<tracelab::EgressShaper> {
 public:
  const char* class_name() const override { return "TLJumboGenDecap"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  int initialize(ErrorHandler* errh) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  void push(int port, Packet* p) override;

 private:
  static String drops_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;
  void hold(Packet* p, tracelab::Time release, tracelab::Time now);

  bool _shaping = true, _ecn = false;
  uint32_t _capacity = 65536, _headroom = 64;
  uint8_t _proto = 253;
  uint64_t _grams = 0, _packets = 0, _passed = 0, _missing = 0, _ce = 0, _malformed = 0, _lost = 0;
  tracelab::SplitPacket _split[65535 / 20 + 1];
};

CLICK_ENDDECLS
#endif
