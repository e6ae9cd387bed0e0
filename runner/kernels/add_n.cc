// AddN: the sum of N tensors of one dtype and one shape.
//
// The sum runs left to right, ((a + b) + c) + ..., one element at a time, so
// a float result is exactly what Python's graphrun gets by adding the arrays
// in order. Integers wrap, as AddV2 does. There is no broadcasting: every
// input must have the first one's shape, as TensorFlow requires.
#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

void compute_add_n(KernelContext& context) {
  const int n = context.num_inputs();
  const Tensor& first = context.input(0);
  for (int i = 1; i < n; ++i) {
    if (context.input(i).shape() != first.shape()) {
      throw Error("all inputs must have the same shape, but input 0 has shape " + shape_string(first.shape()) +
                  " and input " + std::to_string(i) + " has shape " + shape_string(context.input(i).shape()));
    }
  }
  if (n == 1) {  // nothing to add: hand the value on without copying it
    context.set_output(0, context.input_ptr(0));
    return;
  }
  dispatch(NumericTypes{}, first.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor sum(first.dtype(), first.shape());
    T* out = sum.data<T>();
    const T* a = first.data<T>();
    const T* b = context.input(1).data<T>();
    for (int64_t j = 0; j < sum.num_elements(); ++j) out[j] = add(a[j], b[j]);
    for (int i = 2; i < n; ++i) {
      const T* next = context.input(i).data<T>();
      for (int64_t j = 0; j < sum.num_elements(); ++j) out[j] = add(out[j], next[j]);
    }
    context.set_output(0, std::move(sum));
  });
}

REGISTER_KERNEL(Kernel("AddN")
                    .list_input("inputs", "N", "T")
                    .output("T")
                    .int_attr("N", 1)
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .shape(broadcast_inputs())
                    .compute(compute_add_n));

}  // namespace
}  // namespace graphrun
