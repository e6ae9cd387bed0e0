// SoftmaxCrossEntropyWithLogits and its sparse twin: per row of [batch,
// classes] logits, the loss -sum(labels * log_softmax) and its gradient with
// respect to the logits, softmax - labels (the op's second output, which the
// gradient graph reuses).
#include <string>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/softmax_rows.h"

namespace graphrun {
namespace {

void check_logits(const Tensor& features) {
  if (features.rank() != 2) {
    throw Error("logits must be [batch, classes], got shape " + shape_string(features.shape()));
  }
}

void compute_dense(KernelContext& context) {
  const Tensor& features = context.input(0);
  const Tensor& labels = context.input(1);
  check_logits(features);
  if (labels.shape() != features.shape()) {
    throw Error("logits " + shape_string(features.shape()) + " and labels " + shape_string(labels.shape()) +
                " must have the same shape");
  }
  const int64_t batch = features.shape()[0];
  const int64_t classes = features.shape()[1];
  dispatch(FloatTypes{}, features.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor loss(features.dtype(), {batch});
    Tensor backprop(features.dtype(), features.shape());
    const T* x = features.data<T>();
    const T* p = labels.data<T>();
    T* l = loss.data<T>();
    T* b = backprop.data<T>();
    std::vector<T> scratch, products(static_cast<std::size_t>(classes));
    for (int64_t r = 0; r < batch; ++r) {
      const int64_t at = r * classes;
      log_softmax_row(x + at, classes, b + at, scratch);  // log_p, for now
      for (int64_t c = 0; c < classes; ++c) products[c] = p[at + c] * b[at + c];
      l[r] = -numpy_sum(products.data(), classes);
      for (int64_t c = 0; c < classes; ++c) b[at + c] = std::exp(b[at + c]) - p[at + c];
    }
    context.set_output(0, std::move(loss));
    context.set_output(1, std::move(backprop));
  });
}

template <class L>
std::vector<int64_t> read_labels(const Tensor& labels, int64_t classes) {
  const L* values = labels.data<L>();
  std::vector<int64_t> out(static_cast<std::size_t>(labels.num_elements()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<int64_t>(values[i]);
    if (out[i] < 0 || out[i] >= classes) {
      throw Error("label " + std::to_string(out[i]) + " (row " + std::to_string(i) + ") is outside [0, " +
                  std::to_string(classes) + ")");
    }
  }
  return out;
}

void compute_sparse(KernelContext& context) {
  const Tensor& features = context.input(0);
  const Tensor& labels = context.input(1);
  check_logits(features);
  const int64_t batch = features.shape()[0];
  const int64_t classes = features.shape()[1];
  if (labels.rank() != 1 || labels.shape()[0] != batch) {
    throw Error("labels " + shape_string(labels.shape()) + " must be [batch] for logits " +
                shape_string(features.shape()));
  }
  std::vector<int64_t> index;
  dispatch(IndexTypes{}, labels.dtype(),
           [&](auto tag) { index = read_labels<typename decltype(tag)::type>(labels, classes); });
  dispatch(FloatTypes{}, features.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor loss(features.dtype(), {batch});
    Tensor backprop(features.dtype(), features.shape());
    const T* x = features.data<T>();
    T* l = loss.data<T>();
    T* b = backprop.data<T>();
    std::vector<T> scratch;
    for (int64_t r = 0; r < batch; ++r) {
      const int64_t at = r * classes;
      log_softmax_row(x + at, classes, b + at, scratch);
      l[r] = -b[at + index[r]];
      for (int64_t c = 0; c < classes; ++c) b[at + c] = std::exp(b[at + c]);
      b[at + index[r]] = b[at + index[r]] - T(1);
    }
    context.set_output(0, std::move(loss));
    context.set_output(1, std::move(backprop));
  });
}

// loss [batch] and backprop [batch, classes], from logits (and, dense, the
// labels merged in: they must have the logits' shape).
template <bool kSparse>
void cross_entropy_shape(ShapeContext& context) {
  StaticShape features = context.input(0);
  const StaticShape labels = context.input(1);
  if (features.known_rank && features.dims.size() != 2) return;
  if (!kSparse) {
    if (!features.known_rank) {
      features = labels;
    } else if (labels.known_rank) {
      if (labels.dims.size() != 2) return;
      for (std::size_t i = 0; i < 2; ++i) {
        if (features.dims[i] >= 0 && labels.dims[i] >= 0 && features.dims[i] != labels.dims[i]) return;
        if (features.dims[i] < 0) features.dims[i] = labels.dims[i];
      }
    }
    if (features.known_rank && features.dims.size() != 2) return;
  } else if (labels.known_rank &&
             (labels.dims.size() != 1 || (features.known_rank && features.dims[0] >= 0 && labels.dims[0] >= 0 &&
                                          features.dims[0] != labels.dims[0]))) {
    return;
  }
  context.set_output(0, known_shape({features.known_rank ? features.dims[0] : -1}));
  context.set_output(1, features.known_rank ? features : known_shape({-1, -1}));
}

REGISTER_KERNEL(Kernel("SoftmaxCrossEntropyWithLogits")
                    .input("features", "T")
                    .input("labels", "T")
                    .output("T")
                    .output("T")
                    .output_names({"loss", "backprop"})
                    .type_attr("T", dtypes_of(FloatTypes{}))
                    .shape(cross_entropy_shape<false>)
                    .compute(compute_dense));

REGISTER_KERNEL(Kernel("SparseSoftmaxCrossEntropyWithLogits")
                    .input("features", "T")
                    .input("labels", "Tlabels")
                    .output("T")
                    .output("T")
                    .output_names({"loss", "backprop"})
                    .type_attr("T", dtypes_of(FloatTypes{}))
                    .type_attr("Tlabels", dtypes_of(IndexTypes{}), graphdef::DT_INT64)
                    .shape(cross_entropy_shape<true>)
                    .compute(compute_sparse));

}  // namespace
}  // namespace graphrun
