// RandomUniform, for the dropout leftovers frozen TensorFlow graphs carry.
//
// TensorFlow's own values (Philox) cannot be reproduced without its code, so
// graphdef's runtimes agree on another stream instead: the shared generator of
// random_words.h, seeded by the node's seed, seed2 and name. Each element takes
// the top p bits of its word (p = the dtype's significand bits) times 2**-p:
// uniform in [0, 1) and exact in the dtype, so the values are graphrun's bit
// for bit, and the same on every run.
#include <cmath>
#include <limits>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/index_input.h"
#include "core/random_words.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

template <class T>
void fill_uniform(T* out, int64_t n, uint64_t stream) {
  constexpr int p = std::numeric_limits<T>::digits;  // 24 for float32, 53 for float64
  const double scale = std::ldexp(1.0, -p);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t mantissa = random_word(stream, i) >> (64 - p);
    // m < 2**p, so m and m * 2**-p are exact in double and again in T.
    out[i] = static_cast<T>(static_cast<double>(mantissa) * scale);
  }
}

void compute_random_uniform(KernelContext& context) {
  const Shape shape = read_index_vector(context.input(0), "shape", false);
  for (int64_t dim : shape) {
    if (dim < 0) throw Error("shape " + shape_string(shape) + " must not be negative");
  }
  const DataType dtype = context.attr_type("dtype");
  Tensor out = Tensor::uninitialized(dtype, shape);  // checks the size
  // Python's ((seed & 0xFFFFFFFF) << 32) | (seed2 & 0xFFFFFFFF): the low 32
  // bits of each attr (negative ones in two's complement), seed on top.
  const uint64_t seed = static_cast<uint64_t>(context.attr_int("seed"));
  const uint64_t seed2 = static_cast<uint64_t>(context.attr_int("seed2"));
  const uint64_t stream = random_stream((seed << 32) | (seed2 & 0xFFFFFFFFULL), context.node_def().name());
  dispatch(FloatTypes{}, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_uniform<T>(out.data<T>(), out.num_elements(), stream);
  });
  context.set_output(0, std::move(out));
}

// The dims of a Const shape, or as many unknown dims as a 1-D shape has.
void random_uniform_shape(ShapeContext& context) {
  std::vector<int64_t> dims;
  const StaticShape shape = context.input(0);
  if (context.const_ints(0, dims)) {
    context.set_output(0, known_shape(dims));
  } else if (shape.known_rank && shape.dims.size() == 1 && shape.dims[0] >= 0 && shape.dims[0] <= kMaxStaticRank) {
    context.set_output(0, known_shape(std::vector<int64_t>(shape.dims[0], -1)));
  }
}

REGISTER_KERNEL(Kernel("RandomUniform")
                    .input("shape", "T")
                    .output("dtype")
                    .int_attr("seed", std::numeric_limits<int64_t>::min(), 0)
                    .int_attr("seed2", std::numeric_limits<int64_t>::min(), 0)
                    .type_attr("dtype", dtypes_of(FloatTypes{}))
                    .type_attr("T", dtypes_of(IndexTypes{}))
                    .shape(random_uniform_shape)
                    .compute(compute_random_uniform));

}  // namespace
}  // namespace graphrun
