// ReverseV2 and MirrorPad (REFLECT leaves the edge out, SYMMETRIC repeats it;
// Pad and PadV2 are in pad.cc). Pure data movement, done on element bytes, so one
// kernel serves every dtype.
#include <cstring>
#include <string>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"
#include "kernels/paddings.h"

namespace graphrun {
namespace {

// Output element -> input element, dim by dim, over row-major positions.
template <class MapDim>
void gather_elements(const Tensor& x, Tensor& out, MapDim map_dim) {
  const Shape& in_shape = x.shape();
  const Shape& out_shape = out.shape();
  const std::size_t rank = out_shape.size();
  const std::size_t size = dtype_size(x.dtype());
  const char* from = static_cast<const char*>(x.raw_data());
  char* to = static_cast<char*>(out.raw_data());
  std::vector<int64_t> position(rank, 0);
  for (int64_t e = 0; e < out.num_elements(); ++e) {
    int64_t source = 0;
    for (std::size_t d = 0; d < rank; ++d) source = source * in_shape[d] + map_dim(d, position[d]);
    std::memcpy(to + e * size, from + source * size, size);
    for (std::size_t d = rank; d-- > 0;) {  // next position, last dim fastest
      if (++position[d] < out_shape[d]) break;
      position[d] = 0;
    }
  }
}

void compute_reverse(KernelContext& context) {
  const Tensor& x = context.input(0);
  if (context.input(1).rank() != 1) {
    throw Error("axis must be a vector, got shape " + shape_string(context.input(1).shape()));
  }
  std::vector<bool> flip(static_cast<std::size_t>(x.rank()), false);
  for (int64_t a : read_ints(context.input(1))) {
    const int64_t axis = normalize_axis(a, x.rank());
    if (flip[axis]) throw Error("axis " + std::to_string(axis) + " is listed twice");
    flip[axis] = true;
  }
  Tensor out = Tensor::uninitialized(x.dtype(), x.shape());
  gather_elements(x, out, [&](std::size_t d, int64_t i) { return flip[d] ? x.shape()[d] - 1 - i : i; });
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("ReverseV2")
                    .input("tensor", "T")
                    .input("axis", "Tidx")
                    .output("T")
                    .type_attr("Tidx", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .type_attr("T")
                    .shape(same_as_input(0))
                    .compute(compute_reverse));

void compute_mirror_pad(KernelContext& context) {
  const Tensor& x = context.input(0);
  const bool reflect = context.attr_string("mode") == "REFLECT";
  Shape padded;
  const std::vector<int64_t> p = read_paddings(x, context.input(1), padded);
  const int64_t most = reflect ? 0 : 1;  // REFLECT pads at most dim - 1 per side, SYMMETRIC at most dim
  for (int64_t d = 0; d < x.rank(); ++d) {
    const int64_t dim = x.shape()[d];
    if (std::max(p[2 * d], p[2 * d + 1]) > dim - 1 + most) {
      throw Error("paddings [" + std::to_string(p[2 * d]) + ", " + std::to_string(p[2 * d + 1]) + "] of dim " +
                  std::to_string(d) + " (size " + std::to_string(dim) + ") must be at most " +
                  std::to_string(dim - 1 + most) + " in " + (reflect ? "REFLECT" : "SYMMETRIC") + " mode");
    }
  }
  Tensor out = Tensor::uninitialized(x.dtype(), padded);
  const int64_t skip = reflect ? 1 : 0;
  gather_elements(x, out, [&](std::size_t d, int64_t i) {
    const int64_t dim = x.shape()[d];
    const int64_t j = i - p[2 * d];
    if (j < 0) return -j - 1 + skip;                   // before: mirrored around the first element
    if (j >= dim) return 2 * dim - 1 - j - skip;       // after: mirrored around the last
    return j;
  });
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("MirrorPad")
                    .input("input", "T")
                    .input("paddings", "Tpaddings")
                    .output("T")
                    .type_attr("T")
                    .type_attr("Tpaddings", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .choice_attr("mode", {"REFLECT", "SYMMETRIC"})
                    .shape(padded_shape(true))
                    .compute(compute_mirror_pad));

}  // namespace
}  // namespace graphrun
