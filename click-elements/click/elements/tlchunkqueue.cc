// TLChunkQueue: a thin Click adapter over the tracelab chunking cores.
#include <click/config.h>
#include "tlchunkqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
#include <click/packet_anno.hh>
#include "basicq.hh"
#include "chumq.hh"
#include "chutq.hh"
#include "tltime.hh"
CLICK_DECLS

// Not `using namespace tracelab`: tracelab::Packet would clash with Click's.
using tracelab::BasiCQ;
using tracelab::BasiCQConfig;
using tracelab::Batch;
using tracelab::ChuMQ;
using tracelab::ChuMQConfig;
using tracelab::ChunkStats;
using tracelab::ChuTQ;
using tracelab::ChuTQConfig;
using tracelab::ChuTQPolicy;
using tracelab::DropReason;
using tracelab::kMicrosecond;
using tracelab::kNanosecond;
using tracelab::kNever;
using tracelab::Time;
namespace jg = tracelab::jg;

static constexpr Time kChunkTimeUnit = 10 * kNanosecond;  // chunk_format.hh

TLChunkQueue::TLChunkQueue() : _timer(this) {}
TLChunkQueue::~TLChunkQueue() {}

void* TLChunkQueue::cast(const char* name) {
  if (strcmp(name, ActiveNotifier::EMPTY_NOTIFIER) == 0) return static_cast<Notifier*>(&_notifier);
  return Element::cast(name);
}

static int parse_us_list(const String& s, Vector<Time>& out, const char* what, Element* e, ErrorHandler* errh) {
  out.clear();
  Vector<String> words;
  cp_spacevec(cp_unquote(s), words);
  for (const String& w : words) {
    uint32_t v;
    if (!IntArg().parse(w, v)) return errh->error("%s: %s: not a number of microseconds", e->name().c_str(), what);
    out.push_back(static_cast<Time>(v) * kMicrosecond);
  }
  return 0;
}

int TLChunkQueue::configure(Vector<String>& conf, ErrorHandler* errh) {
  _scheme = "chutq";
  String timers = "50 100 200", budgets = "50 100 200", policy = "dcf", expired = "first", contention = "timer_first";
  if (Args(conf, this, errh)
          .read_p("SCHEME", WordArg(), _scheme)
          .read("TIMERS", AnyArg(), timers)
          .read("BUDGETS", AnyArg(), budgets)
          .read("POLICY", WordArg(), policy)
          .read("EXPIRED", WordArg(), expired)
          .read("CONTENTION", WordArg(), contention)
          .read("CEA", _cea)
          .read("MTU", _mtu)
          .read("CAPACITY", _capacity)
          .read("RATE", _rate)
          .complete() < 0)
    return -1;
  if (_scheme != "basicq" && _scheme != "chumq" && _scheme != "chutq")
    return errh->error("SCHEME must be basicq, chumq or chutq");
  if (policy == "dcf") _policy = 0;
  else if (policy == "tpf") _policy = 1;
  else if (policy == "cef") _policy = 2;
  else return errh->error("POLICY must be dcf, tpf or cef");
  if (expired == "first") _expired_first = true;
  else if (expired == "last") _expired_first = false;
  else return errh->error("EXPIRED must be first or last");
  if (contention == "timer_first") _contention = 0;
  else if (contention == "priority") _contention = 1;
  else if (contention == "fifo") _contention = 2;
  else return errh->error("CONTENTION must be timer_first, priority or fifo");
  if (parse_us_list(timers, _timers, "TIMERS", this, errh) < 0 ||
      parse_us_list(budgets, _budgets, "BUDGETS", this, errh) < 0)
    return -1;
  if (_timers.empty()) return errh->error("TIMERS is empty");
  for (int i = 1; i < _timers.size(); ++i)
    if (_timers[i] <= _timers[i - 1]) return errh->error("TIMERS must increase");
  if (_capacity == 0 || _mtu < 64) return errh->error("CAPACITY must be positive and MTU >= 64");
  return 0;
}

int TLChunkQueue::initialize(ErrorHandler*) {
  tl_origin();
  std::vector<Time> t(_timers.begin(), _timers.end());
  if (_scheme == "basicq") {
    BasiCQConfig c;
    c.mtu = _mtu;
    c.capacity_packets = _capacity;
    _core = new BasiCQ(c);
  } else if (_scheme == "chumq") {
    ChuMQConfig c;
    c.timers = t;
    c.mtu = _mtu;
    c.cea = _cea;
    c.contention = static_cast<tracelab::ChuMQContention>(_contention);
    c.capacity_packets = _capacity;
    _core = new ChuMQ(c);
  } else {
    ChuTQConfig c;
    c.timers = t;
    c.mtu = _mtu;
    c.cea = _cea;
    c.policy = static_cast<ChuTQPolicy>(_policy);
    c.expired_first = _expired_first;
    c.link_bps = _rate;
    c.capacity_packets = _capacity;
    _core = new ChuTQ(c);
  }
  _core->set_drop_sink(this);
  _handles.init(_capacity + 1);  // +1: an arrival may be held while the core decides
  _batch_cap = tracelab::max_chunk_packets(_mtu);
  _batch_store = new tracelab::Packet[_batch_cap];
  _refs = new jg::PacketRef[_batch_cap];
  _timer.initialize(this);
  _notifier.initialize(Notifier::EMPTY_NOTIFIER, router());
  return 0;
}

void TLChunkQueue::cleanup(CleanupStage) {
  _handles.clear();
  delete _core;
  delete[] _batch_store;
  delete[] _refs;
  _core = nullptr;
  _batch_store = nullptr;
  _refs = nullptr;
}

void TLChunkQueue::on_drop(const tracelab::Packet& p, DropReason, Time) { _handles.drop(p.handle); }

// Wake the puller now if a chunk is ready, else at the next timer expiry.
void TLChunkQueue::arm(Time now) { tl_arm(_core->next_ready(now), now, _timer, _notifier); }

void TLChunkQueue::push(int, Packet* p) {
  const Time now = tl_now_ps();
  if (_handles.full()) {  // cannot happen: the core holds at most CAPACITY
    ++_unslotted;
    p->kill();
    return;
  }
  tracelab::Packet cp;
  cp.handle = _handles.put(p);
  cp.length = p->length();
  cp.cls = PAINT_ANNO(p);
  if (!_budgets.empty()) cp.budget = _budgets[cp.cls < _budgets.size() ? int(cp.cls) : _budgets.size() - 1];
  _core->enqueue(cp, now);
  _handles.flush_drops(this, 1);  // no such port: dropped packets are killed
  arm(now);
}

Packet* TLChunkQueue::pull(int) {
  const Time now = tl_now_ps();
  Batch b{_batch_store, _batch_cap};
  const bool got = _core->dequeue(now, b);
  _handles.flush_drops(this, 1);
  if (!got) {
    arm(now);
    return nullptr;
  }
  // Encode the chunk (chunk_format.hh) into one new packet, then free the
  // originals. If no memory, the chunk is lost and counted.
  for (uint32_t i = 0; i < b.count; ++i) {
    Packet* p = _handles.get(b.packets[i].handle);
    _refs[i] = jg::PacketRef{p->data(), p->length(), b.packets[i].arrival};
  }
  WritablePacket* out = Packet::make(64, nullptr, b.wire_bytes, 0);
  if (out) {
    jg::FormatError err;
    if (jg::encode(_refs, b.count, now, kChunkTimeUnit, out->data(), out->length(), err) != b.wire_bytes) {
      out->kill();  // cannot happen: the core sized wire_bytes with the same rule
      out = nullptr;
    }
  }
  if (!out) ++_lost_chunks;
  for (uint32_t i = 0; i < b.count; ++i) _handles.take(b.packets[i].handle)->kill();
  arm(now);
  if (out) out->timestamp_anno() = Timestamp::now();
  return out;
}

void TLChunkQueue::run_timer(Timer*) { arm(tl_now_ps()); }

uint64_t TLChunkQueue::violations() const {
  if (_scheme == "basicq") return static_cast<BasiCQ*>(_core)->stats().violations;
  if (_scheme == "chumq") return static_cast<ChuMQ*>(_core)->stats().violations;
  return static_cast<ChuTQ*>(_core)->stats().violations;
}

enum { h_length, h_highwater, h_drops, h_violations, h_chunks, h_mean, h_flows, h_lost, h_excess, h_reset };

String TLChunkQueue::read_handler(Element* e, void* thunk) {
  TLChunkQueue* q = static_cast<TLChunkQueue*>(e);
  const ChunkStats& st = q->_scheme == "basicq"  ? static_cast<BasiCQ*>(q->_core)->stats()
                         : q->_scheme == "chumq" ? static_cast<ChuMQ*>(q->_core)->stats()
                                                 : static_cast<ChuTQ*>(q->_core)->stats();
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_length:
      return String(q->_core->length_packets());
    case h_highwater:
      return String(q->_core->counters().highwater_packets);
    case h_drops:
      return String(q->_core->counters().dropped_total() - q->_base_drops);
    case h_violations:
      return String(st.violations - q->_base_viol);
    case h_chunks:
      return String(st.chunks - q->_base_chunks);
    case h_mean:
      return String(st.mean_chunk_bytes());
    case h_flows:
      return String(0);
    case h_lost:
      return String(q->_lost_chunks);
    case h_excess:
      return String(static_cast<int64_t>(st.max_excess));
  }
  return String();
}

int TLChunkQueue::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLChunkQueue* q = static_cast<TLChunkQueue*>(e);
  q->_base_drops = q->_core->counters().dropped_total();
  q->_base_viol = q->violations();
  q->_base_chunks = q->_scheme == "basicq"  ? static_cast<BasiCQ*>(q->_core)->stats().chunks
                    : q->_scheme == "chumq" ? static_cast<ChuMQ*>(q->_core)->stats().chunks
                                            : static_cast<ChuTQ*>(q->_core)->stats().chunks;
  return 0;
}

void TLChunkQueue::add_handlers() {
  add_read_handler("length", read_handler, h_length);
  add_read_handler("highwater_length", read_handler, h_highwater);
  add_read_handler("drops", read_handler, h_drops);
  add_read_handler("violations", read_handler, h_violations);
  add_read_handler("chunks", read_handler, h_chunks);
  add_read_handler("mean_chunk_bytes", read_handler, h_mean);
  add_read_handler("flows", read_handler, h_flows);
  add_read_handler("lost_chunks", read_handler, h_lost);
  add_read_handler("max_excess", read_handler, h_excess);
  add_write_handler("reset", write_handler, h_reset, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLChunkQueue)
