#include "kernels/lib/tanh_f32.h"

#include <cstring>

#include "kernels/lib/cpu_isa.h"

namespace graphrun {
namespace {

// Lanes as one value. Two doubles fill SSE2's registers; four need AVX, and
// without it GCC compiles them to slow code, so only the AVX2 loop uses four.
typedef float F32x2 __attribute__((vector_size(8)));
typedef double F64x2 __attribute__((vector_size(16)));
typedef int64_t I64x2 __attribute__((vector_size(16)));
typedef float F32x4 __attribute__((vector_size(16)));
typedef double F64x4 __attribute__((vector_size(32)));
typedef int64_t I64x4 __attribute__((vector_size(32)));

constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm's split of ln 2: k * hi is exact
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
// Adding 1.5 * 2^52 rounds a double in [0, 2^51) to an integer, which then
// sits in the low bits of the sum's mantissa.
constexpr double kRound = 0x1.8p52;
constexpr int64_t kRoundBits = 0x4338000000000000;  // its bits
// 1/k! for k = 13 down to 2: e^r - 1 = r + r^2 (1/2! + r (1/3! + ...))
constexpr double kSeries[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                              1.0 / 362880.0,     1.0 / 40320.0,     1.0 / 5040.0,      1.0 / 720.0,
                              1.0 / 120.0,        1.0 / 24.0,        1.0 / 6.0,         1.0 / 2.0};

// tanh of floats (as doubles, a lane each). For 2^-13 <= |x| < 10:
// tanh |x| = (e^y - 1) / (e^y + 1) with y = 2|x|, e^y = 2^k e^r, |r| <= ln2/2,
// and e^r - 1 by its series to r^13 (under 2e-16 left out). When k is 0 only
// the rounding of 1 + (e^r - 1) is lost to the subtraction: under 5e-13 of
// e^y - 1 >= 2^-12, far below float's 6e-8. Below 2^-13 tanh x rounds to x
// itself (x^2/3 < 2^-27), which also keeps -0.0, denormals and NaN; from 10
// on it is within 5e-9 of 1 and rounds to 1 (inf included). No branch and
// no libm call. Every lane computes the same IEEE operations in the same
// order (no FMA: -ffp-contract=off), so both loops give the same bits.
template <class F64, class I64>
inline __attribute__((always_inline)) void tanh_lanes(const F64& x, F64& result) {
  const I64 sign = I64{} + INT64_MIN;
  const I64 x_bits = (I64)x;  // a vector cast keeps the bits
  const F64 a = (F64)(x_bits & ~sign);
  const F64 lo = F64{} + 0x1p-13, hi = F64{} + 10.0;
  F64 y = a < lo ? lo : a;
  y = y > hi ? hi : y;
  y = a == a ? y + y : lo;  // NaN: any finite value, the result is x
  const F64 rounded = y * kInvLn2 + kRound;
  const F64 k = rounded - kRound;
  const F64 r = (y - k * kLn2Hi) - k * kLn2Lo;
  F64 p = F64{} + kSeries[0];
  for (int i = 1; i < 12; ++i) p = p * r + kSeries[i];
  const F64 er_minus_1 = r + r * (r * p);
  const F64 scale = (F64)(((I64)rounded - kRoundBits + 1023) << 52);  // 2^k
  const F64 e = (1.0 + er_minus_1) * scale - 1.0;                     // e^y - 1
  F64 t = e / (e + 2.0);
  t = a >= hi ? F64{} + 1.0 : t;
  const F64 signed_t = (F64)((I64)t | (x_bits & sign));
  result = a >= lo ? signed_t : x;
}

// The floats in groups of `lanes`, the last group padded.
template <class F32, class F64, class I64>
inline __attribute__((always_inline)) void tanh_groups(const float* in, int64_t n, float* out) {
  constexpr int64_t lanes = sizeof(F32) / sizeof(float);
  for (int64_t i = 0; i < n; i += lanes) {
    const std::size_t bytes = static_cast<std::size_t>(n - i < lanes ? n - i : lanes) * sizeof(float);
    F32 x = F32{};
    std::memcpy(&x, in + i, bytes);
    F64 t;
    tanh_lanes<F64, I64>(__builtin_convertvector(x, F64), t);
    const F32 y = __builtin_convertvector(t, F32);
    std::memcpy(out + i, &y, bytes);
  }
}

__attribute__((target("avx2"))) void tanh_avx2(const float* in, int64_t n, float* out) {
  tanh_groups<F32x4, F64x4, I64x4>(in, n, out);
}

void tanh_sse2(const float* in, int64_t n, float* out) { tanh_groups<F32x2, F64x2, I64x2>(in, n, out); }

}  // namespace

void tanh_f32(const float* in, int64_t n, float* out) {
  static const bool avx2 = own_kernel_isa() != CpuIsa::kSse;
  if (avx2) tanh_avx2(in, n, out);
  else tanh_sse2(in, n, out);
}

}  // namespace graphrun
