#include "distributions.hh"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "spec.hh"

namespace tracelab::engine {

namespace {

double parse_quantity(std::string_view v, Distribution::Unit unit, const std::string& what) {
  if (unit == Distribution::Unit::kTime) {
    Time t = 0;
    if (!parse_time(v, t))
      throw SpecError(what + ": '" + std::string(v) + "' is not a duration with a unit (e.g. 350ms)");
    return static_cast<double>(t);
  }
  uint64_t n = 0;
  if (parse_bytes(v, n)) return static_cast<double>(n);
  // Fitted parameters (a mean of 29111.8 bytes) need not be whole.
  const std::string s(v);
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !(d >= 0) || !std::isfinite(d))
    throw SpecError(what + ": '" + s + "' is not a non-negative number");
  return d;
}

double parse_real(std::string_view v, const std::string& what) {
  std::string s(v);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !(d > 0))
    throw SpecError(what + ": '" + s + "' is not a positive number");
  return d;
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

}  // namespace

Distribution Distribution::parse(std::string_view text, Unit unit, const std::string& what) {
  Distribution d;
  d.text_ = std::string(text);
  text = trim(text);
  const size_t open = text.find('(');
  if (open == std::string_view::npos) {
    d.kind_ = Kind::kConst;
    d.a_ = d.mean_ = parse_quantity(text, unit, what);
    return d;
  }
  if (text.back() != ')') throw SpecError(what + ": missing ')' in '" + d.text_ + "'");
  const std::string_view name = trim(text.substr(0, open));
  std::vector<std::string_view> args;
  std::string_view rest = text.substr(open + 1, text.size() - open - 2);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    args.push_back(trim(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  auto need = [&](size_t n, const char* form) {
    if (args.size() != n) throw SpecError(what + ": expected " + form + ", got '" + d.text_ + "'");
  };
  if (name == "exp") {
    need(1, "exp(mean)");
    d.kind_ = Kind::kExp;
    d.a_ = d.mean_ = parse_quantity(args[0], unit, what);
  } else if (name == "pareto") {
    need(2, "pareto(shape, mean) with shape > 1");
    d.kind_ = Kind::kPareto;
    d.a_ = parse_real(args[0], what);
    if (d.a_ <= 1) throw SpecError(what + ": pareto shape must be > 1 for a finite mean");
    d.mean_ = parse_quantity(args[1], unit, what);
    d.b_ = d.mean_ * (d.a_ - 1) / d.a_;  // scale x_m from the mean
  } else if (name == "bpareto" || name == "bzipf") {
    need(3, name == "bpareto" ? "bpareto(shape, min, max)" : "bzipf(shape, min, max)");
    d.a_ = parse_real(args[0], what);
    d.b_ = parse_quantity(args[1], unit, what);
    d.c_ = parse_quantity(args[2], unit, what);
    if (!(d.b_ > 0 && d.c_ > d.b_)) throw SpecError(what + ": need 0 < min < max in '" + d.text_ + "'");
    if (name == "bpareto") {
      d.kind_ = Kind::kBoundedPareto;
      const double a = d.a_, L = d.b_, H = d.c_;
      const double norm = 1 - std::pow(L / H, a);
      d.mean_ = a == 1 ? L * H / (H - L) * std::log(H / L)
                       : std::pow(L, a) / norm * a / (a - 1) * (std::pow(L, 1 - a) - std::pow(H, 1 - a));
    } else {
      d.kind_ = Kind::kBoundedZipf;
      const uint64_t lo = static_cast<uint64_t>(d.b_), hi = static_cast<uint64_t>(d.c_);
      if (hi - lo > 20000000) throw SpecError(what + ": bzipf range above 2e7 values");
      d.cdf_.resize(hi - lo + 1);
      double sum = 0, weighted = 0;
      for (uint64_t k = lo; k <= hi; ++k) {
        const double p = std::pow(static_cast<double>(k), -(d.a_ + 1));
        sum += p;
        weighted += p * static_cast<double>(k);
        d.cdf_[k - lo] = sum;
      }
      for (double& c : d.cdf_) c /= sum;
      d.cdf_.back() = 1.0;
      d.mean_ = weighted / sum;
    }
  } else if (name == "uniform") {
    need(2, "uniform(min, max)");
    d.kind_ = Kind::kUniform;
    d.a_ = parse_quantity(args[0], unit, what);
    d.b_ = parse_quantity(args[1], unit, what);
    if (d.b_ < d.a_) throw SpecError(what + ": uniform needs min <= max");
    d.mean_ = (d.a_ + d.b_) / 2;
  } else if (name == "lognormal") {
    need(2, "lognormal(scale, sigma) with scale = e^mu");
    d.kind_ = Kind::kLogNormal;
    d.a_ = parse_quantity(args[0], unit, what);
    d.b_ = parse_real(args[1], what);
    if (!(d.a_ > 0)) throw SpecError(what + ": lognormal scale must be positive");
    d.mean_ = d.a_ * std::exp(d.b_ * d.b_ / 2);
  } else if (name == "weibull") {
    need(2, "weibull(shape, scale)");
    d.kind_ = Kind::kWeibull;
    d.a_ = parse_real(args[0], what);
    d.b_ = parse_quantity(args[1], unit, what);
    d.mean_ = d.b_ * std::tgamma(1 + 1 / d.a_);
  } else if (name == "hist") {
    // An empty hist() is allowed and has no samples: the caller decides
    // whether that is an error (a class the model carries no packets of).
    d.kind_ = Kind::kHistogram;
    double total = 0, weighted = 0;
    for (std::string_view arg : args) {
      const size_t colon = arg.find(':');
      if (colon == std::string_view::npos)
        throw SpecError(what + ": hist items are value:count, got '" + std::string(arg) + "'");
      const double v = parse_quantity(trim(arg.substr(0, colon)), unit, what);
      uint64_t c = 0;
      if (!parse_count(trim(arg.substr(colon + 1)), c))
        throw SpecError(what + ": bad count in '" + std::string(arg) + "'");
      if (c == 0) continue;
      if (!d.values_.empty() && v <= d.values_.back()) throw SpecError(what + ": hist values must ascend");
      total += static_cast<double>(c);
      weighted += v * static_cast<double>(c);
      d.values_.push_back(v);
      d.cdf_.push_back(total);
    }
    for (double& c : d.cdf_) c /= total;
    if (!d.cdf_.empty()) d.cdf_.back() = 1.0;
    d.mean_ = total > 0 ? weighted / total : 0;
  } else if (name == "quantiles") {
    if (args.size() < 2) throw SpecError(what + ": quantiles(q0, ..., qN) needs at least two values");
    d.kind_ = Kind::kQuantiles;
    for (std::string_view arg : args) {
      d.values_.push_back(parse_quantity(arg, unit, what));
      if (d.values_.size() > 1 && d.values_.back() < d.values_[d.values_.size() - 2])
        throw SpecError(what + ": quantiles must not decrease");
    }
    // Mean of the piecewise-linear inverse CDF: the trapezoid rule is exact.
    double sum = 0;
    for (size_t i = 1; i < d.values_.size(); ++i) sum += (d.values_[i - 1] + d.values_[i]) / 2;
    d.mean_ = sum / static_cast<double>(d.values_.size() - 1);
  } else {
    throw SpecError(what + ": unknown distribution '" + std::string(name) +
                    "' (known: a constant, exp, pareto, bpareto, bzipf, uniform, lognormal, weibull, hist, quantiles)");
  }
  return d;
}

double Distribution::sample(Rng& rng) const { return factor_ == 1 ? raw_sample(rng) : factor_ * raw_sample(rng); }

double Distribution::raw_sample(Rng& rng) const {
  switch (kind_) {
    case Kind::kConst:
      return a_;
    case Kind::kExp:
      return -a_ * std::log(open_unit(rng));
    case Kind::kPareto:
      return b_ * std::pow(open_unit(rng), -1.0 / a_);
    case Kind::kBoundedPareto: {
      // Inverse CDF of F(x) = (1 - (L/x)^a) / (1 - (L/H)^a) on [L, H].
      const double u = rng.uniform();
      return b_ * std::pow(1 - u * (1 - std::pow(b_ / c_, a_)), -1.0 / a_);
    }
    case Kind::kBoundedZipf: {
      const double u = rng.uniform();
      const size_t i = std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
      return b_ + static_cast<double>(std::min(i, cdf_.size() - 1));
    }
    case Kind::kUniform:
      return a_ + (b_ - a_) * rng.uniform();
    case Kind::kLogNormal: {
      // Box-Muller, one normal variate per call (the second is not kept: a
      // sample depends only on the two uniforms drawn for it).
      const double r = std::sqrt(-2 * std::log(open_unit(rng)));
      return a_ * std::exp(b_ * r * std::cos(6.283185307179586 * rng.uniform()));
    }
    case Kind::kWeibull:
      return b_ * std::pow(-std::log(open_unit(rng)), 1 / a_);
    case Kind::kHistogram: {
      if (cdf_.empty()) return 0;
      const size_t i = std::upper_bound(cdf_.begin(), cdf_.end(), rng.uniform()) - cdf_.begin();
      return values_[std::min(i, values_.size() - 1)];
    }
    case Kind::kQuantiles: {
      const double x = rng.uniform() * static_cast<double>(values_.size() - 1);
      const size_t i = static_cast<size_t>(x);
      return values_[i] + (x - static_cast<double>(i)) * (values_[i + 1] - values_[i]);
    }
  }
  return 0;
}

uint64_t Distribution::sample_count(Rng& rng, uint64_t floor) const {
  if (kind_ == Kind::kConst) return std::max<uint64_t>(floor, static_cast<uint64_t>(a_ * factor_ + 0.5));
  const long long x = std::llround(sample(rng));
  return std::max<uint64_t>(floor, x < 0 ? 0 : static_cast<uint64_t>(x));
}

}  // namespace tracelab::engine
