// The seeded word generator every graphdef runtime shares (written out in
// graphdef/framework/random_feeds.py), so --random placeholder values and RandomUniform
// nodes come out bit for bit as graphrun's:
//   stream  = splitmix64(seed XOR fnv1a64(name))
//   word[i] = splitmix64(stream + (i + 1) * 0x9E3779B97F4A7C15)   (mod 2**64)
// Only integer arithmetic, so no platform or library can change a value.
#pragma once

#include <cstdint>
#include <string>

namespace graphrun {

constexpr uint64_t kRandomGolden = 0x9E3779B97F4A7C15ULL;

inline uint64_t fnv1a64(const std::string& text) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char byte : text) h = (h ^ byte) * 0x100000001B3ULL;
  return h;
}

// splitmix64's finaliser.
inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The stream of `name` under `seed` (graphdef.random_feeds.words' start).
inline uint64_t random_stream(uint64_t seed, const std::string& name) { return splitmix64_mix(seed ^ fnv1a64(name)); }

// Word i (counting from 0) of a stream: words are independent of each other,
// so any element can be computed without the ones before it.
inline uint64_t random_word(uint64_t stream, int64_t i) {
  return splitmix64_mix(stream + static_cast<uint64_t>(i + 1) * kRandomGolden);
}

}  // namespace graphrun
