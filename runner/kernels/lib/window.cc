#include "kernels/lib/window.h"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace graphrun {

std::string ints_string(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

namespace {

// Strides, dilations and ksize share one shape: [1, h, w, 1], all positive.
void check_nhwc_list(const std::string& name, const std::vector<int64_t>& values) {
  if (values.size() != 4) {
    throw Error(name + " must have 4 entries (N, H, W, C), got " + ints_string(values));
  }
  if (values[0] != 1 || values[3] != 1) {
    throw Error(name + " " + ints_string(values) + " must be 1 in the batch and channel dims");
  }
  if (*std::min_element(values.begin(), values.end()) < 1) {
    throw Error(name + " " + ints_string(values) + " must be positive");
  }
  // TensorFlow holds these as int32 and refuses larger values.
  if (*std::max_element(values.begin(), values.end()) > INT32_MAX) {
    throw Error(name + " " + ints_string(values) + " must be at most 2147483647");
  }
}

// Every step is overflow-checked: strides, dilations and sizes come from the
// file (an attr of 2**62, a SAME window past INT64_MAX).
WindowAxis axis_geometry(const std::string& padding, int64_t size, int64_t k, int64_t stride, int64_t dilation,
                         int64_t before, int64_t after) {
  // Made only for a message: every convolution and pooling node runs this each run.
  auto window = [&] {
    return "a window of size " + std::to_string(k) + " with dilation " + std::to_string(dilation) + " and stride " +
           std::to_string(stride);
  };
  int64_t k_eff;
  if (__builtin_mul_overflow(k - 1, dilation, &k_eff) || __builtin_add_overflow(k_eff, 1, &k_eff)) {
    throw Error(window() + " is too large");
  }
  WindowAxis axis;
  if (padding == "SAME") {
    axis.out = size / stride + (size % stride != 0);
    int64_t total;
    if (__builtin_mul_overflow(std::max<int64_t>(axis.out - 1, 0), stride, &total) ||
        __builtin_add_overflow(total, k_eff, &total)) {
      throw Error(window() + " is too large for SAME padding over " + std::to_string(size));
    }
    total = std::max<int64_t>(total - size, 0);
    axis.before = total / 2;
    axis.after = total - axis.before;
    return axis;
  }
  int64_t padded;
  if (__builtin_add_overflow(size, before, &padded) || __builtin_add_overflow(padded, after, &padded)) {
    throw Error("the padding is too large");
  }
  int64_t span;
  if (__builtin_sub_overflow(padded, k_eff, &span) || __builtin_add_overflow(span, stride, &span)) {
    throw Error(window() + " does not fit in " + std::to_string(padded));
  }
  axis.out = span / stride;  // C++ division truncates toward zero, as TF's does
  if (axis.out < 0) {
    throw Error("a window of " + std::to_string(k_eff) + " (size " + std::to_string(k) + ", dilation " +
                std::to_string(dilation) + ") does not fit in " + std::to_string(padded));
  }
  axis.before = before;
  axis.after = after;
  return axis;
}

}  // namespace

WindowAttrs read_window_attrs(const Kernel& kernel, const graphdef::NodeDef& node, bool has_dilations,
                              bool has_explicit_paddings) {
  WindowAttrs attrs;
  const std::vector<int64_t> strides = kernel.get_int_list(node, "strides");
  check_nhwc_list("strides", strides);
  attrs.stride_h = strides[1];
  attrs.stride_w = strides[2];
  if (has_dilations) {
    const std::vector<int64_t> dilations = kernel.get_int_list(node, "dilations");
    check_nhwc_list("dilations", dilations);
    attrs.dilation_h = dilations[1];
    attrs.dilation_w = dilations[2];
  }
  attrs.padding = kernel.get_string(node, "padding");
  const std::vector<int64_t> explicit_paddings =
      has_explicit_paddings ? kernel.get_int_list(node, "explicit_paddings") : std::vector<int64_t>{};
  if (attrs.padding == "EXPLICIT") {
    if (explicit_paddings.size() != 8 || *std::min_element(explicit_paddings.begin(), explicit_paddings.end()) < 0) {
      throw Error("EXPLICIT padding needs 8 non-negative explicit_paddings, got " + ints_string(explicit_paddings));
    }
    const auto& p = explicit_paddings;
    if (p[0] || p[1] || p[6] || p[7]) {
      throw Error("explicit_paddings " + ints_string(p) + " must not pad the batch or channel dims");
    }
    attrs.top = p[2];
    attrs.bottom = p[3];
    attrs.left = p[4];
    attrs.right = p[5];
  } else if (!explicit_paddings.empty()) {
    throw Error("explicit_paddings " + ints_string(explicit_paddings) + " are only allowed with padding EXPLICIT");
  }
  return attrs;
}

std::pair<int64_t, int64_t> read_pool_size(const Kernel& kernel, const graphdef::NodeDef& node) {
  const std::vector<int64_t> ksize = kernel.get_int_list(node, "ksize");
  if (ksize.size() != 4 || ksize[0] != 1 || ksize[3] != 1 || *std::min_element(ksize.begin(), ksize.end()) < 1) {
    throw Error("ksize " + ints_string(ksize) +
                " must be [1, height, width, 1]: pooling over the batch or channel dims is not supported");
  }
  // Taps are numbered a * width + b in an int32 (MaxPoolGrad's argmax).
  if (ksize[1] > INT32_MAX || ksize[2] > INT32_MAX / ksize[1]) {
    throw Error("ksize " + ints_string(ksize) + " has more than 2147483647 taps per window");
  }
  return {ksize[1], ksize[2]};
}

TapRange taps_inside(const WindowAxis& axis, int64_t o, int64_t k, int64_t stride, int64_t dilation, int64_t size) {
  // In 128 bits: o * stride - before fits in int64 for every o < out (see
  // axis_geometry), but the bounds below need one more step of headroom.
  const __int128 start = static_cast<__int128>(o) * stride - axis.before;
  __int128 first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  __int128 last = size - start <= 0 ? 0 : (size - start + dilation - 1) / dilation;
  first = std::min<__int128>(first, k);
  last = std::max<__int128>(std::min<__int128>(last, k), first);
  return {static_cast<int64_t>(first), static_cast<int64_t>(last)};
}

TapRange taps_inside_any(const WindowAxis& axis, int64_t k, int64_t stride, int64_t dilation, int64_t size) {
  if (axis.out <= 0) return {0, 0};
  // The window slides forward with o: the last window reaches the lowest
  // taps' positions first, the first window the highest.
  return {taps_inside(axis, axis.out - 1, k, stride, dilation, size).first,
          taps_inside(axis, 0, k, stride, dilation, size).last};
}

WindowGeometry window_geometry(const WindowAttrs& attrs, int64_t kh, int64_t kw, int64_t height, int64_t width) {
  WindowGeometry g;
  g.kh = kh;
  g.kw = kw;
  g.stride_h = attrs.stride_h;
  g.stride_w = attrs.stride_w;
  g.dilation_h = attrs.dilation_h;
  g.dilation_w = attrs.dilation_w;
  g.rows = axis_geometry(attrs.padding, height, kh, attrs.stride_h, attrs.dilation_h, attrs.top, attrs.bottom);
  g.cols = axis_geometry(attrs.padding, width, kw, attrs.stride_w, attrs.dilation_w, attrs.left, attrs.right);
  return g;
}

}  // namespace graphrun
