// exp and tanh of float32 values, in float32 lanes (16 with AVX-512, 8 with
// AVX2, 4 with SSE) and no libm call: exp within 1.5 ulps and tanh within
// 1.6 of the correctly rounded result (every seventh bit pattern checked),
// under the 4 ulps the ops' numerics allow, at well under a nanosecond an
// element. They were most of a Transformer's GELU and attention softmax.
// Each form computes the same IEEE operations on each lane, in the same
// order and without FMA, so every CPU gives the same bits.
#pragma once

#include <cstdint>

namespace graphrun {

void exp_f32(const float* in, int64_t n, float* out);
void tanh_f32(const float* in, int64_t n, float* out);

}  // namespace graphrun
