// Two's-complement wrap-around arithmetic for integer tensors, as TensorFlow
// and numpy do it. Signed overflow is undefined behaviour in C++, so the
// arithmetic happens in an unsigned type at least as wide as `unsigned`
// (narrower types would be promoted to signed int and could still overflow,
// e.g. uint16 * uint16) and the result is narrowed back, keeping the low bits.
#pragma once

#include <type_traits>

namespace graphrun {

template <class T>
using WrapUnsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
T wrapping_add(T a, T b) {
  using U = WrapUnsigned<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}

template <class T>
T wrapping_sub(T a, T b) {
  using U = WrapUnsigned<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}

template <class T>
T wrapping_mul(T a, T b) {
  using U = WrapUnsigned<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

template <class T>
T wrapping_neg(T a) {
  using U = WrapUnsigned<T>;
  return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(a)));
}

// The same operations for any element type: IEEE arithmetic for floats.
template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) return wrapping_add(a, b);
  else return a + b;
}

template <class T>
T sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return wrapping_sub(a, b);
  else return a - b;
}

template <class T>
T mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return wrapping_mul(a, b);
  else return a * b;
}

}  // namespace graphrun
