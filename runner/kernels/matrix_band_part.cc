// MatrixBandPart: the innermost matrices with everything outside the band
// set to zero: num_lower diagonals below the main one and num_upper above it
// kept (a negative count keeps that whole triangle). CLIP's causal mask and
// tf.linalg.band_part.
#include <algorithm>
#include <cstring>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

int64_t band_count(const Tensor& value, const char* what) {
  if (value.rank() != 0) throw Error(std::string(what) + " must be scalar, got shape " + shape_string(value.shape()));
  return read_scalar_int(value, what);
}

void compute_band_part(KernelContext& context) {
  const Tensor& x = context.input(0);
  if (x.rank() < 2) throw Error("input must be at least 2-dim, received shape: " + shape_string(x.shape()));
  const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  const int64_t lower = band_count(context.input(1), "num_lower");
  const int64_t upper = band_count(context.input(2), "num_upper");
  if (lower > rows) {
    throw Error("num_lower must be negative or less or equal to number of rows (" + std::to_string(rows) +
                ") got: " + std::to_string(lower));
  }
  if (upper > cols) {
    throw Error("num_upper must be negative or less or equal to number of columns (" + std::to_string(cols) +
                ") got: " + std::to_string(upper));
  }
  Tensor out(x.dtype(), x.shape());  // zeros outside the band
  const std::size_t element = dtype_size(x.dtype());
  const int64_t matrices = rows * cols == 0 ? 0 : x.num_elements() / (rows * cols);
  const char* in = static_cast<const char*>(x.raw_data());
  char* result = static_cast<char*>(out.raw_data());
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      // columns j with i - j <= lower and j - i <= upper
      const int64_t from = lower < 0 ? 0 : std::max<int64_t>(0, i - lower);
      const int64_t to = upper < 0 ? cols : std::min<int64_t>(cols, i + upper + 1);
      if (from >= to) continue;
      const int64_t at = (m * rows + i) * cols + from;
      std::memcpy(result + at * element, in + at * element, static_cast<std::size_t>(to - from) * element);
    }
  }
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("MatrixBandPart")
                    .input("input", "T")
                    .input("num_lower", "Tindex")
                    .input("num_upper", "Tindex")
                    .output("T")
                    .type_attr("T", dtypes_of(AllTypes{}))
                    .type_attr("Tindex", dtypes_of(IndexTypes{}), graphdef::DT_INT64)
                    .shape(same_as_input(0))
                    .compute(compute_band_part));

}  // namespace
}  // namespace graphrun
