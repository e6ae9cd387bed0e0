// Converting a fed value to its placeholder's dtype without changing it.
//
// The same rule as Python's graphrun: a value that the target dtype cannot
// hold is refused rather than cast (1.5 or 300 into uint8, true into
// float32, 1 into bool, 1e39 into float32); ints and floats otherwise round
// to the nearest float once.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace graphrun {

// One number or bool as read from JSON or from a .npy element.
struct FeedScalar {
  enum Kind { kSigned, kUnsigned, kFloat, kBool };
  Kind kind = kFloat;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  bool b = false;

  static FeedScalar of_signed(int64_t v);
  static FeedScalar of_unsigned(uint64_t v);
  static FeedScalar of_float(double v);
  static FeedScalar of_bool(bool v);
};

// Throws Error naming the value and the dtype when the value does not fit.
template <class T>
T convert_exactly(const FeedScalar& scalar);

// Every element of `source` converted to `target` by the rule above.
Tensor convert_exactly(const Tensor& source, DataType target);

}  // namespace graphrun
