#ifndef TRACELAB_TLCHUNKQUEUE_HH
#define TRACELAB_TLCHUNKQUEUE_HH
#include "chunk_common.hh"
#include "tlelementutil.hh"
CLICK_DECLS

/*
=c

TLChunkQueue([SCHEME, KEYWORDS])

=s queues

packet chunking queue (BasiCQ, ChuMQ, ChuTQ, with CEA) emitting real chunks

=d

A thin adapter over the tracelab chunking cores (docs/reference/algorithms.md §6;
core/basicq.hh, core/chumq.hh, core/chutq.hh: their header comments state
every ambiguity resolution). Packets pushed in are held; each pull returns
one chunk as one new packet in the chunk_format.hh layout (6-byte header,
4 bytes per packet: length and queue-time offset in 10 ns units, then the
packets byte for byte), or nothing while no chunk is ready. TLDechunk
restores the packets. A Timer wakes the downstream puller when a chunking
timer expires.

A packet's class is its PAINT annotation; its waiting-time budget W_max is
BUDGETS[class] (the last entry for higher classes; none: no requirement).

Keyword arguments are:

=over 8

=item SCHEME

basicq, chumq or chutq. Default chutq.

=item TIMERS

Space-separated chunking timers T_i in microseconds, increasing. Default
"50 100 200".

=item BUDGETS

Space-separated W_max per PAINT class, in microseconds. Default
"50 100 200".

=item POLICY

ChuTQ attribute: dcf, tpf or cef. Default dcf.

=item EXPIRED

ChuTQ only: where a class whose head-of-line packet has already used up its
budget ranks. C<first> (default, the spec's reading): most urgent. C<last>:
below every packet that can still meet its budget (reproduces [000] Table IV).

=item CONTENTION

ChuMQ only: which ready buffer the free link serves ([000] §4.2, §7.2.2; see
core/chumq.hh). C<timer_first> (default; reproduces [000] Table IV): buffers
whose timer expired, lowest class first, then buffers above the MTU.
C<priority>: the lowest-class ready buffer, whatever made it ready. C<fifo>:
formed chunks in formation order (the spec's literal FIFO).

=item CEA

Boolean, chunking-efficiency-aware extension (ChuMQ, ChuTQ). Default false.

=item MTU

Chunk MTU in bytes, header included. Default 9000.

=item CAPACITY

Packets held at most (all buffers). Default 16384.

=item RATE

Output link, bits per second (ChuTQ's "output blocked" test). Default
10000000000.

=back

=h length, highwater_length read-only

Packets held now, and the most ever held.

=h drops read-only

Packets dropped (all reasons).

=h violations read-only

Packets whose chunk started later than their deadline.

=h max_excess read-only

Largest lateness of a chunk start past a packet's deadline, picoseconds.

=h chunks read-only

Chunks sent.

=h mean_chunk_bytes read-only

Mean chunk size in bytes.

=h lost_chunks read-only

Chunks lost because no packet buffer could be allocated for them.

=h flows read-only

Always 0: the chunking schemes keep no per-flow state.

=h reset write-only

Zero every counter, as in a fresh element (drops, violations, chunks,
mean_chunk_bytes, lost_chunks, max_excess).

=a TLDechunk, TLExactUnqueue
*/

class TLChunkQueue : public TLAggregateElement<tracelab::ChunkCore> {
 public:
  const char* class_name() const override { return "TLChunkQueue"; }
  int configure(Vector<String>& conf, ErrorHandler* errh) override CLICK_COLD;
  int initialize(ErrorHandler* errh) override CLICK_COLD;
  void add_handlers() override CLICK_COLD;
  void push(int port, Packet* p) override;
  Packet* pull(int port) override;

 private:
  static String read_handler(Element*, void*) CLICK_COLD;
  static int write_handler(const String&, Element*, void*, ErrorHandler*) CLICK_COLD;
  bool encode(const tracelab::Batch& b, const tracelab::jg::PacketRef* refs, tracelab::Time now,
              WritablePacket* out) override;
  void lost(const tracelab::Batch&) override { ++_lost_chunks; }

  String _scheme;
  Vector<tracelab::Time> _timers, _budgets;
  int _policy = 0;
  bool _expired_first = true;
  int _contention = 0;  // tracelab::ChuMQContention
  bool _cea = false;
  uint32_t _mtu = 9000;
  uint32_t _capacity = 16384;
  uint64_t _rate = 10000000000ULL;

  uint64_t _unslotted = 0, _lost_chunks = 0;
};

CLICK_ENDDECLS
#endif
