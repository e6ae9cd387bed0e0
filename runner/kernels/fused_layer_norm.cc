// _FusedLayerNorm (internal: only the fuse_layer_norm pass writes it): layer
// normalization over the last axis of float32 x, each row in one visit
// while it is in cache, where the unfused graph made some ten passes over
// the whole tensor.
//
// Inputs: x, and gamma and beta of shape [1, ..., 1, C]. Attr: epsilon. Per
// row of x's last dim (n elements), with the graph's own operations in its
// order, so that only the sums can round differently:
//
//   mean = sum(x) / n                     Mean
//   var  = sum((x - mean)^2) / n          SquaredDifference, Mean
//   rs   = 1 / sqrt(var + epsilon)        AddV2, Rsqrt
//   inv  = rs * gamma                     Mul
//   out  = x * inv + (beta - mean * inv)  Mul, Mul, Sub (or Neg, Mul, AddV2), AddV2
//
// The sums are numpy's pairwise ones (kernels/lib/pairwise_sum.h), as the
// Python runtime's Mean takes them; the Mean kernel adds left to right.
// Either is within Mean's tolerance of the exact sum.
//
// The output is x, gamma and beta broadcast together, as the unfused ops'
// was: the pass seldom knows x's shape, so an n or C of 1 facing a larger
// one (a degenerate layer norm, but a valid graph) is broadcast here too.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/lib/broadcast.h"
#include "kernels/lib/pairwise_sum.h"
#include "kernels/lib/vec4.h"

namespace graphrun {
namespace {

struct Epsilon {
  float value;
};

struct Row {
  float mean, rs;
};

// The row's mean and 1 / sqrt(variance + epsilon), for n > 0 elements;
// `squares` holds n floats of scratch.
Row row_statistics(const float* x, int64_t n, float epsilon, float* squares) {
  const float mean = numpy_sum(x, n) / static_cast<float>(n);
  const F32x4 mean4 = {mean, mean, mean, mean};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const F32x4 d = load4(x + i) - mean4;
    store4(squares + i, d * d);
  }
  for (; i < n; ++i) {
    const float d = x[i] - mean;
    squares[i] = d * d;
  }
  const float variance = numpy_sum(squares, n) / static_cast<float>(n);
  return {mean, 1.0f / std::sqrt(variance + epsilon)};
}

// out = x * inv + (beta - mean * inv), inv = rs * gamma, for n elements each.
void normalize_row(const float* x, const float* gamma, const float* beta, Row row, int64_t n, float* out) {
  const F32x4 mean4 = {row.mean, row.mean, row.mean, row.mean}, rs4 = {row.rs, row.rs, row.rs, row.rs};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const F32x4 inv = rs4 * load4(gamma + i);
    store4(out + i, load4(x + i) * inv + (load4(beta + i) - mean4 * inv));
  }
  for (; i < n; ++i) {
    const float inv = row.rs * gamma[i];
    out[i] = x[i] * inv + (beta[i] - row.mean * inv);
  }
}

// The same where x's row, gamma or beta has one element facing `width`.
void normalize_row_broadcast(const float* x, int64_t n, const float* gamma, int64_t gamma_n, const float* beta,
                             int64_t beta_n, Row row, int64_t width, float* out) {
  for (int64_t i = 0; i < width; ++i) {
    const float inv = row.rs * gamma[gamma_n == 1 ? 0 : i];
    out[i] = x[n == 1 ? 0 : i] * inv + (beta[beta_n == 1 ? 0 : i] - row.mean * inv);
  }
}

void compute_fused_layer_norm(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& gamma = context.input(1);
  const Tensor& beta = context.input(2);
  if (x.rank() < 1) throw Error("x must have at least one dim, got " + shape_string(x.shape()));
  for (const Tensor* t : {&gamma, &beta}) {
    const Shape& s = t->shape();
    if (!s.empty() && !std::all_of(s.begin(), s.end() - 1, [](int64_t d) { return d == 1; })) {
      throw Error("gamma and beta must have the shape [1, ..., 1, C], got " + shape_string(s));
    }
  }
  const Shape out_shape = plan_broadcast(plan_broadcast(x.shape(), gamma.shape()).out, beta.shape()).out;
  Tensor out = Tensor::uninitialized(graphdef::DT_FLOAT, out_shape);
  const int64_t n = x.shape().back(), width = out_shape.back();
  const int64_t gamma_n = gamma.num_elements(), beta_n = beta.num_elements();
  const float epsilon = context.state<Epsilon>().value;
  const int64_t rows = n ? x.num_elements() / n : 0;
  const bool plain = gamma_n == n && beta_n == n;  // then width == n
  const float* in = x.data<float>();
  const float* g = gamma.data<float>();
  const float* b = beta.data<float>();
  float* result = out.data<float>();
  parallel_for(rows, static_cast<double>(rows) * static_cast<double>(n + width) * 4.0, [&](int64_t begin, int64_t end) {
    std::vector<float> squares(static_cast<std::size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      const Row row = row_statistics(in + r * n, n, epsilon, squares.data());
      if (plain) normalize_row(in + r * n, g, b, row, n, result + r * n);
      else normalize_row_broadcast(in + r * n, n, g, gamma_n, b, beta_n, row, width, result + r * width);
    }
  });
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("_FusedLayerNorm")
                    .input("x", "T")
                    .input("gamma", "T")
                    .input("beta", "T")
                    .output("T")
                    .type_attr("T", {graphdef::DT_FLOAT})
                    .float_attr("epsilon", 0.001f)
                    .internal()
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) -> std::any {
                      return Epsilon{kernel.get_float(node, "epsilon")};
                    })
                    .shape(broadcast_inputs())
                    .compute(compute_fused_layer_norm));

}  // namespace
}  // namespace graphrun
