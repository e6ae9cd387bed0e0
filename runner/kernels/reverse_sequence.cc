// ReverseSequence: along seq_dim, the first seq_lengths[b] steps of each
// batch_dim slice b reversed and the rest kept (bidirectional_dynamic_rnn's
// backward pass over padded sequences). Elements move whole, so one byte
// copy serves every dtype.
#include <cstring>
#include <limits>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

void check_dims(int64_t rank, int64_t seq_dim, int64_t batch_dim) {
  if (seq_dim == batch_dim) throw Error("batch_dim == seq_dim == " + std::to_string(seq_dim));
  if (seq_dim < 0 || seq_dim >= rank) {
    throw Error("seq_dim must be < input rank ( " + std::to_string(seq_dim) + " vs. " + std::to_string(rank) + ")");
  }
  if (batch_dim < 0 || batch_dim >= rank) {
    throw Error("batch_dim must be < input rank ( " + std::to_string(batch_dim) + " vs. " + std::to_string(rank) + ")");
  }
}

std::vector<int64_t> read_lengths(const Tensor& lengths) {
  std::vector<int64_t> values(static_cast<std::size_t>(lengths.num_elements()));
  dispatch(IndexTypes{}, lengths.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* in = lengths.data<I>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(in[i]);
  });
  return values;
}

void compute_reverse_sequence(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& lengths_tensor = context.input(1);
  const int64_t seq_dim = context.attr_int("seq_dim"), batch_dim = context.attr_int("batch_dim");
  const Shape& shape = x.shape();
  check_dims(x.rank(), seq_dim, batch_dim);
  if (lengths_tensor.rank() != 1)
    throw Error("seq_lengths must be 1-dim, not " + std::to_string(lengths_tensor.rank()));
  if (lengths_tensor.shape()[0] != shape[batch_dim]) {
    throw Error("Length of seq_lengths != input.dims(" + std::to_string(batch_dim) + "), (" +
                std::to_string(lengths_tensor.shape()[0]) + " vs. " + std::to_string(shape[batch_dim]) + ")");
  }
  const std::vector<int64_t> lengths = read_lengths(lengths_tensor);
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    if (lengths[b] < 0) throw Error("seq_lens(" + std::to_string(b) + ") < 0");
    if (lengths[b] > shape[seq_dim])
      throw Error("seq_lens(" + std::to_string(b) + ") > input.dims(" + std::to_string(seq_dim) + ")");
  }
  Tensor out = Tensor::uninitialized(x.dtype(), shape);
  if (x.num_elements() == 0) {
    context.set_output(0, std::move(out));
    return;
  }
  // Walk every element by its coordinates; only the seq coordinate of its
  // source differs, by a stride.
  const int64_t rank = x.rank();
  std::vector<int64_t> strides(static_cast<std::size_t>(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  const std::size_t element = dtype_size(x.dtype());
  const char* in = static_cast<const char*>(x.raw_data());
  char* result = static_cast<char*>(out.raw_data());
  std::vector<int64_t> at(static_cast<std::size_t>(rank), 0);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t n = lengths[static_cast<std::size_t>(at[batch_dim])];
    const int64_t step = at[seq_dim];
    const int64_t source = step < n ? i + (n - 1 - 2 * step) * strides[seq_dim] : i;
    std::memcpy(result + i * element, in + source * element, element);
    for (int64_t d = rank - 1; d >= 0 && ++at[d] == shape[d]; --d) at[d] = 0;
  }
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("ReverseSequence")
                    .input("input", "T")
                    .input("seq_lengths", "Tlen")
                    .output("T")
                    .int_attr("seq_dim", std::numeric_limits<int64_t>::min())
                    .int_attr("batch_dim", std::numeric_limits<int64_t>::min(), 0)
                    .type_attr("T", dtypes_of(AllTypes{}))
                    .type_attr("Tlen", dtypes_of(IndexTypes{}), graphdef::DT_INT64)
                    .shape(same_as_input(0))
                    .compute(compute_reverse_sequence));

}  // namespace
}  // namespace graphrun
