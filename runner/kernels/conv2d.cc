// Conv2D, NHWC (grouped when the filter's in channels divide the input's),
// and the fusion pass's _FusedConv2D (bias and activation after it).
// float32 runs as a oneDNN primitive (lib/dnnl_conv.h) whenever oneDNN has
// one for the shapes; a 3x3 window with stride 1 over enough channels and
// pixels, with a constant filter, runs by Winograd's F(2x2, 3x3)
// (lib/winograd_conv.h) instead. The hand-written kernels are the fallback and serve the
// other dtypes: the patch matrix of the output pixels times the [KH*KW*C,
// out] filter. float32 is an implicit product (gemm_f32.h) that reads each
// patch straight from a zero-padded copy of the input, pixels shared out
// over the cores. float64 and int32 build the patch matrix a tile at a time;
// float64 multiplies with Eigen, int32 with wrap-around, as Python's numpy
// product does. A 1x1 window with stride 1 and no padding needs no patch
// matrix: the input already is one.
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "kernels/lib/dnnl_conv.h"
#include "kernels/lib/gemm_f32.h"
#include "kernels/lib/winograd_conv.h"
#include "kernels/lib/min_max.h"
#include "core/int_arith.h"
#include "kernels/conv_common.h"
#include "core/parallel.h"
#include "kernels/lib/vec4.h"

namespace graphrun {
namespace {

using ConvTypes = TypeList<float, double, int32_t>;

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

bool is_pointwise(const ConvShape& s) {
  const WindowGeometry& g = s.window;
  return g.kh == 1 && g.kw == 1 && g.stride_h == 1 && g.stride_w == 1 && g.rows.before == 0 && g.rows.after == 0 &&
         g.cols.before == 0 && g.cols.after == 0;
}

// rows x out = patches [rows, k] * filter [k, out], for one tile.
template <class T>
struct TileProduct {
  TileProduct(const T* filter, int64_t k, int64_t out) : filter(filter), k(k), out(out) {}

  void operator()(const T* patches, int64_t rows, T* result) const {
    if constexpr (std::is_same_v<T, double>) {
      const Eigen::Map<const RowMajor<T>> A(patches, rows, k);
      const Eigen::Map<const RowMajor<T>> B(filter, k, out);
      Eigen::Map<RowMajor<T>> C(result, rows, out);
      C.noalias() = A * B;
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t o = 0; o < out; ++o) {
          T sum = 0;
          for (int64_t i = 0; i < k; ++i) sum = add(sum, mul(patches[r * k + i], filter[i * out + o]));
          result[r * out + o] = sum;
        }
      }
    }
  }

  const T* filter;
  int64_t k, out;
};

template <class T>
void convolve(const ConvShape& s, const T* x, const T* filter, int64_t out_channels, T* y) {
  const int64_t pixels = s.pixels();
  const int64_t k = s.patch_size();
  const TileProduct<T> product(filter, k, out_channels);
  const double work = static_cast<double>(pixels) * static_cast<double>(k) * static_cast<double>(out_channels);
  if (is_pointwise(s)) {
    parallel_for(pixels, work,
                 [&](int64_t begin, int64_t end) { product(x + begin * k, end - begin, y + begin * out_channels); });
    return;
  }
  const int64_t tile = tile_pixels(k, sizeof(T));
  const int64_t tiles = (pixels + tile - 1) / tile;
  parallel_for(tiles, work, [&](int64_t first, int64_t last) {
    std::vector<T> patches(static_cast<std::size_t>(tile * k));
    for (int64_t t = first; t < last; ++t) {
      const int64_t begin = t * tile;
      const int64_t rows = std::min(tile, pixels - begin);
      im2col_tile(s, x, begin, rows, patches.data());
      product(patches.data(), rows, y + begin * out_channels);
    }
  });
}

// The input with its padding made real: [N, top + H + bottom, left + W + right, C]
// with zeros around, so every window lies inside. Padding taps then multiply
// a real 0.0, as Python's padded input does (0 * inf is NaN in both).
std::vector<float> pad_input(const ConvShape& s, const float* x, int64_t& hp, int64_t& wp) {
  const WindowGeometry& g = s.window;
  hp = s.h + g.rows.before + g.rows.after;
  wp = s.w + g.cols.before + g.cols.after;
  std::vector<float> padded(static_cast<std::size_t>(checked_num_elements({s.n, hp, wp, s.c}, graphdef::DT_FLOAT)));
  const int64_t row = s.w * s.c;
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t r = 0; r < s.h; ++r) {
      const float* from = x + (n * s.h + r) * row;
      std::copy(from, from + row, padded.data() + ((n * hp + r + g.rows.before) * wp + g.cols.before) * s.c);
    }
  }
  return padded;
}

// The hand-written float32 path, with a fused node's epilogue applied to
// each tile as it is made (while it is still in cache).
void convolve_f32(const ConvShape& s, const float* x, const float* filter, int64_t out_channels, float* y,
                  const float* bias, const Epilogue& epilogue) {
  const WindowGeometry& g = s.window;
  const int64_t pixels = s.pixels();
  if (pixels == 0 || out_channels == 0) return;
  const int64_t k = s.patch_size();
  const PackedRhs packed(filter, k, out_channels, out_channels);
  const double work = static_cast<double>(pixels) * static_cast<double>(k) * static_cast<double>(out_channels);
  if (is_pointwise(s)) {
    parallel_for(pixels, work, [&](int64_t begin, int64_t end) {
      gemm_f32(x + begin * k, end - begin, k, packed, y + begin * out_channels, out_channels);
      if (epilogue.bias) apply_epilogue(y + begin * out_channels, end - begin, out_channels, bias, epilogue);
    });
    return;
  }
  int64_t hp = s.h, wp = s.w;
  std::vector<float> padded;
  const bool pads = g.rows.before || g.rows.after || g.cols.before || g.cols.after;
  if (pads) padded = pad_input(s, x, hp, wp);
  const float* image = pads ? padded.data() : x;
  // One segment per window row, or per tap when dilation splits the row.
  std::vector<int64_t> offsets;
  for (int64_t a = 0; a < g.kh; ++a) {
    for (int64_t b = 0; b < (g.dilation_w == 1 ? 1 : g.kw); ++b) {
      offsets.push_back((a * g.dilation_h * wp + b * g.dilation_w) * s.c);
    }
  }
  const int64_t run = g.dilation_w == 1 ? g.kw * s.c : s.c;
  constexpr int64_t kTile = 256;
  const int64_t tiles = (pixels + kTile - 1) / kTile;
  parallel_for(tiles, work, [&](int64_t first, int64_t last) {
    std::vector<const float*> bases(kTile);
    for (int64_t t = first; t < last; ++t) {
      const int64_t begin = t * kTile;
      const int64_t count = std::min(kTile, pixels - begin);
      for_each_output_row(s, begin, count, [&](int64_t n, int64_t oy, int64_t ox0, int64_t row_pixels, int64_t done) {
        const float* row = image + (n * hp + oy * g.stride_h) * wp * s.c;
        for (int64_t i = 0; i < row_pixels; ++i) bases[done + i] = row + (ox0 + i) * g.stride_w * s.c;
      });
      conv_gemm_f32(bases.data(), count, offsets.data(), static_cast<int64_t>(offsets.size()), run, packed,
                    y + begin * out_channels, out_channels);
      if (epilogue.bias) apply_epilogue(y + begin * out_channels, count, out_channels, bias, epilogue);
    }
  });
}

// The hand-written grouped path: each group an ordinary Conv2D on copies.
void compute_grouped(const Tensor& input, const Tensor& filter, int64_t groups, const ConvShape& s, Tensor& output) {
  const int64_t c = input.shape()[3], ci = filter.shape()[2], co = filter.shape()[3];
  const int64_t cog = co / groups;
  const Shape& in = input.shape();
  dispatch(ConvTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t pixels_in = in[0] * in[1] * in[2], taps = filter.shape()[0] * filter.shape()[1] * ci;
    const int64_t pixels_out = s.pixels();
    std::vector<T> x(static_cast<std::size_t>(pixels_in * ci)), f(static_cast<std::size_t>(taps * cog)),
        y(static_cast<std::size_t>(pixels_out * cog));
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t p = 0; p < pixels_in; ++p) {
        std::copy_n(input.data<T>() + p * c + g * ci, ci, x.data() + p * ci);
      }
      for (int64_t t = 0; t < taps; ++t) std::copy_n(filter.data<T>() + t * co + g * cog, cog, f.data() + t * cog);
      if constexpr (std::is_same_v<T, float>) {
        convolve_f32(s, x.data(), f.data(), cog, y.data(), nullptr, Epilogue{});
      } else {
        convolve<T>(s, x.data(), f.data(), cog, y.data());
      }
      for (int64_t p = 0; p < pixels_out; ++p)
        std::copy_n(y.data() + p * cog, cog, output.data<T>() + p * co + g * cog);
    }
  });
}

// A Conv2D node's state: its window, and for a _FusedConv2D its epilogue;
// the oneDNN primitive is made at the first run (it needs the shapes).
struct ConvNode {
  WindowAttrs window;
  Epilogue epilogue;
  std::shared_ptr<DnnlConvolution> dnnl;
  std::shared_ptr<WinogradConvolution> winograd;
};

// The hand-written kernels, for every dtype, with a fused node's epilogue
// (bias and activation) for float32.
void compute_hand_written(const Tensor& input, const Tensor& filter, int64_t groups, const ConvShape& s,
                          const Tensor* bias, const Epilogue& epilogue, Tensor& output) {
  const int64_t out_channels = filter.shape()[3];
  if (groups != 1) {
    compute_grouped(input, filter, groups, s, output);
    if (bias) {
      apply_epilogue(output.data<float>(), output.num_elements() / std::max<int64_t>(out_channels, 1), out_channels,
                     bias->data<float>(), epilogue);
    }
    return;
  }
  dispatch(ConvTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      convolve_f32(s, input.data<T>(), filter.data<T>(), out_channels, output.data<T>(),
                   bias ? bias->data<float>() : nullptr, epilogue);
    } else {
      convolve<T>(s, input.data<T>(), filter.data<T>(), out_channels, output.data<T>());
    }
  });
}

// Conv2D, or with a bias a _FusedConv2D (and a residual added, when the
// residual pass made it). float32 goes to oneDNN when it has a primitive for
// the shapes; the hand-written kernels serve the rest.
void compute_conv_node(KernelContext& context) {
  const ConvNode& node = context.state<ConvNode>();
  const Tensor& given = context.input(0);  // maybe in channel blocks; its shape is the same
  const Tensor& filter = context.input(1);
  const bool grouped = given.rank() == 4 && filter.rank() == 4 && given.shape()[3] != filter.shape()[2];
  const int64_t groups = grouped ? conv_groups(given.shape(), filter.shape()) : 1;
  const Shape& in = given.shape();
  ConvShape s = grouped ? conv_shape({in[0], in[1], in[2], filter.shape()[2]}, filter.shape(), node.window)
                        : conv_shape(in, filter.shape(), node.window);
  const int64_t out_channels = filter.shape()[3];
  const Shape out_shape = {s.n, s.window.rows.out, s.window.cols.out, out_channels};
  check_filter_elements(filter.shape(), out_shape);
  const Tensor* bias = fused_bias(context, node.epilogue, out_shape);
  ConvShape whole = s;
  whole.c = in[3];
  const bool residual_fits = !node.epilogue.residual || context.input(3).shape() == out_shape;
  const Layout layout = residual_fits
                            ? conv_layout(context, given, out_channels, false,
                                          [&] {
                                            return node.dnnl->ready(whole, groups, out_channels, true,
                                                                    filter.data<float>(), context.input_is_constant(1));
                                          })
                            : Layout::kPlain;
  TensorPtr converted;
  const Tensor& input = input_in_layout(context, 0, layout, converted);
  auto dnnl = [&](float* y) {
    return node.dnnl->run(whole, groups, out_channels, input.data<float>(), filter.data<float>(),
                          context.input_is_constant(1), bias ? bias->data<float>() : nullptr, y,
                          layout == Layout::kChannelBlocks8);
  };
  if (node.epilogue.residual) {
    Epilogue bias_only;
    bias_only.bias = true;
    run_residual_conv(context, 3, out_shape, layout, node.epilogue, dnnl,
                      [&](Tensor& output) { compute_hand_written(input, filter, groups, s, bias, bias_only, output); });
    return;
  }
  Tensor output = Tensor::uninitialized(input.dtype(), out_shape);
  const bool winograd = input.dtype() == graphdef::DT_FLOAT && layout == Layout::kPlain &&
                        context.input_is_constant(1) && node.winograd->suits(whole, groups, out_channels) &&
                        node.winograd->run(whole, out_channels, input.data<float>(), filter.data<float>(),
                                           bias ? bias->data<float>() : nullptr, output.data<float>());
  if (winograd) {
    context.set_output(0, std::move(output));
    return;
  }
  if (input.dtype() != graphdef::DT_FLOAT || !dnnl(output.data<float>())) {
    if (layout != Layout::kPlain) throw Error("internal error: oneDNN refused a convolution it had prepared");
    compute_hand_written(input, filter, groups, s, bias, node.epilogue, output);
  }
  output.set_layout(layout);
  context.set_output(0, std::move(output));
}

REGISTER_KERNEL(declare_conv_attrs(Kernel("Conv2D")
                                       .input("input", "T")
                                       .input("filter", "T")
                                       .output("T")
                                       .type_attr("T", dtypes_of(ConvTypes{}))
                                       .channel_block_inputs({0}),
                                   true)
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      return ConvNode{read_window_attrs(kernel, node, true, true), Epilogue{},
                                      std::make_shared<DnnlConvolution>(Epilogue{}),
                                      std::make_shared<WinogradConvolution>(Epilogue{})};
                    })
                    .compute(compute_conv_node));

// TensorFlow's remapper op, written only by the fusion pass
// (runner/passes/fuse_conv_bias_activation.cc); float32 only.
REGISTER_KERNEL(declare_conv_attrs(declare_fused_epilogue(Kernel("_FusedConv2D")
                                                              .input("input", "T")
                                                              .input("filter", "T")
                                                              .output("T")
                                                              .type_attr("T", {graphdef::DT_FLOAT})
                                                              .channel_block_inputs({0, 3})),
                                   true)
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      const Epilogue epilogue = read_fused_ops(kernel, node, true);
                      return ConvNode{read_window_attrs(kernel, node, true, true), epilogue,
                                      std::make_shared<DnnlConvolution>(epilogue),
                                      std::make_shared<WinogradConvolution>(epilogue)};
                    })
                    .compute(compute_conv_node));

}  // namespace
}  // namespace graphrun
