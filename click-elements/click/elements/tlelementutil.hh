// The Click glue the tracelab elements share. Not an element.
//
// TLCoreElement<Core>: an element whose packets wait in a tracelab core
// between push and pull (push input, pull output 0; the core's drops leave
// on push output 1 if it is connected, else are killed). It owns the core
// and the table of the Click packets the core holds (TLHandles), answers
// the core's drops, and keeps the notifier that tells the puller whether a
// packet is ready. TLTimedElement<Core> adds the Timer that wakes the
// puller at the core's next_ready() instant, for cores that release on a
// timer (chunks, JumboGrams, shaped packets); TLAggregateElement<Core>,
// for cores that release aggregates, encodes each into one new packet.
#ifndef TRACELAB_TLELEMENTUTIL_HH
#define TRACELAB_TLELEMENTUTIL_HH
#include <click/args.hh>
#include <click/element.hh>
#include <click/notifier.hh>
#include <click/timer.hh>
#include <click/vector.hh>
#include "chunk_format.hh"
#include "queue_core.hh"
#include "tlhandles.hh"
#include "tltime.hh"
CLICK_DECLS

template <typename Core>
class TLCoreElement : public Element, public tracelab::DropSink {
 public:
  const char* port_count() const override { return "1/1-2"; }
  const char* processing() const override { return "h/lh"; }
  void* cast(const char* name) override;
  void cleanup(CleanupStage) override CLICK_COLD;
  // One packet: the core's next, or none (the puller sleeps until woken).
  Packet* pull(int) override {
    tracelab::Packet meta;
    return pull_one(meta);
  }
  void on_drop(const tracelab::Packet& p, tracelab::DropReason, tracelab::Time) override { _handles.drop(p.handle); }

 protected:
  // The end of initialize(): take `core`, which holds at most `slots`
  // packets (the handle table has one more: the arrival the core is
  // deciding on), and fix the time origin before the first packet.
  // `direct`: the element gives the core direct handles (TLHandles).
  void attach(Core* core, uint32_t slots, bool direct = false) {
    tl_origin();
    _core = core;
    _core->set_drop_sink(this);
    if (direct) _handles.init_direct(slots + 1);
    else _handles.init(slots + 1);
    _notifier.initialize(Notifier::EMPTY_NOTIFIER, router());
  }
  // The end of push(): emit what the core dropped, wake the puller if the
  // core holds packets.
  void pushed() {
    _handles.flush_drops(this, 1);
    if (_core->length_packets()) _notifier.wake();
  }
  // Registers the read handlers `length` (packets the core holds) and
  // `highwater_length` (the most it ever held).
  void add_length_handlers() {
    add_read_handler("length", length_handler, 0);
    add_read_handler("highwater_length", length_handler, 1);
  }
  // Dequeue one packet (its core metadata into `meta`), or sleep the puller.
  Packet* pull_one(tracelab::Packet& meta) {
    tracelab::Batch out{&meta, 1};
    if (!_core->dequeue(tl_now_ps(), out)) {
      _notifier.sleep();
      return nullptr;
    }
    return _handles.take(meta.handle);
  }

  Core* _core = nullptr;
  TLHandles _handles;
  ActiveNotifier _notifier;

 private:
  static String length_handler(Element* e, void* highwater) {
    const Core* core = static_cast<TLCoreElement*>(e)->_core;
    return String(highwater ? core->counters().highwater_packets : core->length_packets());
  }
};

template <typename Core>
void* TLCoreElement<Core>::cast(const char* name) {
  if (strcmp(name, ActiveNotifier::EMPTY_NOTIFIER) == 0) return static_cast<Notifier*>(&_notifier);
  return Element::cast(name);
}

template <typename Core>
void TLCoreElement<Core>::cleanup(CleanupStage) {
  _handles.clear();
  delete _core;
  _core = nullptr;
}

template <typename Core>
class TLTimedElement : public TLCoreElement<Core> {
 public:
  TLTimedElement() : _timer(this) {}
  // One packet if the core releases one now; the timer wakes the puller
  // for the next.
  Packet* pull(int) override;
  void run_timer(Timer*) override { arm(tl_now_ps()); }

 protected:
  void attach(Core* core, uint32_t slots) {
    TLCoreElement<Core>::attach(core, slots);
    _timer.initialize(this);
  }
  // Wake the puller now if the core is ready, else fire the timer when it
  // will be.
  void arm(tracelab::Time now) { tl_arm(this->_core->next_ready(now), now, _timer, this->_notifier); }

  Timer _timer;
};

template <typename Core>
Packet* TLTimedElement<Core>::pull(int) {
  const tracelab::Time now = tl_now_ps();
  tracelab::Packet meta;
  tracelab::Batch out{&meta, 1};
  const bool got = this->_core->dequeue(now, out);
  arm(now);
  return got ? this->_handles.take(meta.handle) : nullptr;
}

// A TLTimedElement whose core hands out aggregates (a chunk, a JumboGram):
// each pull encodes one into a new packet and frees the packets it
// carries. Push input, pull output; the core's drops are killed.
// (Under --simtime every clock read advances Click's clock, so where an
// element stamps the new packet, in encode() or after pull(), is kept.)
template <typename Core>
class TLAggregateElement : public TLTimedElement<Core> {
 public:
  ~TLAggregateElement() { free_batch(); }
  const char* port_count() const override { return Element::PORTS_1_1; }
  const char* processing() const override { return Element::PUSH_TO_PULL; }
  void cleanup(Element::CleanupStage stage) override CLICK_COLD;
  Packet* pull(int) override;

 protected:
  // In initialize(), after attach(): aggregates carry at most `packets`.
  void size_batch(uint32_t packets) {
    _capacity = packets;
    _packets = new tracelab::Packet[packets];
    _refs = new tracelab::jg::PacketRef[packets];
  }
  // Write the aggregate of b's packets (their bytes in `refs`), formed at
  // `now`, into `out` of b.wire_bytes bytes; false if it does not fit.
  virtual bool encode(const tracelab::Batch& b, const tracelab::jg::PacketRef* refs, tracelab::Time now,
                      WritablePacket* out) = 0;
  // The aggregate of b's packets is lost (no memory for it).
  virtual void lost(const tracelab::Batch& b) = 0;

 private:
  void free_batch() {
    delete[] _packets;
    delete[] _refs;
    _packets = nullptr;
    _refs = nullptr;
  }

  tracelab::Packet* _packets = nullptr;
  tracelab::jg::PacketRef* _refs = nullptr;
  uint32_t _capacity = 0;
};

template <typename Core>
void TLAggregateElement<Core>::cleanup(Element::CleanupStage stage) {
  TLTimedElement<Core>::cleanup(stage);
  free_batch();
}

template <typename Core>
Packet* TLAggregateElement<Core>::pull(int) {
  const tracelab::Time now = tl_now_ps();
  tracelab::Batch b{_packets, _capacity};
  const bool got = this->_core->dequeue(now, b);
  this->_handles.flush_drops(this, 1);  // no such port: dropped packets are killed
  if (!got) {
    this->arm(now);
    return nullptr;
  }
  for (uint32_t i = 0; i < b.count; ++i) {
    Packet* p = this->_handles.get(b.packets[i].handle);
    _refs[i] = tracelab::jg::PacketRef{p->data(), b.packets[i].length, b.packets[i].arrival};
  }
  WritablePacket* out = Packet::make(64, nullptr, b.wire_bytes, 0);
  if (out && !encode(b, _refs, now, out)) {
    out->kill();  // cannot happen: the core sized wire_bytes with the same rule
    out = nullptr;
  }
  if (!out) lost(b);
  for (uint32_t i = 0; i < b.count; ++i) this->_handles.take(b.packets[i].handle)->kill();
  this->arm(now);
  return out;
}

// A keyword's value of space-separated microseconds, as Times; false if a
// word is not a number.
inline bool tl_parse_us_list(const String& s, Vector<tracelab::Time>& out) {
  out.clear();
  Vector<String> words;
  cp_spacevec(cp_unquote(s), words);
  for (const String& w : words) {
    uint32_t v;
    if (!IntArg().parse(w, v)) return false;
    out.push_back(static_cast<tracelab::Time>(v) * tracelab::kMicrosecond);
  }
  return true;
}

CLICK_ENDDECLS
#endif
