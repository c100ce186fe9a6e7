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
  TLHandles() = default;
  TLHandles(const TLHandles&) = delete;
  TLHandles& operator=(const TLHandles&) = delete;
  ~TLHandles() {
    delete[] _slots;
    delete[] _free;
  }
  void init(uint32_t n) {
    delete[] _slots;
    delete[] _free;
    _slots = new Packet*[n]();
    _free = new uint32_t[n];
    _n = _nfree = n;
    _dropped.reserve(n);
    for (uint32_t i = 0; i < n; ++i) _free[i] = n - 1 - i;
  }
  bool full() const { return _nfree == 0; }
  // Plain arrays, not Click Vectors, whose operator[] asserts the index on
  // every access: put() and take() run on every packet (bench.sh).
  uint32_t put(Packet* p) {
    const uint32_t h = _free[--_nfree];
    _slots[h] = p;
    return h;
  }
  Packet* get(uint64_t h) const { return _slots[h]; }
  Packet* take(uint64_t h) {
    Packet* p = _slots[h];
    _slots[h] = nullptr;
    _free[_nfree++] = static_cast<uint32_t>(h);
    return p;
  }
  void drop(uint64_t h) { _dropped.push_back(take(h)); }

  // Direct handles: the Click Packet* itself. A single-packet queue
  // (TLCoreQueue) hands back exactly the packets it was given, so it needs
  // no table: init_direct() keeps only room for the parked drops, and the
  // element kills what its core still holds at cleanup. The table's
  // put()/take() cost 18 instructions a packet (callgrind), TLFifoQueue
  // 2.0 and TLEfdQueue 1.2 ns/packet (bench.sh, 9 interleaved runs).
  static uint64_t direct_handle(Packet* p) { return reinterpret_cast<uintptr_t>(p); }
  static Packet* direct_packet(uint64_t h) { return reinterpret_cast<Packet*>(static_cast<uintptr_t>(h)); }
  void init_direct(uint32_t max_drops) {
    delete[] _slots;
    delete[] _free;
    _slots = nullptr;
    _free = nullptr;
    _n = _nfree = 0;
    _dropped.reserve(max_drops);
  }
  void drop_direct(uint64_t h) { _dropped.push_back(direct_packet(h)); }
  // Emit parked drops on `port` if the element has it, else kill them.
  void flush_drops(Element* e, int port) {
    if (_dropped.empty()) return;
    for (Packet* p : _dropped) {
      if (port < e->noutputs()) e->output(port).push(p);
      else p->kill();
    }
    _dropped.clear();
  }
  void clear() {
    for (uint32_t i = 0; i < _n; ++i)
      if (_slots[i]) {
        _slots[i]->kill();
        _slots[i] = nullptr;
      }
    for (Packet* p : _dropped) p->kill();
    _dropped.clear();
  }

 private:
  Packet** _slots = nullptr;
  uint32_t* _free = nullptr;  // a stack of the free handles
  uint32_t _n = 0;
  uint32_t _nfree = 0;
  Vector<Packet*> _dropped;
};

CLICK_ENDDECLS
#endif
