// ResizeBilinear and ResizeNearestNeighbor (NHWC), by the coordinate rules of
// graphdef/ops/image.py, every step in float32 as TF's CPU kernels compute:
// scale = (in - 1) / (out - 1) under align_corners (out > 1), else in / out;
// output index i reads x = i * scale, or with half_pixel_centers
// (i + 0.5) * scale - 0.5 (bilinear) and (i + 0.5) * scale (nearest).
// The size input is checked, and the output's size, before allocating.
// Their gradients, ResizeBilinearGrad and ResizeNearestNeighborGrad, add each
// output gradient back where the forward op read it, visiting the gradient
// in row-major order (each pixel's four corners in turn) as TF's CPU kernels.
#include <cmath>
#include <cstring>

#include "core/int_arith.h"

#include "graph/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {
namespace {

float scale_of(int64_t in, int64_t out, bool align_corners) {
  if (align_corners && out > 1) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  return static_cast<float>(in) / static_cast<float>(out);
}

std::vector<int64_t> nearest_indices(int64_t in, int64_t out, bool align_corners, bool half_pixel) {
  const float scale = scale_of(in, out, align_corners);
  std::vector<int64_t> index(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = half_pixel ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
    const int64_t at = static_cast<int64_t>(align_corners ? std::round(x) : std::floor(x));
    index[i] = std::max<int64_t>(std::min(at, in - 1), 0);
  }
  return index;
}

struct Lerp {
  int64_t lower, upper;
  float weight;  // of upper
};

std::vector<Lerp> bilinear_weights(int64_t in, int64_t out, bool align_corners, bool half_pixel) {
  const float scale = scale_of(in, out, align_corners);
  std::vector<Lerp> lerps(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const float floor = std::floor(x);
    lerps[i] = {std::max<int64_t>(static_cast<int64_t>(floor), 0),
                std::min<int64_t>(static_cast<int64_t>(std::ceil(x)), in - 1), x - floor};
  }
  return lerps;
}

// The images' [n, h, w, c] and the [new_height, new_width] asked for, checked.
void read_geometry(KernelContext& context, Shape& out_shape) {
  const Tensor& x = context.input(0);
  const Tensor& size = context.input(1);
  if (x.rank() != 4) {
    throw Error("images must be 4-D [batch, height, width, channels], got shape " + shape_string(x.shape()));
  }
  if (size.shape() != Shape{2}) {
    throw Error("size must be a 1-D tensor of 2 elements [new_height, new_width], got shape " +
                shape_string(size.shape()));
  }
  const int32_t h = size.data<int32_t>()[0], w = size.data<int32_t>()[1];
  if (h <= 0 || w <= 0) {
    throw Error("size [" + std::to_string(h) + ", " + std::to_string(w) + "] must be positive");
  }
  if (x.shape()[1] <= 0 || x.shape()[2] <= 0) {
    throw Error("images " + shape_string(x.shape()) + " have no pixels to resize from");
  }
  out_shape = {x.shape()[0], h, w, x.shape()[3]};
}

void compute_nearest(KernelContext& context) {
  const Tensor& x = context.input(0);
  Shape out_shape;
  read_geometry(context, out_shape);
  const bool align = context.attr_bool("align_corners"), half = context.attr_bool("half_pixel_centers");
  Tensor out = Tensor::uninitialized(x.dtype(), out_shape);
  const std::vector<int64_t> rows = nearest_indices(x.shape()[1], out_shape[1], align, half);
  const std::vector<int64_t> cols = nearest_indices(x.shape()[2], out_shape[2], align, half);
  const std::size_t chunk = static_cast<std::size_t>(x.shape()[3]) * dtype_size(x.dtype());
  const auto* src = static_cast<const unsigned char*>(x.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  if (chunk > 0) {
    for (int64_t n = 0; n < out_shape[0]; ++n) {
      for (int64_t i = 0; i < out_shape[1]; ++i) {
        for (int64_t j = 0; j < out_shape[2]; ++j) {
          const int64_t from = (n * x.shape()[1] + rows[i]) * x.shape()[2] + cols[j];
          std::memcpy(dst + ((n * out_shape[1] + i) * out_shape[2] + j) * chunk, src + from * chunk, chunk);
        }
      }
    }
  }
  context.set_output(0, std::move(out));
}

void compute_bilinear(KernelContext& context) {
  const Tensor& x = context.input(0);
  Shape out_shape;
  read_geometry(context, out_shape);
  const bool align = context.attr_bool("align_corners"), half = context.attr_bool("half_pixel_centers");
  Tensor out = Tensor::uninitialized(graphdef::DT_FLOAT, out_shape);
  const std::vector<Lerp> ys = bilinear_weights(x.shape()[1], out_shape[1], align, half);
  const std::vector<Lerp> xs = bilinear_weights(x.shape()[2], out_shape[2], align, half);
  const int64_t h = x.shape()[1], w = x.shape()[2], c = x.shape()[3];
  float* o = out.data<float>();
  dispatch(TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t>{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    auto at = [&](int64_t n, int64_t r, int64_t col, int64_t k) {
      return static_cast<float>(in[((n * h + r) * w + col) * c + k]);
    };
    for (int64_t n = 0; n < out_shape[0]; ++n) {
      for (int64_t i = 0; i < out_shape[1]; ++i) {
        const Lerp& y = ys[i];
        for (int64_t j = 0; j < out_shape[2]; ++j) {
          const Lerp& xl = xs[j];
          for (int64_t k = 0; k < c; ++k) {
            const float top_left = at(n, y.lower, xl.lower, k), top_right = at(n, y.lower, xl.upper, k);
            const float bottom_left = at(n, y.upper, xl.lower, k), bottom_right = at(n, y.upper, xl.upper, k);
            const float top = top_left + (top_right - top_left) * xl.weight;
            const float bottom = bottom_left + (bottom_right - bottom_left) * xl.weight;
            o[((n * out_shape[1] + i) * out_shape[2] + j) * c + k] = top + (bottom - top) * y.weight;
          }
        }
      }
    }
  });
  context.set_output(0, std::move(out));
}

// A 4-D gradient [n, h, w, c] going back to an image of height x width.
void check_grads(const Tensor& grads, int64_t height, int64_t width) {
  if (grads.rank() != 4) {
    throw Error("grads must be 4-D [batch, height, width, channels], got shape " + shape_string(grads.shape()));
  }
  if (height <= 0 || width <= 0) {
    throw Error("the original image [" + std::to_string(height) + ", " + std::to_string(width) + "] has no pixels");
  }
}

void compute_bilinear_grad(KernelContext& context) {
  const Tensor& grads = context.input(0);
  const Tensor& image = context.input(1);
  if (image.rank() != 4) {
    throw Error("original_image must be 4-D [batch, height, width, channels], got shape " +
                shape_string(image.shape()));
  }
  const int64_t h = image.shape()[1], w = image.shape()[2], c = image.shape()[3];
  check_grads(grads, h, w);
  if (grads.shape()[0] != image.shape()[0] || grads.shape()[3] != c) {
    throw Error("grads " + shape_string(grads.shape()) + " and original_image " + shape_string(image.shape()) +
                " differ in batch or channels");
  }
  Tensor out(image.dtype(), image.shape());
  const int64_t gh = grads.shape()[1], gw = grads.shape()[2];
  if (grads.num_elements() > 0) {
    const bool align = context.attr_bool("align_corners"), half = context.attr_bool("half_pixel_centers");
    const std::vector<Lerp> ys = bilinear_weights(h, gh, align, half);
    const std::vector<Lerp> xs = bilinear_weights(w, gw, align, half);
    const float* g = grads.data<float>();
    dispatch(TypeList<float, double>{}, image.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* o = out.data<T>();
      auto at = [&](int64_t n, int64_t r, int64_t col) { return o + ((n * h + r) * w + col) * c; };
      for (int64_t n = 0; n < grads.shape()[0]; ++n) {
        for (int64_t i = 0; i < gh; ++i) {
          const Lerp& y = ys[i];
          const float wy0 = 1.0f - y.weight, wy1 = y.weight;
          for (int64_t j = 0; j < gw; ++j) {
            const Lerp& x = xs[j];
            const float wx0 = 1.0f - x.weight, wx1 = x.weight;
            const float* gp = g + ((n * gh + i) * gw + j) * c;
            T *tl = at(n, y.lower, x.lower), *tr = at(n, y.lower, x.upper);
            T *bl = at(n, y.upper, x.lower), *br = at(n, y.upper, x.upper);
            for (int64_t k = 0; k < c; ++k) {
              tl[k] += static_cast<T>(gp[k] * wy0 * wx0);
              tr[k] += static_cast<T>(gp[k] * wy0 * wx1);
              bl[k] += static_cast<T>(gp[k] * wy1 * wx0);
              br[k] += static_cast<T>(gp[k] * wy1 * wx1);
            }
          }
        }
      }
    });
  }
  context.set_output(0, std::move(out));
}

using NearestGradTypes = TypeList<float, double, int8_t, uint8_t, int32_t>;

void compute_nearest_grad(KernelContext& context) {
  const Tensor& grads = context.input(0);
  const Tensor& size = context.input(1);
  if (size.shape() != Shape{2}) {
    throw Error("size must be a 1-D tensor of 2 elements [height, width], got shape " + shape_string(size.shape()));
  }
  const int64_t h = size.data<int32_t>()[0], w = size.data<int32_t>()[1];
  if (h <= 0 || w <= 0) throw Error("size [" + std::to_string(h) + ", " + std::to_string(w) + "] must be positive");
  check_grads(grads, h, w);
  const int64_t n = grads.shape()[0], gh = grads.shape()[1], gw = grads.shape()[2], c = grads.shape()[3];
  Tensor out(grads.dtype(), {n, h, w, c});
  if (grads.num_elements() > 0) {
    const bool align = context.attr_bool("align_corners"), half = context.attr_bool("half_pixel_centers");
    const std::vector<int64_t> rows = nearest_indices(h, gh, align, half);
    const std::vector<int64_t> cols = nearest_indices(w, gw, align, half);
    dispatch(NearestGradTypes{}, grads.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = grads.data<T>();
      T* o = out.data<T>();
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t i = 0; i < gh; ++i) {
          for (int64_t j = 0; j < gw; ++j) {
            const T* gp = g + ((b * gh + i) * gw + j) * c;
            T* op = o + ((b * h + rows[i]) * w + cols[j]) * c;
            // integers wrap as TF's do (two's complement), without signed overflow in C++
            for (int64_t k = 0; k < c; ++k) op[k] = add(op[k], gp[k]);
          }
        }
      }
    });
  }
  context.set_output(0, std::move(out));
}

const std::vector<DataType> kImageTypes =
    dtypes_of(TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t>{});

REGISTER_KERNEL(Kernel("ResizeNearestNeighbor")
                    .input("images", "T")
                    .input("size", graphdef::DT_INT32)
                    .output("T")
                    .type_attr("T", kImageTypes)
                    .bool_attr("align_corners", false)
                    .bool_attr("half_pixel_centers", false)
                    .compute(compute_nearest));

REGISTER_KERNEL(Kernel("ResizeBilinear")
                    .input("images", "T")
                    .input("size", graphdef::DT_INT32)
                    .output(graphdef::DT_FLOAT)
                    .type_attr("T", kImageTypes)
                    .bool_attr("align_corners", false)
                    .bool_attr("half_pixel_centers", false)
                    .compute(compute_bilinear));

REGISTER_KERNEL(Kernel("ResizeBilinearGrad")
                    .input("grads", graphdef::DT_FLOAT)
                    .input("original_image", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(TypeList<float, double>{}))
                    .bool_attr("align_corners", false)
                    .bool_attr("half_pixel_centers", false)
                    .compute(compute_bilinear_grad));

REGISTER_KERNEL(Kernel("ResizeNearestNeighborGrad")
                    .input("grads", "T")
                    .input("size", graphdef::DT_INT32)
                    .output("T")
                    .type_attr("T", dtypes_of(NearestGradTypes{}))
                    .bool_attr("align_corners", false)
                    .bool_attr("half_pixel_centers", false)
                    .compute(compute_nearest_grad));

}  // namespace
}  // namespace graphrun
