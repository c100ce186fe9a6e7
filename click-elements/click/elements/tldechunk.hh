#ifndef TRACELAB_TLDECHUNK_HH
#define TRACELAB_TLDECHUNK_HH
#include <click/element.hh>
#include "dechunk.hh"
CLICK_DECLS

/*
=c

TLDechunk([KEYWORDS])

=s encapsulation

splits chunks / JumboGrams back into the original packets

=d

Parses each input packet as an aggregate in the tracelab chunk_format.hh
layout (the JumboGram header of JumboGen, also the chunk shim of
TLChunkQueue) and pushes the packets it carries, byte for byte, in order, on
output 0. Entries emptied by a partial drop upstream are skipped and
counted. A malformed aggregate (truncated, bad checksum, lengths that do not
add up) is emitted unchanged on output 1 if it exists, else dropped, and
counted. Egress shaping (release at the ingress spacing) is done by the
engine's EgressShaper; in Click, put a timed unqueue after this element.

Keyword arguments are:

=over 8

=item HEADROOM

Headroom of the packets made, bytes. Default 64.

=back

=h packets read-only

Packets restored.

=h missing read-only

Entries removed by partial drops upstream.

=h malformed read-only

Aggregates that failed to parse.

=h drops read-only

Same as malformed (inputs not turned into packets).

=h reset write-only

Zero the counters.

=a TLChunkQueue
*/

class TLDechunk : public Element {
 public:
  TLDechunk() CLICK_COLD {}
  const char* class_name() const override { return "TLDechunk"; }
  const char* port_count() const override { return "1/1-2"; }
  const char* processing() const override { return PUSH; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  void push(int port, Packet* p) override;

 private:
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;
  uint32_t _headroom = 64;
  uint64_t _packets = 0, _missing = 0, _malformed = 0;
  tracelab::SplitPacket _split[65535 / 20 + 1];
};

CLICK_ENDDECLS
#endif
