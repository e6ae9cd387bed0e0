// ZerosLike and OnesLike: a tensor of x's shape and dtype filled with 0 or 1
// (false or true for bool). x's values are never read.
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

void compute_zeros_like(KernelContext& context) {
  const Tensor& x = context.input(0);
  context.set_output(0, Tensor(x.dtype(), x.shape()));  // tensors start zero-filled
}

void compute_ones_like(KernelContext& context) {
  const Tensor& x = context.input(0);
  Tensor out(x.dtype(), x.shape());
  dispatch(AllTypes{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* values = out.data<T>();
    for (int64_t i = 0; i < out.num_elements(); ++i) values[i] = T(1);
  });
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(
    Kernel("ZerosLike").input("x", "T").output("T").type_attr("T").shape(same_as_input(0)).compute(compute_zeros_like));
REGISTER_KERNEL(
    Kernel("OnesLike").input("x", "T").output("T").type_attr("T").shape(same_as_input(0)).compute(compute_ones_like));

}  // namespace
}  // namespace graphrun
