#include "core/channel_blocks.h"

#include <cstring>

#include "core/errors.h"
#include "core/parallel.h"

namespace graphrun {

namespace {

constexpr int64_t kBlock = 8;

// Calls copy(plain_offset, blocked_offset) for the 8 channels of every
// (pixel, block), image row by image row over the cores.
template <class Copy>
void for_each_block(const Shape& shape, Copy&& copy) {
  const int64_t n = shape[0], h = shape[1], w = shape[2], c = shape[3], blocks = c / kBlock;
  const double work = static_cast<double>(n) * h * w * c;
  parallel_for(n * h, work, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t image = row / h, y = row % h;
      for (int64_t x = 0; x < w; ++x) {
        const int64_t pixel = row * w + x;
        for (int64_t b = 0; b < blocks; ++b) {
          copy(pixel * c + b * kBlock, (((image * blocks + b) * h + y) * w + x) * kBlock);
        }
      }
    }
  });
}

}  // namespace

Tensor to_layout(const Tensor& t, Layout layout) {
  Tensor out = Tensor::uninitialized(t.dtype(), t.shape());
  if (t.layout() == layout) {
    if (t.byte_size()) std::memcpy(out.raw_data(), t.raw_data(), t.byte_size());
    out.set_layout(layout);
    return out;
  }
  const Tensor& blocked = layout == Layout::kPlain ? t : out;
  if (blocked.dtype() != graphdef::DT_FLOAT || blocked.rank() != 4 || blocked.shape()[3] % kBlock != 0) {
    throw Error("internal error: channel blocks of 8 for a " + dtype_name(t.dtype()) + " " + shape_string(t.shape()));
  }
  const float* from = t.data<float>();
  float* to = out.data<float>();
  constexpr std::size_t kBytes = kBlock * sizeof(float);
  if (layout == Layout::kPlain) {
    for_each_block(t.shape(), [&](int64_t p, int64_t b) { std::memcpy(to + p, from + b, kBytes); });
  } else {
    for_each_block(t.shape(), [&](int64_t p, int64_t b) { std::memcpy(to + b, from + p, kBytes); });
  }
  out.set_layout(layout);
  return out;
}

TensorPtr plain(TensorPtr value) {
  if (!value || value->layout() == Layout::kPlain) return value;
  return std::make_shared<const Tensor>(to_layout(*value, Layout::kPlain));
}

}  // namespace graphrun
