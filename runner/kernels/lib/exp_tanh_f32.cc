#include "kernels/lib/exp_tanh_f32.h"

#include <cstring>

#include "kernels/lib/cpu_isa.h"

// The lane helpers are always inlined into a function of their own target, so
// the vector-argument ABI GCC warns about is never used.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace graphrun {
namespace {

typedef float F32x4 __attribute__((vector_size(16)));
typedef int32_t I32x4 __attribute__((vector_size(16)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef int32_t I32x8 __attribute__((vector_size(32)));
typedef float F32x16 __attribute__((vector_size(64)));
typedef int32_t I32x16 __attribute__((vector_size(64)));

constexpr float kLog2e = 1.44269504f;
constexpr float kLn2Hi = 0.693359375f;  // 355/512: k * hi is exact for every k reached here
constexpr float kLn2Lo = -2.12194440e-4f;
// Adding 1.5 * 2^23 rounds a float of magnitude under 2^22 to an integer,
// which then sits in the low bits of the sum's mantissa.
constexpr float kRound = 12582912.0f;
constexpr int32_t kRoundBits = 0x4B400000;  // its bits
// Beyond these exp is inf, or under half the least denormal (so 0).
constexpr float kExpMax = 88.72283935546875f;
constexpr float kExpMin = -104.0f;
// tanh x = x + x^3 P(x^2) below 0.625: least squares in relative error,
// under an ulp there. Above, (1 - e^-2|x|) / (1 + e^-2|x|) loses under
// a bit to the subtraction.
constexpr float kTanhSplit = 0.625f;
constexpr float kTanhPoly[] = {0.002142803743481636f, -0.008177093230187893f, 0.021700501441955566f,
                               -0.05394670367240906f, 0.1333320587873459f,    -0.3333333134651184f};

// e^y for y in [kExpMin, kExpMax]: y = k ln2 + r with |r| <= ln2/2 (ln2 in
// two parts, Cody and Waite's reduction), e^r by its series to r^7 (under
// 6e-9 left out), times 2^k as two powers so that neither leaves float's
// normal range and a denormal result is rounded once.
template <class F, class I>
inline __attribute__((always_inline)) F exp_reduced(F y) {
  const F rounded = y * kLog2e + kRound;
  const F k = rounded - kRound;
  const F r = (y - k * kLn2Hi) - k * kLn2Lo;
  F p = F{} + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  const F er = 1.0f + (r + r * (r * p));
  const I ki = (I)rounded - kRoundBits;
  const I half = ki >> 1;
  return (er * (F)((half + 127) << 23)) * (F)((ki - half + 127) << 23);
}

// Lane by lane, `when` (a mask: all ones or zero) picks p, else q. As bit
// operations: GCC compiles some vector ?: of AVX-512 lanes one at a time.
template <class F, class I>
inline __attribute__((always_inline)) F pick(I when, F p, F q) {
  return (F)((when & (I)p) | (~when & (I)q));
}

// No vector comparison here or in tanh_lanes: GCC 12 compiles some of them
// one lane at a time. A sign bit spread over its lane is the mask instead.
template <class F, class I>
inline __attribute__((always_inline)) I negative(F v) {
  return (I)v >> 31;
}

template <class F, class I>
inline __attribute__((always_inline)) F exp_lanes(F x) {
  const F lowest = F{} + kExpMin, highest = F{} + kExpMax;
  const I x_bits = (I)x;
  // |x|'s bits grow with it, NaN's above inf's
  const I nan = ((I)(F{} + __builtin_inff()) - (x_bits & ~(I{} + INT32_MIN))) >> 31;
  const I over = negative<F, I>(highest - x);
  F y = pick<F, I>(negative<F, I>(x - lowest), lowest, x);
  y = pick<F, I>(over | nan, highest, y);
  const F e = exp_reduced<F, I>(y);
  return pick<F, I>(nan, x, pick<F, I>(over, F{} + __builtin_inff(), e));
}

template <class F, class I>
inline __attribute__((always_inline)) F tanh_lanes(F x) {
  const I sign = I{} + INT32_MIN;
  const I x_bits = (I)x;  // a vector cast keeps the bits
  // |x| compared as its bits, an integer that grows with it (NaN's above
  // inf's), by the sign of a difference
  const I a_bits = x_bits & ~sign;
  auto below = [&](float bound) { return (a_bits - (I)(F{} + bound)) >> 31; };  // all ones or zero
  auto above = [&](float bound) { return ((I)(F{} + bound) - a_bits) >> 31; };
  const F a = (F)a_bits;
  // small: the odd polynomial, whose sign is x's (also for -0.0; denormals
  // come out unchanged, x^3 being 0)
  const F u = x * x;
  F p = F{} + kTanhPoly[0];
  for (int i = 1; i < 6; ++i) p = p * u + kTanhPoly[i];
  const F small = x + x * (u * p);
  // large: from 10 on tanh is 1 to within 5e-9 (inf and NaN's bits included:
  // a NaN is put back at the end)
  const F split = F{} + kTanhSplit, ten = F{} + 10.0f;
  const I below_split = below(kTanhSplit);
  const I beyond_ten = above(10.0f);
  F y = pick<F, I>(below_split, split, a);
  y = pick<F, I>(beyond_ten, ten, y);
  const F t = exp_reduced<F, I>(-2.0f * y);
  const F large = (1.0f - t) / (1.0f + t);
  const F result = (F)((I)pick<F, I>(below_split, small, large) | (x_bits & sign));
  return pick<F, I>(above(__builtin_inff()), x, result);
}

// The floats in groups of F's lanes, the last group padded.
template <class F, class I, bool kTanh>
inline __attribute__((always_inline)) void groups(const float* in, int64_t n, float* out) {
  constexpr int64_t lanes = sizeof(F) / sizeof(float);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    F x;
    std::memcpy(&x, in + i, sizeof x);
    const F y = kTanh ? tanh_lanes<F, I>(x) : exp_lanes<F, I>(x);
    std::memcpy(out + i, &y, sizeof y);
  }
  if (i < n) {
    const std::size_t bytes = static_cast<std::size_t>(n - i) * sizeof(float);
    F x = F{};
    std::memcpy(&x, in + i, bytes);
    const F y = kTanh ? tanh_lanes<F, I>(x) : exp_lanes<F, I>(x);
    std::memcpy(out + i, &y, bytes);
  }
}

template <bool kTanh>
__attribute__((target("avx512f"))) void run_avx512(const float* in, int64_t n, float* out) {
  groups<F32x16, I32x16, kTanh>(in, n, out);
}

template <bool kTanh>
__attribute__((target("avx2"))) void run_avx2(const float* in, int64_t n, float* out) {
  groups<F32x8, I32x8, kTanh>(in, n, out);
}

template <bool kTanh>
void run_sse(const float* in, int64_t n, float* out) {
  groups<F32x4, I32x4, kTanh>(in, n, out);
}

template <bool kTanh>
void run(const float* in, int64_t n, float* out) {
  static const CpuIsa isa = own_kernel_isa();
  if (isa == CpuIsa::kAvx512) run_avx512<kTanh>(in, n, out);
  else if (isa == CpuIsa::kAvx2) run_avx2<kTanh>(in, n, out);
  else run_sse<kTanh>(in, n, out);
}

}  // namespace

void exp_f32(const float* in, int64_t n, float* out) { run<false>(in, n, out); }

void tanh_f32(const float* in, int64_t n, float* out) { run<true>(in, n, out); }

}  // namespace graphrun
