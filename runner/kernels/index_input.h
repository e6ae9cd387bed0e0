// Reading the small int32/int64 tensors that carry axes, shapes and
// permutations (Sum's reduction_indices, Reshape's shape, Fill's dims, ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace graphrun {

// The values of an int32 or int64 tensor that must be 1-D (or, when
// allow_scalar, 0-D). `what` names the input in error messages.
std::vector<int64_t> read_index_vector(const Tensor& tensor, const std::string& what, bool allow_scalar);

// Axes for a rank-`rank` tensor: negative ones count from the end; out of
// range or repeated axes are errors. A scalar takes axis 0 or -1, meaning none.
std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int64_t rank);

}  // namespace graphrun
