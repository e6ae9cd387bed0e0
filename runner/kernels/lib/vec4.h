// Four floats as one SSE register, which every x86-64 CPU has. Hot channel
// loops (bias, ReLU, pooling) use it so they run four lanes at a time and
// without branches; GCC at -O2 leaves such loops scalar otherwise.
#pragma once

#include <cstdint>
#include <cstring>

namespace graphrun {

typedef float F32x4 __attribute__((vector_size(16)));
typedef int32_t I32x4 __attribute__((vector_size(16)));

inline F32x4 load4(const float* p) {
  F32x4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store4(float* p, F32x4 v) { std::memcpy(p, &v, sizeof v); }

}  // namespace graphrun
