// Converting a float32 [N, H, W, C] tensor between the plain layout and
// channel blocks of 8 (core/tensor.h, Layout). The executor uses it to hand a
// plain copy to every kernel and fetch that cannot read blocks, and the
// convolution kernels at the edges of a run of blocked convolutions.
#pragma once

#include "core/tensor.h"

namespace graphrun {

// A new tensor with t's values in `layout` (a copy even when t already is).
// kChannelBlocks8 needs a float32 [N, H, W, C] with C % 8 == 0.
Tensor to_layout(const Tensor& t, Layout layout);

// `value` itself when it is plain, else a plain copy.
TensorPtr plain(TensorPtr value);

}  // namespace graphrun
