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
// Whether Click's clock is the system's own (no --simtime, no warp), which
// tl_coarse_now_ps() reads directly.
inline bool tl_unwarped_clock() {
#if TIMESTAMP_WARPABLE
  return Timestamp::warp_class() == Timestamp::warp_none;
#else
  return true;
#endif
}
// The Click clock as of the kernel's last tick (CLOCK_REALTIME_COARSE: at
// most a tick, 4 ms at HZ=250, behind Timestamp::now()), never before the
// origin. It is a load from the vDSO page, 6.6 ns against clock_gettime's
// 24.6 ns here (kvm guest, tsc), for cores whose arrival time only ages
// flow records by seconds. Only valid when tl_unwarped_clock(): it bypasses
// Click's warp. Without the coarse clock (not Linux), Timestamp::now().
inline tracelab::Time tl_coarse_now_ps() {
#ifdef CLOCK_REALTIME_COARSE
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  const tracelab::Time t = tl_ps(Timestamp::make_nsec(ts.tv_sec, ts.tv_nsec));
  return t > 0 ? t : 0;
#else
  return tl_now_ps();
#endif
}
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
