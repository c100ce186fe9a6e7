// Element and source specifications: `name(key=value, key=value, ...)`.
//
// One grammar, parsed here for every user of the cores: each element and
// traffic source of the replay engine is configured by one such string, e.g.
// `efd(capacity=300, th=30000)` or `poisson(load=0.5, size=64)`.
//
// Syntax: a name, then optionally `(` key=value pairs separated by `,` `)`.
// Names and keys are letters, digits, `_`, `-`, `.`; a value is quoted ('...'
// or "...", no escapes) or runs to the next `,` or `)` outside parentheses
// (size=bpareto(1.1, 40, 1500)), trailing blanks removed. Errors give the
// column. A Spec is parsed once, before the run; typed getters convert values
// with their units (10G, 50us, 30KB) exactly, in integers, and remember which
// keys they were asked for so that finish() can reject a misspelt key by name.
//
// Header-only, like the cores; no dependency beyond queue_core.hh (Time).
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "queue_core.hh"

namespace tracelab {

// A configuration error: names the spec text and what is wrong with it.
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Spec {
 public:
  using Params = std::vector<std::pair<std::string, std::string>>;

  // Throws SpecError with the column of the first problem.
  static Spec parse(std::string_view text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // The key=value pairs in the order given, values unquoted. Reading them
  // here does not count as asking for them (finish()).
  const Params& params() const { return params_; }
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
  // A 64-bit key or seed, every value allowed: decimal or 0x hex
  // (table_seed=0x74726163656c6162); no unit suffixes.
  uint64_t seed(std::string_view key, uint64_t fallback);
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
  Params params_;
  std::vector<std::string> asked_;
};

// The value parsers behind the getters, for configuration that does not come
// in a spec (node rates, class budgets). Each returns false on bad input.
inline bool parse_count(std::string_view v, uint64_t& out);
inline bool parse_rate(std::string_view v, uint64_t& out);
inline bool parse_time(std::string_view v, Time& out);
inline bool parse_bytes(std::string_view v, uint64_t& out);
inline bool parse_seed(std::string_view v, uint64_t& out);

// Exact decimal with unit multiplier: "2.5" x 10^9 -> 2500000000. Returns
// false if `digits` is not a plain decimal or the result is not an integer.
inline bool parse_scaled_decimal(std::string_view digits, uint64_t multiplier, uint64_t& out);

// --- implementation --------------------------------------------------------------

namespace spec_detail {
inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }
inline bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; }

struct Suffix {
  const char* text;
  uint64_t multiplier;
};

// Splits "300us" into "300" and the longest matching unit suffix.
inline bool split_unit(std::string_view v, const Suffix* units, size_t n_units, bool unit_required,
                       std::string_view& digits, uint64_t& multiplier) {
  size_t best = 0;
  for (size_t i = 0; i < n_units; ++i) {
    std::string_view u = units[i].text;
    if (v.size() > u.size() && v.substr(v.size() - u.size()) == u && u.size() > best) {
      best = u.size();
      multiplier = units[i].multiplier;
    }
  }
  if (best == 0) {
    if (unit_required) return false;
    multiplier = 1;
  }
  digits = v.substr(0, v.size() - best);
  return true;
}

}  // namespace spec_detail

inline bool parse_scaled_decimal(std::string_view digits, uint64_t multiplier, uint64_t& out) {
  if (digits.empty()) return false;
  unsigned __int128 whole = 0;
  unsigned __int128 frac = 0;
  unsigned __int128 frac_scale = 1;
  bool seen_dot = false;
  bool seen_digit = false;
  for (char c : digits) {
    if (c == '.') {
      if (seen_dot) return false;
      seen_dot = true;
    } else if (c >= '0' && c <= '9') {
      seen_digit = true;
      if (seen_dot) {
        if (frac_scale > (unsigned __int128)1000000000000000000ULL) return false;  // > 18 decimals
        frac = frac * 10 + (c - '0');
        frac_scale *= 10;
      } else {
        whole = whole * 10 + (c - '0');
        if (whole > (unsigned __int128)UINT64_MAX) return false;
      }
    } else {
      return false;
    }
  }
  if (!seen_digit) return false;
  unsigned __int128 scaled_frac = frac * multiplier;
  if (scaled_frac % frac_scale != 0) return false;  // not an integer in the target unit
  unsigned __int128 total = whole * multiplier + scaled_frac / frac_scale;
  if (total > (unsigned __int128)UINT64_MAX) return false;
  out = static_cast<uint64_t>(total);
  return true;
}

inline Spec Spec::parse(std::string_view text) {
  Spec s;
  s.text_ = std::string(text);
  size_t i = 0;
  auto fail_at = [&](const std::string& why) -> void {
    throw SpecError("in '" + s.text_ + "' at column " + std::to_string(i + 1) + ": " + why);
  };
  auto skip = [&] {
    while (i < text.size() && spec_detail::is_space(text[i])) ++i;
  };
  skip();
  size_t start = i;
  while (i < text.size() && spec_detail::is_ident(text[i])) ++i;
  if (i == start) fail_at("expected a name, e.g. fifo(capacity=300)");
  s.name_ = std::string(text.substr(start, i - start));
  skip();
  if (i == text.size()) return s;
  if (text[i] != '(') fail_at("expected '(' after the name");
  ++i;
  skip();
  if (i < text.size() && text[i] == ')') {
    ++i;
  } else {
    for (;;) {
      skip();
      size_t k0 = i;
      while (i < text.size() && spec_detail::is_ident(text[i])) ++i;
      if (i == k0) fail_at("expected a parameter name");
      std::string key(text.substr(k0, i - k0));
      skip();
      if (i >= text.size() || text[i] != '=') fail_at("expected '=' after '" + key + "'");
      ++i;
      skip();
      std::string value;
      if (i < text.size() && (text[i] == '\'' || text[i] == '"')) {
        char q = text[i++];
        size_t v0 = i;
        while (i < text.size() && text[i] != q) ++i;
        if (i >= text.size()) fail_at("unterminated quote");
        value = std::string(text.substr(v0, i - v0));
        ++i;
      } else {
        size_t v0 = i;
        int depth = 0;  // values may nest: size=bpareto(1.1,40,1500)
        while (i < text.size() && (depth > 0 || (text[i] != ',' && text[i] != ')'))) {
          if (text[i] == '(') ++depth;
          if (text[i] == ')') --depth;
          ++i;
        }
        size_t v1 = i;
        while (v1 > v0 && spec_detail::is_space(text[v1 - 1])) --v1;
        value = std::string(text.substr(v0, v1 - v0));
        if (value.empty()) fail_at("empty value for '" + key + "'");
      }
      for (const auto& kv : s.params_)
        if (kv.first == key) fail_at("parameter '" + key + "' given twice");
      s.params_.emplace_back(std::move(key), std::move(value));
      skip();
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == ')') {
        ++i;
        break;
      }
      fail_at("expected ',' or ')'");
    }
  }
  skip();
  if (i != text.size()) fail_at("unexpected text after ')'");
  return s;
}

inline bool Spec::has(std::string_view key) const {
  return std::any_of(params_.begin(), params_.end(), [&](const auto& kv) { return kv.first == key; });
}

inline const std::string* Spec::find(std::string_view key) {
  if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) asked_.emplace_back(key);
  for (const auto& kv : params_)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

inline void Spec::fail(std::string_view key, const std::string& why) const {
  throw SpecError(name_ + ": parameter '" + std::string(key) + "' in '" + text_ + "': " + why);
}

inline bool parse_count(std::string_view v, uint64_t& out) {
  static const spec_detail::Suffix units[] = {{"k", 1000}, {"M", 1000000}, {"G", 1000000000}};
  std::string_view digits;
  uint64_t mult = 1;
  return spec_detail::split_unit(v, units, 3, false, digits, mult) && parse_scaled_decimal(digits, mult, out);
}

inline bool parse_rate(std::string_view v, uint64_t& out) {
  static const spec_detail::Suffix units[] = {{"k", 1000},    {"M", 1000000},         {"G", 1000000000},
                                              {"kbps", 1000}, {"Mbps", 1000000},      {"Gbps", 1000000000},
                                              {"bps", 1},     {"T", 1000000000000ULL}};
  std::string_view digits;
  uint64_t mult = 1;
  return spec_detail::split_unit(v, units, 8, false, digits, mult) && parse_scaled_decimal(digits, mult, out) &&
         out > 0;
}

inline bool parse_time(std::string_view v, Time& out) {
  static const spec_detail::Suffix units[] = {
      {"ps", 1}, {"ns", kNanosecond}, {"us", kMicrosecond}, {"ms", kMillisecond}, {"s", kSecond}};
  std::string_view digits;
  uint64_t mult = 1;
  uint64_t t = 0;
  if (!spec_detail::split_unit(v, units, 5, true, digits, mult) || !parse_scaled_decimal(digits, mult, t) ||
      t > static_cast<uint64_t>(kNever / 2))
    return false;
  out = static_cast<Time>(t);
  return true;
}

inline bool parse_bytes(std::string_view v, uint64_t& out) {
  static const spec_detail::Suffix units[] = {{"B", 1}, {"KB", 1000}, {"MB", 1000000}, {"KiB", 1024}, {"MiB", 1048576}};
  std::string_view digits;
  uint64_t mult = 1;
  return spec_detail::split_unit(v, units, 5, false, digits, mult) && parse_scaled_decimal(digits, mult, out);
}

inline bool parse_seed(std::string_view v, uint64_t& out) {
  const bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
  if (!hex) return parse_scaled_decimal(v, 1, out) && v.find('.') == std::string_view::npos;
  v.remove_prefix(2);
  if (v.size() > 16) return false;
  uint64_t r = 0;
  for (char c : v) {
    const char lower = static_cast<char>(c | 0x20);  // 'A'-'F' -> 'a'-'f'
    uint64_t d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint64_t>(c - '0');
    } else if (lower >= 'a' && lower <= 'f') {
      d = static_cast<uint64_t>(lower - 'a' + 10);
    } else {
      return false;
    }
    r = r << 4 | d;
  }
  out = r;
  return true;
}

inline uint64_t Spec::count(std::string_view key, uint64_t fallback) {
  const std::string* v = find(key);
  if (!v) return fallback;
  uint64_t out = 0;
  if (!parse_count(*v, out)) fail(key, "'" + *v + "' is not a whole count (e.g. 300, 64k)");
  return out;
}

inline uint64_t Spec::rate(std::string_view key, uint64_t fallback) {
  const std::string* v = find(key);
  if (!v) return fallback;
  uint64_t out = 0;
  if (!parse_rate(*v, out)) fail(key, "'" + *v + "' is not a positive bit rate (e.g. 10G, 2.5G, 20M)");
  return out;
}

inline Time Spec::time(std::string_view key, Time fallback) {
  const std::string* v = find(key);
  if (!v) return fallback;
  Time out = 0;
  if (!parse_time(*v, out)) fail(key, "'" + *v + "' is not a duration with a unit (ps, ns, us, ms, s), e.g. 50us");
  return out;
}

inline uint64_t Spec::bytes(std::string_view key, uint64_t fallback) {
  const std::string* v = find(key);
  if (!v) return fallback;
  uint64_t out = 0;
  if (!parse_bytes(*v, out)) fail(key, "'" + *v + "' is not a byte count (e.g. 30000, 30KB, 64KiB)");
  return out;
}

inline uint64_t Spec::seed(std::string_view key, uint64_t fallback) {
  const std::string* v = find(key);
  if (!v) return fallback;
  uint64_t out = 0;
  if (!parse_seed(*v, out)) fail(key, "'" + *v + "' is not a 64-bit value (decimal or 0x hex, e.g. 0x2a)");
  return out;
}

inline double Spec::real(std::string_view key, double fallback) {
  const std::string* v = find(key);
  if (!v) return fallback;
  char* end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (v->empty() || end != v->c_str() + v->size()) fail(key, "'" + *v + "' is not a number");
  return d;
}

inline bool Spec::flag(std::string_view key, bool fallback) {
  const std::string* v = find(key);
  if (!v) return fallback;
  if (*v == "1" || *v == "true" || *v == "yes" || *v == "on") return true;
  if (*v == "0" || *v == "false" || *v == "no" || *v == "off") return false;
  fail(key, "'" + *v + "' is not a flag (0/1, true/false, yes/no, on/off)");
}

inline std::string Spec::string(std::string_view key, std::string fallback) {
  const std::string* v = find(key);
  return v ? *v : fallback;
}

inline void Spec::finish() const {
  for (const auto& kv : params_) {
    if (std::find(asked_.begin(), asked_.end(), kv.first) != asked_.end()) continue;
    std::string known;
    for (const auto& a : asked_) known += (known.empty() ? "" : ", ") + a;
    throw SpecError(name_ + ": unknown parameter '" + kv.first + "' in '" + text_ +
                    "' (known: " + (known.empty() ? "none" : known) + ")");
  }
}

}  // namespace tracelab
