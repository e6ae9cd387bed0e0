// More unary elementwise math: Sin, Cos, Floor, Ceil, Round (halves to even),
// Reciprocal and its TF 1.x name Inv, IsFinite/IsNan/IsInf and Selu.
#include <cmath>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/unary.h"

namespace graphrun {
namespace {

using SignedTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;

struct SinOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::sin(x);
  }
};

struct CosOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::cos(x);
  }
};

struct FloorOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::floor(x);
  }
};

struct CeilOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    return std::ceil(x);
  }
};

// nearbyint in the default rounding mode: halves go to the even neighbour, as
// TF's Round (and numpy's rint); integers pass through.
struct RoundOp {
  using Types = SignedTypes;
  template <class T>
  static T apply(T x) {
    if constexpr (std::is_integral_v<T>) return x;
    else return std::nearbyint(x);
  }
};

// 1 / x: an IEEE division for floats; for integers truncated toward zero (so
// 0 except for 1 and -1), and 0 is an error where TF's kernel would trap.
struct ReciprocalOp {
  using Types = SignedTypes;
  template <class T>
  static T apply(T x) {
    if constexpr (std::is_integral_v<T>) {
      if (x == 0) throw Error("integer reciprocal of 0");
      return x == 1 ? T(1) : (x == -1 ? T(-1) : T(0));
    } else {
      return T(1) / x;
    }
  }
};

// TF's formula and constants, each rounded once to T: exp(x) - 1 rather than
// expm1, so -0.0 stays -0.0 and the result matches TF's.
struct SeluOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T x) {
    const T scale = static_cast<T>(1.0507009873554804934193349852946);
    const T scale_alpha = static_cast<T>(1.7580993408473768599402175208123);
    return x < T(0) ? scale_alpha * (std::exp(x) - T(1)) : scale * x;
  }
};

enum class FloatClass { kFinite, kNan, kInf };

template <FloatClass kWhich>
void compute_classify(KernelContext& context) {
  const Tensor& x = context.input(0);
  Tensor out = Tensor::uninitialized(graphdef::DT_BOOL, x.shape());
  bool* result = out.data<bool>();
  dispatch(FloatTypes{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if constexpr (kWhich == FloatClass::kFinite) result[i] = std::isfinite(in[i]);
      else if constexpr (kWhich == FloatClass::kNan) result[i] = std::isnan(in[i]);
      else result[i] = std::isinf(in[i]);
    }
  });
  context.set_output(0, std::move(out));
}

template <FloatClass kWhich>
Kernel classify_kernel(const char* op) {
  return Kernel(op)
      .input("x", "T")
      .output(graphdef::DT_BOOL)
      .type_attr("T", dtypes_of(FloatTypes{}))
      .shape(same_as_input(0))
      .compute(compute_classify<kWhich>);
}

REGISTER_KERNEL(unary_kernel<SinOp>("Sin"));
REGISTER_KERNEL(unary_kernel<CosOp>("Cos"));
REGISTER_KERNEL(unary_kernel<FloorOp>("Floor"));
REGISTER_KERNEL(unary_kernel<CeilOp>("Ceil"));
REGISTER_KERNEL(unary_kernel<RoundOp>("Round"));
REGISTER_KERNEL(unary_kernel<ReciprocalOp>("Reciprocal"));
REGISTER_KERNEL(unary_kernel<ReciprocalOp>("Inv"));
REGISTER_KERNEL(unary_kernel<SeluOp>("Selu", "features"));
REGISTER_KERNEL(classify_kernel<FloatClass::kFinite>("IsFinite"));
REGISTER_KERNEL(classify_kernel<FloatClass::kNan>("IsNan"));
REGISTER_KERNEL(classify_kernel<FloatClass::kInf>("IsInf"));

}  // namespace
}  // namespace graphrun
