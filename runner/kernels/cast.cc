// Cast between any two supported dtypes.
//
// float -> int truncates toward zero; values outside the target's range
// saturate to its min/max and NaN becomes 0 (C++ leaves those conversions
// undefined, so a rule has to be chosen). int -> int keeps the low bits
// (two's complement wrap). Anything -> bool is x != 0; bool -> anything is 0/1.
// `Truncate` only matters for conversions to half-precision types, which
// graphrun-cc does not support, so it is accepted and ignored.
#include <cmath>
#include <limits>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

template <class To, class From>
To float_to_int(From x) {
  if (std::isnan(x)) return To{0};
  const From truncated = std::trunc(x);
  // Both bounds are powers of two, so they are exact in float and double.
  const From lowest = static_cast<From>(std::numeric_limits<To>::lowest());
  const From past_max = std::ldexp(From{1}, std::numeric_limits<To>::digits);
  if (truncated < lowest) return std::numeric_limits<To>::lowest();
  if (truncated >= past_max) return std::numeric_limits<To>::max();
  return static_cast<To>(truncated);
}

template <class To, class From>
To convert(From x) {
  if constexpr (std::is_same_v<To, bool>) return x != From{0};
  else if constexpr (std::is_same_v<From, bool>) return x ? To{1} : To{0};
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) return float_to_int<To>(x);
  else return static_cast<To>(x);
}

void compute_cast(KernelContext& context) {
  const Tensor& input = context.input(0);
  const DataType to = context.attr_type("DstT");
  Tensor output(to, input.shape());
  dispatch(AllTypes{}, input.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch(AllTypes{}, to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* in = input.data<From>();
      To* out = output.data<To>();
      for (int64_t i = 0; i < input.num_elements(); ++i) out[i] = convert<To>(in[i]);
    });
  });
  context.set_output(0, std::move(output));
}

REGISTER_KERNEL(Kernel("Cast")
                    .input("x", "SrcT")
                    .output("DstT")
                    .type_attr("SrcT")
                    .type_attr("DstT")
                    .bool_attr("Truncate", false)
                    .shape(same_as_input(0))
                    .compute(compute_cast));

}  // namespace
}  // namespace graphrun
