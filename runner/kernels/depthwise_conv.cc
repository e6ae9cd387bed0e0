// DepthwiseConv2dNative, NHWC: filter [KH, KW, C, M] convolves each input
// channel c on its own into output channels c*M .. c*M + M-1. As Python's
// graphrun: every output starts at 0 and adds x * w tap by tap in row-major
// order, padding taps included as 0 * w (so an inf weight at the border gives
// NaN there too).
#include "kernels/conv_common.h"

namespace graphrun {
namespace {

template <class T>
void depthwise(const ConvShape& s, const T* x, const T* filter, int64_t multiplier, T* y) {
  const WindowGeometry& g = s.window;
  const int64_t out_channels = s.c * multiplier;
  for_each_output_row(s, 0, s.pixels(), [&](int64_t n, int64_t oy, int64_t, int64_t pixels, int64_t done) {
    for (int64_t ox = 0; ox < pixels; ++ox) {
      T* out = y + (done + ox) * out_channels;
      std::fill(out, out + out_channels, T(0));
      for (int64_t a = 0; a < g.kh; ++a) {
        const int64_t r = oy * g.stride_h - g.rows.before + a * g.dilation_h;
        for (int64_t b = 0; b < g.kw; ++b) {
          const int64_t col = ox * g.stride_w - g.cols.before + b * g.dilation_w;
          const bool real = r >= 0 && r < s.h && col >= 0 && col < s.w;
          const T* in = real ? x + ((n * s.h + r) * s.w + col) * s.c : nullptr;
          const T* w = filter + (a * g.kw + b) * out_channels;
          for (int64_t c = 0; c < s.c; ++c) {
            const T v = real ? in[c] : T(0);
            for (int64_t m = 0; m < multiplier; ++m) out[c * multiplier + m] += v * w[c * multiplier + m];
          }
        }
      }
    }
  });
}

void compute_depthwise(KernelContext& context) {
  const Tensor& input = context.input(0);
  const Tensor& filter = context.input(1);
  const ConvShape s = conv_shape(input.shape(), filter.shape(), conv_window_attrs(context));
  const int64_t multiplier = filter.shape()[3];
  Tensor output = Tensor::uninitialized(input.dtype(), {s.n, s.window.rows.out, s.window.cols.out, s.c * multiplier});
  dispatch(FloatTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    depthwise<T>(s, input.data<T>(), filter.data<T>(), multiplier, output.data<T>());
  });
  context.set_output(0, std::move(output));
}

REGISTER_KERNEL(declare_conv_attrs(Kernel("DepthwiseConv2dNative")
                                       .input("input", "T")
                                       .input("filter", "T")
                                       .output("T")
                                       .type_attr("T", dtypes_of(FloatTypes{})),
                                   false)
                    .compute(compute_depthwise));

}  // namespace
}  // namespace graphrun
