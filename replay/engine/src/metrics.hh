// Per-class and per-node measurements of a run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "queue_core.hh"

namespace tracelab::engine {

// Log-linear histogram of non-negative integers (picoseconds, bytes): exact
// below 2^kSubBits, above that 2^kSubBits buckets per power of two, so any
// value is known to within a relative 2^-kSubBits (0.2 %).
class LogHistogram {
 public:
  static constexpr int kSubBits = 9;
  static constexpr size_t kBuckets = static_cast<size_t>(64 - kSubBits + 1) << kSubBits;
  // The 224 KiB of buckets are allocated by the first add(): a class that
  // never sees a packet (or a violation) costs nothing.
  void add(uint64_t v, uint64_t count = 1) {
    if (counts_ == nullptr) allocate();
    counts_[index(v)] += count;
  }
  void merge(const LogHistogram& o) {
    if (o.counts_ == nullptr) return;
    if (counts_ == nullptr) allocate();
    for (size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  }
  // Nearest-rank quantile: the upper edge of the bucket holding rank ceil(q*n).
  uint64_t quantile(double q, uint64_t n) const;

  // Bucket of v: below 2^kSubBits, v itself; above, with m the top bit of
  // v and s = m - kSubBits, block s + 1 of 2^kSubBits buckets and within
  // it the kSubBits bits below the top one: (s + 1) * 2^kSubBits +
  // (v >> s) - 2^kSubBits = (s << kSubBits) + (v >> s), because v >> s has
  // its top bit at kSubBits. With s clamped at 0 the same sum is v for the
  // small values: one branch-free expression for both ranges. With the
  // 128-bit delay sums below, engine_bench chutq(policy=dcf): 657 -> 633
  // instructions/packet (a9aebc9; docs/performance-history.md, engine step 3).
  static size_t index(uint64_t v) {
    const int top = 63 - __builtin_clzll(v | 1);
    const int s = top > kSubBits ? top - kSubBits : 0;
    return (static_cast<size_t>(s) << kSubBits) + static_cast<size_t>(v >> s);
  }
  static uint64_t upper_edge(size_t idx) {
    if (idx < (1ULL << kSubBits)) return idx;
    const int m = static_cast<int>(idx >> kSubBits) + kSubBits - 1;
    const uint64_t sub = idx & ((1ULL << kSubBits) - 1);
    const uint64_t lower = ((1ULL << kSubBits) + sub) << (m - kSubBits);
    return lower + ((1ULL << (m - kSubBits)) - 1);
  }

 private:
  // Zeroed; out of the engine's flattened loops (engine.cc, core_broke()).
  [[gnu::noinline]] void allocate() { counts_ = std::make_unique<uint64_t[]>(kBuckets); }
  std::unique_ptr<uint64_t[]> counts_;
};

struct Quantiles {
  uint64_t count = 0;
  double mean = 0;
  int64_t min = 0, max = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  bool exact = true;  // false: from the histogram (relative error <= 0.2 %)
};

// Delays (or sizes) of a population: exact quantiles from the sorted values
// while there are at most `max_samples`, the histogram beyond.
//
// Runs of equal values are common (no queueing delay on an idle link, one
// latency for every packet of a constant size) and cost one comparison:
// the histogram, sum, minimum and maximum take a run when it ends.
class Distribution1D {
 public:
  explicit Distribution1D(uint64_t max_samples) : max_samples_(max_samples) {}
  void add(int64_t v) {
    if (n_ < max_samples_) samples_.push_back(v);
    ++n_;
    if (v == run_value_) {  // run_ == 0 with run_value_ 0 is an empty run of zeros: right too
      ++run_;
      return;
    }
    take(run_value_, run_);
    run_value_ = v;
    run_ = 1;
  }
  uint64_t count() const { return n_; }
  // Adds every value of `other` (the population "all classes").
  void merge(const Distribution1D& other);
  Quantiles summarize();  // sorts the samples in place

 private:
  // `count` occurrences of `v` into everything but the samples.
  void take(int64_t v, uint64_t count) {
    if (count == 0) return;
    hist_.add(static_cast<uint64_t>(v < 0 ? 0 : v), count);
    // count < 2^63: a signed 64 x 64 -> 128-bit product, one multiply. With
    // the branch-free histogram index, engine_bench chutq: 657 -> 633
    // instructions/packet (a9aebc9; docs/performance-history.md, engine step 3).
    sum_ += static_cast<__int128>(v) * static_cast<int64_t>(count);
    min_ = std::min(min_, v);  // the sentinels below make the first value both
    max_ = std::max(max_, v);
  }
  uint64_t max_samples_;
  std::vector<int64_t> samples_;
  LogHistogram hist_;
  uint64_t n_ = 0;
  int64_t run_value_ = 0;  // the current run: run_ values equal to run_value_, not yet taken
  uint64_t run_ = 0;
  __int128 sum_ = 0;
  int64_t min_ = std::numeric_limits<int64_t>::max(), max_ = std::numeric_limits<int64_t>::min();
};

// A quantity that changes over time (flow-table size): time-weighted mean,
// maximum, and the time spent at each level. Only the time at each level
// is kept per change; the mean is computed from it (sum of level x time
// over the total time, the same integers as summing them per change).
// engine_bench instructions/packet: docs/performance-history.md, engine
// step 10.
class LevelTracker {
 public:
  void start(Time t) { last_t_ = t; }
  void set(Time t, uint64_t level) {
    if (level == level_) return;
    account(t);
    level_ = level;
    peak(level);
  }
  // A level held for no time: it can raise the maximum, and nothing else
  // (set(t, a) then set(t, b) is peak(a) then set(t, b)).
  void peak(uint64_t level) {
    if (level <= max_) return;
    max_ = level;
    if (level >= time_at_.size()) time_at_.resize(level + 1, 0);  // so account() never needs to check
  }
  void finish(Time t) { account(t); }
  double mean() const {
    __int128 area = 0;  // exact: level < 2^64, time < 2^63
    Time total = 0;
    for (size_t level = 0; level < time_at_.size(); ++level) {
      area += static_cast<__int128>(time_at_[level]) * static_cast<__int128>(level);
      total += time_at_[level];
    }
    return total > 0 ? static_cast<double>(area) / static_cast<double>(total) : 0;
  }
  uint64_t max() const { return max_; }
  // Picoseconds at each level, up to the highest level held for some time.
  std::vector<Time> time_at_level() const {
    size_t n = time_at_.size();
    while (n > 0 && time_at_[n - 1] == 0) --n;
    return std::vector<Time>(time_at_.begin(), time_at_.begin() + static_cast<std::ptrdiff_t>(n));
  }

 private:
  void account(Time t) {
    if (t <= last_t_) return;
    time_at_[level_] += t - last_t_;
    last_t_ = t;
  }
  Time last_t_ = 0;
  uint64_t level_ = 0, max_ = 0;
  std::vector<Time> time_at_ = std::vector<Time>(1, 0);  // up to max_
};

constexpr int kDropReasons = static_cast<int>(DropReason::kCount);

// Counters and distributions of one traffic class (or of all traffic).
struct ClassStats {
  explicit ClassStats(uint64_t max_samples) : queue_delay(max_samples), latency(max_samples), excess(max_samples) {}
  uint64_t offered = 0, offered_bytes = 0;
  uint64_t delivered = 0, delivered_bytes = 0;
  uint64_t dropped[kDropReasons] = {0, 0, 0, 0};
  uint64_t violations = 0;  // delivered with total queueing delay > budget
  uint64_t in_network = 0;  // measured packets offered, not yet delivered or dropped
  Time budget = kNever;
  Distribution1D queue_delay;  // sum over nodes of (transmission start - arrival at the node)
  Distribution1D latency;      // delivery (last bit + propagation) - creation
  Distribution1D excess;       // queueing delay - budget, of the violating packets
  uint64_t dropped_total() const {
    uint64_t s = 0;
    for (uint64_t d : dropped) s += d;
    return s;
  }
};

}  // namespace tracelab::engine
