// Slice and Tile (Pad is in pad.cc). Out-of-range begins and sizes are
// errors, never clamped, as in TF (numpy would clip them).
#include "kernels/strings_box.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"
#include "kernels/strided_box.h"

namespace graphrun {
namespace {

void compute_slice(KernelContext& context) {
  const Tensor& input = context.input(0);
  const std::vector<int64_t> begin = read_ints(context.input(1));
  const std::vector<int64_t> size = read_ints(context.input(2));
  const Shape& shape = input.shape();
  if (begin.size() != shape.size() || size.size() != shape.size()) {
    throw Error("begin " + shape_string(begin) + " and size " + shape_string(size) +
                " must have one entry per dim of shape " + shape_string(shape));
  }
  Shape box(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const int64_t b = begin[d], s = size[d];
    const bool valid = b >= 0 && s >= -1 && b <= shape[d] && (s == -1 || s <= shape[d] - b);
    if (!valid) {
      throw Error("slice of dim " + std::to_string(d) + " from " + std::to_string(b) + " with size " +
                  std::to_string(s) + " is outside shape " + shape_string(shape));
    }
    box[d] = s == -1 ? shape[d] - b : s;
  }
  Tensor out = Tensor::uninitialized(input.dtype(), box);
  if (input.is_string()) gather_box_strings(input, begin, std::vector<int64_t>(shape.size(), 1), box, out);
  else gather_box(input, begin, std::vector<int64_t>(shape.size(), 1), box, out.raw_data());
  context.set_output(0, std::move(out));
}

// Tile of strings: each output element is the input element it repeats (the
// strings' bytes are checked first, as repeating is how they could blow up).
void tile_strings(const Tensor& input, const std::vector<int64_t>& multiples, Tensor& out) {
  if (out.num_elements() == 0) return;
  uint64_t total = input.string_bytes();
  for (int64_t m : multiples) {
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(m), &total)) total = UINT64_MAX;
  }
  check_string_bytes(total);
  const int64_t rank = input.rank();
  const std::vector<int64_t> in_steps = row_major_strides(input.shape());
  const std::string* from = input.data<std::string>();
  std::string* to = out.data<std::string>();
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) offset += (index[d] % input.shape()[d]) * in_steps[d];
    to[i] = from[offset];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < out.shape()[d]) break;
      index[d] = 0;
    }
  }
}

void compute_tile(KernelContext& context) {
  const Tensor& input = context.input(0);
  const std::vector<int64_t> multiples = read_ints(context.input(1));
  const int64_t rank = input.rank();
  bool valid = static_cast<int64_t>(multiples.size()) == rank;
  for (int64_t m : multiples) valid = valid && m >= 0;
  if (!valid) {
    throw Error("multiples " + shape_string(multiples) + " must be " + std::to_string(rank) +
                " non-negative counts for shape " + shape_string(input.shape()));
  }
  Shape shape(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (__builtin_mul_overflow(input.shape()[d], multiples[d], &shape[d])) {
      throw Error("multiples " + shape_string(multiples) + " make too large a tensor");
    }
  }
  Tensor out = Tensor::uninitialized(input.dtype(), shape);  // checks the size
  if (input.is_string()) {
    tile_strings(input, multiples, out);
    context.set_output(0, std::move(out));
    return;
  }
  const std::size_t item = dtype_size(input.dtype());
  const auto* from = static_cast<const unsigned char*>(input.raw_data());
  auto* to = static_cast<unsigned char*>(out.raw_data());
  if (out.num_elements() == 0) {
    context.set_output(0, std::move(out));
    return;
  }
  if (rank == 0) {
    std::memcpy(to, from, item);
    context.set_output(0, std::move(out));
    return;
  }
  // Row by row of the output (all dims but the last): the input row it
  // repeats, copied multiples.back() times.
  const std::vector<int64_t> in_steps = row_major_strides(input.shape());
  const int64_t row = input.shape()[rank - 1];
  const std::size_t row_bytes = static_cast<std::size_t>(row) * item;
  std::vector<int64_t> index(rank, 0);
  const int64_t rows = out.num_elements() / shape[rank - 1];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int64_t d = 0; d + 1 < rank; ++d) offset += (index[d] % input.shape()[d]) * in_steps[d];
    for (int64_t m = 0; m < multiples[rank - 1]; ++m, to += row_bytes) std::memcpy(to, from + offset * item, row_bytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  context.set_output(0, std::move(out));
}

// True when input k is a vector whose known length is not `rank` (the run refuses it).
bool wrong_vector(const ShapeContext& context, int k, const StaticShape& x) {
  const StaticShape s = context.input(k);
  return s.known_rank &&
         (s.dims.size() != 1 || (x.known_rank && s.dims[0] >= 0 && s.dims[0] != static_cast<int64_t>(x.dims.size())));
}

std::vector<int64_t> unknown_dims(std::size_t n) { return std::vector<int64_t>(n, -1); }

// graphrun's rule: begin and size constant give end - begin per dim (size -1:
// to the dim's end); size alone gives its non-(-1) entries.
void slice_shape(ShapeContext& context) {
  const StaticShape x = context.input(0);
  if (wrong_vector(context, 1, x) || wrong_vector(context, 2, x)) return;
  std::vector<int64_t> begin, size;
  const bool have_begin = context.const_ints(1, begin), have_size = context.const_ints(2, size);
  if (!x.known_rank) {
    const std::size_t n = have_begin ? begin.size() : size.size();
    if ((have_begin || have_size) && n <= static_cast<std::size_t>(kMaxStaticRank)) {
      context.set_output(0, known_shape(unknown_dims(n)));
    }
    return;
  }
  if (!have_size) {
    context.set_output(0, known_shape(unknown_dims(x.dims.size())));
    return;
  }
  if (!have_begin) {
    if (size.size() <= static_cast<std::size_t>(kMaxStaticRank)) context.set_output(0, known_shape(size));
    return;
  }
  if (begin.size() != x.dims.size() || size.size() != x.dims.size()) return;
  std::vector<int64_t> out;
  for (std::size_t i = 0; i < x.dims.size(); ++i) {
    const int64_t d = x.dims[i], b = begin[i], s = size[i];
    int64_t end = d;
    if (s != -1 && __builtin_add_overflow(b, s, &end)) return;
    if (b < 0 || s < -1 || (d >= 0 && (b > d || end > d))) return;
    out.push_back(end < 0 ? -1 : end - b);
  }
  context.set_output(0, known_shape(out));
}

// Each dim times its constant multiple.
void tile_shape(ShapeContext& context) {
  const StaticShape x = context.input(0);
  if (wrong_vector(context, 1, x)) return;
  std::vector<int64_t> multiples;
  const bool have = context.const_ints(1, multiples);
  if (!have || !x.known_rank) {
    const std::size_t n = x.known_rank ? x.dims.size() : multiples.size();
    if ((x.known_rank || have) && n <= static_cast<std::size_t>(kMaxStaticRank)) {
      context.set_output(0, known_shape(unknown_dims(n)));
    }
    return;
  }
  if (multiples.size() != x.dims.size()) return;
  std::vector<int64_t> out;
  for (std::size_t i = 0; i < x.dims.size(); ++i) {
    if (multiples[i] < 0) return;
    int64_t d = -1;
    if (x.dims[i] >= 0 && __builtin_mul_overflow(x.dims[i], multiples[i], &d)) return;
    out.push_back(d);
  }
  context.set_output(0, known_shape(out));
}

REGISTER_KERNEL(Kernel("Slice")
                    .input("input", "T")
                    .input("begin", "Index")
                    .input("size", "Index")
                    .output("T")
                    .type_attr("T", dtypes_and_string())
                    .type_attr("Index", dtypes_of(IndexTypes{}))
                    .shape(slice_shape)
                    .compute(compute_slice));

REGISTER_KERNEL(Kernel("Tile")
                    .input("input", "T")
                    .input("multiples", "Tmultiples")
                    .output("T")
                    .type_attr("T", dtypes_and_string())
                    .type_attr("Tmultiples", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .shape(tile_shape)
                    .compute(compute_tile));

}  // namespace
}  // namespace graphrun
