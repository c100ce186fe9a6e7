// Click Timestamp <-> tracelab Time (picoseconds since tl_origin()). Click with
// --enable-nanotimestamp keeps nanoseconds; without, microseconds (then
// every conversion is exact in that unit, and TLExactUnqueue's wake-ups are
// only microsecond-accurate: build Click with nanotimestamps).
#ifndef TRACELAB_TLTIME_HH
#define TRACELAB_TLTIME_HH
#include <click/notifier.hh>
#include <click/timer.hh>
#include <click/timestamp.hh>
#include "queue_core.hh"
CLICK_DECLS

// int64 picoseconds overflow after 106 days, so times count from one origin
// shared by every tracelab element: the first time any of them asks.
inline const Timestamp& tl_origin() {
  static const Timestamp origin = Timestamp::now();
  return origin;
}
inline tracelab::Time tl_ps(const Timestamp& t) {
  const Timestamp d = t - tl_origin();
  return static_cast<tracelab::Time>(d.sec()) * tracelab::kSecond +
         static_cast<tracelab::Time>(d.nsec()) * tracelab::kNanosecond;
}
inline tracelab::Time tl_now_ps() { return tl_ps(Timestamp::now()); }
// Under --simtime every Timestamp::now() is an event: it advances Click's
// simulated clock by 1 ns (lib/timestamp.cc, Timestamp::warp), so whether
// an element reads the clock shows in every later time of the simulation.
// An element that may skip reads it does not need (bench.sh: a read costs
// about 25 ns/packet, clock_gettime) keeps them when this is true, so
// simulated runs stay the same to the nanosecond.
inline bool tl_simulated_clock() {
#if TIMESTAMP_WARPABLE
  return Timestamp::warp_class() == Timestamp::warp_simulation;
#else
  return false;
#endif
}
// The first Timestamp not earlier than `t` picoseconds.
inline Timestamp tl_timestamp_ceil(tracelab::Time t) {
  const tracelab::Time ns = (t + tracelab::kNanosecond - 1) / tracelab::kNanosecond;
  return tl_origin() + Timestamp::make_nsec(ns / 1000000000, ns % 1000000000);
}

// A pull element whose core becomes ready at `ready` (kNever: nothing held):
// wake the puller now, or sleep it and fire `timer` at that instant.
inline void tl_arm(tracelab::Time ready, tracelab::Time now, Timer& timer, ActiveNotifier& notifier) {
  if (ready == tracelab::kNever) {
    timer.unschedule();
    notifier.sleep();
  } else if (ready <= now) {
    notifier.wake();
  } else {
    notifier.sleep();
    timer.schedule_at(tl_timestamp_ceil(ready));
  }
}

CLICK_ENDDECLS
#endif
