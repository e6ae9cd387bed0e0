// Ops along one axis that keep it: Cumsum and Cumprod (running sums and
// products, added in order from one end; integers wrap), and TopKV2 (the k
// largest of each last-axis row, largest first, ties by lower index first as
// TF; NaN counts as the largest, as numpy sorts it), and InTopKV2 (whether
// each row's target scores among its k highest).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

using SmallIndexTypes = TypeList<int16_t, int32_t, int64_t>;

template <bool kProduct>
void compute_scan(KernelContext& context) {
  const Tensor& x = context.input(0);
  if (x.rank() == 0) throw Error("cannot scan a scalar; it needs at least one dim");
  if (context.input(1).rank() != 0)
    throw Error("axis must be a scalar, got shape " + shape_string(context.input(1).shape()));
  const int64_t axis = normalize_axis(read_scalar_int(context.input(1), "axis"), x.rank());
  const bool exclusive = context.attr_bool("exclusive");
  const bool reverse = context.attr_bool("reverse");
  const AxisView view = axis_view(x.shape(), axis);
  Tensor out = Tensor::uninitialized(x.dtype(), x.shape());
  dispatch(NumericTypes{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* result = out.data<T>();
    for (int64_t o = 0; o < view.outer; ++o) {
      for (int64_t i = 0; i < view.inner; ++i) {
        T acc = kProduct ? T(1) : T(0);
        for (int64_t step = 0; step < view.dim; ++step) {
          const int64_t d = reverse ? view.dim - 1 - step : step;
          const int64_t at = (o * view.dim + d) * view.inner + i;
          if (exclusive) result[at] = acc;
          acc = kProduct ? mul(acc, in[at]) : add(acc, in[at]);
          if (!exclusive) result[at] = acc;
        }
      }
    }
  });
  context.set_output(0, std::move(out));
}

template <bool kProduct>
Kernel scan_kernel(const char* op) {
  return Kernel(op)
      .input("x", "T")
      .input("axis", "Tidx")
      .output("T")
      .bool_attr("exclusive", false)
      .bool_attr("reverse", false)
      .type_attr("T", dtypes_of(NumericTypes{}))
      .type_attr("Tidx", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
      .shape(same_as_input(0))
      .compute(compute_scan<kProduct>);
}

REGISTER_KERNEL(scan_kernel<false>("Cumsum"));
REGISTER_KERNEL(scan_kernel<true>("Cumprod"));

template <class T>
bool ranks_above(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
  }
  return a > b;
}

void compute_top_k(KernelContext& context) {
  const Tensor& x = context.input(0);
  if (x.rank() == 0) throw Error("TopKV2 needs an input of at least one dim");
  if (context.input(1).rank() != 0)
    throw Error("k must be a scalar, got shape " + shape_string(context.input(1).shape()));
  const int64_t k = read_scalar_int(context.input(1), "k");
  const int64_t n = x.shape().back();
  if (k < 0 || k > n) {
    throw Error("k " + std::to_string(k) + " must be in [0, " + std::to_string(n) + "], the input's last dim (shape " +
                shape_string(x.shape()) + ")");
  }
  Shape out_shape = x.shape();
  out_shape.back() = k;
  Tensor values = Tensor::uninitialized(x.dtype(), out_shape);
  Tensor indices = Tensor::uninitialized(context.attr_type("index_type"), out_shape);
  const int64_t rows = n == 0 ? 0 : x.num_elements() / n;
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  dispatch(NumericTypes{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* top = values.data<T>();
    dispatch(SmallIndexTypes{}, indices.dtype(), [&](auto index_tag) {
      using I = typename decltype(index_tag)::type;
      I* where = indices.data<I>();
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = in + r * n;
        std::iota(order.begin(), order.end(), int64_t{0});
        // stable: equal values keep their index order, so the lower index comes first
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ranks_above(row[a], row[b]); });
        for (int64_t j = 0; j < k; ++j) {
          top[r * k + j] = row[order[j]];
          where[r * k + j] = static_cast<I>(order[j]);
        }
      }
    });
  });
  context.set_output(0, std::move(values));
  context.set_output(1, std::move(indices));
}

// Values and indices: the input's last dim becomes k (unknown unless constant).
void top_k_shape(ShapeContext& context) {
  const StaticShape x = context.input(0), k_shape = context.input(1);
  if ((k_shape.known_rank && !k_shape.dims.empty()) || (x.known_rank && x.dims.empty())) return;
  std::vector<int64_t> k_value;
  int64_t k = -1;
  if (context.const_ints(1, k_value) && k_value.size() == 1) {
    k = k_value[0];
    const int64_t n = x.known_rank ? x.dims.back() : -1;
    if (k < 0 || (n >= 0 && k > n)) return;
  }
  if (!x.known_rank) return;
  std::vector<int64_t> out = x.dims;
  out.back() = k;
  context.set_output(0, known_shape(out));
  context.set_output(1, known_shape(out));
}

REGISTER_KERNEL(Kernel("TopKV2")
                    .input("input", "T")
                    .input("k", "Tk")
                    .output("T")
                    .output("index_type")
                    .bool_attr("sorted", true)
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .type_attr("Tk", dtypes_of(SmallIndexTypes{}), graphdef::DT_INT32)
                    .type_attr("index_type", dtypes_of(SmallIndexTypes{}), graphdef::DT_INT32)
                    .output_names({"values", "indices"})
                    .shape(top_k_shape)
                    .compute(compute_top_k));

// A tie with the target counts for it (fewer than k scores strictly above
// it); a target out of range, or a row with a non-finite score, is false.
void compute_in_top_k(KernelContext& context) {
  const Tensor& predictions = context.input(0);
  const Tensor& targets = context.input(1);
  if (predictions.rank() != 2)
    throw Error("predictions must be 2-dimensional, got shape " + shape_string(predictions.shape()));
  if (targets.rank() != 1) throw Error("targets must be 1-dimensional, got shape " + shape_string(targets.shape()));
  const int64_t rows = predictions.shape()[0], classes = predictions.shape()[1];
  if (targets.shape()[0] != rows) {
    throw Error("First dimension of predictions " + std::to_string(rows) + " must match length of targets " +
                std::to_string(targets.shape()[0]));
  }
  if (context.input(2).rank() != 0)
    throw Error("k must be a scalar, got shape " + shape_string(context.input(2).shape()));
  const int64_t k = read_scalar_int(context.input(2), "k");
  Tensor out(graphdef::DT_BOOL, {rows});
  bool* result = out.data<bool>();
  const float* scores = predictions.data<float>();
  dispatch(IndexTypes{}, targets.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* target = targets.data<I>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = scores + r * classes;
      const int64_t t = static_cast<int64_t>(target[r]);
      bool finite = t >= 0 && t < classes;
      for (int64_t c = 0; c < classes && finite; ++c) finite = std::isfinite(row[c]);
      int64_t above = 0;
      if (finite) {
        for (int64_t c = 0; c < classes; ++c) above += row[c] > row[t] ? 1 : 0;
      }
      result[r] = finite && above < k;
    }
  });
  context.set_output(0, std::move(out));
}

void in_top_k_shape(ShapeContext& context) {
  const StaticShape predictions = context.input(0), targets = context.input(1);
  int64_t rows = predictions.known_rank && predictions.dims.size() == 2 ? predictions.dims[0] : -1;
  if (rows < 0 && targets.known_rank && targets.dims.size() == 1) rows = targets.dims[0];
  context.set_output(0, known_shape({rows}));
}

REGISTER_KERNEL(Kernel("InTopKV2")
                    .input("predictions", graphdef::DT_FLOAT)
                    .input("targets", "T")
                    .input("k", "T")
                    .output(graphdef::DT_BOOL)
                    .type_attr("T", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .shape(in_top_k_shape)
                    .compute(compute_in_top_k));

}  // namespace
}  // namespace graphrun
