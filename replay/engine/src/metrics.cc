#include "metrics.hh"

#include <algorithm>
#include <cmath>

namespace tracelab::engine {

namespace {
uint64_t rank_of(double q, uint64_t n) {
  const uint64_t r = static_cast<uint64_t>(std::ceil(q * static_cast<double>(n)));
  return std::clamp<uint64_t>(r, 1, n);
}
}  // namespace

uint64_t LogHistogram::quantile(double q, uint64_t n) const {
  if (n == 0) return 0;
  const uint64_t rank = rank_of(q, n);
  uint64_t seen = 0;
  for (size_t i = 0; counts_ != nullptr && i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return upper_edge(i);
  }
  return upper_edge(kBuckets - 1);
}

void Distribution1D::merge(const Distribution1D& o) {
  if (o.n_ == 0) return;
  const uint64_t room = n_ < max_samples_ ? max_samples_ - n_ : 0;
  samples_.insert(samples_.end(), o.samples_.begin(), o.samples_.begin() + std::min<uint64_t>(room, o.samples_.size()));
  hist_.merge(o.hist_);
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  n_ += o.n_;
  sum_ += o.sum_;
  take(o.run_value_, o.run_);  // o's open run, which o has not taken yet
}

Quantiles Distribution1D::summarize() {
  take(run_value_, run_);
  run_ = 0;
  Quantiles q;
  q.count = n_;
  if (n_ == 0) return q;
  q.mean = static_cast<double>(sum_) / static_cast<double>(n_);
  q.min = min_;
  q.max = max_;
  q.exact = n_ <= max_samples_;
  auto at = [&](double p) -> int64_t {
    if (q.exact) return samples_[rank_of(p, n_) - 1];
    return std::min<int64_t>(static_cast<int64_t>(hist_.quantile(p, n_)), max_);
  };
  if (q.exact) std::sort(samples_.begin(), samples_.end());
  q.p50 = at(0.5);
  q.p90 = at(0.9);
  q.p99 = at(0.99);
  q.p999 = at(0.999);
  return q;
}

}  // namespace tracelab::engine
