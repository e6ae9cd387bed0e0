#include "kernels/pool_common.h"

#include <algorithm>
#include <any>

namespace graphrun {

Kernel& declare_pool_attrs(Kernel& kernel, bool explicit_paddings) {
  kernel.int_list_attr("ksize").int_list_attr("strides");
  if (explicit_paddings) {
    kernel.choice_attr("padding", {"SAME", "VALID", "EXPLICIT"}).int_list_attr("explicit_paddings", {});
  } else {
    kernel.choice_attr("padding", {"SAME", "VALID"});
  }
  return kernel.choice_attr("data_format", {"NHWC"}, "NHWC")
      .prepare([explicit_paddings](const Kernel& k, const graphdef::NodeDef& node) {
        const auto [kh, kw] = read_pool_size(k, node);
        return PoolAttrs{kh, kw, read_window_attrs(k, node, false, explicit_paddings)};
      });
}

ConvShape pool_shape(const KernelContext& context, const Shape& input) {
  if (input.size() != 4) throw Error("input must be 4-D (NHWC), got shape " + shape_string(input));
  const PoolAttrs& pool = context.state<PoolAttrs>();
  ConvShape s;
  s.n = input[0];
  s.h = input[1];
  s.w = input[2];
  s.c = input[3];
  s.window = window_geometry(pool.window, pool.kh, pool.kw, s.h, s.w);
  return s;
}

namespace {

// [N, OH, OW, C] of pooling an input of static shape x; false when it cannot fit.
bool pool_static(const ShapeContext& context, const StaticShape& x, StaticShape& pooled) {
  if (x.known_rank && x.dims.size() != 4) return false;
  const auto* pool = std::any_cast<PoolAttrs>(&context.node().state);
  if (pool == nullptr) return false;
  const std::vector<int64_t> d = x.known_rank ? x.dims : std::vector<int64_t>(4, -1);
  // The window sees H and W with _ZeroPadMaxPool's zeros added. An unknown
  // axis is given the window's own size, which always fits; its output stays unknown.
  int64_t h = pool->kh, w = pool->kw;
  if ((d[1] >= 0 && __builtin_add_overflow(d[1], pool->zero_top + pool->zero_bottom, &h)) ||
      (d[2] >= 0 && __builtin_add_overflow(d[2], pool->zero_left + pool->zero_right, &w))) {
    return false;
  }
  try {
    const WindowGeometry g = window_geometry(pool->window, pool->kh, pool->kw, h, w);
    pooled = known_shape({d[0], d[1] < 0 ? -1 : g.rows.out, d[2] < 0 ? -1 : g.cols.out, d[3]});
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool compatible(const StaticShape& a, const StaticShape& b) {
  if (!a.known_rank || !b.known_rank) return true;
  if (a.dims.size() != b.dims.size()) return false;
  for (std::size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

}  // namespace

void pooled_shape(ShapeContext& context) {
  StaticShape pooled;
  if (pool_static(context, context.input(0), pooled)) context.set_output(0, pooled);
}

void max_pool_grad_shape(ShapeContext& context) {
  StaticShape pooled;
  if (!pool_static(context, context.input(0), pooled)) return;
  if (!compatible(context.input(1), pooled) || !compatible(context.input(2), pooled)) return;
  context.set_output(0, context.input(0));
}

void avg_pool_grad_shape(ShapeContext& context) {
  const StaticShape g = context.input(1);
  std::vector<int64_t> sizes;
  if (!context.const_ints(0, sizes)) {
    const bool four = g.known_rank && g.dims.size() == 4;
    context.set_output(0, known_shape({four ? g.dims[0] : -1, -1, -1, four ? g.dims[3] : -1}));
    return;
  }
  if (sizes.size() != 4 || *std::min_element(sizes.begin(), sizes.end()) < 0) return;
  StaticShape pooled;
  if (!pool_static(context, known_shape(sizes), pooled) || !compatible(g, pooled)) return;
  context.set_output(0, known_shape(sizes));
}

void check_pooled_grad(const Tensor& grad, const ConvShape& s) {
  const Shape pooled = {s.n, s.window.rows.out, s.window.cols.out, s.c};
  if (grad.shape() != pooled) {
    throw Error("grad has shape " + shape_string(grad.shape()) + ", expected the pooled shape " + shape_string(pooled));
  }
}

}  // namespace graphrun
