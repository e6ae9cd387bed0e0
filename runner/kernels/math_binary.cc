// Binary elementwise math with numpy-style broadcasting. Integer arithmetic
// wraps around (two's complement); float arithmetic is plain IEEE. The common
// shapes (equal, one a scalar, one a row repeated over the other's rows) run
// as flat loops, four float32 lanes at a time where the op is one IEEE
// operation, split over the cores, and in an operand's buffer when nothing
// else holds it; other broadcasts step an odometer.
#include <cmath>
#include <type_traits>

#include "kernels/lib/broadcast.h"
#include "core/int_arith.h"
#include "core/parallel.h"
#include "kernels/lib/vec4.h"
#include "kernels/lib/min_max.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

struct AddOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) {
    return add(a, b);
  }
};

struct SubOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) {
    return sub(a, b);
  }
};

struct MulOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) {
    return mul(a, b);
  }
};

struct RealDivOp {
  using Types = FloatTypes;
  template <class T>
  static T apply(T a, T b) {
    return a / b;
  }
};

struct MaximumOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) {
    return maximum(a, b);
  }
};

struct MinimumOp {
  using Types = NumericTypes;
  template <class T>
  static T apply(T a, T b) {
    return minimum(a, b);
  }
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

// Ops whose float32 arithmetic is one IEEE operation, the same in four
// lanes as in one: they take the vector loop below.
template <class Op>
constexpr bool kVectorF32 = std::is_same_v<Op, AddOp> || std::is_same_v<Op, SubOp> || std::is_same_v<Op, MulOp> ||
                            std::is_same_v<Op, RealDivOp>;

template <class Op>
F32x4 apply4(F32x4 a, F32x4 b) {
  if constexpr (std::is_same_v<Op, AddOp>) return a + b;
  else if constexpr (std::is_same_v<Op, SubOp>) return a - b;
  else if constexpr (std::is_same_v<Op, MulOp>) return a * b;
  else return a / b;
}

// out[i] = a[i * a_step] op b[i * b_step] for i < n, each step 0 (a
// broadcast scalar) or 1. Element i is read before out[i] is written, so out
// may be a or b itself.
template <class Op, class T>
void binary_run(const T* a, bool a_moves, const T* b, bool b_moves, T* out, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float> && kVectorF32<Op>) {
    const F32x4 a_fixed = {a[0], a[0], a[0], a[0]}, b_fixed = {b[0], b[0], b[0], b[0]};
    for (; i + 4 <= n; i += 4) {
      store4(out + i, apply4<Op>(a_moves ? load4(a + i) : a_fixed, b_moves ? load4(b + i) : b_fixed));
    }
  }
  if (a_moves && b_moves) {
    for (; i < n; ++i) out[i] = Op::apply(a[i], b[i]);
  } else if (a_moves) {
    for (; i < n; ++i) out[i] = Op::apply(a[i], b[0]);
  } else if (b_moves) {
    for (; i < n; ++i) out[i] = Op::apply(a[0], b[i]);
  } else {
    for (; i < n; ++i) out[i] = Op::apply(a[0], b[0]);
  }
}

bool trailing_vector(const Shape& small, const Shape& big) {
  // [..., C] with leading 1s, C the last dim of the other operand.
  if (small.empty() || big.empty() || small.size() > big.size() || small.back() != big.back()) return false;
  for (std::size_t d = 0; d + 1 < small.size(); ++d) {
    if (small[d] != 1) return false;
  }
  return true;
}

// The result's buffer: an operand's when it has the result's shape and
// nothing else holds it, else a new one.
Tensor* reusable_operand(KernelContext& context, const Shape& out) {
  for (int k = 0; k < 2; ++k) {
    if (context.input(k).shape() == out) {
      if (Tensor* reused = context.reusable_input(k)) return reused;
    }
  }
  return nullptr;
}

// x ** 2 and x ** 3 as x * x and (x * x) * x when the exponent is one
// floating value (GELU's cube, a squared error): the same order as the
// Python runtime's, within Pow's 4 ulps of pow() for every input (inf, NaN
// and signed zeros come out as pow's; an overflow of a finite x is pow's
// own), and pow() is a slow general routine.
template <class T>
bool small_integer_power(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& y = context.input(1);
  if (y.num_elements() != 1 || y.rank() > x.rank()) return false;
  const T exponent = y.data<T>()[0];
  if (exponent != T(2) && exponent != T(3)) return false;
  Shape shape = x.shape();  // y of one element, of rank <= x's: the result has x's shape
  Tensor* reused = context.reusable_input(0);
  Tensor fresh = reused ? Tensor(x.dtype(), {0}) : Tensor::uninitialized(x.dtype(), shape);
  const T* in = x.data<T>();
  T* out = reused ? reused->data<T>() : fresh.data<T>();
  const bool cube = exponent == T(3);
  parallel_for(x.num_elements(), static_cast<double>(x.num_elements()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T square = in[i] * in[i];
      const T product = cube ? square * in[i] : square;
      // A finite cube can round to the largest finite value while (x * x) * x
      // overflows (float32's +-6.9814636e12): there pow's answer.
      out[i] = std::isinf(product) && std::isfinite(in[i]) ? std::pow(in[i], exponent) : product;
    }
  });
  if (reused) context.set_output(0, context.input_ptr(0));
  else context.set_output(0, std::move(fresh));
  return true;
}

template <class Op>
void compute_binary(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& y = context.input(1);
  if constexpr (std::is_same_v<Op, PowOp>) {
    if (x.dtype() == graphdef::DT_FLOAT && y.dtype() == x.dtype() && small_integer_power<float>(context)) return;
    if (x.dtype() == graphdef::DT_DOUBLE && y.dtype() == x.dtype() && small_integer_power<double>(context)) return;
  }
  const BroadcastPlan plan = plan_broadcast(x.shape(), y.shape());
  dispatch(typename Op::Types{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = x.data<T>();
    const T* b = y.data<T>();
    int64_t n = 1;
    for (int64_t dim : plan.out) n *= dim;
    const bool same = x.shape() == y.shape();
    const bool scalar = x.num_elements() == 1 || y.num_elements() == 1;
    const bool rows_of_y = trailing_vector(y.shape(), plan.out) && x.shape() == plan.out;
    const bool rows_of_x = trailing_vector(x.shape(), plan.out) && y.shape() == plan.out;
    if (n == 0 || !(same || scalar || rows_of_y || rows_of_x)) {
      Tensor out(x.dtype(), plan.out);
      broadcast_apply(plan, a, b, out.data<T>(), [](T p, T q) { return Op::apply(p, q); });
      context.set_output(0, std::move(out));
      return;
    }
    Tensor* reused = reusable_operand(context, plan.out);
    Tensor fresh = reused ? Tensor(x.dtype(), {0}) : Tensor::uninitialized(x.dtype(), plan.out);
    T* out = reused ? reused->data<T>() : fresh.data<T>();
    if (same || scalar) {
      const bool a_moves = x.num_elements() == n, b_moves = y.num_elements() == n;
      parallel_for(n, static_cast<double>(n), [&](int64_t begin, int64_t end) {
        binary_run<Op, T>(a_moves ? a + begin : a, a_moves, b_moves ? b + begin : b, b_moves, out + begin, end - begin);
      });
    } else {
      // One operand is a row (a bias, a batch norm's per-channel scale)
      // repeated over the other's rows.
      const int64_t channels = plan.out.back(), rows = n / channels;
      parallel_for(rows, static_cast<double>(n), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t offset = r * channels;
          if (rows_of_y) binary_run<Op, T>(a + offset, true, b, true, out + offset, channels);
          else binary_run<Op, T>(a, true, b + offset, true, out + offset, channels);
        }
      });
    }
    if (reused) context.set_output(0, context.input_ptr(reused == context.input_ptr(0).get() ? 0 : 1));
    else context.set_output(0, std::move(fresh));
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
REGISTER_KERNEL(binary_kernel<AddOp>("Add",
                                     {graphdef::DT_FLOAT, graphdef::DT_DOUBLE, graphdef::DT_UINT8, graphdef::DT_INT8,
                                      graphdef::DT_INT16, graphdef::DT_INT32, graphdef::DT_INT64}));
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
