// Sliding-window geometry shared by the convolution and pooling kernels:
// their attrs (strides, dilations, padding, explicit_paddings, ksize), NHWC
// only, and TensorFlow's rule for the output size and the padding.
#pragma once

#include <cstdint>
#include <string>

#include "graph/kernel.h"

namespace graphrun {

// A window's attrs along H and W, checked.
struct WindowAttrs {
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  std::string padding;                    // SAME, VALID or EXPLICIT
  int64_t top = 0, bottom = 0, left = 0, right = 0;  // EXPLICIT only
};

// Reads a node's strides, padding and (where the op has them) dilations and
// explicit_paddings. Throws Error naming what is wrong, as Python's Window
// does: 4 entries each, 1 in the batch and channel dims, positive; 8
// non-negative explicit paddings only with EXPLICIT, none on batch or channel.
WindowAttrs read_window_attrs(const Kernel& kernel, const graphdef::NodeDef& node, bool has_dilations,
                              bool has_explicit_paddings);

// A pooling op's ksize as (height, width): [1, h, w, 1] with h, w >= 1.
std::pair<int64_t, int64_t> read_pool_size(const Kernel& kernel, const graphdef::NodeDef& node);

// One axis of a window over an input: the output size and the padding
// before and after.
struct WindowAxis {
  int64_t out = 0, before = 0, after = 0;
};

// A window placed over an H x W input: output row oy, tap a reads input row
// oy * stride_h - rows.before + a * dilation_h (outside [0, H) is padding).
struct WindowGeometry {
  int64_t kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  WindowAxis rows, cols;
};

// TF's GetWindowedOutputSize for both axes: k_eff = (k - 1) * d + 1; SAME
// gives ceil(in / s) with the odd padding element after; VALID and EXPLICIT
// give (in + before + after - k_eff + s) / s, truncated, which must not be
// negative. Throws Error otherwise (and on arithmetic overflow).
WindowGeometry window_geometry(const WindowAttrs& attrs, int64_t kh, int64_t kw, int64_t height, int64_t width);

// The taps [first, last) of window `o` along an axis whose positions
// (o * stride - before + a * dilation) lie inside [0, size). Window loops run
// over these only, so a window far larger than its input (SAME pooling with
// ksize 2**31) costs what its real taps cost, as in TensorFlow.
struct TapRange {
  int64_t first = 0, last = 0;
};
TapRange taps_inside(const WindowAxis& axis, int64_t o, int64_t k, int64_t stride, int64_t dilation, int64_t size);

// The taps inside [0, size) for at least one window of the axis (a loop
// over taps outside the windows, as the gradients run).
TapRange taps_inside_any(const WindowAxis& axis, int64_t k, int64_t stride, int64_t dilation, int64_t size);

// "[1,2,3]", for messages.
std::string ints_string(const std::vector<int64_t>& values);

}  // namespace graphrun
