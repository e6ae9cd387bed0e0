// Reordering a tensor's dims (Transpose, and Einsum's operands and product).
#pragma once

#include <vector>

#include "core/tensor.h"

namespace graphrun {

// `in` with its dims reordered: output dim d is input dim perm[d] (perm a
// permutation of in's dims, checked by the caller).
Tensor permuted(const Tensor& in, const std::vector<int>& perm);

}  // namespace graphrun
