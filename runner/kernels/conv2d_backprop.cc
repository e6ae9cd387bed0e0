// Conv2DBackpropInput and Conv2DBackpropFilter, NHWC, as Python's graphrun
// computes them: the input gradient is col2im(out_backprop * filter^T), the
// patch rows added back where Conv2D read them; the filter gradient is
// patches^T * out_backprop. Both work a tile of pixels at a time so no full
// patch matrix is ever held. Floats multiply with Eigen; int32 (input
// gradient only, as TF) wraps. A grouped convolution's backprops (the
// filter's in channels divide the input's, as Conv2D groups) run each group
// as an ungrouped backprop on copies of its channel slices.
#include <Eigen/Core>
#include <vector>

#include "core/int_arith.h"
#include "kernels/conv_common.h"

namespace graphrun {
namespace {

using BackpropInputTypes = TypeList<float, double, int32_t>;

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// patches [rows, k] = grad [rows, out] * filter [k, out]^T
template <class T>
void grad_times_filter(const T* grad, int64_t rows, const T* filter, int64_t k, int64_t out, T* patches) {
  if constexpr (std::is_floating_point_v<T>) {
    const Eigen::Map<const RowMajor<T>> G(grad, rows, out);
    const Eigen::Map<const RowMajor<T>> F(filter, k, out);
    Eigen::Map<RowMajor<T>> P(patches, rows, k);
    P.noalias() = G * F.transpose();
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < k; ++i) {
        T sum = 0;
        for (int64_t o = 0; o < out; ++o) sum = add(sum, mul(grad[r * out + o], filter[i * out + o]));
        patches[r * k + i] = sum;
      }
    }
  }
}

// The input gradient of an ungrouped convolution of shape s into `output`
// (zeroed, [N,H,W,C]): filter [KH,KW,C,out], grad [pixels, out].
template <class T>
void backprop_input(const ConvShape& s, const T* filter, const T* grad, int64_t out_channels, T* output) {
  const int64_t k = s.patch_size();
  const int64_t pixels = s.pixels();
  const int64_t tile = tile_pixels(k, sizeof(T));
  std::vector<T> patches(static_cast<std::size_t>(std::min(tile, pixels) * k));
  for (int64_t begin = 0; begin < pixels; begin += tile) {
    const int64_t rows = std::min(tile, pixels - begin);
    grad_times_filter(grad + begin * out_channels, rows, filter, k, out_channels, patches.data());
    col2im_tile_add(s, patches.data(), begin, rows, output, [](T a, T b) { return add(a, b); });
  }
}

// The filter gradient of an ungrouped convolution of shape s into `output`
// (zeroed, [KH*KW*C, out]): input [N,H,W,C], grad [pixels, out].
template <class T>
void backprop_filter(const ConvShape& s, const T* input, const T* grad, int64_t out_channels, T* output) {
  const int64_t k = s.patch_size();
  const int64_t pixels = s.pixels();
  const int64_t tile = tile_pixels(k, sizeof(T));
  std::vector<T> patches(static_cast<std::size_t>(std::min(tile, pixels) * k));
  Eigen::Map<RowMajor<T>> dF(output, k, out_channels);
  for (int64_t begin = 0; begin < pixels; begin += tile) {
    const int64_t rows = std::min(tile, pixels - begin);
    im2col_tile(s, input, begin, rows, patches.data());
    const Eigen::Map<const RowMajor<T>> P(patches.data(), rows, k);
    const Eigen::Map<const RowMajor<T>> G(grad + begin * out_channels, rows, out_channels);
    dF.noalias() += P.transpose() * G;
  }
}

// Channels [first, first + count) of each of `rows` rows of width `width`, packed.
template <class T>
std::vector<T> slice_channels(const T* from, int64_t rows, int64_t width, int64_t first, int64_t count) {
  std::vector<T> out(static_cast<std::size_t>(rows * count));
  for (int64_t r = 0; r < rows; ++r) std::copy_n(from + r * width + first, count, out.data() + r * count);
  return out;
}

// Packed rows of `count` channels put back at [first, first + count) of rows of width `width`.
template <class T>
void unslice_channels(const std::vector<T>& from, int64_t rows, int64_t width, int64_t first, int64_t count, T* to) {
  for (int64_t r = 0; r < rows; ++r) std::copy_n(from.data() + r * count, count, to + r * width + first);
}

// How a backprop's input channels c split over a filter's in channels ci and
// out channels co: 1 group when they are equal, else Conv2D's grouping.
int64_t backprop_groups(const Shape& input, const Shape& filter) {
  if (input.size() != 4 || filter.size() != 4 || input[3] == filter[2]) return 1;
  return conv_groups(input, filter);
}

// One group's shape: the input with ci channels, the filter with co / groups out channels.
ConvShape group_shape(const Shape& input, const Shape& filter, int64_t groups, const WindowAttrs& window,
                      const std::string& filter_what) {
  // one group: the shapes as given, whose ranks conv_shape checks (fuzz finding: a rank-1
  // filter_sizes was indexed as if it had 4 dims)
  if (groups == 1) return conv_shape(input, filter, window, filter_what);
  return conv_shape({input[0], input[1], input[2], filter[2]}, {filter[0], filter[1], filter[2], filter[3] / groups},
                    window, filter_what);
}

void compute_backprop_input(KernelContext& context) {
  const Shape sizes = read_sizes(context.input(0), "input_sizes");
  const Tensor& filter = context.input(1);
  const Tensor& grad = context.input(2);
  const int64_t groups = backprop_groups(sizes, filter.shape());
  const ConvShape s = group_shape(sizes, filter.shape(), groups, conv_window_attrs(context), "filter");
  const int64_t out_channels = filter.shape()[3];
  check_out_backprop(grad, s, out_channels);
  Tensor output(grad.dtype(), sizes);
  dispatch(BackpropInputTypes{}, grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (groups == 1) return backprop_input(s, filter.data<T>(), grad.data<T>(), out_channels, output.data<T>());
    // nothing to add up (and an empty tensor bounds no group count): the gradient stays zero
    if (output.num_elements() == 0 || filter.num_elements() == 0 || grad.num_elements() == 0) return;
    const int64_t cog = out_channels / groups, ci = s.c, taps = s.window.kh * s.window.kw * ci;
    const int64_t pixels_in = s.n * s.h * s.w;
    std::vector<T> dx(static_cast<std::size_t>(pixels_in * ci));
    for (int64_t g = 0; g < groups; ++g) {
      std::fill(dx.begin(), dx.end(), T(0));
      const std::vector<T> f = slice_channels(filter.data<T>(), taps, out_channels, g * cog, cog);
      const std::vector<T> dy = slice_channels(grad.data<T>(), s.pixels(), out_channels, g * cog, cog);
      backprop_input(s, f.data(), dy.data(), cog, dx.data());
      unslice_channels(dx, pixels_in, sizes[3], g * ci, ci, output.data<T>());
    }
  });
  context.set_output(0, std::move(output));
}

void compute_backprop_filter(KernelContext& context) {
  const Tensor& input = context.input(0);
  const Shape sizes = read_sizes(context.input(1), "filter_sizes");
  const Tensor& grad = context.input(2);
  const int64_t groups = backprop_groups(input.shape(), sizes);
  const ConvShape s = group_shape(input.shape(), sizes, groups, conv_window_attrs(context), "filter_sizes");
  const int64_t out_channels = sizes[3];
  check_out_backprop(grad, s, out_channels);
  Tensor output(input.dtype(), sizes);
  dispatch(FloatTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (groups == 1) return backprop_filter(s, input.data<T>(), grad.data<T>(), out_channels, output.data<T>());
    if (output.num_elements() == 0 || input.num_elements() == 0 || grad.num_elements() == 0) return;
    const int64_t cog = out_channels / groups, ci = s.c, taps = s.window.kh * s.window.kw * ci;
    const int64_t pixels_in = s.n * s.h * s.w;
    std::vector<T> df(static_cast<std::size_t>(taps * cog));
    for (int64_t g = 0; g < groups; ++g) {
      std::fill(df.begin(), df.end(), T(0));
      const std::vector<T> x = slice_channels(input.data<T>(), pixels_in, input.shape()[3], g * ci, ci);
      const std::vector<T> dy = slice_channels(grad.data<T>(), s.pixels(), out_channels, g * cog, cog);
      backprop_filter(s, x.data(), dy.data(), cog, df.data());
      unslice_channels(df, taps, out_channels, g * cog, cog, output.data<T>());
    }
  });
  context.set_output(0, std::move(output));
}

REGISTER_KERNEL(declare_conv_attrs(Kernel("Conv2DBackpropInput")
                                       .input("input_sizes", graphdef::DT_INT32)
                                       .input("filter", "T")
                                       .input("out_backprop", "T")
                                       .output("T")
                                       .type_attr("T", dtypes_of(BackpropInputTypes{})),
                                   true)
                    .compute(compute_backprop_input));

REGISTER_KERNEL(declare_conv_attrs(Kernel("Conv2DBackpropFilter")
                                       .input("input", "T")
                                       .input("filter_sizes", graphdef::DT_INT32)
                                       .input("out_backprop", "T")
                                       .output("T")
                                       .type_attr("T", dtypes_of(FloatTypes{})),
                                   true)
                    .compute(compute_backprop_filter));

}  // namespace
}  // namespace graphrun
