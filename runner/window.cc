#include "window.h"

#include <algorithm>

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
}

WindowAxis axis_geometry(const std::string& padding, int64_t size, int64_t k, int64_t stride, int64_t dilation,
                         int64_t before, int64_t after) {
  int64_t k_eff;
  if (__builtin_mul_overflow(k - 1, dilation, &k_eff) || __builtin_add_overflow(k_eff, 1, &k_eff)) {
    throw Error("a window of size " + std::to_string(k) + " with dilation " + std::to_string(dilation) +
                " is too large");
  }
  WindowAxis axis;
  if (padding == "SAME") {
    axis.out = size / stride + (size % stride != 0);
    const int64_t total = std::max<int64_t>((axis.out - 1) * stride + k_eff - size, 0);
    axis.before = total / 2;
    axis.after = total - axis.before;
    return axis;
  }
  int64_t padded;
  if (__builtin_add_overflow(size, before, &padded) || __builtin_add_overflow(padded, after, &padded)) {
    throw Error("the padding is too large");
  }
  const int64_t span = padded - k_eff + stride;
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
    if (explicit_paddings.size() != 8 ||
        *std::min_element(explicit_paddings.begin(), explicit_paddings.end()) < 0) {
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
  return {ksize[1], ksize[2]};
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
