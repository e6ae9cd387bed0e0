// The mutators' random source: a splitmix64 stream from libFuzzer's seed, so
// a seed and an input always mutate the same way.
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphrun_fuzz {

class Random {
 public:
  explicit Random(unsigned seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  bool chance(int percent) { return below(100) < static_cast<size_t>(percent); }

 private:
  uint64_t state_;
};

}  // namespace graphrun_fuzz
