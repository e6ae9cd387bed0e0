// Unary elementwise math. Integer negation wraps (-(-128) is -128 in int8).
#include <cmath>

#include "core/int_arith.h"
#include "kernels/lib/min_max.h"
#include "kernels/lib/exp_tanh_f32.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/lib/vec4.h"
#include "graph/shape_rules.h"
#include "kernels/unary.h"

namespace graphrun {
namespace {

using SignedTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;

struct NegOp {
  using Types = SignedTypes;
  template <class T>
  static T apply(T x) {
    if constexpr (std::is_integral_v<T>) return wrapping_neg(x);
    else return -x;
  }
};

struct AbsOp {
  using Types = SignedTypes;
  template <class T>
  static T apply(T x) {
    if constexpr (std::is_integral_v<T>) return x < 0 ? wrapping_neg(x) : x;
    else return std::fabs(x);
  }
};

struct SquareOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T x) {
    return mul(x, x);
  }
};

struct SqrtOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::sqrt(x);
  }
};

struct ExpOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::exp(x);
  }
};

struct LogOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::log(x);
  }
};

struct Log1pOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::log1p(x);
  }
};

// 1 / sqrt(x), two correctly rounded steps as numpy's 1 / np.sqrt(x).
struct RsqrtOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return T(1) / std::sqrt(x);
  }
};

struct SigmoidOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return T(1) / (T(1) + std::exp(-x));
  }
};

// 1 - erf(x) (Keras' exact GELU), computed in double and rounded to T, as
// the Python runtime does with math.erfc: a float32 erfcf could round
// differently.
struct ErfcOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return static_cast<T>(std::erfc(static_cast<double>(x)));
  }
};

struct TanhOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::tanh(x);
  }
};

// maximum(x, 0): NaN passes through, -0.0 becomes 0.0 (as numpy's does).
struct ReluOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T x) {
    return maximum(x, T(0));
  }
};

// -1, 0 or 1. NaN stays NaN, and both zeros give +0.0 (numpy's np.sign;
// TensorFlow agrees): the comparisons are false for NaN, and `x == 0` is true
// for -0.0.
struct SignOp {
  using Types = SignedTypes;
  template <class T>
  static T apply(T x) {
    if (x > T(0)) return T(1);
    if (x < T(0)) return T(-1);
    if (x == T(0)) return T(0);
    return x;
  }
};

// ReLU on float32, four lanes at a time and without branches: the scalar
// form's branch on the sign mispredicts half the time on real activations.
// Same rule as maximum(x, 0): NaN passes through, -0.0 becomes 0.0.
void relu_f32(const float* in, int64_t n, float* out) {
  int64_t i = 0;
  const F32x4 zero = {0, 0, 0, 0};
  for (; i + 4 <= n; i += 4) {
    const F32x4 x = load4(in + i);
    store4(out + i, (x > zero) | (x != x) ? x : zero);
  }
  for (; i < n; ++i) out[i] = maximum(in[i], 0.0f);
}

}  // namespace

template <>
struct UnaryBlock<ReluOp, float> {
  static constexpr bool kHas = true;
  static void run(const float* in, int64_t n, float* out) { relu_f32(in, n, out); }
};

template <>
struct UnaryBlock<ExpOp, float> {
  static constexpr bool kHas = true;
  static void run(const float* in, int64_t n, float* out) { exp_f32(in, n, out); }
};

template <>
struct UnaryBlock<TanhOp, float> {
  static constexpr bool kHas = true;
  static void run(const float* in, int64_t n, float* out) { tanh_f32(in, n, out); }
};

namespace {

REGISTER_KERNEL(unary_kernel<NegOp>("Neg"));
REGISTER_KERNEL(unary_kernel<AbsOp>("Abs"));
REGISTER_KERNEL(unary_kernel<SquareOp>("Square"));
REGISTER_KERNEL(unary_kernel<SqrtOp>("Sqrt"));
REGISTER_KERNEL(unary_kernel<ExpOp>("Exp"));
REGISTER_KERNEL(unary_kernel<LogOp>("Log"));
REGISTER_KERNEL(unary_kernel<Log1pOp>("Log1p"));
REGISTER_KERNEL(unary_kernel<RsqrtOp>("Rsqrt"));
REGISTER_KERNEL(unary_kernel<SigmoidOp>("Sigmoid"));
REGISTER_KERNEL(unary_kernel<TanhOp>("Tanh"));
REGISTER_KERNEL(unary_kernel<ErfcOp>("Erfc"));
REGISTER_KERNEL(unary_kernel<ReluOp>("Relu", "features"));  // TF names its input features
REGISTER_KERNEL(unary_kernel<SignOp>("Sign"));

}  // namespace
}  // namespace graphrun
