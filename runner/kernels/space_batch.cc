// SpaceToBatchND, BatchToSpaceND, SpaceToDepth and DepthToSpace (NHWC), by
// the rules of graphdef/ops/space_batch.py: pure data movement, each output
// element copied from one input element (or a zero from the padding).
// block_shape, paddings and crops are checked, and the output's size, before
// the output is allocated.
#include <cstring>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/index_input.h"

namespace graphrun {
namespace {

struct Blocks {
  std::vector<int64_t> block;
  std::vector<int64_t> before, after;  // paddings or crops per spatial dim
  int64_t count = 1;                    // the product of block
  int64_t inner = 1;                    // elements per (batch, spatial) position: the trailing dims
};

std::string list_string(const std::vector<int64_t>& v) { return shape_string(v); }

Blocks read_blocks(const Tensor& input, const Tensor& block_shape, const Tensor& pairs, const std::string& what) {
  Blocks b;
  b.block = read_index_vector(block_shape, "block_shape", false);
  const int64_t m = static_cast<int64_t>(b.block.size());
  if (pairs.rank() != 2 || pairs.shape()[0] != m || pairs.shape()[1] != 2) {
    throw Error(what + " must have shape [" + std::to_string(m) + ",2] for block_shape " + list_string(b.block) +
                ", got " + shape_string(pairs.shape()));
  }
  if (m < 1 || m > input.rank() - 1) {
    throw Error("block_shape has " + std::to_string(m) + " entries; the input " + shape_string(input.shape()) +
                " has " + std::to_string(std::max<int64_t>(input.rank() - 1, 0)) +
                " dims after its batch dim (need 1 to that many)");
  }
  const std::vector<int64_t> flat = read_index_vector(pairs.reshaped({2 * m}), what, false);
  for (int64_t i = 0; i < m; ++i) {
    if (b.block[i] < 1) throw Error("block_shape " + list_string(b.block) + " must be positive");
    if (flat[2 * i] < 0 || flat[2 * i + 1] < 0) throw Error(what + " " + list_string(flat) + " must be non-negative");
    b.before.push_back(flat[2 * i]);
    b.after.push_back(flat[2 * i + 1]);
    if (__builtin_mul_overflow(b.count, b.block[i], &b.count)) {
      throw Error("block_shape " + list_string(b.block) + " multiplies past 2^63");
    }
  }
  for (int64_t d = 1 + m; d < input.rank(); ++d) b.inner *= input.shape()[d];
  return b;
}

// Output batch q, spatial index s: the block offset is q / batch (row-major
// over the block dims) and the input position s * block + offset - before.
void compute_space_to_batch(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Blocks b = read_blocks(x, context.input(1), context.input(2), "paddings");
  const int64_t m = static_cast<int64_t>(b.block.size());
  const int64_t batch = x.shape()[0];
  Shape out_shape{0};
  if (__builtin_mul_overflow(batch, b.count, &out_shape[0])) throw Error("the output batch overflows");
  for (int64_t i = 0; i < m; ++i) {
    int64_t padded;
    if (__builtin_add_overflow(x.shape()[1 + i], b.before[i], &padded) ||
        __builtin_add_overflow(padded, b.after[i], &padded)) {
      throw Error("padded spatial dim " + std::to_string(i) + " overflows");
    }
    if (padded % b.block[i]) {
      throw Error("padded spatial dim " + std::to_string(i) + " is " + std::to_string(padded) +
                  ", not a multiple of block_shape[" + std::to_string(i) + "] = " + std::to_string(b.block[i]));
    }
    out_shape.push_back(padded / b.block[i]);
  }
  for (int64_t d = 1 + m; d < x.rank(); ++d) out_shape.push_back(x.shape()[d]);
  Tensor out(x.dtype(), out_shape);  // zeros: the padding
  const std::size_t chunk = static_cast<std::size_t>(b.inner) * dtype_size(x.dtype());
  const auto* src = static_cast<const unsigned char*>(x.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  int64_t positions = 1;
  for (int64_t i = 0; i < m; ++i) positions *= out_shape[1 + i];
  if (chunk == 0 || out.num_elements() == 0) {
    context.set_output(0, std::move(out));
    return;
  }
  std::vector<int64_t> s(m), offset(m);
  for (int64_t q = 0; q < out_shape[0]; ++q) {
    int64_t rest = q / batch;
    for (int64_t i = m - 1; i >= 0; --i) {
      offset[i] = rest % b.block[i];
      rest /= b.block[i];
    }
    const int64_t n = q % batch;
    std::fill(s.begin(), s.end(), 0);
    for (int64_t p = 0; p < positions; ++p) {
      int64_t src_index = n;
      bool inside = true;
      for (int64_t i = 0; i < m && inside; ++i) {
        const int64_t at = s[i] * b.block[i] + offset[i] - b.before[i];
        inside = at >= 0 && at < x.shape()[1 + i];
        src_index = src_index * x.shape()[1 + i] + at;
      }
      if (inside) std::memcpy(dst + (q * positions + p) * chunk, src + src_index * chunk, chunk);
      for (int64_t i = m - 1; i >= 0; --i) {
        if (++s[i] < out_shape[1 + i]) break;
        s[i] = 0;
      }
    }
  }
  context.set_output(0, std::move(out));
}

void compute_batch_to_space(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Blocks b = read_blocks(x, context.input(1), context.input(2), "crops");
  const int64_t m = static_cast<int64_t>(b.block.size());
  if (x.shape()[0] % b.count) {
    throw Error("input batch " + std::to_string(x.shape()[0]) + " is not a multiple of the block size " +
                std::to_string(b.count) + " (" + list_string(b.block) + ")");
  }
  const int64_t batch = x.shape()[0] / b.count;
  Shape out_shape{batch};
  for (int64_t i = 0; i < m; ++i) {
    int64_t full;
    if (__builtin_mul_overflow(x.shape()[1 + i], b.block[i], &full) || b.before[i] > full ||
        b.after[i] > full - b.before[i]) {
      throw Error("crops[" + std::to_string(i) + "] = [" + std::to_string(b.before[i]) + ", " +
                  std::to_string(b.after[i]) + "] remove more than the elements of spatial dim " + std::to_string(i));
    }
    out_shape.push_back(full - b.before[i] - b.after[i]);
  }
  for (int64_t d = 1 + m; d < x.rank(); ++d) out_shape.push_back(x.shape()[d]);
  Tensor out = Tensor::uninitialized(x.dtype(), out_shape);
  const std::size_t chunk = static_cast<std::size_t>(b.inner) * dtype_size(x.dtype());
  const auto* src = static_cast<const unsigned char*>(x.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  int64_t positions = 1;
  for (int64_t i = 0; i < m; ++i) positions *= out_shape[1 + i];
  if (chunk == 0 || out.num_elements() == 0) {
    context.set_output(0, std::move(out));
    return;
  }
  std::vector<int64_t> o(m);
  for (int64_t n = 0; n < batch; ++n) {
    std::fill(o.begin(), o.end(), 0);
    for (int64_t p = 0; p < positions; ++p) {
      int64_t block_index = 0, spatial = 0;
      for (int64_t i = 0; i < m; ++i) {
        const int64_t full = o[i] + b.before[i];
        block_index = block_index * b.block[i] + full % b.block[i];
        spatial = spatial * x.shape()[1 + i] + full / b.block[i];
      }
      const int64_t q = block_index * batch + n;
      std::memcpy(dst + (n * positions + p) * chunk,
                  src + (q * (x.num_elements() / x.shape()[0] / b.inner) + spatial) * chunk, chunk);
      for (int64_t i = m - 1; i >= 0; --i) {
        if (++o[i] < out_shape[1 + i]) break;
        o[i] = 0;
      }
    }
  }
  context.set_output(0, std::move(out));
}

// SpaceToDepth: output (n, i, j, (a * b + c) * C + k) is input (n, i * b + a, j * b + c, k);
// DepthToSpace is the same map read the other way.
void move_depth(KernelContext& context, bool to_depth) {
  const Tensor& x = context.input(0);
  const int64_t b = context.attr_int("block_size");
  if (x.rank() != 4) throw Error("input must be 4-D [batch, height, width, channels], got " + shape_string(x.shape()));
  const int64_t n = x.shape()[0], h = x.shape()[1], w = x.shape()[2], c = x.shape()[3];
  int64_t area, depth_out;  // block_size is at least 2 (checked on load) but may be huge
  if (__builtin_mul_overflow(b, b, &area) || (to_depth && __builtin_mul_overflow(c, area, &depth_out))) {
    throw Error("block_size " + std::to_string(b) + " makes the output depth overflow");
  }
  Shape out_shape;
  if (to_depth) {
    if (h % b || w % b) {
      throw Error("input height " + std::to_string(h) + " and width " + std::to_string(w) +
                  " must be multiples of block_size " + std::to_string(b));
    }
    out_shape = {n, h / b, w / b, depth_out};
  } else {
    if (c % area) {
      throw Error("input depth " + std::to_string(c) + " is not a multiple of block_size^2 = " + std::to_string(b) +
                  "^2");
    }
    int64_t big_h, big_w;
    if (__builtin_mul_overflow(h, b, &big_h) || __builtin_mul_overflow(w, b, &big_w)) {
      throw Error("block_size " + std::to_string(b) + " makes the output overflow");
    }
    out_shape = {n, big_h, big_w, c / area};
  }
  Tensor out = Tensor::uninitialized(x.dtype(), out_shape);
  const std::size_t item = dtype_size(x.dtype());
  // the space side's geometry: [n, H, W, C'] with H = sh * b, W = sw * b
  const int64_t small_c = to_depth ? c : out_shape[3];
  const int64_t big_h = to_depth ? h : out_shape[1], big_w = to_depth ? w : out_shape[2];
  const std::size_t chunk = static_cast<std::size_t>(small_c) * item;
  const auto* src = static_cast<const unsigned char*>(x.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  if (chunk == 0 || out.num_elements() == 0) {
    context.set_output(0, std::move(out));
    return;
  }
  for (int64_t ni = 0; ni < n; ++ni) {
    for (int64_t r = 0; r < big_h; ++r) {
      for (int64_t col = 0; col < big_w; ++col) {
        const int64_t space = ((ni * big_h + r) * big_w + col);
        const int64_t depth = ((ni * (big_h / b) + r / b) * (big_w / b) + col / b) * b * b + (r % b) * b + col % b;
        if (to_depth) std::memcpy(dst + depth * chunk, src + space * chunk, chunk);
        else std::memcpy(dst + space * chunk, src + depth * chunk, chunk);
      }
    }
  }
  context.set_output(0, std::move(out));
}

const std::vector<DataType> kIndex = dtypes_of(IndexTypes{});

REGISTER_KERNEL(Kernel("SpaceToBatchND")
                    .input("input", "T")
                    .input("block_shape", "Tblock_shape")
                    .input("paddings", "Tpaddings")
                    .output("T")
                    .type_attr("T")
                    .type_attr("Tblock_shape", kIndex, graphdef::DT_INT32)
                    .type_attr("Tpaddings", kIndex, graphdef::DT_INT32)
                    .compute(compute_space_to_batch));

REGISTER_KERNEL(Kernel("BatchToSpaceND")
                    .input("input", "T")
                    .input("block_shape", "Tblock_shape")
                    .input("crops", "Tcrops")
                    .output("T")
                    .type_attr("T")
                    .type_attr("Tblock_shape", kIndex, graphdef::DT_INT32)
                    .type_attr("Tcrops", kIndex, graphdef::DT_INT32)
                    .compute(compute_batch_to_space));

REGISTER_KERNEL(Kernel("SpaceToDepth")
                    .input("input", "T")
                    .output("T")
                    .type_attr("T")
                    .int_attr("block_size", 2)
                    .choice_attr("data_format", {"NHWC"}, "NHWC")
                    .compute([](KernelContext& context) { move_depth(context, true); }));

REGISTER_KERNEL(Kernel("DepthToSpace")
                    .input("input", "T")
                    .output("T")
                    .type_attr("T")
                    .int_attr("block_size", 2)
                    .choice_attr("data_format", {"NHWC"}, "NHWC")
                    .compute([](KernelContext& context) { move_depth(context, false); }));

}  // namespace
}  // namespace graphrun
