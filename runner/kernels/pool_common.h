// What the pooling kernels share: their attrs, checked at load time, and
// the input's NHWC dims with the window placed over them.
#pragma once

#include "kernels/lib/im2col.h"
#include "exec/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {

// A pooling node's window, decoded at load.
struct PoolAttrs {
  int64_t kh = 1, kw = 1;
  WindowAttrs window;
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

}  // namespace graphrun
