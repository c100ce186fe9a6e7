// tracelab queueing cores: the one random source every core uses.
//
// A small, seeded, reproducible generator (xorshift64*; Vigna, "An
// experimental exploration of Marsaglia's xorshift generators", 2016). Cores
// that draw random numbers (RED, sampling) own one Rng, seeded from their
// config, so two runs with the same seed make identical decisions.
// Not cryptographic; not meant to be.
#pragma once

#include <cstdint>

namespace tracelab {

class Rng {
 public:
  // A zero state would stick at zero; splitmix64 spreads any seed (including
  // 0) to a non-zero state.
  explicit Rng(uint64_t seed = 1) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    state_ = (z ^ (z >> 31)) | 1;
  }

  uint64_t next_u64() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1DULL;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace tracelab
