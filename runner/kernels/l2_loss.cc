// L2Loss: sum(t * t) / 2 as a scalar, summed as np.sum sums a contiguous
// array (pairwise_sum.h), so it matches Python's kernel bit for bit.
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/lib/pairwise_sum.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

void compute_l2_loss(KernelContext& context) {
  const Tensor& t = context.input(0);
  dispatch(FloatTypes{}, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* values = t.data<T>();
    std::vector<T> squares(static_cast<std::size_t>(t.num_elements()));
    for (std::size_t i = 0; i < squares.size(); ++i) squares[i] = values[i] * values[i];
    Tensor out(t.dtype(), {});
    out.data<T>()[0] = numpy_sum(squares.data(), t.num_elements()) / T(2);
    context.set_output(0, std::move(out));
  });
}

REGISTER_KERNEL(Kernel("L2Loss")
                    .input("t", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(FloatTypes{}))
                    .shape(scalar_output())
                    .compute(compute_l2_loss));

}  // namespace
}  // namespace graphrun
