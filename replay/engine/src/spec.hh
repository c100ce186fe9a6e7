// Element and source specifications: `name(key=value, key=value, ...)`.
//
// Every element and traffic source of the engine is configured by one such
// string, e.g. `efd(capacity=300, th=30000)` or `poisson(load=0.5, size=64)`.
// A Spec is parsed once, before the run; typed getters convert values with
// their units (10G, 50us, 30KB) exactly, in integers, and remember which keys
// they were asked for so that finish() can reject a misspelt key by name.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "queue_core.hh"

namespace tracelab::engine {

// A configuration error: names the spec text and what is wrong with it.
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Spec {
 public:
  // Throws SpecError with the column of the first problem.
  static Spec parse(std::string_view text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  bool has(std::string_view key) const;

  // Typed getters; each returns `fallback` when the key is absent.
  // Integer count, optional decimal suffix k/M/G (300, 64k).
  uint64_t count(std::string_view key, uint64_t fallback);
  // Bits per second: 10G, 2.5G, 100M, 1000000000.
  uint64_t rate(std::string_view key, uint64_t fallback);
  // Duration with a unit (ps, ns, us, ms, s): 50us, 1.3s. A bare number is an
  // error: a missing unit is the commonest way to be off by 10^6.
  Time time(std::string_view key, Time fallback);
  // Bytes: 30000, 30000B, 30KB (=30000), 64KiB (=65536).
  uint64_t bytes(std::string_view key, uint64_t fallback);
  double real(std::string_view key, double fallback);
  // 0/1, true/false, yes/no, on/off.
  bool flag(std::string_view key, bool fallback);
  std::string string(std::string_view key, std::string fallback);

  // Throws if a key was given that no getter asked for, listing the known ones.
  void finish() const;

 private:
  const std::string* find(std::string_view key);
  [[noreturn]] void fail(std::string_view key, const std::string& why) const;

  std::string text_;
  std::string name_;
  std::vector<std::pair<std::string, std::string>> params_;
  std::vector<std::string> asked_;
};

// The value parsers behind the getters, for configuration that does not come
// in a spec (node rates, class budgets). Each returns false on bad input.
bool parse_count(std::string_view v, uint64_t& out);
bool parse_rate(std::string_view v, uint64_t& out);
bool parse_time(std::string_view v, Time& out);
bool parse_bytes(std::string_view v, uint64_t& out);

// Exact decimal with unit multiplier: "2.5" x 10^9 -> 2500000000. Returns
// false if `digits` is not a plain decimal or the result is not an integer.
bool parse_scaled_decimal(std::string_view digits, uint64_t multiplier, uint64_t& out);

}  // namespace tracelab::engine
