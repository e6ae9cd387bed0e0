// ConcatV2 and Pack: tensors of one dtype joined along an axis, an existing
// one (ConcatV2, whose other dims must match) or a new one (Pack, whose
// inputs must all have one shape). Both copy, per index of the dims before
// the axis, each input's contiguous block in turn.
#include <algorithm>
#include <cstring>
#include <limits>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

// Writes the inputs' [outer, dim_i * inner] blocks side by side.
void join(const std::vector<const Tensor*>& parts, int64_t outer, const std::vector<int64_t>& widths, Tensor& out) {
  if (out.is_string()) {  // std::string objects are copied, never their bytes
    std::string* to = out.data<std::string>();
    for (int64_t o = 0; o < outer; ++o) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string* from = parts[i]->data<std::string>() + o * widths[i];
        to = std::copy(from, from + widths[i], to);
      }
    }
    return;
  }
  const std::size_t item = dtype_size(out.dtype());
  auto* to = static_cast<unsigned char*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::size_t bytes = static_cast<std::size_t>(widths[i]) * item;
      if (bytes == 0) continue;
      std::memcpy(to, static_cast<const unsigned char*>(parts[i]->raw_data()) + o * bytes, bytes);
      to += bytes;
    }
  }
}

void compute_concat(KernelContext& context) {
  const int n = context.num_inputs() - 1;
  const Tensor& first = context.input(0);
  if (first.rank() == 0) throw Error("cannot concatenate scalars; use tf.stack");
  const int64_t axis = normalize_axis(read_scalar_int(context.input(n), "axis"), first.rank());
  std::vector<const Tensor*> parts;
  std::vector<int64_t> widths;
  Shape out_shape = first.shape();
  out_shape[axis] = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& part = context.input(i);
    bool fits = part.rank() == first.rank();
    for (int64_t d = 0; fits && d < first.rank(); ++d) fits = d == axis || part.shape()[d] == first.shape()[d];
    if (!fits) {
      throw Error("cannot concatenate shapes " + shape_string(first.shape()) + " and " + shape_string(part.shape()) +
                  " along axis " + std::to_string(axis));
    }
    out_shape[axis] += part.shape()[axis];
    const AxisView view = axis_view(part.shape(), axis);
    parts.push_back(&part);
    widths.push_back(view.dim * view.inner);
  }
  Tensor out = Tensor::uninitialized(first.dtype(), out_shape);
  join(parts, axis_view(out_shape, axis).outer, widths, out);
  context.set_output(0, std::move(out));
}

void compute_pack(KernelContext& context) {
  const int n = context.num_inputs();
  const Tensor& first = context.input(0);
  const int64_t axis = normalize_axis(context.attr_int("axis"), first.rank() + 1);
  std::vector<const Tensor*> parts;
  for (int i = 0; i < n; ++i) {
    if (context.input(i).shape() != first.shape()) {
      throw Error("cannot stack shapes " + shape_string(first.shape()) + " and " +
                  shape_string(context.input(i).shape()) + ": all must be equal");
    }
    parts.push_back(&context.input(i));
  }
  Shape out_shape = first.shape();
  out_shape.insert(out_shape.begin() + axis, n);
  // Each input is one block per index of the dims before the new axis.
  int64_t before = 1, block = 1;
  for (int64_t d = 0; d < first.rank(); ++d) (d < axis ? before : block) *= first.shape()[d];
  Tensor out = Tensor::uninitialized(first.dtype(), out_shape);
  join(parts, before, std::vector<int64_t>(n, block), out);
  context.set_output(0, std::move(out));
}

// graphrun's rule: the known inputs' dims merged, the axis dim summed (unknown
// if any part is); without a constant axis only the rank is known.
void concat_shape(ShapeContext& context) {
  const int n = context.num_inputs() - 1;
  if (n < 2) return;
  int64_t rank = -1;
  for (int k = 0; k < n; ++k) {
    const StaticShape s = context.input(k);
    if (!s.known_rank) continue;
    if (rank >= 0 && static_cast<int64_t>(s.dims.size()) != rank) return;
    rank = static_cast<int64_t>(s.dims.size());
  }
  if (rank < 0) return;
  if (rank == 0) return;
  std::vector<int64_t> axis;
  if (!context.const_ints(n, axis) || axis.size() != 1) {
    context.set_output(0, known_shape(std::vector<int64_t>(rank, -1)));
    return;
  }
  if (axis[0] < -rank || axis[0] >= rank) return;
  const int64_t a = axis[0] < 0 ? axis[0] + rank : axis[0];
  std::vector<int64_t> out(rank, -1);
  int64_t total = 0;
  for (int k = 0; k < n; ++k) {
    const StaticShape s = context.input(k);
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t d = s.known_rank ? s.dims[i] : -1;
      if (i == a) {
        total = total < 0 || d < 0 || __builtin_add_overflow(total, d, &total) ? -1 : total;
      } else if (d >= 0) {
        if (out[i] >= 0 && out[i] != d) return;
        out[i] = d;
      }
    }
  }
  out[a] = total;
  context.set_output(0, known_shape(out));
}

// The inputs' merged shape with N inserted at `axis`.
void pack_shape(ShapeContext& context) {
  const int n = context.num_inputs();
  StaticShape merged = unknown_shape();
  for (int k = 0; k < n; ++k) {
    const StaticShape s = context.input(k);
    if (!s.known_rank) continue;
    if (!merged.known_rank) {
      merged = s;
      continue;
    }
    if (s.dims.size() != merged.dims.size()) return;
    for (std::size_t i = 0; i < s.dims.size(); ++i) {
      if (s.dims[i] < 0) continue;
      if (merged.dims[i] >= 0 && merged.dims[i] != s.dims[i]) return;
      merged.dims[i] = s.dims[i];
    }
  }
  if (!merged.known_rank || merged.dims.size() >= static_cast<std::size_t>(kMaxStaticRank)) return;
  const int64_t rank = static_cast<int64_t>(merged.dims.size()) + 1;
  const int64_t axis = context.attr("axis").i();
  if (axis < -rank || axis >= rank) return;
  merged.dims.insert(merged.dims.begin() + (axis < 0 ? axis + rank : axis), n);
  context.set_output(0, merged);
}

REGISTER_KERNEL(Kernel("ConcatV2")
                    .list_input("values", "N", "T")
                    .input("axis", "Tidx")
                    .output("T")
                    .int_attr("N", 2)
                    .type_attr("T", dtypes_and_string())
                    .type_attr("Tidx", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .shape(concat_shape)
                    .compute(compute_concat));

REGISTER_KERNEL(Kernel("Pack")
                    .list_input("values", "N", "T")
                    .output("T")
                    .int_attr("N", 1)
                    .type_attr("T", dtypes_and_string())
                    .int_attr("axis", std::numeric_limits<int64_t>::min(), 0)
                    .shape(pack_shape)
                    .compute(compute_pack));

}  // namespace
}  // namespace graphrun
