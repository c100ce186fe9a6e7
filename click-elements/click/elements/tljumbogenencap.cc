// TLJumboGenEncap: a thin Click adapter over tracelab::JumboGenIngress.
#include <click/config.h>
#include "tljumbogenencap.hh"
#include <click/args.hh>
#include <click/error.hh>
#include "param_checks.hh"
#include <click/packet_anno.hh>
#include "ipv4_meta.hh"
CLICK_DECLS

using tracelab::Time;
namespace jg = tracelab::jg;

static constexpr Time kJumboTimeUnit = tracelab::kMicrosecond;  // chunk_format.hh
static constexpr uint32_t kOuterHeader = 20;

int TLJumboGenEncap::configure(Vector<String>& conf, ErrorHandler* errh) {
  uint32_t jfet_us = 1000, queues = 64, capacity = 65536;
  String key = "nexthop", cls = "dscp";
  if (Args(conf, this, errh)
          .read("MTU", _cfg.mtu)
          .read("JFET", jfet_us)
          .read("EARLY_RELEASE", _cfg.early_release_when_full)
          .read("KEY", WordArg(), key)
          .read("CLASS", WordArg(), cls)
          .read("QUEUES", queues)
          .read("CAPACITY", capacity)
          .read("PROTO", _proto)
          .complete() < 0)
    return -1;
  if (key == "nexthop") _key = kNextHop;
  else if (key == "dst") _key = kDst;
  else if (key == "none") _key = kNone;
  else return errh->error("KEY must be nexthop, dst or none");
  if (cls == "paint") _paint_class = true;
  else if (cls != "dscp") return errh->error("CLASS must be dscp or paint");
  if (_cfg.mtu < kOuterHeader + jg::header_size(1) + 20 || _cfg.mtu > 65535)
    return errh->error("MTU must be between %u and 65535", unsigned(kOuterHeader + jg::header_size(1) + 20));
  if (jfet_us == 0 || queues == 0 || capacity == 0 || capacity > (1u << 24))
    return errh->error("JFET, QUEUES and CAPACITY must be positive (CAPACITY at most 2^24)");
  _cfg.jfet = static_cast<Time>(jfet_us) * tracelab::kMicrosecond;
  _cfg.outer_header = kOuterHeader;
  _cfg.queues = queues;
  _cfg.capacity_packets = capacity;
  const std::string e = tracelab::check_params(_cfg);
  if (!e.empty()) return errh->error("%s", e.c_str());
  return 0;
}

int TLJumboGenEncap::initialize(ErrorHandler*) {
  attach(new tracelab::JumboGenIngress(_cfg), static_cast<uint32_t>(_cfg.capacity_packets));
  size_batch(_core->max_batch());
  return 0;
}

void TLJumboGenEncap::push(int, Packet* p) {
  const Time now = tl_now_ps();
  tracelab::Packet cp;
  // The JumboGram carries exactly the IP datagram: a complete IPv4 header
  // and total length within the captured bytes.
  if (!tracelab::describe_ipv4(p->data(), p->length(), cp) || cp.length > p->length() ||
      cp.length < ((p->data()[0] & 0x0F) * 4u)) {
    ++_not_ipv4;
    p->kill();
    return;
  }
  const uint8_t* ip = p->data();
  uint32_t dst;
  memcpy(&dst, ip + 16, 4);
  uint64_t key = 0;
  if (_key == kNextHop) key = p->dst_ip_anno().addr() ? p->dst_ip_anno().addr() : dst;
  else if (_key == kDst) key = dst;
  cp.cls = _paint_class ? PAINT_ANNO(p) : static_cast<uint8_t>(ip[1] >> 2);
  cp.handle = _handles.put(p);
  cp.arrival = now;
  _core->enqueue_to(cp, key, now);
  _handles.flush_drops(this, 1);
  arm(now);
}

// The outer IPv4 header, then the chunk_format.hh layout with queue times
// in microseconds from the release instant.
bool TLJumboGenEncap::encode(const tracelab::Batch& b, const jg::PacketRef* refs, Time, WritablePacket* out) {
  uint8_t* o = out->data();
  memcpy(o, refs[0].data, kOuterHeader);
  o[0] = 0x45;                                        // no options
  o[1] = static_cast<uint8_t>((o[1] & 0xFC) | 0x02);  // keep DSCP, ECT(0)
  jg::wr16(o + 2, static_cast<uint16_t>(b.wire_bytes));
  jg::wr16(o + 6, 0);  // no fragment bits
  o[9] = _proto;
  jg::wr16(o + 10, 0);
  jg::wr16(o + 10, jg::internet_checksum(o, kOuterHeader));
  jg::FormatError err;
  if (jg::encode(refs, b.count, _core->last_released(), kJumboTimeUnit, o + kOuterHeader, b.wire_bytes - kOuterHeader,
                 err) != b.wire_bytes - kOuterHeader)
    return false;
  out->set_ip_header(reinterpret_cast<click_ip*>(o), kOuterHeader);
  out->timestamp_anno() = Timestamp::now();
  return true;
}

enum { h_drops, h_no_queue, h_oversize, h_not_ipv4, h_grams, h_encap, h_mean, h_full, h_wait };

String TLJumboGenEncap::read_handler(Element* e, void* thunk) {
  TLJumboGenEncap* q = static_cast<TLJumboGenEncap*>(e);
  const tracelab::JumboGenStats& s = q->_core->stats();
  switch (reinterpret_cast<intptr_t>(thunk)) {
    case h_drops:
      return String(q->_core->counters().dropped_total() + q->_lost);
    case h_no_queue:
      return String(s.no_queue);
    case h_oversize:
      return String(s.oversize);
    case h_not_ipv4:
      return String(q->_not_ipv4);
    case h_grams:
      return String(s.jumbograms);
    case h_encap:
      return String(s.encapsulated);
    case h_mean: {
      const uint64_t n = s.jumbograms;
      return String(n ? double(s.wire_bytes) / double(n) : 0.0);
    }
    case h_full:
      return String(s.full_closes);
    case h_wait: {
      const uint64_t n = s.encapsulated;
      return String(n ? double(s.wait_total) / double(n) / double(tracelab::kNanosecond) : 0.0);
    }
  }
  return String();
}

int TLJumboGenEncap::write_handler(const String&, Element* e, void*, ErrorHandler*) {
  TLJumboGenEncap* q = static_cast<TLJumboGenEncap*>(e);
  q->_core->reset_counters();  // every counter and statistic, as a fresh core's
  q->_not_ipv4 = q->_lost = 0;
  return 0;
}

void TLJumboGenEncap::add_handlers() {
  add_length_handlers();
  add_read_handler("drops", read_handler, h_drops);
  add_read_handler("no_queue", read_handler, h_no_queue);
  add_read_handler("oversize", read_handler, h_oversize);
  add_read_handler("not_ipv4", read_handler, h_not_ipv4);
  add_read_handler("jumbograms", read_handler, h_grams);
  add_read_handler("encapsulated", read_handler, h_encap);
  add_read_handler("mean_jumbogram_bytes", read_handler, h_mean);
  add_read_handler("full_closes", read_handler, h_full);
  add_read_handler("mean_wait_ns", read_handler, h_wait);
  add_write_handler("reset", write_handler, 0, Handler::BUTTON);
}

CLICK_ENDDECLS
ELEMENT_REQUIRES(userlevel)
EXPORT_ELEMENT(TLJumboGenEncap)
