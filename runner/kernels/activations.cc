// The activations beyond Relu, with TensorFlow's formulas as Python's
// graphrun has them: Relu6 clips to [0, 6] (NaN propagates; integers too),
// Elu is exp(x) - 1 below 0 (not expm1, so -0.0 stays -0.0), LeakyRelu
// multiplies by the float32 alpha cast to T, and Softplus switches to x or
// exp(x) beyond log(epsilon) + 2, where log1p(exp(x)) equals them to within
// the type's precision.
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/parallel.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/lib/min_max.h"
#include "kernels/lib/vec4.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

// No float32 block form: every dtype takes the scalar loop. (run is never
// called; clang checks the discarded branch that names it.)
struct NoBlock {
  static void run(const float*, int64_t, float*) {}
};

// Relu6 on float32, four lanes at a time without branches, by the scalar
// rule below: NaN passes through, -0.0 becomes 0.0, above 6 becomes 6.
struct Relu6Block {
  static void run(const float* in, int64_t n, float* out) {
    const F32x4 zero = {0, 0, 0, 0}, six = {6, 6, 6, 6};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      const F32x4 x = load4(in + i);
      const F32x4 low = ((x > zero) | (x != x)) ? x : zero;
      store4(out + i, ((low < six) | (low != low)) ? low : six);
    }
    for (; i < n; ++i) out[i] = minimum(maximum(in[i], 0.0f), 6.0f);
  }
};

// out[i] = f(in[i]), in place when nothing else holds the input, split over
// the cores for large tensors; float32 takes Block::run when there is one.
template <class Types, class Block = NoBlock, class F>
void elementwise(KernelContext& context, F f) {
  const Tensor& x = context.input(0);
  dispatch(Types{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor* reused = context.reusable_input(0);
    Tensor fresh = reused ? Tensor(x.dtype(), {0}) : Tensor::uninitialized(x.dtype(), x.shape());
    const T* in = x.data<T>();
    T* out = reused ? reused->data<T>() : fresh.data<T>();
    const int64_t n = x.num_elements();
    parallel_for(n, static_cast<double>(n), [&](int64_t begin, int64_t end) {
      if constexpr (std::is_same_v<T, float> && !std::is_same_v<Block, NoBlock>) {
        Block::run(in + begin, end - begin, out + begin);
      } else {
        for (int64_t i = begin; i < end; ++i) out[i] = f(in[i]);
      }
    });
    if (reused) context.set_output(0, context.input_ptr(0));
    else context.set_output(0, std::move(fresh));
  });
}

void compute_relu6(KernelContext& context) {
  elementwise<NumericTypes, Relu6Block>(context, [](auto x) {
    using T = decltype(x);
    return minimum(maximum(x, T(0)), T(6));
  });
}

void compute_elu(KernelContext& context) {
  elementwise<FloatTypes>(context, [](auto x) {
    using T = decltype(x);
    return x < T(0) ? std::exp(x) - T(1) : x;
  });
}

void compute_leaky_relu(KernelContext& context) {
  const float alpha = context.attr_float("alpha");
  elementwise<FloatTypes>(context, [alpha](auto x) {
    using T = decltype(x);
    return x > T(0) ? x : x * static_cast<T>(alpha);
  });
}

// x / (1 + |x|): two IEEE roundings, in TF's order, so the result is exact under the policy.
void compute_softsign(KernelContext& context) {
  elementwise<FloatTypes>(context, [](auto x) {
    using T = decltype(x);
    return x / (T(1) + std::abs(x));
  });
}

void compute_softplus(KernelContext& context) {
  elementwise<FloatTypes>(context, [](auto x) {
    using T = decltype(x);
    const T threshold = std::log(std::numeric_limits<T>::epsilon()) + T(2);
    if (x > -threshold) return x;
    if (x < threshold) return std::exp(x);
    return std::log1p(std::exp(x));
  });
}

REGISTER_KERNEL(Kernel("Relu6")
                    .input("features", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .shape(same_as_input(0))
                    .compute(compute_relu6));
REGISTER_KERNEL(Kernel("Elu")
                    .input("features", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(FloatTypes{}))
                    .shape(same_as_input(0))
                    .compute(compute_elu));
REGISTER_KERNEL(Kernel("LeakyRelu")
                    .input("features", "T")
                    .output("T")
                    .float_attr("alpha", 0.2f)
                    .type_attr("T", dtypes_of(FloatTypes{}), graphdef::DT_FLOAT)
                    .shape(same_as_input(0))
                    .compute(compute_leaky_relu));
REGISTER_KERNEL(Kernel("Softplus")
                    .input("features", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(FloatTypes{}))
                    .shape(same_as_input(0))
                    .compute(compute_softplus));
REGISTER_KERNEL(Kernel("Softsign")
                    .input("features", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(FloatTypes{}))
                    .shape(same_as_input(0))
                    .compute(compute_softsign));

}  // namespace
}  // namespace graphrun
