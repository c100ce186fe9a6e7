// TLHandles: the Click side of a core's packet handles. Not an element.
//
// A core sees tracelab::Packet::handle; the adapter keeps the Click Packet*
// in a table sized at initialize() (no allocation per packet). Packets the
// core drops are parked by drop() and emitted by flush_drops() once the
// core call has returned: emitting from inside the core's DropSink callback
// would run downstream elements while the core is mid-update.
#ifndef TRACELAB_TLHANDLES_HH
#define TRACELAB_TLHANDLES_HH
#include <click/element.hh>
#include <click/vector.hh>
CLICK_DECLS

class TLHandles {
 public:
  void init(uint32_t n) {
    _slots.resize(n, nullptr);
    _free.reserve(n);
    _dropped.reserve(n);
    for (uint32_t i = 0; i < n; ++i) _free.push_back(n - 1 - i);
  }
  bool full() const { return _free.empty(); }
  uint32_t put(Packet* p) {
    const uint32_t h = _free.back();
    _free.pop_back();
    _slots[h] = p;
    return h;
  }
  Packet* get(uint64_t h) const { return _slots[h]; }
  Packet* take(uint64_t h) {
    Packet* p = _slots[h];
    _slots[h] = nullptr;
    _free.push_back(static_cast<uint32_t>(h));
    return p;
  }
  void drop(uint64_t h) { _dropped.push_back(take(h)); }
  // Emit parked drops on `port` if the element has it, else kill them.
  void flush_drops(Element* e, int port) {
    for (Packet* p : _dropped) {
      if (port < e->noutputs()) e->output(port).push(p);
      else p->kill();
    }
    _dropped.clear();
  }
  void clear() {
    for (Packet*& p : _slots)
      if (p) {
        p->kill();
        p = nullptr;
      }
    for (Packet* p : _dropped) p->kill();
    _dropped.clear();
  }

 private:
  Vector<Packet*> _slots;
  Vector<uint32_t> _free;
  Vector<Packet*> _dropped;
};

CLICK_ENDDECLS
#endif
