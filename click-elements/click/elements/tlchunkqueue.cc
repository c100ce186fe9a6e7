// TLChunkQueue: a thin Click adapter over the tracelab chunking cores.
#include <click/config.h>
#include "tlchunkqueue.hh"
#include <click/args.hh>
#include <click/error.hh>
#include <click/packet_anno.hh>
#include "basicq.hh"
#include "chumq.hh"
#include "chutq.hh"
#include "param_checks.hh"
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
using tracelab::kNanosecond;
using tracelab::Time;
namespace jg = tracelab::jg;

static constexpr Time kChunkTimeUnit = 10 * kNanosecond;  // chunk_format.hh

static int parse_us_list(const String& s, Vector<Time>& out, const char* what, Element* e, ErrorHandler* errh) {
  if (!tl_parse_us_list(s, out)) return errh->error("%s: %s: not a number of microseconds", e->name().c_str(), what);
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
  // The ranges of param_checks.hh (BasiCQ has no timers).
  std::string e = tracelab::check_chunk_params(_mtu, _capacity);
  if (e.empty() && _scheme != "basicq")
    e = tracelab::check_chunk_timers(std::vector<Time>(_timers.begin(), _timers.end()));
  if (!e.empty()) return errh->error("%s", e.c_str());
  return 0;
}

int TLChunkQueue::initialize(ErrorHandler*) {
  std::vector<Time> t(_timers.begin(), _timers.end());
  tracelab::ChunkCore* core;
  if (_scheme == "basicq") {
    BasiCQConfig c;
    c.mtu = _mtu;
    c.capacity_packets = _capacity;
    core = new BasiCQ(c);
  } else if (_scheme == "chumq") {
    ChuMQConfig c;
    c.timers = t;
    c.mtu = _mtu;
    c.cea = _cea;
    c.contention = static_cast<tracelab::ChuMQContention>(_contention);
    c.capacity_packets = _capacity;
    core = new ChuMQ(c);
  } else {
    ChuTQConfig c;
    c.timers = t;
    c.mtu = _mtu;
    c.cea = _cea;
    c.policy = static_cast<ChuTQPolicy>(_policy);
    c.expired_first = _expired_first;
    c.link_bps = _rate;
    c.capacity_packets = _capacity;
    core = new ChuTQ(c);
  }
  attach(core, _capacity);
  size_batch(tracelab::max_chunk_packets(_mtu));
  return 0;
}

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

// The chunk, stamped when it leaves.
Packet* TLChunkQueue::pull(int port) {
  Packet* out = TLAggregateElement::pull(port);
  if (out) out->timestamp_anno() = Timestamp::now();
  return out;
}

// The chunk_format.hh layout, queue times in 10 ns units from `now`.
bool TLChunkQueue::encode(const Batch& b, const jg::PacketRef* refs, Time now, WritablePacket* out) {
  jg::FormatError err;
  return jg::encode(refs, b.count, now, kChunkTimeUnit, out->data(), out->length(), err) == b.wire_bytes;
}

enum { h_drops, h_violations, h_chunks, h_mean, h_flows, h_lost, h_excess, h_reset };

String TLChunkQueue::read_handler(Element* e, void* thunk) {
  TLChunkQueue* q = static_cast<TLChunkQueue*>(e);
  const ChunkStats& st = q->_core->stats();
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_drops:
      return String(q->_core->counters().dropped_total());
    case h_violations:
      return String(st.violations);
    case h_chunks:
      return String(st.chunks);
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
  q->_core->reset_counters();  // every counter and chunk statistic, as a fresh core's
  q->_lost_chunks = q->_unslotted = 0;
  return 0;
}

void TLChunkQueue::add_handlers() {
  add_length_handlers();
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
