// AvgPool and AvgPoolGrad, NHWC, float32 and float64. A window's mean is over
// the real (unpadded) elements it covers only, so a SAME window at the border
// divides by fewer than KH*KW; the gradient shares each window's gradient
// equally among those elements. Sums run tap by tap in row-major order from
// 0, as Python's do.
#include <vector>

#include "kernels/pool_common.h"
#include "kernels/lib/vec4.h"

namespace graphrun {
namespace {

// How many real rows (or columns) window `o` of an axis covers.
int64_t real_taps(const WindowAxis& axis, int64_t o, int64_t k, int64_t stride, int64_t dilation, int64_t size) {
  const TapRange taps = taps_inside(axis, o, k, stride, dilation, size);
  return taps.last - taps.first;
}

// Per output pixel of one image, the count of real elements its window covers.
std::vector<int64_t> window_counts(const ConvShape& s) {
  const WindowGeometry& g = s.window;
  std::vector<int64_t> counts(static_cast<std::size_t>(g.rows.out * g.cols.out));
  for (int64_t oy = 0; oy < g.rows.out; ++oy) {
    const int64_t rows = real_taps(g.rows, oy, g.kh, g.stride_h, g.dilation_h, s.h);
    for (int64_t ox = 0; ox < g.cols.out; ++ox) {
      counts[oy * g.cols.out + ox] = rows * real_taps(g.cols, ox, g.kw, g.stride_w, g.dilation_w, s.w);
    }
  }
  return counts;
}

template <class T>
void add_channels(const T* in, int64_t channels, T* out) {
  int64_t c = 0;
  if constexpr (std::is_same_v<T, float>) {
    for (; c + 4 <= channels; c += 4) store4(out + c, load4(out + c) + load4(in + c));
  }
  for (; c < channels; ++c) out[c] += in[c];
}

template <class T>
void avg_pool(const ConvShape& s, const T* x, T* y) {
  const std::vector<int64_t> counts = window_counts(s);
  for_each_output_pixel(s, [&](int64_t n, int64_t oy, int64_t ox, int64_t pixel) {
    T* out = y + pixel * s.c;
    std::fill(out, out + s.c, T(0));
    for_each_real_tap(s, n, oy, ox, [&](int64_t, int64_t, int64_t in) { add_channels(x + in * s.c, s.c, out); });
    const T count = static_cast<T>(counts[oy * s.window.cols.out + ox]);
    for (int64_t c = 0; c < s.c; ++c) out[c] /= count;
  });
}

void compute_avg_pool(KernelContext& context) {
  const Tensor& input = context.input(0);
  const ConvShape s = pool_shape(context, input.shape());
  Tensor output = Tensor::uninitialized(input.dtype(), {s.n, s.window.rows.out, s.window.cols.out, s.c});
  dispatch(FloatTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool<T>(s, input.data<T>(), output.data<T>());
  });
  context.set_output(0, std::move(output));
}

// Python's order: the shares are made first (gradient / count), then added
// tap by tap, so each cell sums its windows' shares in tap order from 0.
template <class T>
void avg_pool_grad(const ConvShape& s, const T* grad, T* dx) {
  const WindowGeometry& g = s.window;
  const std::vector<int64_t> counts = window_counts(s);
  std::vector<T> shares(grad, grad + s.pixels() * s.c);
  const int64_t per_image = g.rows.out * g.cols.out;
  for (int64_t p = 0; p < s.pixels(); ++p) {
    const T count = static_cast<T>(counts[p % per_image]);
    for (int64_t c = 0; c < s.c; ++c) shares[p * s.c + c] /= count;
  }
  const TapRange rows = taps_inside_any(g.rows, g.kh, g.stride_h, g.dilation_h, s.h);
  const TapRange cols = taps_inside_any(g.cols, g.kw, g.stride_w, g.dilation_w, s.w);
  for (int64_t a = rows.first; a < rows.last; ++a) {
    for (int64_t b = cols.first; b < cols.last; ++b) {
      for_each_output_row(s, 0, s.pixels(), [&](int64_t n, int64_t oy, int64_t, int64_t pixels, int64_t done) {
        const int64_t r = oy * g.stride_h - g.rows.before + a * g.dilation_h;
        if (r < 0 || r >= s.h) return;
        for (int64_t ox = 0; ox < pixels; ++ox) {
          const int64_t col = ox * g.stride_w - g.cols.before + b * g.dilation_w;
          if (col < 0 || col >= s.w) continue;
          add_channels(shares.data() + (done + ox) * s.c, s.c, dx + ((n * s.h + r) * s.w + col) * s.c);
        }
      });
    }
  }
}

void compute_avg_pool_grad(KernelContext& context) {
  const Shape shape = [&] {
    const Tensor& sizes = context.input(0);
    if (sizes.rank() > 1 || sizes.num_elements() != 4) {
      throw Error("orig_input_shape must have 4 entries, got shape " + shape_string(sizes.shape()));
    }
    const int32_t* v = sizes.data<int32_t>();
    return Shape(v, v + 4);
  }();
  const Tensor& grad = context.input(1);
  const ConvShape s = pool_shape(context, shape);
  check_pooled_grad(grad, s);
  Tensor output(grad.dtype(), shape);  // checks the dims are not negative
  dispatch(FloatTypes{}, grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool_grad<T>(s, grad.data<T>(), output.data<T>());
  });
  context.set_output(0, std::move(output));
}

REGISTER_KERNEL(
    declare_pool_attrs(Kernel("AvgPool").input("value", "T").output("T").type_attr("T", dtypes_of(FloatTypes{})), false)
        .shape(pooled_shape)
        .compute(compute_avg_pool));

REGISTER_KERNEL(declare_pool_attrs(Kernel("AvgPoolGrad")
                                       .input("orig_input_shape", graphdef::DT_INT32)
                                       .input("grad", "T")
                                       .output("T")
                                       .type_attr("T", dtypes_of(FloatTypes{})),
                                   false)
                    .shape(avg_pool_grad_shape)
                    .compute(compute_avg_pool_grad));

}  // namespace
}  // namespace graphrun
