// TensorFlow's three divisions, with numpy broadcasting:
//   FloorDiv  rounds toward -inf; floats are floor(x / y), of the rounded
//             quotient (so 1 // 0.1 is 10, where numpy's // says 9);
//   FloorMod  the remainder with y's sign; floats take C's fmod and move a
//             non-zero result into y's sign (-4 mod 2 is -0.0);
//   Div       TF 1.x's /: truncating toward zero for integers, x / y for floats;
//   DivNoNan  x / y for floats, and +0 wherever y is zero (whatever x is).
// Integer division or remainder by zero is an error, checked over all of y
// before anything is computed, as Python's graphrun does. The one overflowing
// quotient, MIN / -1, wraps to MIN (remainder 0), as numpy gives.
#include <cmath>

#include "kernels/lib/broadcast.h"
#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

template <class T>
T truncating_div(T x, T y) {
  if constexpr (std::is_signed_v<T>) {
    if (y == T(-1)) return wrapping_neg(x);
  }
  return static_cast<T>(x / y);
}

template <class T>
T truncating_rem(T x, T y) {
  if constexpr (std::is_signed_v<T>) {
    if (y == T(-1)) return T(0);
  }
  return static_cast<T>(x % y);
}

struct FloorDivOp {
  template <class T>
  static T apply(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::floor(x / y);
    } else {
      const T q = truncating_div(x, y);
      if constexpr (std::is_signed_v<T>) {
        if (truncating_rem(x, y) != 0 && ((x < 0) != (y < 0))) return static_cast<T>(q - 1);
      }
      return q;
    }
  }
};

struct FloorModOp {
  template <class T>
  static T apply(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      const T r = std::fmod(x, y);
      return r != 0 && ((y < 0) != (r < 0)) ? r + y : r;
    } else {
      const T r = truncating_rem(x, y);
      if constexpr (std::is_signed_v<T>) {
        if (r != 0 && ((r < 0) != (y < 0))) return static_cast<T>(r + y);
      }
      return r;
    }
  }
};

struct DivOp {
  template <class T>
  static T apply(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) return x / y;
    else return truncating_div(x, y);
  }
};

struct DivNoNanOp {
  template <class T>
  static T apply(T x, T y) {
    return y == T(0) ? T(0) : x / y;
  }
};

template <class Op>
void compute_division(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& y = context.input(1);
  const BroadcastPlan plan = plan_broadcast(x.shape(), y.shape());
  dispatch(NumericTypes{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const T* divisors = y.data<T>();
      for (int64_t i = 0; i < y.num_elements(); ++i) {
        if (divisors[i] == 0) throw Error("integer division by zero");
      }
    }
    Tensor out(x.dtype(), plan.out);
    broadcast_apply(plan, x.data<T>(), y.data<T>(), out.data<T>(), [](T a, T b) { return Op::apply(a, b); });
    context.set_output(0, std::move(out));
  });
}

template <class Op>
Kernel division_kernel(const char* op, std::vector<DataType> types = dtypes_of(NumericTypes{})) {
  return Kernel(op)
      .input("x", "T")
      .input("y", "T")
      .output("T")
      .type_attr("T", std::move(types))
      .shape(broadcast_inputs())
      .compute(compute_division<Op>);
}

REGISTER_KERNEL(division_kernel<FloorDivOp>("FloorDiv"));
REGISTER_KERNEL(division_kernel<FloorModOp>("FloorMod"));
REGISTER_KERNEL(division_kernel<DivOp>("Div"));
REGISTER_KERNEL(division_kernel<DivNoNanOp>("DivNoNan", dtypes_of(FloatTypes{})));

}  // namespace
}  // namespace graphrun
