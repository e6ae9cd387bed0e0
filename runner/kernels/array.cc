// Shape-changing ops: Reshape, Transpose, Fill, BroadcastTo.
#include <cstring>

#include "kernels/lib/broadcast.h"
#include "kernels/lib/permute.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/index_input.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

const std::vector<DataType> kIndexDtypes = dtypes_of(IndexTypes{});

void compute_reshape(KernelContext& context) {
  const Tensor& input = context.input(0);
  Shape shape = read_index_vector(context.input(1), "shape", false);
  int inferred = -1;
  bool has_zero = false;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (shape[d] == -1) {
      if (inferred >= 0) throw Error("shape " + shape_string(shape) + " has more than one -1");
      inferred = d;
    } else if (shape[d] < 0) {
      throw Error("shape " + shape_string(shape) + " has a negative dimension");
    } else if (shape[d] == 0) {
      has_zero = true;
    }
  }
  // The product of the given dims (the -1 left out); a product that
  // overflows can never equal the input's element count.
  int64_t known = 1;
  bool overflow = false;
  for (int d = 0; d < static_cast<int>(shape.size()) && !has_zero; ++d) {
    if (d != inferred && __builtin_mul_overflow(known, shape[d], &known)) overflow = true;
  }
  if (has_zero) known = 0;
  const std::string cannot = "cannot reshape " + shape_string(input.shape()) + " (" +
                             std::to_string(input.num_elements()) + " elements) into " + shape_string(shape);
  if (overflow) throw Error(cannot);
  if (inferred >= 0) {
    // With a 0 among the given dims the -1 is ambiguous, as numpy also says.
    if (known == 0 || input.num_elements() % known != 0) throw Error(cannot);
    shape[inferred] = input.num_elements() / known;
  } else if (known != input.num_elements()) {
    throw Error(cannot);
  }
  // The input's elements under the new shape, not a copy: the output holds
  // the input alive (and, being borrowed, is never overwritten in place).
  const TensorPtr& held = context.input_ptr(0);
  if (!input.is_variant() && !input.is_string() && input.layout() == Layout::kPlain && input.num_elements() > 0) {
    context.set_output(0,
                       Tensor::borrowed(input.dtype(), std::move(shape), input.num_elements(), input.raw_data(), held));
    return;
  }
  context.set_output(0, input.reshaped(std::move(shape)));
}

// Transpose of strings: each std::string copied to its place (permuted()
// moves elements as bytes, which a std::string must never be).
Tensor permuted_strings(const Tensor& input, const std::vector<int64_t>& perm) {
  const int rank = static_cast<int>(input.rank());
  Shape shape(rank);
  for (int d = 0; d < rank; ++d) shape[d] = input.shape()[perm[d]];
  Tensor output(graphdef::DT_STRING, shape);
  const std::vector<int64_t> in_strides = row_major_strides(input.shape());
  const std::string* from = input.data<std::string>();
  std::string* to = output.data<std::string>();
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < output.num_elements(); ++i) {
    to[i] = from[offset];
    for (int d = rank - 1; d >= 0; --d) {
      offset += in_strides[perm[d]];
      if (++index[d] < shape[d]) break;
      offset -= in_strides[perm[d]] * shape[d];
      index[d] = 0;
    }
  }
  return output;
}

void compute_transpose(KernelContext& context) {
  const Tensor& input = context.input(0);
  const std::vector<int64_t> perm = read_index_vector(context.input(1), "perm", false);
  const int rank = static_cast<int>(input.rank());
  std::vector<char> seen(rank, 0);
  bool valid = static_cast<int>(perm.size()) == rank;
  for (int64_t axis : perm) {
    if (!valid) break;
    valid = axis >= 0 && axis < rank && !seen[axis];
    if (valid) seen[axis] = 1;
  }
  if (!valid) {
    throw Error("perm " + shape_string(perm) + " is not a permutation of the " + std::to_string(rank) + " dims of " +
                shape_string(input.shape()));
  }
  bool identity = true;  // Keras' Tensordot transposes by [0, 1, 2]: the input itself, shared
  for (int d = 0; d < rank; ++d) identity = identity && perm[d] == d;
  if (identity && !input.is_variant() && !input.is_string() && input.layout() == Layout::kPlain &&
      input.num_elements() > 0) {
    // borrowed, as Reshape's output: nothing overwrites it in place
    context.set_output(0, Tensor::borrowed(input.dtype(), input.shape(), input.num_elements(), input.raw_data(),
                                           context.input_ptr(0)));
    return;
  }
  if (input.is_string()) {
    context.set_output(0, permuted_strings(input, perm));
    return;
  }
  Tensor output = identity && !input.is_variant() ? input.reshaped(input.shape())
                                                  : permuted(input, std::vector<int>(perm.begin(), perm.end()));
  context.set_output(0, std::move(output));
}

void compute_fill(KernelContext& context) {
  const Shape dims = read_index_vector(context.input(0), "dims", false);
  const Tensor& value = context.input(1);
  if (value.rank() != 0) throw Error("value must be a scalar, got shape " + shape_string(value.shape()));
  Tensor output(value.dtype(), dims);  // checks for negative and oversized dims
  if (value.is_string()) {
    const std::string& fill = value.data<std::string>()[0];
    uint64_t total = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(fill.size()), static_cast<uint64_t>(output.num_elements()),
                               &total)) {
      total = UINT64_MAX;
    }
    check_string_bytes(total);
    std::string* out = output.data<std::string>();
    for (int64_t i = 0; i < output.num_elements(); ++i) out[i] = fill;
    context.set_output(0, std::move(output));
    return;
  }
  const std::size_t item = dtype_size(value.dtype());
  auto* out = static_cast<unsigned char*>(output.raw_data());
  for (int64_t i = 0; i < output.num_elements(); ++i) std::memcpy(out + i * item, value.raw_data(), item);
  context.set_output(0, std::move(output));
}

// numpy.broadcast_to's rules: the target has at least the input's rank, and
// each input dim (aligned at the last) equals the target's or is 1. Unlike a
// binary op's broadcasting this goes one way only: [3] cannot become [1].
void compute_broadcast_to(KernelContext& context) {
  const Tensor& input = context.input(0);
  const Shape target = read_index_vector(context.input(1), "shape", false);
  const Shape& in = input.shape();
  const std::size_t lead = target.size() >= in.size() ? target.size() - in.size() : 0;
  bool valid = target.size() >= in.size();
  for (std::size_t d = 0; valid && d < in.size(); ++d) {
    valid = in[d] == target[lead + d] || in[d] == 1;
  }
  for (int64_t dim : target) valid = valid && dim >= 0;
  if (!valid) throw Error("cannot broadcast " + shape_string(in) + " to " + shape_string(target));
  Tensor output(input.dtype(), target);  // checks the size
  // Per output dim, how far the input moves: 0 along added and size-1 dims.
  const std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<int64_t> strides(target.size(), 0);
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1) strides[lead + d] = in_strides[d];
  }
  const int rank = static_cast<int>(target.size());
  const int64_t total = output.num_elements();
  const std::size_t item = dtype_size(input.dtype());
  const auto* from = static_cast<const unsigned char*>(input.raw_data());
  auto* to = static_cast<unsigned char*>(output.raw_data());
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < total; ++i) {
    std::memcpy(to + i * item, from + offset * item, item);
    for (int d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < target[d]) break;
      offset -= strides[d] * target[d];
      index[d] = 0;
    }
  }
  context.set_output(0, std::move(output));
}

// A constant target shape, its -1 worked out when the input's size is known.
void reshape_shape(ShapeContext& context) {
  std::vector<int64_t> target;
  if (!context.const_ints(1, target)) return;
  const StaticShape in = context.input(0);
  // Products are overflow-checked: the target comes from the file, and a
  // shape that cannot be computed is unknown here (the run refuses it).
  int64_t known_product = 1, wildcard = -1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) wildcard = static_cast<int64_t>(i);
    else if (target[i] < 0 || __builtin_mul_overflow(known_product, target[i], &known_product)) return;
  }
  if (wildcard >= 0) {
    bool complete = in.known_rank;
    int64_t total = 1;
    for (int64_t d : in.dims) {
      complete = complete && d >= 0 && !__builtin_mul_overflow(total, d < 0 ? 1 : d, &total);
    }
    target[wildcard] = complete && known_product > 0 ? total / known_product : -1;
  }
  context.set_output(0, known_shape(target));
}

// A constant perm picks the input's dims; otherwise only the rank is known.
void transpose_shape(ShapeContext& context) {
  const StaticShape in = context.input(0);
  std::vector<int64_t> perm;
  if (!context.const_ints(1, perm)) {
    if (in.known_rank) context.set_output(0, known_shape(std::vector<int64_t>(in.dims.size(), -1)));
    return;
  }
  if (static_cast<int64_t>(perm.size()) > kMaxStaticRank) return;
  if (!in.known_rank) {
    context.set_output(0, known_shape(std::vector<int64_t>(perm.size(), -1)));
    return;
  }
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::vector<char> seen(rank, 0);
  std::vector<int64_t> out;
  for (int64_t p : perm) {
    if (static_cast<int64_t>(perm.size()) != rank || p < 0 || p >= rank || seen[p]) return;  // the run refuses it
    seen[p] = 1;
    out.push_back(in.dims[p]);
  }
  context.set_output(0, known_shape(out));
}

// A constant dims vector is the shape; otherwise its length is the rank.
// Operand k holds the shape (Fill: 0, BroadcastTo: 1).
void dims_operand_shape(ShapeContext& context, int k) {
  std::vector<int64_t> dims;
  if (context.const_ints(k, dims)) {
    if (static_cast<int64_t>(dims.size()) > kMaxStaticRank) return;
    for (int64_t d : dims) {
      if (d < 0) return;
    }
    context.set_output(0, known_shape(dims));
    return;
  }
  const StaticShape operand = context.input(k);
  if (operand.known_rank && operand.dims.size() == 1 && operand.dims[0] >= 0 && operand.dims[0] <= kMaxStaticRank) {
    context.set_output(0, known_shape(std::vector<int64_t>(operand.dims[0], -1)));
  }
}

void fill_shape(ShapeContext& context) { dims_operand_shape(context, 0); }

// The target shape, when the input broadcasts to it (else the run refuses it).
void broadcast_to_shape(ShapeContext& context) {
  std::vector<int64_t> dims;
  if (context.const_ints(1, dims)) {
    const StaticShape in = context.input(0);
    if (in.known_rank && !broadcast_shapes(in, known_shape(dims)).known_rank) return;
  }
  dims_operand_shape(context, 1);
}

REGISTER_KERNEL(Kernel("Reshape")
                    .input("tensor", "T")
                    .input("shape", "Tshape")
                    .output("T")
                    .type_attr("T", dtypes_and_string())
                    .type_attr("Tshape", kIndexDtypes, graphdef::DT_INT32)
                    .shape(reshape_shape)
                    .compute(compute_reshape));

REGISTER_KERNEL(Kernel("Transpose")
                    .input("x", "T")
                    .input("perm", "Tperm")
                    .output("T")
                    .type_attr("T", dtypes_and_string())
                    .type_attr("Tperm", kIndexDtypes, graphdef::DT_INT32)
                    .shape(transpose_shape)
                    .compute(compute_transpose));

REGISTER_KERNEL(Kernel("Fill")
                    .input("dims", "index_type")
                    .input("value", "T")
                    .output("T")
                    .type_attr("T", dtypes_and_string())
                    .type_attr("index_type", kIndexDtypes, graphdef::DT_INT32)
                    .shape(fill_shape)
                    .compute(compute_fill));

REGISTER_KERNEL(Kernel("BroadcastTo")
                    .input("input", "T")
                    .input("shape", "Tidx")
                    .output("T")
                    .type_attr("T")
                    .type_attr("Tidx", kIndexDtypes, graphdef::DT_INT32)
                    .shape(broadcast_to_shape)
                    .compute(compute_broadcast_to));

}  // namespace
}  // namespace graphrun
