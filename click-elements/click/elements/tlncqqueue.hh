#ifndef TRACELAB_TLNCQQUEUE_HH
#define TRACELAB_TLNCQQUEUE_HH
#include "tlcorequeue.hh"
#include "ncq.hh"
CLICK_DECLS

/*
=c

TLNcqQueue([CAPACITY, KEYWORDS])

=s queues

NCQ / NCQ+ short-packets-first queue

=d

NCQ and NCQ+ (ALGORITHMS.md §4 with its corrections of the pseudo-code;
core/ncq.hh): short packets get strict priority within running favor
rates. Drop-tail by default (⚠AMB-12).

Push input, pull output 0; dropped packets (on arrival or pushed out)
leave on push output 1 if it is connected, else are killed. Packets should carry an IP header annotation
(CheckIPHeader or MarkIPHeader upstream) so flows can be told apart.

Keyword arguments are:

=over 8

=item CAPACITY

Default 100.

=item BYTES

Boolean. Default false.

=item IN_SERVICE

Integer, bits per second. When positive, the packet being transmitted stays
counted in the buffer (and in its flow's state) until its transmission at
this rate ends, as in the thesis model; 0: it leaves the buffer when pulled,
as in Click's Queue. Default 0.

=item VARIANT

ncq or ncqplus. Default ncqplus.

=item SIZE_THRESH

NCQ size limit (<). Default 150.

=item SIZE_THRESH1

NCQ+ tiny (<=). Default 64.

=item SIZE_THRESH2

NCQ+ small (<=). Default 150.

=item THRESH1

ncqthresh1. Default 0.05.

=item ALPHA

Default 0.1.

=item TINY_RATE

favored or incoming (⚠AMB-11b). Default favored.

=item FAVOR_ACKS

Boolean (⚠AMB-10). Default false.

=item PUSHOUT

Boolean (⚠AMB-12). Default false.

=back

=h length read-only

Packets queued.

=h highwater_length read-only

Most packets ever queued.

=h drops read-only

Packets dropped, all reasons (drops_buffer_full, pushed_out: by reason).

=h served read-only

Packets handed downstream.

=h reset write-only

Zero drops and served (highwater values stay since start).

=a TLExactUnqueue, Queue
*/

class TLNcqQueue : public TLCoreQueue {
 public:
  const char* class_name() const override { return "TLNcqQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;

 protected:
  tracelab::QueueCore* make_core(ErrorHandler* errh) override CLICK_COLD;

 private:
  tracelab::NcqConfig _cfg;
};

CLICK_ENDDECLS
#endif
