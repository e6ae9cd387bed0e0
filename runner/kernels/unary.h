// The elementwise one-input kernel every unary op family shares: an Op struct
// gives `Types` (the dtypes it takes) and `apply(x)`; unary_kernel<Op>("Name")
// declares it with its shape rule. An op with a faster whole-buffer form for
// one dtype specializes UnaryBlock (Relu's float32 does).
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {

// parallel_for's work per element. Elementwise ops are bound by memory, so
// a second core pays off only for large tensors (about 200K elements).
constexpr double kUnaryWork = 1.0;

template <class Op, class T>
struct UnaryBlock {
  static constexpr bool kHas = false;
  static void run(const T*, int64_t, T*) {}
};

template <class Op>
void compute_unary(KernelContext& context) {
  const Tensor& x = context.input(0);
  dispatch(typename Op::Types{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Element i is read before it is written, so the result may take the
    // input's place when nothing else holds the input.
    Tensor* reused = context.reusable_input(0);
    Tensor fresh = reused ? Tensor(x.dtype(), {0}) : Tensor::uninitialized(x.dtype(), x.shape());
    const T* in = x.data<T>();
    T* result = reused ? reused->data<T>() : fresh.data<T>();
    // Large tensors are split over the cores; each share is a contiguous block.
    parallel_for(x.num_elements(), static_cast<double>(x.num_elements()) * kUnaryWork, [&](int64_t begin, int64_t end) {
      if constexpr (UnaryBlock<Op, T>::kHas) {
        UnaryBlock<Op, T>::run(in + begin, end - begin, result + begin);
      } else {
        for (int64_t i = begin; i < end; ++i) result[i] = Op::apply(in[i]);
      }
    });
    if (reused) context.set_output(0, context.input_ptr(0));
    else context.set_output(0, std::move(fresh));
  });
}

template <class Op>
Kernel unary_kernel(const char* op, const char* input = "x") {
  return Kernel(op)
      .input(input, "T")
      .output("T")
      .type_attr("T", dtypes_of(typename Op::Types{}))
      .shape(same_as_input(0))
      .compute(compute_unary<Op>);
}

}  // namespace graphrun
