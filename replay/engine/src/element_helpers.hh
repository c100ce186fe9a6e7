// Internal to the element factory (elements.cc, elements_chunking.cc):
// parameter helpers and the builders of the chunking and MTQ/QTL cores.
#pragma once

#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "elements.hh"
#include "param_checks.hh"
#include "spec.hh"

namespace tracelab::engine::detail {

[[noreturn]] inline void bad(const Spec& s, const std::string& why) { throw SpecError(s.name() + ": " + why); }

// One of a few named values.
template <typename E>
E choice(Spec& s, const char* key, const char* fallback, std::initializer_list<std::pair<const char*, E>> options) {
  const std::string v = s.string(key, fallback);
  std::string names;
  for (const auto& o : options) {
    if (v == o.first) return o.second;
    names += (names.empty() ? "" : ", ") + std::string(o.first);
  }
  bad(s, std::string(key) + "='" + v + "' is not one of " + names);
}

// A configuration outside the ranges of param_checks.hh is a spec error
// (make_core() adds the element and the spec text).
template <typename C>
void check(const C& cfg) {
  const std::string e = check_params(cfg);
  if (!e.empty()) throw std::invalid_argument(e);
}

template <typename T, typename C>
BuiltCore plain(const C& cfg) {
  check(cfg);
  BuiltCore b;
  b.core = std::make_unique<T>(cfg);
  return b;
}

// Defined in elements_chunking.cc (see there why it is a separate file).
BuiltCore build_basicq(Spec& s, const NodeContext& n);
BuiltCore build_chumq(Spec& s, const NodeContext& n);
BuiltCore build_chutq(Spec& s, const NodeContext& n);
BuiltCore build_mtqqtl(Spec& s, const NodeContext& n);

}  // namespace tracelab::engine::detail
