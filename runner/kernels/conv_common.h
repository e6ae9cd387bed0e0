// What Conv2D, its two backprops and DepthwiseConv2dNative share: their
// declaration, the load-time check of their window attrs, and the shapes of
// an input and a filter checked against each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/lib/im2col.h"
#include "exec/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {

// Conv2D's attrs (strides, padding, explicit_paddings, dilations,
// data_format, use_cudnn_on_gpu when `cudnn`), with a prepare step that
// decodes the window attrs at load time (a bad one is a model error) into
// the node's state, a WindowAttrs.
Kernel& declare_conv_attrs(Kernel& kernel, bool cudnn);

// The node's window attrs, decoded at load by declare_conv_attrs' prepare step.
const WindowAttrs& conv_window_attrs(const KernelContext& context);

// input [N,H,W,C] and filter [KH,KW,C,out] (the filter's third dim must be
// the input's channels), with the window placed: Python's _check_depth.
ConvShape conv_shape(const Shape& input, const Shape& filter, const WindowAttrs& attrs,
                     const std::string& filter_what = "filter");

// A backprop's int32 size vector: 4 non-negative sizes.
Shape read_sizes(const Tensor& sizes, const std::string& what);

// out_backprop must be what the forward convolution would give.
void check_out_backprop(const Tensor& grad, const ConvShape& s, int64_t out_channels);

}  // namespace graphrun
