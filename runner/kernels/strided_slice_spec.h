// StridedSlice's slice spec resolved against an input shape, following TF's
// ValidateStridedSliceOp step by step (as Python's graphrun does in
// graphdef/ops/strided_slice.py, _dense and _resolve): the sparse spec of
// begin/end/strides and five bit-field masks is expanded to one entry per
// input dim (an ellipsis covering the dims no position names, an implicit
// one at the end), then each dim's bounds are canonicalized (negative counts
// from the end, out-of-range clamps, masked bounds take the whole dim in the
// stride's direction).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace graphrun {

struct SliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;
};

struct ResolvedSlice {
  // Per input dim: the first index read, the step, and how many are read
  // (1 for a shrunk dim), so element i of the box is begin + i * stride.
  std::vector<int64_t> begin, stride;
  Shape box;
  Shape final_shape;  // the output: shrunk dims removed, new axes added
};

// Throws Error as TF does: more than one ellipsis, mismatched lengths, a zero
// stride, an integer index with a non-positive stride or out of bounds, more
// indices than the input has dims.
ResolvedSlice resolve_strided_slice(const Shape& shape, const std::vector<int64_t>& begin,
                                    const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                                    const SliceMasks& masks);

}  // namespace graphrun
