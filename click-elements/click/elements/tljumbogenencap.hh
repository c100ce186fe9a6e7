#ifndef TRACELAB_TLJUMBOGENENCAP_HH
#define TRACELAB_TLJUMBOGENENCAP_HH
#include "jumbogen.hh"
#include "tlelementutil.hh"
CLICK_DECLS

/*
=c

TLJumboGenEncap([KEYWORDS])

=s encapsulation

JumboGen ingress: aggregates IPv4 packets into JumboGrams under a JFET timer

=d

A thin adapter over tracelab's JumboGenIngress core (docs/reference/algorithms.md §5.1,
§5.2; core/jumbogen.hh states the ambiguity resolutions). Pushed IPv4
packets are sorted into aggregation queues by (KEY, class); a JumboGram's
JFET starts with its first packet; packets are added while the JumboGram
fits MTU; at JFET expiry (or at once when full, with EARLY_RELEASE) it is
released. Each pull returns one JumboGram as one new IPv4 packet:

  outer IPv4 header (20 bytes) | JumboGram header 6 + 4N | the N packets

The outer header is a copy of the first packet's fixed header (addresses,
DSCP, TTL, ID) with protocol PROTO, ECN set to ECT(0) (JumboGrams are
ECN-capable [002 §3.3]), no options, no fragment bits, and a fresh
checksum. The JumboGram header is chunk_format.hh's with QTime and pQTime
in microseconds. TLJumboGenDecap restores the packets. A Timer wakes the
downstream puller when a JFET expires.

Packets must start with an IPv4 header (Strip the link header). Other
packets are killed and counted in C<not_ipv4>.

Keyword arguments are:

=over 8

=item MTU

JumboGram MTU in bytes, outer header included. Default 8192.

=item JFET

Jumbo Frame Encapsulation Timer, microseconds. Default 1000.

=item EARLY_RELEASE

Boolean. Release a JumboGram as soon as a packet no longer fits, instead of
holding it until its JFET expires (⚠AMB-14). Default false.

=item KEY

Which packets share a queue: C<nexthop> (the destination IP annotation,
set by a route lookup; the packet's destination when the annotation is
0), C<dst> (the packet's destination address) or C<none> (one queue per
class). Default nexthop.

=item CLASS

C<dscp> (the packet's DiffServ code point) or C<paint> (PAINT annotation).
Default dscp.

=item QUEUES

Aggregation queue slots (next hop x class pairs held at once). Default 64.

=item CAPACITY

Packets held at most (all queues). Default 65536.

=item PROTO

IP protocol number of the outer header. Default 253 (RFC 3692
experimentation).

=back

=h length, highwater_length read-only

Packets held now, and the most ever held.

=h drops read-only

Packets dropped (all reasons: no_queue, oversize, capacity).

=h no_queue read-only

Packets dropped because every aggregation queue slot was in use.

=h oversize read-only

Packets dropped because they cannot fit an empty JumboGram.

=h not_ipv4 read-only

Packets killed because they do not start with an IPv4 header.

=h jumbograms read-only

JumboGrams sent.

=h encapsulated read-only

Packets sent inside JumboGrams.

=h mean_jumbogram_bytes read-only

Mean JumboGram size (outer header included).

=h full_closes read-only

JumboGrams closed because a packet did not fit.

=h mean_wait_ns read-only

Mean time from a packet's arrival to its JumboGram's release, nanoseconds.

=h reset write-only

Zero every counter, as in a fresh element (highwater_length restarts at
the present length).

=a TLJumboGenRed, TLJumboGenDecap, TLExactUnqueue
*/

class TLJumboGenEncap : public TLAggregateElement<tracelab::JumboGenIngress> {
 public:
  const char* class_name() const override { return "TLJumboGenEncap"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  int initialize(ErrorHandler* errh) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  void push(int port, Packet* p) override;

 private:
  enum Key { kNextHop, kDst, kNone };
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;
  bool encode(const tracelab::Batch& b, const tracelab::jg::PacketRef* refs, tracelab::Time now,
              WritablePacket* out) override;
  void lost(const tracelab::Batch& b) override { _lost += b.count; }

  tracelab::JumboGenConfig _cfg;
  Key _key = kNextHop;
  bool _paint_class = false;
  uint8_t _proto = 253;

  uint64_t _not_ipv4 = 0, _lost = 0;
};

CLICK_ENDDECLS
#endif
