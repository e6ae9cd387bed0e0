// DepthwiseConv2dNative, NHWC: filter [KH, KW, C, M] convolves each input
// channel c on its own into output channels c*M .. c*M + M-1, and the fusion
// pass's _FusedDepthwiseConv2dNative (bias and activation after it). float32
// runs as a oneDNN grouped convolution (lib/dnnl_conv.h) where oneDNN has a
// primitive for the shapes; the hand-written kernel below serves the rest,
// and float64. As Python's
// graphrun: every output starts at 0 and adds x * w tap by tap in row-major
// order, padding taps included as 0 * w (so an inf weight at the border gives
// NaN there too). With every weight finite a padding tap adds a zero to a sum
// that started at +0.0 and so can never be -0.0: a no-op, skipped, which keeps
// a huge filter over a small input from costing its full size per pixel.
#include <algorithm>
#include <cmath>
#include <memory>

#include "kernels/conv_common.h"
#include "kernels/lib/dnnl_conv.h"

namespace graphrun {
namespace {

// The taps k in [0, taps) whose position base + k * step lies in [0, size).
void taps_inside(int64_t base, int64_t step, int64_t size, int64_t taps, int64_t& first, int64_t& end) {
  first = base >= 0 ? 0 : (-base + step - 1) / step;
  end = base >= size ? 0 : std::min(taps, (size - 1 - base) / step + 1);
  if (first > end) first = end;
}

template <class T>
void depthwise(const ConvShape& s, const T* x, const T* filter, int64_t multiplier, T* y) {
  const WindowGeometry& g = s.window;
  const int64_t out_channels = s.c * multiplier;
  const int64_t weights = g.kh * g.kw * out_channels;
  const bool finite = std::all_of(filter, filter + weights, [](T w) { return std::isfinite(w); });
  for_each_output_row(s, 0, s.pixels(), [&](int64_t n, int64_t oy, int64_t, int64_t pixels, int64_t done) {
    for (int64_t ox = 0; ox < pixels; ++ox) {
      T* out = y + (done + ox) * out_channels;
      std::fill(out, out + out_channels, T(0));
      int64_t a0 = 0, a1 = g.kh, b0 = 0, b1 = g.kw;
      if (finite) {
        taps_inside(oy * g.stride_h - g.rows.before, g.dilation_h, s.h, g.kh, a0, a1);
        taps_inside(ox * g.stride_w - g.cols.before, g.dilation_w, s.w, g.kw, b0, b1);
      }
      for (int64_t a = a0; a < a1; ++a) {
        const int64_t r = oy * g.stride_h - g.rows.before + a * g.dilation_h;
        for (int64_t b = b0; b < b1; ++b) {
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

// A DepthwiseConv2dNative node's state: its window and, for the fusion
// pass's _FusedDepthwiseConv2dNative, its epilogue; the oneDNN primitive (a
// convolution with one group per input channel) is made at the first run.
struct DepthwiseNode {
  WindowAttrs window;
  Epilogue epilogue;
  std::shared_ptr<DnnlConvolution> dnnl;
};

void compute_depthwise(KernelContext& context) {
  const DepthwiseNode& node = context.state<DepthwiseNode>();
  const Tensor& given = context.input(0);  // maybe in channel blocks; its shape is the same
  const Tensor& filter = context.input(1);
  const ConvShape s = conv_shape(given.shape(), filter.shape(), node.window);
  const int64_t multiplier = filter.shape()[3];
  const Shape out_shape = {s.n, s.window.rows.out, s.window.cols.out, s.c * multiplier};
  const Tensor* bias = fused_bias(context, node.epilogue, out_shape);
  const bool residual_fits = !node.epilogue.residual || context.input(3).shape() == out_shape;
  const Layout layout = residual_fits
                            ? conv_layout(context, given, out_shape[3], true,
                                          [&] {
                                            return node.dnnl->ready(s, s.c, out_shape[3], true, filter.data<float>(),
                                                                    context.input_is_constant(1));
                                          })
                            : Layout::kPlain;
  TensorPtr converted;
  const Tensor& input = input_in_layout(context, 0, layout, converted);
  auto dnnl = [&](float* y) {
    return node.dnnl->run(s, s.c, s.c * multiplier, input.data<float>(), filter.data<float>(),
                          context.input_is_constant(1), bias ? bias->data<float>() : nullptr, y,
                          layout == Layout::kChannelBlocks8);
  };
  // The hand-written kernel, then the epilogue `e` of a fused node.
  auto hand_written = [&](Tensor& output, const Epilogue& e) {
    dispatch(FloatTypes{}, input.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      depthwise<T>(s, input.data<T>(), filter.data<T>(), multiplier, output.data<T>());
    });
    if (bias) apply_epilogue(output.data<float>(), s.pixels(), out_shape[3], bias->data<float>(), e);
  };
  if (node.epilogue.residual) {
    Epilogue bias_only;
    bias_only.bias = true;
    run_residual_conv(context, 3, out_shape, layout, node.epilogue, dnnl,
                      [&](Tensor& output) { hand_written(output, bias_only); });
    return;
  }
  Tensor output = Tensor::uninitialized(input.dtype(), out_shape);
  if (input.dtype() != graphdef::DT_FLOAT || !dnnl(output.data<float>())) {
    if (layout != Layout::kPlain) throw Error("internal error: oneDNN refused a convolution it had prepared");
    hand_written(output, node.epilogue);
  }
  output.set_layout(layout);
  context.set_output(0, std::move(output));
}

REGISTER_KERNEL(declare_conv_attrs(Kernel("DepthwiseConv2dNative")
                                       .input("input", "T")
                                       .input("filter", "T")
                                       .output("T")
                                       .type_attr("T", dtypes_of(FloatTypes{}))
                                       .channel_block_inputs({0}),
                                   false)
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      return DepthwiseNode{read_window_attrs(kernel, node, true, true), Epilogue{},
                                           std::make_shared<DnnlConvolution>(Epilogue{})};
                    })
                    .compute(compute_depthwise));

// TensorFlow's remapper op, written only by the fusion pass; float32 only.
REGISTER_KERNEL(declare_conv_attrs(declare_fused_epilogue(Kernel("_FusedDepthwiseConv2dNative")
                                                              .input("input", "T")
                                                              .input("filter", "T")
                                                              .output("T")
                                                              .type_attr("T", {graphdef::DT_FLOAT})
                                                              .channel_block_inputs({0, 3})),
                                   false)
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      const Epilogue epilogue = read_fused_ops(kernel, node, true);
                      return DepthwiseNode{read_window_attrs(kernel, node, true, true), epilogue,
                                           std::make_shared<DnnlConvolution>(epilogue)};
                    })
                    .compute(compute_depthwise));

}  // namespace
}  // namespace graphrun
