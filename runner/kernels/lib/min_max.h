// Elementwise max and min with numpy's rules, shared by Maximum, Minimum,
// Relu and the Max reduction so they agree on the corner cases: a NaN on
// either side wins, and between equal values (0.0 and -0.0) the second
// operand is returned, i.e. `a > b || isnan(a) ? a : b`.
#pragma once

#include <cmath>
#include <type_traits>

namespace graphrun {

template <class T>
T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return (a > b || std::isnan(a)) ? a : b;
  else return a > b ? a : b;
}

template <class T>
T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return (a < b || std::isnan(a)) ? a : b;
  else return a < b ? a : b;
}

}  // namespace graphrun
