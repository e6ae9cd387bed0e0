// What Conv2D, its two backprops and DepthwiseConv2dNative share: their
// declaration, the load-time check of their window attrs, the shapes of an
// input and a filter checked against each other, and the fused forms'
// residual add.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/lib/dnnl_runtime.h"
#include "kernels/lib/im2col.h"
#include "graph/kernel.h"
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

// Throws Error for a filter with no elements where the output has some
// (Python's _check_filter_elements).
void check_filter_elements(const Shape& filter, const Shape& output);

// The groups of a grouped convolution (TF's, when the filter's in channels
// divide the input's [N, H, W, C]): group g convolves input channels
// [g*ci, (g+1)*ci) with filter out channels [g*cog, (g+1)*cog). Throws Error
// when the channel counts make no groups.
int64_t conv_groups(const Shape& input, const Shape& filter);

// The layout a float32 convolution node runs in this time (core/tensor.h):
// channel blocks of 8 when the executor lets its output stay in them, both
// channel counts are whole blocks, the input already is in blocks or the
// node is depthwise, and `ready_in_blocks()` says oneDNN has a primitive in
// blocks for it. Depthwise convolutions start a run of blocks: where oneDNN
// runs AVX2's kernels, its depthwise kernel on blocks is much faster than
// its NHWC one at larger batches (MobileNetV2), and the pointwise
// convolutions around them gain too. Elsewhere (ResNet50's dense
// convolutions) NHWC is as fast or faster, so a run of blocks never starts
// there; with AVX-512, NHWC wins everywhere and blocks are off
// (conv_common.cc). GRAPHRUN_CC_CHANNEL_BLOCKS=1 or 0 turns them on or off.
// Whether runs of convolutions in channel blocks are on in this process
// (by oneDNN's effective instruction set, or GRAPHRUN_CC_CHANNEL_BLOCKS).
bool channel_blocks_enabled();

Layout conv_layout(const KernelContext& context, const Tensor& input, int64_t out_channels, bool depthwise,
                   const std::function<bool()>& ready_in_blocks);

// Data input i in `layout`: the input itself, or a converted copy that
// `holder` keeps.
const Tensor& input_in_layout(const KernelContext& context, int i, Layout layout, TensorPtr& holder);

// A fused convolution whose epilogue adds a residual (fused_ops [BiasAdd,
// Add(, act)], the residual its input `residual_input`), run as TF's
// Add(conv + bias, residual) then the activation. When the residual has the
// output's shape, the output is its buffer in `layout` (taken over when
// nothing else holds it and it is in that layout, else a copy) and `accumulate(y)` runs the oneDNN primitive,
// whose sum post-op adds into y; it returns false, having written nothing,
// when oneDNN has no primitive. Otherwise, and for shapes that broadcast (an
// unknown batch dim may differ at run time), `product(y)` writes conv + bias
// alone into a fresh tensor and the sum is added here.
void run_residual_conv(KernelContext& context, int residual_input, const Shape& out_shape, Layout layout,
                       const Epilogue& epilogue, const std::function<bool(float*)>& accumulate,
                       const std::function<void(Tensor&)>& product);

// A backprop's int32 size vector: 4 non-negative sizes.
Shape read_sizes(const Tensor& sizes, const std::string& what);

// out_backprop must be what the forward convolution would give.
void check_out_backprop(const Tensor& grad, const ConvShape& s, int64_t out_channels);

}  // namespace graphrun
