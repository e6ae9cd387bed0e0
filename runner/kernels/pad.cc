// Pad (zeros) and PadV2 (any constant). Pure data movement on element
// bytes, so one kernel serves every dtype. The trailing dims nobody pads
// (NHWC's channels, and the width too when only rows are padded) are one
// contiguous run of bytes in both input and output, so the output is
// written a row of the outer dims at a time: one memcpy for the input's
// run, and the constant only where padding is (the output buffer is left
// uninitialized, never filled twice). Rows are shared out over the cores.
// A Pad that feeds a convolution usually disappears altogether into its
// padding (runner/passes/fold_pads.cc); the others must still be cheap.
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"
#include "kernels/lib/broadcast.h"
#include "kernels/paddings.h"

namespace graphrun {
namespace {

// `count` elements of `item` bytes each, all equal to `value`.
void fill_elements(unsigned char* to, int64_t count, const unsigned char* value, std::size_t item, bool zero) {
  const std::size_t bytes = static_cast<std::size_t>(count) * item;
  if (bytes == 0) return;
  if (zero) {
    std::memset(to, 0, bytes);
    return;
  }
  std::memcpy(to, value, item);
  // Doubling: each memcpy copies what is already written.
  for (std::size_t done = item; done < bytes;) {
    const std::size_t n = std::min(done, bytes - done);
    std::memcpy(to + done, to, n);
    done += n;
  }
}

// out = x with p[2d] elements of `value` before and p[2d+1] after along each
// dim d; `out` has the padded shape already.
void pad_into(const Tensor& x, const std::vector<int64_t>& p, const void* value, Tensor& out) {
  const Shape& in = x.shape();
  const Shape& padded = out.shape();
  const std::size_t item = dtype_size(x.dtype());
  if (out.num_elements() == 0) return;
  // The dims [outer, rank) that nobody pads make one run of `unit` bytes.
  int outer = static_cast<int>(in.size());
  std::size_t unit = item;
  while (outer > 0 && p[2 * (outer - 1)] == 0 && p[2 * (outer - 1) + 1] == 0) {
    --outer;
    unit *= static_cast<std::size_t>(in[outer]);
  }
  const auto* from = static_cast<const unsigned char*>(x.raw_data());
  auto* to = static_cast<unsigned char*>(out.raw_data());
  const auto* fill = static_cast<const unsigned char*>(value);
  bool zero = true;
  for (std::size_t i = 0; i < item; ++i) zero = zero && fill[i] == 0;
  if (outer == 0) {  // nothing padded: a copy (unit is then the whole tensor)
    std::memcpy(to, from, unit);
    return;
  }
  const int last = outer - 1;
  const int64_t elements_per_unit = static_cast<int64_t>(unit / item);
  const int64_t out_row = padded[last] * elements_per_unit;  // elements of one output row
  const int64_t before = p[2 * last] * elements_per_unit;
  const int64_t run = in[last] * elements_per_unit;
  const int64_t after = out_row - before - run;
  int64_t rows = 1;
  for (int d = 0; d < last; ++d) rows *= padded[d];
  const std::vector<int64_t> in_steps = row_major_strides(in);
  parallel_for(rows, static_cast<double>(out.num_elements()), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      unsigned char* row = to + static_cast<std::size_t>(r * out_row) * item;
      // Output row r's index over dims [0, last), and where the input has it.
      int64_t source = 0;
      bool inside = true;
      for (int64_t d = last - 1, rest = r; d >= 0; --d) {
        const int64_t i = rest % padded[d] - p[2 * d];
        rest /= padded[d];
        inside = inside && i >= 0 && i < in[d];
        source += i * in_steps[d];
      }
      if (!inside) {
        fill_elements(row, out_row, fill, item, zero);
        continue;
      }
      fill_elements(row, before, fill, item, zero);
      if (run > 0) {
        std::memcpy(row + before * item, from + static_cast<std::size_t>(source) * item,
                    static_cast<std::size_t>(run) * item);
      }
      fill_elements(row + (before + run) * item, after, fill, item, zero);
    }
  });
}

void compute_pad(KernelContext& context) {
  const Tensor& input = context.input(0);
  Shape padded;
  const std::vector<int64_t> paddings = read_paddings(input, context.input(1), padded);
  Tensor out = Tensor::uninitialized(input.dtype(), padded);
  const unsigned char zero[16] = {};  // the widest dtype's bytes (complex128)
  pad_into(input, paddings, zero, out);
  context.set_output(0, std::move(out));
}

void compute_pad_v2(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& paddings = context.input(1);
  const Tensor& value = context.input(2);
  if (value.rank() != 0) throw Error("constant_values must be a scalar, got shape " + shape_string(value.shape()));
  Shape padded;
  const std::vector<int64_t> p = read_paddings(x, paddings, padded);
  Tensor out = Tensor::uninitialized(x.dtype(), padded);
  pad_into(x, p, value.raw_data(), out);
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("Pad")
                    .input("input", "T")
                    .input("paddings", "Tpaddings")
                    .output("T")
                    .type_attr("T")
                    .type_attr("Tpaddings", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .shape(padded_shape(false))
                    .compute(compute_pad));

REGISTER_KERNEL(Kernel("PadV2")
                    .input("input", "T")
                    .input("paddings", "Tpaddings")
                    .input("constant_values", "T")
                    .output("T")
                    .type_attr("T")
                    .type_attr("Tpaddings", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .shape(padded_shape(false))
                    .compute(compute_pad_v2));

}  // namespace
}  // namespace graphrun
