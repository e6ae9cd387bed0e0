// OneHot: a new axis of length `depth` holding on_value where its index
// equals the input's value and off_value elsewhere. An index outside
// [0, depth) (e.g. -1) gives an all-off row, as in TensorFlow.
#include <cstring>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

void require_scalar(const Tensor& tensor, const char* what) {
  if (tensor.rank() != 0) {
    throw Error(std::string(what) + " must be a scalar, got shape " + shape_string(tensor.shape()));
  }
}

template <class I>
std::vector<int64_t> read_indices(const Tensor& indices) {
  const I* values = indices.data<I>();
  return std::vector<int64_t>(values, values + indices.num_elements());
}

void compute_one_hot(KernelContext& context) {
  const Tensor& indices = context.input(0);
  const Tensor& depth_tensor = context.input(1);
  const Tensor& on_value = context.input(2);
  const Tensor& off_value = context.input(3);
  require_scalar(depth_tensor, "depth");
  require_scalar(on_value, "on_value");
  require_scalar(off_value, "off_value");
  const int64_t depth = depth_tensor.data<int32_t>()[0];
  if (depth < 0) throw Error("depth must not be negative, got " + std::to_string(depth));
  const int64_t rank = indices.rank();
  const int64_t axis_attr = context.attr_int("axis");
  if (axis_attr < -1 || axis_attr > rank) {
    throw Error("axis " + std::to_string(axis_attr) + " is out of range for indices of rank " + std::to_string(rank));
  }
  const int64_t axis = axis_attr == -1 ? rank : axis_attr;
  Shape out_shape = indices.shape();
  out_shape.insert(out_shape.begin() + axis, depth);
  Tensor output(on_value.dtype(), out_shape);

  std::vector<int64_t> index;
  dispatch(TypeList<uint8_t, int8_t, int32_t, int64_t>{}, indices.dtype(),
           [&](auto tag) { index = read_indices<typename decltype(tag)::type>(indices); });
  // The output is [outer, depth, inner] with outer the dims before `axis`.
  int64_t inner = 1;
  for (int64_t d = axis; d < rank; ++d) inner *= indices.shape()[d];
  const int64_t outer = inner == 0 ? 0 : static_cast<int64_t>(index.size()) / inner;
  const std::size_t item = dtype_size(output.dtype());
  const auto* on = static_cast<const unsigned char*>(on_value.raw_data());
  const auto* off = static_cast<const unsigned char*>(off_value.raw_data());
  auto* out = static_cast<unsigned char*>(output.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < depth; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (o * depth + k) * inner + i;
        std::memcpy(out + at * item, index[o * inner + i] == k ? on : off, item);
      }
    }
  }
  context.set_output(0, std::move(output));
}

// The indices' shape with the depth (a constant, else unknown) inserted at axis.
void one_hot_shape(ShapeContext& context) {
  const StaticShape indices = context.input(0);
  const int64_t axis = context.attr("axis").i();
  const int64_t rank = static_cast<int64_t>(indices.dims.size());
  if (!indices.known_rank || axis < -1 || axis > rank || rank >= kMaxStaticRank) return;
  std::vector<int64_t> depth;
  const int64_t d = context.const_ints(1, depth) && depth.size() == 1 ? depth[0] : -1;
  std::vector<int64_t> out = indices.dims;
  out.insert(out.begin() + (axis == -1 ? rank : axis), d);
  context.set_output(0, known_shape(out));
}

REGISTER_KERNEL(Kernel("OneHot")
                    .input("indices", "TI")
                    .input("depth", graphdef::DT_INT32)
                    .input("on_value", "T")
                    .input("off_value", "T")
                    .output("T")
                    .int_attr("axis", -1, -1)
                    .type_attr("T")
                    .type_attr("TI", {graphdef::DT_UINT8, graphdef::DT_INT8, graphdef::DT_INT32, graphdef::DT_INT64},
                               graphdef::DT_INT64)
                    .shape(one_hot_shape)
                    .compute(compute_one_hot));

}  // namespace
}  // namespace graphrun
