// The engine's own seeded random source for traffic generation and hashing.
// Kept separate from the cores' Rng (click-elements/core/rng.hh) so that a
// change of the cores' generator does not change the generated traffic.
//
// SplitMix64 (Steele, Lea, Flood 2014): one state word, any seed is good.
#pragma once

#include <cstdint>

namespace tracelab::engine {

// The SplitMix64 finalizer: a bijective 64-bit mix for hashes and seeds.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class SourceRng {
 public:
  explicit SourceRng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64() { return mix64(state_ += 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, 1) with 53 random bits.
  double next_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  bool bernoulli(double p) { return next_double() < p; }

 private:
  uint64_t state_;
};

}  // namespace tracelab::engine
