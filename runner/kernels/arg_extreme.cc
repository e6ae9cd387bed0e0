// ArgMax and ArgMin: the index of the largest (smallest) value along one axis.
//
// The first index wins ties, and a NaN counts as more extreme than any number
// (the first NaN wins), as in numpy's argmax and argmin, which Python's kernels
// are. An empty axis has no answer and is an error.
#include <cmath>
#include <limits>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/index_input.h"

namespace graphrun {
namespace {

template <bool kMax, class T>
bool beats(T candidate, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(best)) return false;
    if (std::isnan(candidate)) return true;
  }
  return kMax ? candidate > best : candidate < best;
}

template <bool kMax>
void compute_arg_extreme(KernelContext& context) {
  const Tensor& input = context.input(0);
  const std::vector<int64_t> dimension = read_index_vector(context.input(1), "dimension", true);
  if (dimension.size() != 1) {
    throw Error("dimension must hold one axis, got " + std::to_string(dimension.size()));
  }
  if (input.rank() == 0) throw Error("the input must have at least one dim, got shape []");
  const int axis = normalize_axes(dimension, input.rank())[0];
  const Shape& shape = input.shape();
  const int64_t length = shape[axis];
  const char* op = kMax ? "ArgMax" : "ArgMin";
  if (length == 0) {
    throw Error(std::string("cannot take ") + op + " along axis " + std::to_string(axis) +
                ", which is empty in shape " + shape_string(shape));
  }
  Shape out_shape;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
    if (d != axis) out_shape.push_back(shape[d]);
  }
  const DataType out_type = context.attr_type("output_type");
  if (out_type == graphdef::DT_INT32 && length - 1 > std::numeric_limits<int32_t>::max()) {
    throw Error("axis " + std::to_string(axis) + " has " + std::to_string(length) +
                " elements, more than an int32 index can count; use output_type int64");
  }
  Tensor output(out_type, out_shape);
  dispatch(AllTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.data<T>();
    dispatch(IndexTypes{}, out_type, [&](auto index_tag) {
      using I = typename decltype(index_tag)::type;
      I* out = output.data<I>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T* row = x + o * length * inner + i;  // elements `inner` apart
          int64_t best = 0;
          for (int64_t k = 1; k < length; ++k) {
            if (beats<kMax>(row[k * inner], row[best * inner])) best = k;
          }
          out[o * inner + i] = static_cast<I>(best);
        }
      }
    });
  });
  context.set_output(0, std::move(output));
}

// The input less the constant axis (else only the rank is known).
void arg_shape(ShapeContext& context) {
  const StaticShape in = context.input(0);
  if (!in.known_rank || in.dims.empty()) return;
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::vector<int64_t> axis;
  if (!context.const_ints(1, axis)) {
    context.set_output(0, known_shape(std::vector<int64_t>(rank - 1, -1)));
    return;
  }
  if (axis.size() != 1 || axis[0] < -rank || axis[0] >= rank) return;
  std::vector<int64_t> out = in.dims;
  out.erase(out.begin() + (axis[0] < 0 ? axis[0] + rank : axis[0]));
  context.set_output(0, known_shape(out));
}

template <bool kMax>
Kernel arg_kernel(const char* op) {
  return Kernel(op)
      .input("input", "T")
      .input("dimension", "Tidx")
      .output("output_type")
      .type_attr("T", dtypes_of(AllTypes{}))
      .type_attr("Tidx", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
      .type_attr("output_type", dtypes_of(IndexTypes{}), graphdef::DT_INT64)
      .shape(arg_shape)
      .compute(compute_arg_extreme<kMax>);
}

REGISTER_KERNEL(arg_kernel<true>("ArgMax"));
REGISTER_KERNEL(arg_kernel<false>("ArgMin"));

}  // namespace
}  // namespace graphrun
