// Unpack, Split and SplitV: one tensor cut along an axis into several
// outputs. Unpack removes the axis (num pieces of size 1), Split makes
// num_split equal pieces, SplitV pieces of the given sizes, one of which may
// be -1 for the rest.
#include <algorithm>
#include <cstring>
#include <limits>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

// Cuts `input` along `axis` into pieces of the given sizes; each output has
// the input's shape with the axis dim replaced by its size (or removed).
void cut(KernelContext& context, const Tensor& input, int64_t axis, const std::vector<int64_t>& sizes,
         bool remove_axis) {
  const AxisView view = axis_view(input.shape(), axis);
  const std::size_t item = input.is_string() ? 0 : dtype_size(input.dtype());  // strings: below
  const auto* from = static_cast<const unsigned char*>(input.raw_data());
  int64_t offset = 0;  // elements into each outer row
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Shape shape = input.shape();
    if (remove_axis) shape.erase(shape.begin() + axis);
    else shape[axis] = sizes[i];
    Tensor piece = Tensor::uninitialized(input.dtype(), shape);
    if (input.is_string()) {  // std::string objects are copied, never their bytes
      const std::string* from_strings = input.data<std::string>();
      std::string* to_strings = piece.data<std::string>();
      const int64_t width = sizes[i] * view.inner;
      for (int64_t o = 0; width > 0 && o < view.outer; ++o) {
        const std::string* row = from_strings + o * view.dim * view.inner + offset;
        std::copy(row, row + width, to_strings + o * width);
      }
      offset += width;
      context.set_output(static_cast<int>(i), std::move(piece));
      continue;
    }
    const std::size_t bytes = static_cast<std::size_t>(sizes[i] * view.inner) * item;
    auto* to = static_cast<unsigned char*>(piece.raw_data());
    for (int64_t o = 0; bytes > 0 && o < view.outer; ++o) {
      std::memcpy(to + o * bytes, from + (o * view.dim * view.inner + offset) * item, bytes);
    }
    offset += sizes[i] * view.inner;
    context.set_output(static_cast<int>(i), std::move(piece));
  }
}

void compute_unpack(KernelContext& context) {
  const Tensor& value = context.input(0);
  const int64_t num = context.attr_int("num");
  const int64_t axis = normalize_axis(context.attr_int("axis"), value.rank());
  if (value.shape()[axis] != num) {
    throw Error("cannot unstack dim " + std::to_string(axis) + " of shape " + shape_string(value.shape()) + " into " +
                std::to_string(num) + " tensors");
  }
  cut(context, value, axis, std::vector<int64_t>(num, 1), true);
}

void compute_split(KernelContext& context) {
  const Tensor& value = context.input(1);
  const int64_t num = context.attr_int("num_split");
  const int64_t axis = normalize_axis(read_scalar_int(context.input(0), "split_dim"), value.rank(), "split_dim");
  if (value.shape()[axis] % num != 0) {
    throw Error("cannot split dim " + std::to_string(axis) + " of shape " + shape_string(value.shape()) + " into " +
                std::to_string(num) + " equal parts");
  }
  cut(context, value, axis, std::vector<int64_t>(num, value.shape()[axis] / num), false);
}

void compute_split_v(KernelContext& context) {
  const Tensor& value = context.input(0);
  const int64_t num = context.attr_int("num_split");
  const int64_t axis = normalize_axis(read_scalar_int(context.input(2), "split_dim"), value.rank(), "split_dim");
  std::vector<int64_t> sizes = read_ints(context.input(1));
  const int64_t dim = value.shape()[axis];
  const std::string listed = "size_splits " + shape_string(sizes);
  if (static_cast<int64_t>(sizes.size()) != num) {
    throw Error(listed + " has " + std::to_string(sizes.size()) + " entries for num_split=" + std::to_string(num));
  }
  int64_t known = 0;
  int free = -1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < -1 || (sizes[i] == -1 && free >= 0)) {
      throw Error(listed + " may hold at most one -1 and no other negative size");
    }
    if (sizes[i] == -1) free = static_cast<int>(i);
    else if (__builtin_add_overflow(known, sizes[i], &known)) known = std::numeric_limits<int64_t>::max();
  }
  if (free >= 0) {
    if (known > dim) throw Error(listed + " add up to more than the dim's " + std::to_string(dim));
    sizes[free] = dim - known;
  } else if (known != dim) {
    throw Error(listed + " add up to " + std::to_string(known) + ", not the dim's " + std::to_string(dim));
  }
  cut(context, value, axis, sizes, false);
}

// The input with its split dim cut into equal parts (sizes null) or `sizes`
// (empty: not constant, each unknown), for a constant split_dim (operand
// `axis_input`); else only the rank is known.
void split_shapes(ShapeContext& context, int value_input, int axis_input, const std::vector<int64_t>* sizes) {
  const StaticShape x = context.input(value_input);
  if (!x.known_rank) return;
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const int n = context.num_outputs();
  std::vector<int64_t> axis;
  if (!context.const_ints(axis_input, axis) || axis.size() != 1) {
    for (int k = 0; k < n; ++k) context.set_output(k, known_shape(std::vector<int64_t>(rank, -1)));
    return;
  }
  if (axis[0] < -rank || axis[0] >= rank) return;
  const int64_t a = axis[0] < 0 ? axis[0] + rank : axis[0];
  const int64_t d = x.dims[a];
  std::vector<int64_t> parts(n, -1);
  if (sizes != nullptr && sizes->empty()) {
    // SplitV's sizes are not constant: every part's size is unknown
  } else if (sizes == nullptr) {
    if (d >= 0 && d % n) return;
    if (d >= 0) parts.assign(n, d / n);
  } else {
    if (static_cast<int>(sizes->size()) != n) return;
    int64_t known = 0, free = -1;
    for (int k = 0; k < n; ++k) {
      const int64_t s = (*sizes)[k];
      if (s < -1 || (s == -1 && free >= 0)) return;
      if (s == -1) free = k;
      else if (__builtin_add_overflow(known, s, &known)) return;
      parts[k] = s;
    }
    if (d >= 0 && free >= 0) {
      if (known > d) return;
      parts[free] = d - known;
    } else if (d >= 0 && known != d) {
      return;
    }
  }
  for (int k = 0; k < n; ++k) {
    std::vector<int64_t> out = x.dims;
    out[a] = parts[k];
    context.set_output(k, known_shape(out));
  }
}

void split_shape(ShapeContext& context) {
  if (context.num_outputs() >= 1) split_shapes(context, 1, 0, nullptr);
}

void split_v_shape(ShapeContext& context) {
  if (context.num_outputs() < 1) return;
  std::vector<int64_t> sizes;
  if (context.const_ints(1, sizes)) {
    split_shapes(context, 0, 2, &sizes);
    return;
  }
  sizes.clear();
  split_shapes(context, 0, 2, &sizes);
}

// Every output is the input less the `axis` dim.
void unpack_shape(ShapeContext& context) {
  const StaticShape in = context.input(0);
  if (!in.known_rank) return;
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  const int64_t axis = context.attr("axis").i();
  if (axis < -rank || axis >= rank) return;
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (in.dims[a] >= 0 && in.dims[a] != context.num_outputs()) return;
  std::vector<int64_t> out = in.dims;
  out.erase(out.begin() + a);
  for (int k = 0; k < context.num_outputs(); ++k) context.set_output(k, known_shape(out));
}

REGISTER_KERNEL(Kernel("Unpack")
                    .input("value", "T")
                    .list_output("num", "T")
                    .int_attr("num", 0)
                    .type_attr("T", dtypes_and_string())
                    .int_attr("axis", std::numeric_limits<int64_t>::min(), 0)
                    .shape(unpack_shape)
                    .compute(compute_unpack));

REGISTER_KERNEL(Kernel("Split")
                    .input("split_dim", graphdef::DT_INT32)
                    .input("value", "T")
                    .list_output("num_split", "T")
                    .int_attr("num_split", 1)
                    .type_attr("T")
                    .shape(split_shape)
                    .compute(compute_split));

REGISTER_KERNEL(Kernel("SplitV")
                    .input("value", "T")
                    .input("size_splits", "Tlen")
                    .input("split_dim", graphdef::DT_INT32)
                    .list_output("num_split", "T")
                    .int_attr("num_split", 1)
                    .type_attr("T")
                    .type_attr("Tlen", {graphdef::DT_INT8, graphdef::DT_INT32, graphdef::DT_INT64}, graphdef::DT_INT64)
                    .shape(split_v_shape)
                    .compute(compute_split_v));

}  // namespace
}  // namespace graphrun
