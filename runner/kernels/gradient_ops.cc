// Ops that gradient graphs are built from: ReluGrad, and BroadcastGradientArgs,
// which says which axes a broadcast operand's gradient must be summed over.
#include <algorithm>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/index_input.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

// backprops = gradients where features > 0, else 0. A NaN feature is not
// > 0, so it gives 0. Both inputs must have the same shape (TensorFlow's rule;
// there is no broadcasting).
void compute_relu_grad(KernelContext& context) {
  const Tensor& gradients = context.input(0);
  const Tensor& features = context.input(1);
  if (gradients.shape() != features.shape()) {
    throw Error("gradients and features must have the same shape, got " + shape_string(gradients.shape()) + " and " +
                shape_string(features.shape()));
  }
  dispatch(NumericTypes{}, gradients.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(gradients.dtype(), gradients.shape());
    const T* g = gradients.data<T>();
    const T* f = features.data<T>();
    T* result = out.data<T>();
    for (int64_t i = 0; i < out.num_elements(); ++i) result[i] = f[i] > T(0) ? g[i] : T(0);
    context.set_output(0, std::move(out));
  });
}

// For shapes s0 and s1 that broadcast together: r0 and r1, the axes (of the
// broadcast result) that each side's gradient is summed over. Equal shapes
// need no reduction, so both are empty. Otherwise the shorter shape is padded
// with leading 1s and every axis where a side is 1 is listed for that side,
// even where the other side is 1 as well: that is TensorFlow's rule, and a
// sum over a size-1 axis changes nothing.
void compute_broadcast_gradient_args(KernelContext& context) {
  const std::vector<int64_t> s0 = read_index_vector(context.input(0), "s0", false);
  const std::vector<int64_t> s1 = read_index_vector(context.input(1), "s1", false);
  const std::size_t rank = std::max(s0.size(), s1.size());
  std::vector<int64_t> a(rank - s0.size(), 1), b(rank - s1.size(), 1);
  a.insert(a.end(), s0.begin(), s0.end());
  b.insert(b.end(), s1.begin(), s1.end());
  for (std::size_t d = 0; d < rank; ++d) {
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1) {
      throw Error("shapes " + shape_string(s0) + " and " + shape_string(s1) + " are not broadcast-compatible");
    }
  }
  std::vector<int64_t> r0, r1;
  if (s0 != s1) {
    for (std::size_t d = 0; d < rank; ++d) {
      if (a[d] == 1) r0.push_back(static_cast<int64_t>(d));
      if (b[d] == 1) r1.push_back(static_cast<int64_t>(d));
    }
  }
  dispatch(IndexTypes{}, context.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    int output = 0;
    for (const std::vector<int64_t>* axes : {&r0, &r1}) {
      Tensor out(context.input(0).dtype(), {static_cast<int64_t>(axes->size())});
      T* values = out.data<T>();
      for (std::size_t i = 0; i < axes->size(); ++i) values[i] = static_cast<T>((*axes)[i]);
      context.set_output(output++, std::move(out));
    }
  });
}

REGISTER_KERNEL(Kernel("ReluGrad")
                    .input("gradients", "T")
                    .input("features", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .shape(same_as_input(0))
                    .compute(compute_relu_grad));

REGISTER_KERNEL(Kernel("BroadcastGradientArgs")
                    .input("s0", "T")
                    .input("s1", "T")
                    .output("T")
                    .output("T")
                    .output_names({"r0", "r1"})
                    .type_attr("T", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .compute(compute_broadcast_gradient_args));

}  // namespace
}  // namespace graphrun
