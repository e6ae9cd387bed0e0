// BiasAdd, NHWC: a 1-D bias added along the last dim of a value of rank 2 or
// more; integers wrap, as every integer addition here does.
#include "int_arith.h"
#include "kernel.h"
#include "kernel_context.h"
#include "vec4.h"

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
      add_bias<T>(value.data<T>(), bias.data<T>(), value.num_elements() / channels, channels, output.data<T>());
    }
  });
  if (reused) context.set_output(0, context.input_ptr(0));
  else context.set_output(0, std::move(fresh));
}

REGISTER_KERNEL(Kernel("BiasAdd")
                    .input("value", "T")
                    .input("bias", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .choice_attr("data_format", {"NHWC"}, "NHWC")
                    .compute(compute_bias_add));

}  // namespace
}  // namespace graphrun
