#include "kernels/pool_common.h"

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

void check_pooled_grad(const Tensor& grad, const ConvShape& s) {
  const Shape pooled = {s.n, s.window.rows.out, s.window.cols.out, s.c};
  if (grad.shape() != pooled) {
    throw Error("grad has shape " + shape_string(grad.shape()) + ", expected the pooled shape " +
                shape_string(pooled));
  }
}

}  // namespace graphrun
