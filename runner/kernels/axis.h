// Axes that may count from the end, and the row-major view the joining and
// splitting ops (ConcatV2, Pack, Unpack, Split, SplitV) work in.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace graphrun {

// An axis in [-rank, rank) as a non-negative one; Error naming the range
// otherwise ("split_dim 3 is out of range [-2, 2)"), as Python's graphrun.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what = "axis");

// A shape seen as [outer, dim, inner] around one axis, in elements.
struct AxisView {
  int64_t outer = 1;
  int64_t dim = 1;
  int64_t inner = 1;
};

AxisView axis_view(const Shape& shape, int64_t axis);

// A scalar (or one-element) int tensor of any integer dtype as an int64.
int64_t read_scalar_int(const Tensor& tensor, const std::string& what);

// Any integer tensor's elements as int64, in order.
std::vector<int64_t> read_ints(const Tensor& tensor);

}  // namespace graphrun
