// Sum, Mean, Max, Min and Prod (and Any, All for bools) over the axes given by the second input.
//
// Each output element accumulates its inputs one by one in row-major order,
// so results do not depend on a summation tree. Sum, Prod and float Mean
// accumulate in the element type (int Sum and Prod wrap, as AddV2 and Mul
// do). Integer Mean sums in
// 64 bits, as TensorFlow does (mean(250, 10) in uint8 is 130, not 2), then
// divides by the count, truncating toward zero.
#include <limits>

#include "kernels/lib/broadcast.h"
#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/index_input.h"
#include "kernels/lib/min_max.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

// Where each input element lands in the output.
struct ReductionPlan {
  Shape out_shape;                   // with keep_dims applied
  std::vector<int64_t> out_strides;  // per input dim; 0 for reduced dims
  int64_t count = 1;                 // input elements per output element
};

ReductionPlan plan_reduction(const Shape& in, const std::vector<int>& axes, bool keep_dims) {
  const int rank = static_cast<int>(in.size());
  std::vector<char> reduced(rank, 0);
  for (int axis : axes) reduced[axis] = 1;
  ReductionPlan plan;
  Shape kept;  // the output's dims without the kept 1s
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      plan.count *= in[d];
      if (keep_dims) plan.out_shape.push_back(1);
    } else {
      kept.push_back(in[d]);
      plan.out_shape.push_back(in[d]);
    }
  }
  const std::vector<int64_t> kept_strides = row_major_strides(kept);
  plan.out_strides.assign(rank, 0);
  for (int d = 0, k = 0; d < rank; ++d) {
    if (!reduced[d]) plan.out_strides[d] = kept_strides[k++];
  }
  return plan;
}

// Calls combine(out[j], in[i]) for every input element i, in row-major order.
// The innermost dim is walked as one run (a kept one adds a row of inputs
// to a row of outputs, which vectorizes: a global average pool's channels),
// the odometer steps only over the outer dims; each output still takes its
// inputs in the same order.
template <class T, class Acc, class Combine>
void accumulate(const Tensor& input, const ReductionPlan& plan, Acc* out, Combine combine) {
  const int rank = static_cast<int>(input.rank());
  const T* in = input.data<T>();
  const int64_t total = input.num_elements();
  if (rank == 0) {
    if (total > 0) combine(out[0], in[0]);
    return;
  }
  if (total == 0) return;
  const Shape& shape = input.shape();
  const int64_t inner = shape[rank - 1];
  const bool inner_kept = plan.out_strides[rank - 1] != 0;  // then its stride is 1
  std::vector<int64_t> index(rank, 0);
  int64_t out_offset = 0;
  for (int64_t i = 0; i < total; i += inner) {
    Acc* o = out + out_offset;
    const T* x = in + i;
    if (inner_kept) {
      for (int64_t k = 0; k < inner; ++k) combine(o[k], x[k]);
    } else {
      for (int64_t k = 0; k < inner; ++k) combine(o[0], x[k]);
    }
    for (int d = rank - 2; d >= 0; --d) {
      out_offset += plan.out_strides[d];
      if (++index[d] < shape[d]) break;
      out_offset -= plan.out_strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

enum class Reduction { kSum, kMean, kMax, kMin, kProd };

template <class T>
T max_identity() {
  // The max of nothing: -inf for floats (as TensorFlow), the lowest value for ints.
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}

template <class T>
T min_identity() {
  // The min of nothing: +inf for floats, the highest value for ints.
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::max();
}

// 64-bit accumulators for integer Mean: wide enough that realistic sums of
// narrower types never wrap.
template <class T>
using WideInt = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;

template <class T>
void integer_mean(const Tensor& input, const ReductionPlan& plan, T* out, int64_t size) {
  using Wide = WideInt<T>;
  if (plan.count == 0 && size > 0) {
    throw Error("the mean of an empty integer reduction is undefined (input shape " + shape_string(input.shape()) +
                ")");
  }
  std::vector<Wide> sums(static_cast<std::size_t>(size), 0);
  accumulate<T>(input, plan, sums.data(), [](Wide& acc, T x) { acc = add<Wide>(acc, static_cast<Wide>(x)); });
  for (int64_t j = 0; j < size; ++j) out[j] = static_cast<T>(sums[j] / static_cast<Wide>(plan.count));
}

struct KeepDims {
  bool keep = false;
};

template <Reduction kind>
void compute_reduction(KernelContext& context) {
  const Tensor& input = context.input(0);
  const std::vector<int> axes =
      normalize_axes(read_index_vector(context.input(1), "reduction_indices", true), input.rank());
  const ReductionPlan plan = plan_reduction(input.shape(), axes, context.state<KeepDims>().keep);
  dispatch(NumericTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor output(input.dtype(), plan.out_shape);
    T* out = output.data<T>();
    const int64_t size = output.num_elements();
    if constexpr (kind == Reduction::kMax) {
      for (int64_t j = 0; j < size; ++j) out[j] = max_identity<T>();
      accumulate<T>(input, plan, out, [](T& acc, T x) { acc = maximum(acc, x); });
    } else if constexpr (kind == Reduction::kMin) {
      for (int64_t j = 0; j < size; ++j) out[j] = min_identity<T>();
      accumulate<T>(input, plan, out, [](T& acc, T x) { acc = minimum(acc, x); });
    } else if constexpr (kind == Reduction::kProd) {
      // The product of nothing is 1, as in numpy and TensorFlow.
      for (int64_t j = 0; j < size; ++j) out[j] = T(1);
      accumulate<T>(input, plan, out, [](T& acc, T x) { acc = mul(acc, x); });
    } else if constexpr (kind == Reduction::kMean && std::is_integral_v<T>) {
      integer_mean<T>(input, plan, out, size);
    } else {
      accumulate<T>(input, plan, out, [](T& acc, T x) { acc = add(acc, x); });
      if constexpr (kind == Reduction::kMean) {
        // 0 / 0 gives nan for an empty reduction, as in numpy and TensorFlow.
        for (int64_t j = 0; j < size; ++j) out[j] = out[j] / static_cast<T>(plan.count);
      }
    }
    context.set_output(0, std::move(output));
  });
}

// The input's dims less the constant axes (kept as 1 with keep_dims).
void reduction_shape(ShapeContext& context) {
  std::vector<int64_t> axes;
  const StaticShape in = context.input(0);
  if (!in.known_rank || !context.const_ints(1, axes)) return;
  const bool keep = context.attr("keep_dims").b();
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::vector<char> reduced(rank, 0);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) return;
    reduced[axis < 0 ? axis + rank : axis] = 1;
  }
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) out.push_back(in.dims[d]);
    else if (keep) out.push_back(1);
  }
  context.set_output(0, known_shape(out));
}

template <Reduction kind>
Kernel reduction_kernel(const char* op) {
  return Kernel(op)
      .input("input", "T")
      .input("reduction_indices", "Tidx")
      .output("T")
      .type_attr("T", dtypes_of(NumericTypes{}))
      .type_attr("Tidx", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
      .bool_attr("keep_dims", false)
      .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
        return KeepDims{kernel.get_bool(node, "keep_dims")};
      })
      .shape(reduction_shape)
      .compute(compute_reduction<kind>);
}

// Any and All: or / and over the axes of a bool tensor; the empty reduction
// gives false and true, as in numpy and TensorFlow.
template <bool kAll>
void compute_logical(KernelContext& context) {
  const Tensor& input = context.input(0);
  const std::vector<int> axes =
      normalize_axes(read_index_vector(context.input(1), "reduction_indices", true), input.rank());
  const ReductionPlan plan = plan_reduction(input.shape(), axes, context.state<KeepDims>().keep);
  Tensor output(graphdef::DT_BOOL, plan.out_shape);
  bool* out = output.data<bool>();
  for (int64_t j = 0; j < output.num_elements(); ++j) out[j] = kAll;
  accumulate<bool>(input, plan, out, [](bool& acc, bool x) { acc = kAll ? (acc && x) : (acc || x); });
  context.set_output(0, std::move(output));
}

template <bool kAll>
Kernel logical_reduction_kernel(const char* op) {
  return Kernel(op)
      .input("input", graphdef::DT_BOOL)
      .input("reduction_indices", "Tidx")
      .output(graphdef::DT_BOOL)
      .type_attr("Tidx", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
      .bool_attr("keep_dims", false)
      .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
        return KeepDims{kernel.get_bool(node, "keep_dims")};
      })
      .shape(reduction_shape)
      .compute(compute_logical<kAll>);
}

REGISTER_KERNEL(logical_reduction_kernel<false>("Any"));
REGISTER_KERNEL(logical_reduction_kernel<true>("All"));
REGISTER_KERNEL(reduction_kernel<Reduction::kSum>("Sum"));
REGISTER_KERNEL(reduction_kernel<Reduction::kMean>("Mean"));
REGISTER_KERNEL(reduction_kernel<Reduction::kMax>("Max"));
REGISTER_KERNEL(reduction_kernel<Reduction::kMin>("Min"));
REGISTER_KERNEL(reduction_kernel<Reduction::kProd>("Prod"));

}  // namespace
}  // namespace graphrun
