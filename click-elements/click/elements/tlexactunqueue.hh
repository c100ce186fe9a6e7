#ifndef TRACELAB_TLEXACTUNQUEUE_HH
#define TRACELAB_TLEXACTUNQUEUE_HH
#include <click/element.hh>
#include <click/notifier.hh>
#include <click/task.hh>
#include <click/timer.hh>
#include "link.hh"
CLICK_DECLS

/*
=c

TLExactUnqueue(RATE [, KEYWORDS])

=s shaping

pull-to-push link of exact rate, departure times exact to the nanosecond

=d

Pulls a packet when the link it models is free and pushes it out at once;
the next pull happens when that packet's last bit has left: RATE (bits per
second, e.g. 10000000000) serializes LENGTH bytes (plus EXTRA per packet) in
exactly 8*bytes/RATE seconds. The link keeps departure times in picoseconds
with an exact fractional remainder (tracelab core/link.hh), so a busy period
of any length has no drift; the wake-up Timer is set at the departure rounded
up to the nanosecond (Click's Timestamp resolution with nanotimestamps).

Why not LinkUnqueue or BandwidthRatedUnqueue: LinkUnqueue computes
transmission times in microseconds, and BandwidthRatedUnqueue meters a rate
with token-bucket arithmetic scheduled at timer/jiffy granularity; at
10 Gb/s a 64-byte frame lasts 51.2 ns, so both round every packet by orders
of magnitude more than its length and drift over a busy period.

Keyword arguments are:

=over 8

=item RATE

Integer, bits per second. Required.

=item EXTRA

Integer, bytes added to each packet's length on the wire (e.g. 24 for
Ethernet preamble, IFG and FCS). Default 0.

=back

=h count read-only

Packets sent.

=h bytes read-only

Bytes sent (EXTRA included).

=h busy_until read-only

Departure time of the last packet, picoseconds since the package's time
origin (the first time a tracelab element initialized).

=h span read-only

Picoseconds from the first packet's start to the last packet's departure;
for one busy period this is exactly 8e12 * bytes / RATE, rounded up.

=h reset write-only

Zero the counters.

=a LinkUnqueue, BandwidthRatedUnqueue, Unqueue
*/

class TLExactUnqueue : public Element {
 public:
  TLExactUnqueue() CLICK_COLD;
  const char* class_name() const override { return "TLExactUnqueue"; }
  const char* port_count() const override { return PORTS_1_1; }
  const char* processing() const override { return PULL_TO_PUSH; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  int initialize(ErrorHandler* errh) override CLICK_COLD;
  void cleanup(CleanupStage) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  bool run_task(Task*) override;
  void run_timer(Timer*) override;

 private:
  bool send_one(tracelab::Time start);
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;

  uint64_t _rate = 0;
  uint32_t _extra = 0;
  tracelab::ExactLink* _link = nullptr;
  uint64_t _base_packets = 0, _base_bytes = 0;
  tracelab::Time _first = 0;
  Task _task;
  Timer _timer;
  NotifierSignal _signal;
};

CLICK_ENDDECLS
#endif
