// What the scenario programs (tl-ns3-dumbbell, -wlan, -ncq, -jumbogen, the
// model replay) share beside the queue discs: quoting a string for the
// summary.json they write, and the bounded-Zipf size sampler the thesis's
// workloads draw transfer sizes from (algorithms.md §11).
#ifndef TRACELAB_NS3_SCENARIO_HH
#define TRACELAB_NS3_SCENARIO_HH

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tracelab::scenario {

// A JSON string literal of v (the values written are names and spec strings:
// only quotes and backslashes need escaping).
inline std::string Json(const std::string& v) {
  std::string o = "\"";
  for (char ch : v) o += (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
  return o + "\"";
}

// Bounded Zipf on [lo, hi], P(k) ∝ k^-(alpha + 1), drawn by inverse CDF.
class BoundedZipf {
 public:
  BoundedZipf(double alpha, uint32_t lo, uint32_t hi) : lo_(lo) {
    double sum = 0;
    for (uint32_t k = lo; k <= hi; ++k) cdf_.push_back(sum += std::pow(double(k), -(alpha + 1)));
    for (double& c : cdf_) c /= sum;
  }
  uint32_t Draw(double u) const { return lo_ + uint32_t(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()); }
  double Mean() const {
    double m = 0, prev = 0;
    for (size_t i = 0; i < cdf_.size(); ++i) m += (cdf_[i] - prev) * double(lo_ + i), prev = cdf_[i];
    return m;
  }

 private:
  uint32_t lo_;
  std::vector<double> cdf_;
};

}  // namespace tracelab::scenario

#endif
