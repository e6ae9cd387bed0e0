// Copying a strided box of elements between a tensor and a dense buffer:
// element i of the box (row-major over `box`) is the tensor's element at
// begin + i * stride in every dim. Slice and StridedSlice gather a box,
// StridedSliceGrad and Pad scatter one. Works on raw bytes, any dtype.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/lib/broadcast.h"
#include "core/tensor.h"

namespace graphrun {

// Calls run(tensor_offset, box_offset, count) for each innermost row of the
// box: `count` elements from tensor_offset with step stride.back() (1 in the
// common case), to box_offset onward. Offsets are in elements.
template <class Run>
void for_each_box_row(const Shape& dims, const std::vector<int64_t>& begin, const std::vector<int64_t>& stride,
                      const Shape& box, Run&& run) {
  const int rank = static_cast<int>(box.size());
  int64_t total = 1;
  for (int64_t d : box) total *= d;
  if (total == 0) return;
  if (rank == 0) {
    run(0, 0, 1);
    return;
  }
  const std::vector<int64_t> steps = row_major_strides(dims);
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) offset += begin[d] * steps[d];
  const int64_t inner = box[rank - 1];
  std::vector<int64_t> index(rank, 0);
  for (int64_t done = 0; done < total; done += inner) {
    run(offset, done, inner);
    for (int d = rank - 2; d >= 0; --d) {
      offset += stride[d] * steps[d];
      if (++index[d] < box[d]) break;
      offset -= stride[d] * steps[d] * box[d];
      index[d] = 0;
    }
  }
}

// box_buffer = tensor[begin + i * stride].
inline void gather_box(const Tensor& tensor, const std::vector<int64_t>& begin, const std::vector<int64_t>& stride,
                       const Shape& box, void* box_buffer) {
  const std::size_t item = dtype_size(tensor.dtype());
  const auto* from = static_cast<const unsigned char*>(tensor.raw_data());
  auto* to = static_cast<unsigned char*>(box_buffer);
  const int64_t step = stride.empty() ? 1 : stride.back();
  for_each_box_row(tensor.shape(), begin, stride, box, [&](int64_t offset, int64_t done, int64_t count) {
    if (step == 1) {
      std::memcpy(to + done * item, from + offset * item, static_cast<std::size_t>(count) * item);
      return;
    }
    for (int64_t i = 0; i < count; ++i) std::memcpy(to + (done + i) * item, from + (offset + i * step) * item, item);
  });
}

// tensor[begin + i * stride] = box_buffer.
inline void scatter_box(const void* box_buffer, const std::vector<int64_t>& begin, const std::vector<int64_t>& stride,
                        const Shape& box, Tensor& tensor) {
  const std::size_t item = dtype_size(tensor.dtype());
  const auto* from = static_cast<const unsigned char*>(box_buffer);
  auto* to = static_cast<unsigned char*>(tensor.raw_data());
  const int64_t step = stride.empty() ? 1 : stride.back();
  for_each_box_row(tensor.shape(), begin, stride, box, [&](int64_t offset, int64_t done, int64_t count) {
    if (step == 1) {
      std::memcpy(to + offset * item, from + done * item, static_cast<std::size_t>(count) * item);
      return;
    }
    for (int64_t i = 0; i < count; ++i) std::memcpy(to + (offset + i * step) * item, from + (done + i) * item, item);
  });
}

}  // namespace graphrun
