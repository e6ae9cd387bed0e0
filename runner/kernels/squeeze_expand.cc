// Squeeze and ExpandDims: the same elements under a shape with size-1 dims
// removed or one inserted.
#include <algorithm>
#include <set>

#include "exec/kernel.h"
#include "exec/kernel_context.h"
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

REGISTER_KERNEL(Kernel("Squeeze")
                    .input("input", "T")
                    .output("T")
                    .type_attr("T")
                    .int_list_attr("squeeze_dims", {})
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      return kernel.get_int_list(node, "squeeze_dims");
                    })
                    .compute(compute_squeeze));

REGISTER_KERNEL(Kernel("ExpandDims")
                    .input("input", "T")
                    .input("dim", "Tdim")
                    .output("T")
                    .type_attr("T")
                    .type_attr("Tdim", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .compute(compute_expand_dims));

}  // namespace
}  // namespace graphrun
