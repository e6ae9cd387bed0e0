// Binary elementwise math with numpy-style broadcasting. Integer arithmetic
// wraps around (two's complement); float arithmetic is plain IEEE.
#include <cmath>

#include "kernels/lib/broadcast.h"
#include "core/int_arith.h"
#include "kernels/lib/min_max.h"
#include "exec/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

struct AddOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) { return add(a, b); }
};

struct SubOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) { return sub(a, b); }
};

struct MulOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) { return mul(a, b); }
};

struct RealDivOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T a, T b) { return a / b; }
};

struct MaximumOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) { return maximum(a, b); }
};

struct MinimumOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) { return minimum(a, b); }
};

// (x - y) ** 2, the difference rounded first (numpy's np.square(x - y));
// integers wrap. Signed types only, as Python's registry and TensorFlow.
struct SquaredDifferenceOp {
  using Types = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
  template <class T>
  static T apply(T a, T b) {
    const T d = sub(a, b);
    return mul(d, d);
  }
};

// Floats: std::pow, as TensorFlow's kernel and numpy's float power use.
// Integers: repeated squaring with wrap-around, which is what numpy and
// TensorFlow compute (the low bits of the exact power); a negative exponent
// has no integer result, so it is an error, as in both.
struct PowOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T base, T exponent) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(base, exponent);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (exponent < 0) throw Error("integers to negative integer powers are not allowed");
      }
      T result = 1;
      while (exponent != 0) {
        if (exponent & 1) result = wrapping_mul(result, base);
        exponent = static_cast<T>(exponent >> 1);
        if (exponent != 0) base = wrapping_mul(base, base);
      }
      return result;
    }
  }
};

template <class Op>
void compute_binary(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& y = context.input(1);
  const BroadcastPlan plan = plan_broadcast(x.shape(), y.shape());
  dispatch(typename Op::Types{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.dtype(), plan.out);
    broadcast_apply(plan, x.data<T>(), y.data<T>(), out.data<T>(), [](T a, T b) { return Op::apply(a, b); });
    context.set_output(0, std::move(out));
  });
}

template <class Op>
Kernel binary_kernel(const char* op, std::vector<DataType> allowed) {
  return Kernel(op)
      .input("x", "T")
      .input("y", "T")
      .output("T")
      .type_attr("T", std::move(allowed))
      .shape(broadcast_inputs())
      .compute(compute_binary<Op>);
}

// Add is the TF1 spelling; TensorFlow's OpDef lists fewer dtypes for it.
REGISTER_KERNEL(binary_kernel<AddOp>("Add", {graphdef::DT_FLOAT, graphdef::DT_DOUBLE, graphdef::DT_UINT8,
                                             graphdef::DT_INT8, graphdef::DT_INT16, graphdef::DT_INT32,
                                             graphdef::DT_INT64}));
REGISTER_KERNEL(binary_kernel<AddOp>("AddV2", dtypes_of(NumericTypes{})));
REGISTER_KERNEL(binary_kernel<SubOp>("Sub", dtypes_of(NumericTypes{})));
REGISTER_KERNEL(binary_kernel<MulOp>("Mul", dtypes_of(NumericTypes{})));
REGISTER_KERNEL(binary_kernel<RealDivOp>("RealDiv", dtypes_of(FloatTypes{})));
REGISTER_KERNEL(binary_kernel<MaximumOp>("Maximum", dtypes_of(NumericTypes{})));
REGISTER_KERNEL(binary_kernel<MinimumOp>("Minimum", dtypes_of(NumericTypes{})));
REGISTER_KERNEL(binary_kernel<SquaredDifferenceOp>("SquaredDifference", dtypes_of(SquaredDifferenceOp::Types{})));
// TensorFlow's Pow lists no unsigned types; Python's graphrun accepts every
// numeric type, and both runners must accept the same graphs.
REGISTER_KERNEL(binary_kernel<PowOp>("Pow", dtypes_of(NumericTypes{})));

}  // namespace
}  // namespace graphrun
