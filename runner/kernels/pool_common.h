// What the pooling kernels share: their attrs, checked at load time, and
// the input's NHWC dims with the window placed over them.
#pragma once

#include "core/parallel.h"
#include "kernels/lib/im2col.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {

// A pooling node's window, decoded at load.
struct PoolAttrs {
  int64_t kh = 1, kw = 1;
  WindowAttrs window;
  // _ZeroPadMaxPool's folded Pad: the zeros it adds above, below, left and
  // right of the input; the window is placed over the padded input.
  int64_t zero_top = 0, zero_bottom = 0, zero_left = 0, zero_right = 0;
};

// ksize, strides, padding (SAME, VALID and, with `explicit_paddings`, also
// EXPLICIT), data_format NHWC; a prepare step decodes them at load time into
// the node's state, a PoolAttrs.
Kernel& declare_pool_attrs(Kernel& kernel, bool explicit_paddings);

// An NHWC input's dims and the node's window over them. Throws Error for an
// input that is not 4-D or a window that does not fit.
ConvShape pool_shape(const KernelContext& context, const Shape& input);

// Static shape rules (graphrun's): MaxPool/AvgPool give [N, OH, OW, C];
// MaxPoolGrad its orig_input's shape; AvgPoolGrad its constant
// orig_input_shape (else N and C of grad). Inputs that cannot fit leave the
// output unknown (the run refuses them).
void pooled_shape(ShapeContext& context);
void max_pool_grad_shape(ShapeContext& context);
void avg_pool_grad_shape(ShapeContext& context);

// Python's check that a pooling gradient has the pooled shape.
void check_pooled_grad(const Tensor& grad, const ConvShape& s);

// Calls visit(a, b, pixel) for each tap (a, b) of output pixel (n, oy, ox)'s
// window that falls on a real input element, in row-major tap order; pixel
// is that element's index in the [N, H, W] grid (its channels start at
// pixel * C).
template <class Visit>
void for_each_real_tap(const ConvShape& s, int64_t n, int64_t oy, int64_t ox, Visit&& visit) {
  const WindowGeometry& g = s.window;
  const TapRange rows = taps_inside(g.rows, oy, g.kh, g.stride_h, g.dilation_h, s.h);
  const TapRange cols = taps_inside(g.cols, ox, g.kw, g.stride_w, g.dilation_w, s.w);
  for (int64_t a = rows.first; a < rows.last; ++a) {
    const int64_t r = oy * g.stride_h - g.rows.before + a * g.dilation_h;
    if (r < 0 || r >= s.h) continue;
    for (int64_t b = cols.first; b < cols.last; ++b) {
      const int64_t col = ox * g.stride_w - g.cols.before + b * g.dilation_w;
      if (col < 0 || col >= s.w) continue;
      visit(a, b, (n * s.h + r) * s.w + col);
    }
  }
}

// Calls visit(n, oy, ox, out_pixel) for every output pixel, ranges of them
// on the cores (each output pixel is computed on its own); out_pixel is the
// pixel's index in the [N, OH, OW] output grid.
template <class Visit>
void for_each_output_pixel(const ConvShape& s, Visit&& visit) {
  const double work = static_cast<double>(s.pixels()) * s.c * s.window.kh * s.window.kw;
  parallel_for(s.pixels(), work, [&](int64_t begin, int64_t end) {
    for_each_output_row(s, begin, end - begin, [&](int64_t n, int64_t oy, int64_t ox0, int64_t pixels, int64_t done) {
      for (int64_t i = 0; i < pixels; ++i) visit(n, oy, ox0 + i, begin + done + i);
    });
  });
}

}  // namespace graphrun
