// tracelab's one random generator in C++: the cores (SIFT, X-Protect,
// JumboGen's RED), the replay engine's sources and distributions, and the
// tests all draw from this Rng, and the engine's flow hashes use its mix64.
//
// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): one 64-bit state word, any seed (0 included) is
// good, and the Rust generator of datasets/generate is the same function, so
// one seed means one stream in both languages. Which seed serves which
// purpose (traffic, element sampling, synthesis, fitting) is
// docs/reference/random.md. Not cryptographic; not meant to be.
#pragma once

#include <cstdint>

namespace tracelab {

// The SplitMix64 finalizer: a bijective 64-bit mix, for hashes and seeds.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) : state_(seed) {}

  uint64_t next_u64() { return mix64(state_ += 0x9e3779b97f4a7c15ULL); }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  bool bernoulli(double p) { return uniform() < p; }

 private:
  uint64_t state_;
};

}  // namespace tracelab
