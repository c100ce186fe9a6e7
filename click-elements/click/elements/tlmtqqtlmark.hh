#ifndef TRACELAB_TLMTQQTLMARK_HH
#define TRACELAB_TLMTQQTLMARK_HH
#include <click/element.hh>
#include <click/vector.hh>
#include "mtq_qtl_header.hh"
CLICK_DECLS

/*
=c

TLMtqQtlMark([KEYWORDS])

=s ip

edge marker: writes MTQ and/or QTL delay budgets into IPv4/IPv6 packets

=d

The ingress edge of MTQ/QTL early discarding (docs/reference/algorithms.md §7;
core/mtq_qtl_header.hh defines the bytes). Each packet, which must start
with its IPv4 or IPv6 header, gets the budgets of its PAINT class:

  IPv4: an 8-byte IP option, type 0x9E (RFC 4727 experimental, copied
  into fragments): type, length 8, MTQ u16 (microseconds), QTL u32
  (nanoseconds); IHL, total length and checksum are updated.
  IPv6: a 16-byte Destination Options header after the fixed header (or
  after Hop-by-Hop), option type 0x3E (RFC 4727 experimental, skip if
  unrecognized, may change en route), then PadN; payload length updated.

An option already present is rewritten in place. An unset field is
written as "absent" (MTQ 0xFFFF, QTL 0xFFFFFFFF). The network header
annotation is reset to the new header.

Agnostic. Packets that cannot be marked (not IP, truncated, a malformed
option, no room left in the IPv4 options) leave unchanged on output 1 if
it is connected, else are killed; they are counted by reason.

Keyword arguments are:

=over 8

=item MTQ

Space-separated maximum queuing delay per node, microseconds, one per
PAINT class (the last applies to higher classes; at most 65534). Default:
not set.

=item QTL

Space-separated total queuing-delay budget per PAINT class, microseconds
(at most 4294967). Default: not set.

=back

=h marked read-only

Packets marked.

=h errors read-only

Packets that could not be marked.

=h error_reasons read-only

One line per reason: name and count (truncated, not_ip, bad_option,
no_option_space, no_room).

=h reset write-only

Zero the counters.

=a TLMtqQtlQueue, TLEplrCheck
*/

class TLMtqQtlMark : public Element {
 public:
  TLMtqQtlMark() CLICK_COLD {}
  const char* class_name() const override { return "TLMtqQtlMark"; }
  const char* port_count() const override { return "1/1-2"; }
  const char* processing() const override { return AGNOSTIC; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  Packet* simple_action(Packet* p) override;

 private:
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;

  Vector<uint16_t> _mtq_us;
  Vector<uint32_t> _qtl_ns;
  uint64_t _marked = 0;
  uint64_t _errors[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // by mq::HeaderError
};

CLICK_ENDDECLS
#endif
