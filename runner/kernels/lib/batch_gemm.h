// Batched matrix products, shared by BatchMatMul (V1-V3) and Einsum, which
// reduces every equation it runs to one batched product.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace graphrun {

// The output shape of x * y for batches of matrices ([..., m, k] times
// [..., k, n], after the adjoints), the batch dims broadcast when
// `broadcasting` (V2, V3) and required equal otherwise (V1). Throws Error
// naming the shapes before anything is allocated.
Shape batch_matmul_shape(const Shape& x, const Shape& y, bool adj_x, bool adj_y, bool broadcasting);

// out = x * y per batch (out already has batch_matmul_shape's shape and x's
// dtype). float32 runs gemm_f32 per batch; other dtypes accumulate each dot
// product in k order, integers wrapping.
void batch_matmul(const Tensor& x, const Tensor& y, bool adj_x, bool adj_y, Tensor& out);

}  // namespace graphrun
