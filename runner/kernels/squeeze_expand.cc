// Squeeze and ExpandDims: the same elements under a shape with size-1 dims
// removed or one inserted.
#include <algorithm>
#include <set>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

void compute_squeeze(KernelContext& context) {
  const Tensor& input = context.input(0);
  const Shape& shape = input.shape();
  const std::vector<int64_t>& listed = context.state<std::vector<int64_t>>();
  std::set<int64_t> axes;
  for (int64_t axis : listed) axes.insert(normalize_axis(axis, input.rank(), "squeeze dim"));
  if (listed.empty()) {
    for (int64_t d = 0; d < input.rank(); ++d) {
      if (shape[d] == 1) axes.insert(d);
    }
  }
  Shape out;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!axes.count(d)) {
      out.push_back(shape[d]);
    } else if (shape[d] != 1) {
      throw Error("cannot squeeze dim " + std::to_string(d) + " of shape " + shape_string(shape) + ": it is not 1");
    }
  }
  context.set_output(0, input.reshaped(std::move(out)));
}

void compute_expand_dims(KernelContext& context) {
  const Tensor& input = context.input(0);
  const Tensor& dim = context.input(1);
  if (dim.num_elements() != 1) {
    throw Error("dim must be a single axis, got shape " + shape_string(dim.shape()));
  }
  const int64_t axis = normalize_axis(read_scalar_int(dim, "dim"), input.rank() + 1, "dim");
  Shape out = input.shape();
  out.insert(out.begin() + axis, 1);
  context.set_output(0, input.reshaped(std::move(out)));
}

// graphrun's rules: without squeeze_dims an unknown dim might be 1, so the
// rank is unknown; a listed dim known to be other than 1 is refused at run time.
void squeeze_shape(ShapeContext& context) {
  const StaticShape in = context.input(0);
  if (!in.known_rank) return;
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::vector<char> drop(rank, 0);
  const auto& listed = context.attr("squeeze_dims").list().i();
  if (listed.empty()) {
    for (int64_t d = 0; d < rank; ++d) {
      if (in.dims[d] < 0) return;
      drop[d] = in.dims[d] == 1;
    }
  }
  for (int64_t axis : listed) {
    if (axis < -rank || axis >= rank) return;
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (in.dims[a] > 1 || in.dims[a] == 0) return;
    drop[a] = 1;
  }
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!drop[d]) out.push_back(in.dims[d]);
  }
  context.set_output(0, known_shape(out));
}

// A size-1 dim inserted at the constant `dim` (else only the rank is known).
void expand_dims_shape(ShapeContext& context) {
  const StaticShape in = context.input(0);
  if (!in.known_rank || in.dims.size() >= static_cast<std::size_t>(kMaxStaticRank)) return;
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::vector<int64_t> dim;
  if (!context.const_ints(1, dim)) {
    context.set_output(0, known_shape(std::vector<int64_t>(rank + 1, -1)));
    return;
  }
  if (dim.size() != 1 || dim[0] < -rank - 1 || dim[0] > rank) return;
  const int64_t at = dim[0] < 0 ? dim[0] + rank + 1 : dim[0];
  std::vector<int64_t> out = in.dims;
  out.insert(out.begin() + at, 1);
  context.set_output(0, known_shape(out));
}

REGISTER_KERNEL(Kernel("Squeeze")
                    .input("input", "T")
                    .output("T")
                    .type_attr("T", dtypes_and_string())
                    .int_list_attr("squeeze_dims", {})
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      return kernel.get_int_list(node, "squeeze_dims");
                    })
                    .shape(squeeze_shape)
                    .compute(compute_squeeze));

REGISTER_KERNEL(Kernel("ExpandDims")
                    .input("input", "T")
                    .input("dim", "Tdim")
                    .output("T")
                    .type_attr("T", dtypes_and_string())
                    .type_attr("Tdim", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .shape(expand_dims_shape)
                    .compute(compute_expand_dims));

}  // namespace
}  // namespace graphrun
