// Softmax and LogSoftmax over the last axis of a tensor of rank >= 1.
#include "core/parallel.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/softmax_rows.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

template <bool kLog>
void compute_softmax(KernelContext& context) {
  const Tensor& logits = context.input(0);
  if (logits.rank() == 0) throw Error("logits must have at least one dim, got shape []");
  const int64_t classes = logits.shape().back();
  const int64_t rows = classes == 0 ? 0 : logits.num_elements() / classes;
  dispatch(FloatTypes{}, logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out = Tensor::uninitialized(logits.dtype(), logits.shape());
    const T* in = logits.data<T>();
    T* result = out.data<T>();
    // Rows are independent: an attention's rows are split over the cores
    // (an exp, a max and a sum an element, about 20 operations).
    parallel_for(rows, static_cast<double>(logits.num_elements()) * 20, [&](int64_t begin, int64_t end) {
      std::vector<T> scratch;
      for (int64_t r = begin; r < end; ++r) {
        if constexpr (kLog) log_softmax_row(in + r * classes, classes, result + r * classes, scratch);
        else softmax_row(in + r * classes, classes, result + r * classes);
      }
    });
    context.set_output(0, std::move(out));
  });
}

Kernel softmax_kernel(const char* op, ComputeFn compute) {
  return Kernel(op)
      .input("logits", "T")
      .output("T")
      .type_attr("T", dtypes_of(FloatTypes{}))
      .shape(same_as_input(0))
      .compute(std::move(compute));
}

REGISTER_KERNEL(softmax_kernel("Softmax", compute_softmax<false>));
REGISTER_KERNEL(softmax_kernel("LogSoftmax", compute_softmax<true>));

}  // namespace
}  // namespace graphrun
