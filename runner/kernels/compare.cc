// Comparisons and logical ops: bool results, numpy-style broadcasting.
//
// The C++ operators give IEEE semantics, which are numpy's and TensorFlow's:
// every comparison with NaN is false except !=, which is true, and -0.0
// equals 0.0.
#include "kernels/lib/broadcast.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

struct EqualOp {
  template <class T>
  static bool apply(T a, T b) {
    return a == b;
  }
};

struct NotEqualOp {
  template <class T>
  static bool apply(T a, T b) {
    return a != b;
  }
};

struct GreaterOp {
  template <class T>
  static bool apply(T a, T b) {
    return a > b;
  }
};

struct GreaterEqualOp {
  template <class T>
  static bool apply(T a, T b) {
    return a >= b;
  }
};

struct LessOp {
  template <class T>
  static bool apply(T a, T b) {
    return a < b;
  }
};

struct LessEqualOp {
  template <class T>
  static bool apply(T a, T b) {
    return a <= b;
  }
};

struct LogicalAndOp {
  static bool apply(bool a, bool b) { return a && b; }
};

struct LogicalOrOp {
  static bool apply(bool a, bool b) { return a || b; }
};

template <class Op, class Types>
void compute_comparison(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& y = context.input(1);
  const BroadcastPlan plan = plan_broadcast(x.shape(), y.shape());
  Tensor out(graphdef::DT_BOOL, plan.out);
  dispatch(Types{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    broadcast_apply(plan, x.data<T>(), y.data<T>(), out.data<bool>(), [](T a, T b) { return Op::apply(a, b); });
  });
  context.set_output(0, std::move(out));
}

// Equal and NotEqual take every dtype, bool included; the orderings take
// numbers only (Python's registry: dtypes.ALL and dtypes.NUMERIC).
template <class Op>
Kernel equality_kernel(const char* op) {
  return Kernel(op)
      .input("x", "T")
      .input("y", "T")
      .output(graphdef::DT_BOOL)
      .type_attr("T", dtypes_of(AllTypes{}))
      // TF's attr; broadcasting errors are errors either way.
      .bool_attr("incompatible_shape_error", true)
      .shape(broadcast_inputs())
      .compute(compute_comparison<Op, AllTypes>);
}

template <class Op>
Kernel ordering_kernel(const char* op) {
  return Kernel(op)
      .input("x", "T")
      .input("y", "T")
      .output(graphdef::DT_BOOL)
      .type_attr("T", dtypes_of(NumericTypes{}))
      .shape(broadcast_inputs())
      .compute(compute_comparison<Op, NumericTypes>);
}

template <class Op>
Kernel logical_kernel(const char* op) {
  return Kernel(op)
      .input("x", graphdef::DT_BOOL)
      .input("y", graphdef::DT_BOOL)
      .output(graphdef::DT_BOOL)
      .shape(broadcast_inputs())
      .compute(compute_comparison<Op, TypeList<bool>>);
}

void compute_logical_not(KernelContext& context) {
  const Tensor& x = context.input(0);
  Tensor out(graphdef::DT_BOOL, x.shape());
  const bool* in = x.data<bool>();
  bool* result = out.data<bool>();
  for (int64_t i = 0; i < x.num_elements(); ++i) result[i] = !in[i];
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(equality_kernel<EqualOp>("Equal"));
REGISTER_KERNEL(equality_kernel<NotEqualOp>("NotEqual"));
REGISTER_KERNEL(ordering_kernel<GreaterOp>("Greater"));
REGISTER_KERNEL(ordering_kernel<GreaterEqualOp>("GreaterEqual"));
REGISTER_KERNEL(ordering_kernel<LessOp>("Less"));
REGISTER_KERNEL(ordering_kernel<LessEqualOp>("LessEqual"));
REGISTER_KERNEL(logical_kernel<LogicalAndOp>("LogicalAnd"));
REGISTER_KERNEL(logical_kernel<LogicalOrOp>("LogicalOr"));
REGISTER_KERNEL(Kernel("LogicalNot")
                    .input("x", graphdef::DT_BOOL)
                    .output(graphdef::DT_BOOL)
                    .shape(same_as_input(0))
                    .compute(compute_logical_not));

}  // namespace
}  // namespace graphrun
