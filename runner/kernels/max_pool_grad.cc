// MaxPoolGrad, NHWC, with TensorFlow's rules as Python's graphrun has them:
// each window's max is found again from orig_input, over real elements in
// row-major order, the first one taken and replaced only by a strictly
// greater one, and the window's gradient is added there.
#include <vector>

#include "core/int_arith.h"
#include "kernels/pool_common.h"

namespace graphrun {
namespace {

// Per window and channel, the tap (a * KW + b) holding its max; -1 for a
// window that covers no real element (only possible with EXPLICIT padding).
template <class T>
std::vector<int32_t> argmax_taps(const ConvShape& s, const T* x) {
  const WindowGeometry& g = s.window;
  std::vector<int32_t> taps(static_cast<std::size_t>(s.pixels() * s.c), -1);
  std::vector<T> best(static_cast<std::size_t>(s.c));
  for_each_output_row(s, 0, s.pixels(), [&](int64_t n, int64_t oy, int64_t, int64_t pixels, int64_t done) {
    for (int64_t ox = 0; ox < pixels; ++ox) {
      int32_t* tap = taps.data() + (done + ox) * s.c;
      for_each_real_tap(s, n, oy, ox, [&](int64_t a, int64_t b, int64_t pixel) {
        const T* in = x + pixel * s.c;
        const int32_t k = static_cast<int32_t>(a * g.kw + b);
        for (int64_t c = 0; c < s.c; ++c) {
          if (tap[c] < 0 || best[c] < in[c]) {
            best[c] = in[c];
            tap[c] = k;
          }
        }
      });
    }
  });
  return taps;
}

// Python's order of additions: tap by tap, every window whose max is at that
// tap adds its gradient, so a cell shared by several windows sums them in
// tap order, starting from 0.
template <class T>
void max_pool_grad(const ConvShape& s, const T* x, const T* grad, T* dx) {
  const WindowGeometry& g = s.window;
  const std::vector<int32_t> taps = argmax_taps(s, x);
  const TapRange rows = taps_inside_any(g.rows, g.kh, g.stride_h, g.dilation_h, s.h);
  const TapRange cols = taps_inside_any(g.cols, g.kw, g.stride_w, g.dilation_w, s.w);
  for (int64_t a = rows.first; a < rows.last; ++a) {
    for (int64_t b = cols.first; b < cols.last; ++b) {
      const int32_t k = static_cast<int32_t>(a * g.kw + b);
      for_each_output_row(s, 0, s.pixels(), [&](int64_t n, int64_t oy, int64_t, int64_t pixels, int64_t done) {
        const int64_t r = oy * g.stride_h - g.rows.before + a * g.dilation_h;
        if (r < 0 || r >= s.h) return;
        for (int64_t ox = 0; ox < pixels; ++ox) {
          const int64_t col = ox * g.stride_w - g.cols.before + b * g.dilation_w;
          if (col < 0 || col >= s.w) continue;
          const int64_t window = (done + ox) * s.c;
          T* to = dx + ((n * s.h + r) * s.w + col) * s.c;
          for (int64_t c = 0; c < s.c; ++c) {
            if (taps[window + c] == k) to[c] = add(to[c], grad[window + c]);
          }
        }
      });
    }
  }
}

void compute_max_pool_grad(KernelContext& context) {
  const Tensor& input = context.input(0);
  const Tensor& grad = context.input(2);
  const ConvShape s = pool_shape(context, input.shape());
  check_pooled_grad(grad, s);
  Tensor output(input.dtype(), input.shape());
  dispatch(NumericTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_grad<T>(s, input.data<T>(), grad.data<T>(), output.data<T>());
  });
  context.set_output(0, std::move(output));
}

REGISTER_KERNEL(declare_pool_attrs(Kernel("MaxPoolGrad")
                                       .input("orig_input", "T")
                                       .input("orig_output", "T")
                                       .input("grad", "T")
                                       .output("T")
                                       .type_attr("T", dtypes_of(NumericTypes{}), graphdef::DT_FLOAT),
                                   true)
                    .shape(max_pool_grad_shape)
                    .compute(compute_max_pool_grad));

}  // namespace
}  // namespace graphrun
