// gather_box (kernels/strided_box.h) for string tensors: Slice and
// StridedSlice copy std::string objects, never their bytes.
#pragma once

#include <string>
#include <vector>

#include "kernels/strided_box.h"

namespace graphrun {

// out = tensor[begin + i * stride] over `box`, in row-major order.
inline void gather_box_strings(const Tensor& tensor, const std::vector<int64_t>& begin,
                               const std::vector<int64_t>& stride, const Shape& box, Tensor& out) {
  const std::string* from = tensor.data<std::string>();
  std::string* to = out.data<std::string>();
  const int64_t step = stride.empty() ? 1 : stride.back();
  for_each_box_row(tensor.shape(), begin, stride, box, [&](int64_t offset, int64_t done, int64_t count) {
    for (int64_t i = 0; i < count; ++i) to[done + i] = from[offset + i * step];
  });
}

}  // namespace graphrun
