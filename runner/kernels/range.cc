// Range: [start, start + delta, ...) up to but not including limit.
//
// The element count is ceil((limit - start) / delta), at least 0. For floats
// the subtraction, division and ceil happen in the element type, as both
// numpy.arange (given float32 scalars) and TensorFlow compute them; for
// integers the count is exact (128-bit arithmetic), so no range wraps around.
//
// The elements are numpy.arange's, which Python's graphrun prints: v0 = start,
// v1 = start + delta, and then start + i * (v1 - v0), all in the element type.
// For floats that differs from start + i * delta when start + delta rounds
// (numpy.arange(1e8, 1e8 + 10, 1) in float32 is eight times 1e8); for
// integers every formula gives the same wrapped values.
#include <cmath>
#include <limits>

#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

[[noreturn]] void too_many() { throw Error("the range has 2**63 or more elements, too many for a tensor"); }

template <class T>
int64_t range_count(T start, T limit, T delta) {
  if constexpr (std::is_floating_point_v<T>) {
    const T steps = std::ceil((limit - start) / delta);
    if (std::isnan(steps)) throw Error("cannot compute the length of the range (a value is nan or inf)");
    if (!(steps > 0)) return 0;
    if (steps >= std::ldexp(T(1), 63)) too_many();  // inf included
    return static_cast<int64_t>(steps);
  } else {
    const __int128 span = static_cast<__int128>(limit) - static_cast<__int128>(start);
    const __int128 step = static_cast<__int128>(delta);
    if (span == 0 || (span > 0) != (step > 0)) return 0;
    // Same signs: the quotient is positive and truncation rounds it down.
    __int128 steps = span / step;
    if (steps * step != span) ++steps;
    if (steps > std::numeric_limits<int64_t>::max()) too_many();
    return static_cast<int64_t>(steps);
  }
}

void compute_range(KernelContext& context) {
  static const char* const kNames[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    if (context.input(i).rank() != 0) {
      throw Error(std::string(kNames[i]) + " must be a scalar, got shape " + shape_string(context.input(i).shape()));
    }
  }
  const DataType dtype = context.attr_type("Tidx");
  dispatch(NumericTypes{}, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T start = context.input(0).data<T>()[0];
    const T limit = context.input(1).data<T>()[0];
    const T delta = context.input(2).data<T>()[0];
    if (delta == T(0)) throw Error("delta must not be 0");
    Tensor output(dtype, {range_count(start, limit, delta)});
    T* out = output.data<T>();
    const int64_t count = output.num_elements();
    if (count >= 1) out[0] = start;
    if (count >= 2) {
      out[1] = add(start, delta);
      const T step = sub(out[1], start);
      for (int64_t i = 2; i < count; ++i) out[i] = add(start, mul(static_cast<T>(i), step));
    }
    context.set_output(0, std::move(output));
  });
}

// A vector; its length when start, limit and delta are integer constants
// (graphrun's count, ceil((limit - start) / delta), at least 0).
void range_shape(ShapeContext& context) {
  std::vector<int64_t> start, limit, delta;
  if (!context.const_ints(0, start) || !context.const_ints(1, limit) || !context.const_ints(2, delta)) {
    context.set_output(0, known_shape({-1}));
    return;
  }
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1 || delta[0] == 0) return;
  const __int128 span = static_cast<__int128>(limit[0]) - start[0], step = delta[0];
  __int128 count = span / step;   // rounded toward zero, then up where a remainder is left
  if (span % step != 0 && ((span < 0) == (step < 0))) ++count;
  if (count < 0) count = 0;
  if (count > std::numeric_limits<int64_t>::max()) return;
  context.set_output(0, known_shape({static_cast<int64_t>(count)}));
}

REGISTER_KERNEL(Kernel("Range")
                    .input("start", "Tidx")
                    .input("limit", "Tidx")
                    .input("delta", "Tidx")
                    .output("Tidx")
                    .type_attr("Tidx", dtypes_of(NumericTypes{}), graphdef::DT_INT32)
                    .shape(range_shape)
                    .compute(compute_range));

}  // namespace
}  // namespace graphrun
