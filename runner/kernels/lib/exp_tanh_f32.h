// exp and tanh of float32 values, in float32 lanes (16 with AVX-512, 8 with
// AVX2, 4 with SSE) and no libm call, within the 4 ulps of the correctly
// rounded result the ops' numerics allow (docs/performance.md has the
// measured errors and costs). libm's calls were most of a Transformer's
// GELU and attention softmax.
// Each form computes the same IEEE operations on each lane, in the same
// order and without FMA, so every CPU gives the same bits.
#pragma once

#include <cstdint>

namespace graphrun {

void exp_f32(const float* in, int64_t n, float* out);
void tanh_f32(const float* in, int64_t n, float* out);

}  // namespace graphrun
