// Seeded random variates for the synthetic sources: packet sizes, ON/OFF
// periods, inter-arrival times, flow sizes.
//
// Written out here rather than taken from <random>: the standard library's
// distributions are implementation-defined, and a seeded run must give the
// same packets with every compiler.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rng.hh"

namespace tracelab::engine {

// A non-negative distribution parsed from text such as `64`, `exp(350ms)`,
// `pareto(1.5, 350ms)` (shape, mean), `bpareto(1.1, 40, 1500)` (shape, min,
// max; continuous, rounded to integers when sampled as a count),
// `bzipf(1.1, 6, 6667)` (discrete, P(k) ∝ k^-(shape+1) on [min, max],
// docs/reference/algorithms.md §11), `uniform(40, 1500)`, and the forms the workload models
// carry: `lognormal(scale, sigma)` (scale = e^mu), `weibull(shape, scale)`,
// `hist(40:3, 1500:7)` (value:count) and `quantiles(q0, q1, ..., qN)` (the
// inverse CDF at equally spaced probabilities 0, 1/N, ..., 1, linear between).
// Quantities are either durations (with units, in picoseconds) or plain
// numbers (bytes with optional B/KB suffix, a decimal point allowed in
// parameters, or packets).
class Distribution {
 public:
  enum class Unit { kTime, kBytes };
  // Throws SpecError (with `what` in the message) on bad text.
  static Distribution parse(std::string_view text, Unit unit, const std::string& what);

  double sample(Rng& rng) const;
  // Sample rounded to the nearest integer, at least `floor`.
  uint64_t sample_count(Rng& rng, uint64_t floor = 1) const;
  double mean() const { return mean_ * factor_; }
  // Multiplies every sample (and the mean) by `f` > 0: every family here is
  // a scale family, so this keeps its shape and sets its mean.
  void scale_by(double f) { factor_ *= f; }
  bool is_constant() const { return kind_ == Kind::kConst; }
  const std::string& text() const { return text_; }

 private:
  enum class Kind {
    kConst,
    kExp,
    kPareto,
    kBoundedPareto,
    kBoundedZipf,
    kUniform,
    kLogNormal,
    kWeibull,
    kHistogram,
    kQuantiles
  };
  double raw_sample(Rng& rng) const;
  Kind kind_ = Kind::kConst;
  double a_ = 0, b_ = 0, c_ = 0;  // parameters, meaning by kind
  double mean_ = 0;               // before factor_
  double factor_ = 1;
  std::vector<double> cdf_;     // bounded Zipf, histogram: cumulative probabilities
  std::vector<double> values_;  // histogram values; quantiles at 0, 1/N, ..., 1
  std::string text_;
};

// Uniform in (0, 1]: never 0, so -log(u) and u^(-1/a) stay finite.
inline double open_unit(Rng& rng) { return 1.0 - rng.uniform(); }

}  // namespace tracelab::engine
