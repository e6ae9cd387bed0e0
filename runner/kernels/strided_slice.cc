// StridedSlice (what tensor[...] builds) and StridedSliceGrad (zeros of the
// input's shape with dy written where StridedSlice reads), both through the
// resolved spec of strided_slice_spec.h.
#include <limits>

#include "kernels/strings_box.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/axis.h"
#include "kernels/strided_box.h"
#include "kernels/strided_slice_spec.h"

namespace graphrun {
namespace {

SliceMasks read_masks(const Kernel& kernel, const graphdef::NodeDef& node) {
  SliceMasks m;
  m.begin = kernel.get_int(node, "begin_mask");
  m.end = kernel.get_int(node, "end_mask");
  m.ellipsis = kernel.get_int(node, "ellipsis_mask");
  m.new_axis = kernel.get_int(node, "new_axis_mask");
  m.shrink_axis = kernel.get_int(node, "shrink_axis_mask");
  return m;
}

std::vector<int64_t> read_vector(const Tensor& t, const char* what) {
  if (t.rank() != 1) throw Error(std::string(what) + " must be a vector, got shape " + shape_string(t.shape()));
  return read_ints(t);
}

ResolvedSlice resolve(const KernelContext& context, const Shape& shape, int first) {
  return resolve_strided_slice(shape, read_vector(context.input(first), "begin"),
                               read_vector(context.input(first + 1), "end"),
                               read_vector(context.input(first + 2), "strides"), context.state<SliceMasks>());
}

void compute_strided_slice(KernelContext& context) {
  const Tensor& input = context.input(0);
  const ResolvedSlice r = resolve(context, input.shape(), 1);
  Tensor out = Tensor::uninitialized(input.dtype(), r.final_shape);
  if (input.is_string()) gather_box_strings(input, r.begin, r.stride, r.box, out);
  else gather_box(input, r.begin, r.stride, r.box, out.raw_data());
  context.set_output(0, std::move(out));
}

void compute_strided_slice_grad(KernelContext& context) {
  const Shape shape = read_vector(context.input(0), "shape");
  const Tensor& dy = context.input(4);
  Tensor out(dy.dtype(), shape);  // zeros; checks the dims
  const ResolvedSlice r = resolve(context, shape, 1);
  if (dy.shape() != r.final_shape) {
    throw Error("dy has shape " + shape_string(dy.shape()) + ", but the slice of " + shape_string(shape) + " is " +
                shape_string(r.final_shape));
  }
  scatter_box(dy.raw_data(), r.begin, r.stride, r.box, out);
  context.set_output(0, std::move(out));
}

Kernel& mask_attrs(Kernel& kernel) {
  constexpr int64_t kAny = std::numeric_limits<int64_t>::min();
  return kernel.int_attr("begin_mask", kAny, 0)
      .int_attr("end_mask", kAny, 0)
      .int_attr("ellipsis_mask", kAny, 0)
      .int_attr("new_axis_mask", kAny, 0)
      .int_attr("shrink_axis_mask", kAny, 0)
      .prepare(read_masks);
}

REGISTER_KERNEL(mask_attrs(Kernel("StridedSlice")
                               .input("input", "T")
                               .input("begin", "Index")
                               .input("end", "Index")
                               .input("strides", "Index")
                               .output("T")
                               .type_attr("T", dtypes_and_string())
                               .type_attr("Index", dtypes_of(IndexTypes{})))
                    .compute(compute_strided_slice));

REGISTER_KERNEL(mask_attrs(Kernel("StridedSliceGrad")
                               .input("shape", "Index")
                               .input("begin", "Index")
                               .input("end", "Index")
                               .input("strides", "Index")
                               .input("dy", "T")
                               .output("T")
                               .type_attr("T")
                               .type_attr("Index", dtypes_of(IndexTypes{})))
                    .compute(compute_strided_slice_grad));

}  // namespace
}  // namespace graphrun
