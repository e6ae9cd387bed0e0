// Conv2DBackpropInput and Conv2DBackpropFilter, NHWC, as Python's graphrun
// computes them: the input gradient is col2im(out_backprop * filter^T), the
// patch rows added back where Conv2D read them; the filter gradient is
// patches^T * out_backprop. Both work a tile of pixels at a time so no full
// patch matrix is ever held. Floats multiply with Eigen; int32 (input
// gradient only, as TF) wraps.
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

void compute_backprop_input(KernelContext& context) {
  const Shape sizes = read_sizes(context.input(0), "input_sizes");
  const Tensor& filter = context.input(1);
  const Tensor& grad = context.input(2);
  const ConvShape s = conv_shape(sizes, filter.shape(), conv_window_attrs(context));
  const int64_t out_channels = filter.shape()[3];
  check_out_backprop(grad, s, out_channels);
  Tensor output(grad.dtype(), sizes);
  dispatch(BackpropInputTypes{}, grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t k = s.patch_size();
    const int64_t pixels = s.pixels();
    const int64_t tile = tile_pixels(k, sizeof(T));
    std::vector<T> patches(static_cast<std::size_t>(std::min(tile, pixels) * k));
    for (int64_t begin = 0; begin < pixels; begin += tile) {
      const int64_t rows = std::min(tile, pixels - begin);
      grad_times_filter(grad.data<T>() + begin * out_channels, rows, filter.data<T>(), k, out_channels,
                        patches.data());
      col2im_tile_add(s, patches.data(), begin, rows, output.data<T>(), [](T a, T b) { return add(a, b); });
    }
  });
  context.set_output(0, std::move(output));
}

void compute_backprop_filter(KernelContext& context) {
  const Tensor& input = context.input(0);
  const Shape sizes = read_sizes(context.input(1), "filter_sizes");
  const Tensor& grad = context.input(2);
  const ConvShape s = conv_shape(input.shape(), sizes, conv_window_attrs(context), "filter_sizes");
  const int64_t out_channels = sizes[3];
  check_out_backprop(grad, s, out_channels);
  Tensor output(input.dtype(), sizes);
  dispatch(FloatTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t k = s.patch_size();
    const int64_t pixels = s.pixels();
    const int64_t tile = tile_pixels(k, sizeof(T));
    std::vector<T> patches(static_cast<std::size_t>(std::min(tile, pixels) * k));
    Eigen::Map<RowMajor<T>> dF(output.data<T>(), k, out_channels);
    for (int64_t begin = 0; begin < pixels; begin += tile) {
      const int64_t rows = std::min(tile, pixels - begin);
      im2col_tile(s, input.data<T>(), begin, rows, patches.data());
      const Eigen::Map<const RowMajor<T>> P(patches.data(), rows, k);
      const Eigen::Map<const RowMajor<T>> G(grad.data<T>() + begin * out_channels, rows, out_channels);
      dF.noalias() += P.transpose() * G;
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
