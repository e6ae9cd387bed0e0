// MaxPool, NHWC, with TensorFlow's rules as Python's graphrun has them: every
// window starts at the lowest finite value and keeps a value only when it is
// greater (lib/window_max.h), so NaN and -inf never win and padding never
// counts: a window of only NaN or -inf gives the lowest finite value.
//
// _ZeroPadMaxPool is a zero Pad of H and W and then MaxPool, as one node
// (runner/passes/fold_pads_into_max_pools.cc makes it; a model file cannot
// name it). Its window is placed over the padded input as MaxPool's was, and
// the Pad's zeros are values it compares like any other, where the padded
// tensor had them: the bits of the two nodes for every input (NaN, -0.0),
// without writing the padded copy. The MaxPool's own padding, placed around
// that, still never counts. MaxPool is the same kernel with no zeros.
#include <climits>
#include <string>
#include <vector>

#include "kernels/lib/window_max.h"
#include "kernels/pool_common.h"

namespace graphrun {
namespace {

using MaxPoolTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t>;

// Window o of one axis: its taps on the input, and whether it also covers
// zeros of the folded Pad before or after them.
struct AxisWindow {
  int64_t taps = 0;      // on the input
  int64_t position = 0;  // where the first of them is on the input
  bool on_padded = false;  // some tap on the padded input (else the node's own padding has them all)
  bool zeros_before = false, zeros_after = false;
};

// `axis` places the window over the padded size, `size` + `pad_before` +
// `pad_after`. Worked out once per output row and column, not per pixel.
std::vector<AxisWindow> axis_windows(const WindowAxis& axis, int64_t k, int64_t stride, int64_t dilation, int64_t size,
                                     int64_t pad_before, int64_t pad_after) {
  WindowAxis on_input = axis;
  on_input.before += pad_before;  // fits: window_geometry checked the padded size plus `before` does
  std::vector<AxisWindow> windows(static_cast<std::size_t>(axis.out));
  for (int64_t o = 0; o < axis.out; ++o) {
    const TapRange padded = taps_inside(axis, o, k, stride, dilation, size + pad_before + pad_after);
    const TapRange real = taps_inside(on_input, o, k, stride, dilation, size);
    AxisWindow& w = windows[o];
    w.taps = real.last - real.first;
    if (w.taps) w.position = o * stride - on_input.before + real.first * dilation;
    w.on_padded = padded.first < padded.last;
    w.zeros_before = w.on_padded && padded.first < real.first;
    w.zeros_after = w.on_padded && real.last < padded.last;
  }
  return windows;
}

// Where the zeros come in the window's row-major walk (lib/window_max.h), or
// -1: a first tap on padding puts them first; else padding on the right puts
// them after the first row; else padding below, after every row. A window
// with no real tap takes them first.
int64_t zeros_before_row(const AxisWindow& row, const AxisWindow& col) {
  if (!row.on_padded || !col.on_padded) return -1;
  if (row.zeros_before || col.zeros_before) return 0;
  if (col.zeros_after) return row.taps ? 1 : 0;
  if (row.zeros_after) return row.taps;
  return -1;
}

// s: the input's own dims, with the window placed over the padded ones.
template <class T>
void max_pool(const ConvShape& s, const PoolAttrs& pool, const T* x, T* y) {
  const WindowGeometry& g = s.window;
  const std::vector<AxisWindow> rows =
      axis_windows(g.rows, g.kh, g.stride_h, g.dilation_h, s.h, pool.zero_top, pool.zero_bottom);
  const std::vector<AxisWindow> cols =
      axis_windows(g.cols, g.kw, g.stride_w, g.dilation_w, s.w, pool.zero_left, pool.zero_right);
  for_each_output_pixel(s, [&](int64_t n, int64_t oy, int64_t ox, int64_t pixel) {
    const AxisWindow& row = rows[oy];
    const AxisWindow& col = cols[ox];
    WindowTaps taps;
    taps.rows = row.taps;
    taps.cols = col.taps;
    taps.row_step = g.dilation_h * s.w * s.c;
    taps.col_step = g.dilation_w * s.c;
    taps.zeros_before_row = zeros_before_row(row, col);
    const T* first = row.taps && col.taps ? x + ((n * s.h + row.position) * s.w + col.position) * s.c : x;
    window_max(first, taps, s.c, y + pixel * s.c);
  });
}

void compute_max_pool(KernelContext& context) {
  const Tensor& input = context.input(0);
  const PoolAttrs& pool = context.state<PoolAttrs>();
  Shape padded = input.shape();
  if (padded.size() == 4 && (pool.zero_top || pool.zero_bottom || pool.zero_left || pool.zero_right)) {
    // The Pad would have refused a padded tensor over the size limit; so does this.
    try {
      if (__builtin_add_overflow(padded[1], pool.zero_top + pool.zero_bottom, &padded[1]) ||
          __builtin_add_overflow(padded[2], pool.zero_left + pool.zero_right, &padded[2])) {
        throw Error("its output would have more than 2**63 rows or columns");
      }
      checked_num_elements(padded, input.dtype());
    } catch (const Error& error) {
      throw Error(std::string("the zero Pad folded into this node: ") + error.what());
    }
  }
  ConvShape s = pool_shape(context, padded);
  s.h = input.shape()[1];
  s.w = input.shape()[2];
  Tensor output = Tensor::uninitialized(input.dtype(), {s.n, s.window.rows.out, s.window.cols.out, s.c});
  dispatch(MaxPoolTypes{}, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool<T>(s, pool, input.data<T>(), output.data<T>());
  });
  context.set_output(0, std::move(output));
}

// The Pad's paddings as [0, 0, top, bottom, left, right, 0, 0], each at most
// INT32_MAX (the pass folds no more), read into the node's PoolAttrs.
Kernel& declare_zero_paddings(Kernel& kernel) {
  // Replaces the prepare step declare_pool_attrs gave, reading what it read and the zeros.
  return kernel.int_list_attr("zero_paddings").prepare([](const Kernel& k, const graphdef::NodeDef& node) {
    const auto [kh, kw] = read_pool_size(k, node);
    PoolAttrs pool{kh, kw, read_window_attrs(k, node, false, true)};
    const std::vector<int64_t> p = k.get_int_list(node, "zero_paddings");
    bool fits = p.size() == 8 && !p[0] && !p[1] && !p[6] && !p[7];
    for (std::size_t i = 0; fits && i < p.size(); ++i) fits = p[i] >= 0 && p[i] <= INT32_MAX;
    if (!fits) {
      throw Error("zero_paddings " + ints_string(p) + " must be [0, 0, top, bottom, left, right, 0, 0], each 0 to " +
                  std::to_string(INT32_MAX));
    }
    pool.zero_top = p[2], pool.zero_bottom = p[3], pool.zero_left = p[4], pool.zero_right = p[5];
    return pool;
  });
}

REGISTER_KERNEL(
    declare_pool_attrs(
        Kernel("MaxPool").input("input", "T").output("T").type_attr("T", dtypes_of(MaxPoolTypes{}), graphdef::DT_FLOAT),
        true)
        .shape(pooled_shape)
        .compute(compute_max_pool));

REGISTER_KERNEL(declare_zero_paddings(declare_pool_attrs(Kernel("_ZeroPadMaxPool")
                                                             .input("input", "T")
                                                             .output("T")
                                                             .type_attr("T", dtypes_of(MaxPoolTypes{}),
                                                                        graphdef::DT_FLOAT),
                                                         true))
                    .internal()
                    .shape(pooled_shape)
                    .compute(compute_max_pool));

}  // namespace
}  // namespace graphrun
