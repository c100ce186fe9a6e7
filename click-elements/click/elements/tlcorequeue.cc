// TLCoreQueue: the Click adapter body shared by the tracelab queue elements.
#include <click/config.h>
#include "tlcorequeue.hh"
#include <click/args.hh>
#include <click/error.hh>
#include <clicknet/ip.h>
#include <clicknet/tcp.h>
#include "tltime.hh"
CLICK_DECLS

using tracelab::DropReason;
using tracelab::Time;

TLCoreQueue::TLCoreQueue() {}
TLCoreQueue::~TLCoreQueue() {}

void* TLCoreQueue::cast(const char* name) {
  if (strcmp(name, ActiveNotifier::EMPTY_NOTIFIER) == 0) return static_cast<Notifier*>(&_notifier);
  return Element::cast(name);
}

void TLCoreQueue::read_buffer(Args& args, uint64_t capacity) {
  _buffer.capacity = capacity;
  args.read("CAPACITY", _buffer.capacity).read("BYTES", _bytes);
  _buffer.granularity = _bytes ? tracelab::Granularity::kBytes : tracelab::Granularity::kPackets;
}

int TLCoreQueue::initialize(ErrorHandler* errh) {
  tl_origin();
  if (_buffer.capacity == 0) return errh->error("CAPACITY must be positive");
  if (_buffer.capacity > (1u << 26)) return errh->error("CAPACITY too large");
  _core = make_core(errh);
  if (!_core) return -1;
  _core->set_drop_sink(this);
  const uint32_t n = _buffer.slots() + 1;  // +1: the arrival the core is deciding on
  _slots.resize(n, nullptr);
  for (uint32_t i = 0; i < n; ++i) _free.push_back(n - 1 - i);
  _notifier.initialize(Notifier::EMPTY_NOTIFIER, router());
  return 0;
}

void TLCoreQueue::cleanup(CleanupStage) {
  for (Packet* p : _slots)
    if (p) p->kill();
  delete _core;
  _core = nullptr;
}

void TLCoreQueue::on_drop(const tracelab::Packet& p, DropReason, Time) {
  const uint32_t h = static_cast<uint32_t>(p.handle);
  _slots[h]->kill();
  _slots[h] = nullptr;
  _free.push_back(h);
}

// FNV-1a over the 5-tuple; the connection hash orders the endpoints first.
static uint64_t tuple_hash(uint32_t a, uint16_t pa, uint32_t b, uint16_t pb, uint8_t proto) {
  uint64_t h = 1469598103934665603ULL;
  const uint64_t words[3] = {(uint64_t(a) << 16) | pa, (uint64_t(b) << 16) | pb, proto};
  for (uint64_t w : words)
    for (int i = 0; i < 8; ++i) {
      h ^= (w >> (8 * i)) & 0xff;
      h *= 1099511628211ULL;
    }
  return h;
}

static void describe(const Packet* p, tracelab::Packet& cp) {
  cp.length = p->length();
  if (!p->has_network_header() || p->network_length() < int(sizeof(click_ip))) return;
  const click_ip* ip = p->ip_header();
  if (ip->ip_v != 4) return;
  cp.length = ntohs(ip->ip_len);
  const uint32_t src = ip->ip_src.s_addr, dst = ip->ip_dst.s_addr;
  uint16_t sport = 0, dport = 0;
  const bool first_fragment = (ntohs(ip->ip_off) & IP_OFFMASK) == 0;
  if (ip->ip_p == IP_PROTO_TCP && first_fragment && p->transport_length() >= int(sizeof(click_tcp))) {
    const click_tcp* tcp = p->tcp_header();
    sport = tcp->th_sport;
    dport = tcp->th_dport;
    cp.flags |= tracelab::kFlagTcp;
    cp.tcp_seq = ntohl(tcp->th_seq);
    cp.tcp_ack = ntohl(tcp->th_ack);
    if (tcp->th_flags & TH_SYN) cp.flags |= tracelab::kFlagSyn;
    if (tcp->th_flags & TH_FIN) cp.flags |= tracelab::kFlagFin;
    const int payload = int(cp.length) - (ip->ip_hl << 2) - (tcp->th_off << 2);
    if ((tcp->th_flags & TH_ACK) && payload <= 0 && !(tcp->th_flags & (TH_SYN | TH_FIN | TH_RST)))
      cp.flags |= tracelab::kFlagPureAck;
  } else if (ip->ip_p == IP_PROTO_UDP && first_fragment && p->transport_length() >= 4) {
    const uint16_t* ports = reinterpret_cast<const uint16_t*>(p->transport_header());
    sport = ports[0];
    dport = ports[1];
  }
  cp.flow_hash = tuple_hash(src, sport, dst, dport, ip->ip_p);
  const bool forward = src < dst || (src == dst && sport <= dport);
  cp.conn_hash = forward ? cp.flow_hash : tuple_hash(dst, dport, src, sport, ip->ip_p);
}

void TLCoreQueue::push(int, Packet* p) {
  const Time now = tl_now_ps();
  // The table has one handle per buffer slot plus the arrival, and the core
  // never holds more than its slots, so a handle is always free.
  const uint32_t h = _free.back();
  _free.pop_back();
  _slots[h] = p;
  tracelab::Packet cp;
  cp.handle = h;
  cp.arrival = now;
  describe(p, cp);
  _core->enqueue(cp, now);
  if (_core->length_packets()) _notifier.wake();
}

Packet* TLCoreQueue::pull(int) {
  tracelab::Packet out_store[1];
  tracelab::Batch out{out_store, 1};
  if (!_core->dequeue(tl_now_ps(), out)) {
    _notifier.sleep();
    return nullptr;
  }
  const uint32_t h = static_cast<uint32_t>(out_store[0].handle);
  Packet* p = _slots[h];
  _slots[h] = nullptr;
  _free.push_back(h);
  return p;
}

enum { h_length, h_highwater, h_drops, h_full, h_pushed, h_served, h_flows, h_flows_hw };

String TLCoreQueue::read_handler(Element* e, void* thunk) {
  TLCoreQueue* q = static_cast<TLCoreQueue*>(e);
  const tracelab::Counters& c = q->_core->counters();
  auto since = [&](DropReason r) { return c.dropped[int(r)] - q->_base_drops[int(r)]; };
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_length: return String(q->_core->length_packets());
    case h_highwater: return String(c.highwater_packets);
    case h_drops: {
      uint64_t s = 0;
      for (int r = 0; r < int(DropReason::kCount); ++r) s += since(DropReason(r));
      return String(s);
    }
    case h_full: return String(since(DropReason::kBufferFull));
    case h_pushed: return String(since(DropReason::kPushedOut));
    case h_served: return String(c.served - q->_base_served);
    case h_flows: return String(q->flows());
    case h_flows_hw: return String(q->flows_highwater());
  }
  return String();
}

int TLCoreQueue::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLCoreQueue* q = static_cast<TLCoreQueue*>(e);
  for (int r = 0; r < int(DropReason::kCount); ++r) q->_base_drops[r] = q->_core->counters().dropped[r];
  q->_base_served = q->_core->counters().served;
  return 0;
}

void TLCoreQueue::add_handlers() {
  add_read_handler("length", read_handler, h_length);
  add_read_handler("highwater_length", read_handler, h_highwater);
  add_read_handler("drops", read_handler, h_drops);
  add_read_handler("drops_buffer_full", read_handler, h_full);
  add_read_handler("pushed_out", read_handler, h_pushed);
  add_read_handler("served", read_handler, h_served);
  add_read_handler("flows", read_handler, h_flows);
  add_read_handler("flows_highwater", read_handler, h_flows_hw);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
ELEMENT_PROVIDES(TLCoreQueue)
