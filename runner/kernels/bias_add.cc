// BiasAdd, NHWC: a 1-D bias added along the last dim of a value of rank 2 or
// more; integers wrap, as every integer addition here does. BiasAddGrad, its
// gradient for the bias: the sum over every dim but the last.
#include "core/int_arith.h"
#include "core/parallel.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/lib/pairwise_sum.h"
#include "kernels/lib/vec4.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

template <class T>
void add_bias(const T* value, const T* bias, int64_t rows, int64_t channels, T* out) {
  for (int64_t r = 0; r < rows; ++r, value += channels, out += channels) {
    int64_t c = 0;
    if constexpr (std::is_same_v<T, float>) {
      for (; c + 4 <= channels; c += 4) store4(out + c, load4(value + c) + load4(bias + c));
    }
    for (; c < channels; ++c) out[c] = add(value[c], bias[c]);
  }
}

void compute_bias_add(KernelContext& context) {
  const Tensor& value = context.input(0);
  const Tensor& bias = context.input(1);
  if (value.rank() < 2 || bias.rank() != 1 || value.shape().back() != bias.shape()[0]) {
    throw Error("bias " + shape_string(bias.shape()) + " must be 1-D and match the last dim of value " +
                shape_string(value.shape()) + " (at least 2-D)");
  }
  // Each element is read before it is written, so the sum may take the
  // value's place when nothing else holds it (a convolution's output,
  // typically), sparing a buffer and a pass over memory.
  Tensor* reused = context.reusable_input(0);
  Tensor fresh = reused ? Tensor(value.dtype(), {0}) : Tensor::uninitialized(value.dtype(), value.shape());
  Tensor& output = reused ? *reused : fresh;
  const int64_t channels = bias.shape()[0];
  dispatch(NumericTypes{}, value.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (channels > 0) {
      const int64_t rows = value.num_elements() / channels;
      const T* in = value.data<T>();
      T* out = output.data<T>();
      parallel_for(rows, static_cast<double>(value.num_elements()), [&](int64_t begin, int64_t end) {
        add_bias<T>(in + begin * channels, bias.data<T>(), end - begin, channels, out + begin * channels);
      });
    }
  });
  if (reused) context.set_output(0, context.input_ptr(0));
  else context.set_output(0, std::move(fresh));
}

// The column sums of a rows x channels matrix, rounded as the Python
// runtime's np.sum(g, axis=all-but-last, dtype=T) rounds them. numpy walks
// such a reduction row by row, adding each row into the sums from 0, unless
// there is one channel: then the size-1 axis drops out, the reduced axis is
// the contiguous inner one, and numpy sums it pairwise. Integer sums wrap
// alike in any order, so they always take the wrapping row-by-row path.
template <class T>
void column_sums(const T* g, int64_t rows, int64_t channels, T* out) {
  if (std::is_floating_point_v<T> && channels == 1) {
    out[0] = numpy_sum(g, rows);
    return;
  }
  for (int64_t c = 0; c < channels; ++c) out[c] = T(0);
  for (int64_t r = 0; r < rows; ++r, g += channels) {
    for (int64_t c = 0; c < channels; ++c) out[c] = add(out[c], g[c]);
  }
}

void compute_bias_add_grad(KernelContext& context) {
  const Tensor& g = context.input(0);
  if (g.rank() < 2) throw Error("out_backprop must be at least 2-D, got shape " + shape_string(g.shape()));
  const int64_t channels = g.shape().back();
  Tensor output(g.dtype(), {channels});
  dispatch(NumericTypes{}, g.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Without channels the output is empty and there is nothing to sum.
    if (channels > 0) column_sums<T>(g.data<T>(), g.num_elements() / channels, channels, output.data<T>());
  });
  context.set_output(0, std::move(output));
}

// The last dim, whatever it is; graphrun says so even for an unknown rank.
void bias_add_grad_shape(ShapeContext& context) {
  const StaticShape in = context.input(0);
  context.set_output(0, known_shape({in.known_rank && !in.dims.empty() ? in.dims.back() : -1}));
}

REGISTER_KERNEL(Kernel("BiasAddGrad")
                    .input("out_backprop", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .choice_attr("data_format", {"NHWC"}, "NHWC")
                    .shape(bias_add_grad_shape)
                    .compute(compute_bias_add_grad));

REGISTER_KERNEL(Kernel("BiasAdd")
                    .input("value", "T")
                    .input("bias", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .choice_attr("data_format", {"NHWC"}, "NHWC")
                    .shape(same_as_input(0))
                    .compute(compute_bias_add));

}  // namespace
}  // namespace graphrun
