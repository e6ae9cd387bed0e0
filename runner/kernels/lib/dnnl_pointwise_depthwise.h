// A 1x1 convolution and the 3x3 depthwise convolution that reads it, as one
// oneDNN primitive: its 1x1 kernel hands each band of rows it makes to the
// depthwise kernel (oneDNN's depthwise post-op) while the band is still in
// cache, so the 1x1's output, the widest tensor of a MobileNet block (six
// times its input), is never written out and read back whole. oneDNN 3.2
// has that kernel (jit_1x1 with a depthwise post-op) only where it expects
// it to win, such as MobileNetV2's widest pairs from batch 2 on with
// AVX-512, where the fused pair takes far less time than the two nodes
// (docs/performance.md). Elsewhere it offers a reference composition of the
// two kernels, no better than running them ourselves, which is declined.
// Float32 NHWC, constant filters, bias and Relu, Relu6 or nothing after each
// step, as passes/fuse_pointwise_depthwise.cc pairs them.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "kernels/lib/dnnl_runtime.h"
#include "kernels/lib/im2col.h"

namespace graphrun {

class DnnlPointwiseDepthwise {
 public:
  DnnlPointwiseDepthwise(const Epilogue& pointwise, const Epilogue& depthwise);
  ~DnnlPointwiseDepthwise();

  // y [N, OH, OW, E] = depthwise(pointwise(x)): `pointwise` is the 1x1
  // convolution's shape over x [N, H, W, C] (its filter [1, 1, C, E] and
  // bias [E]), `depthwise` the 3x3 window over its output (filter
  // [3, 3, E, 1], bias [E]). Returns false, having written nothing, when
  // oneDNN has no such fused primitive for the shapes (padding it cannot
  // place, an instruction set without the kernel): the caller runs the two
  // convolutions one after the other. The filters must not change between
  // calls (they are kept in oneDNN's layout).
  bool run(const ConvShape& pointwise, int64_t out_channels, const ConvShape& depthwise, const float* x,
           const float* filter, const float* bias, const float* depthwise_filter, const float* depthwise_bias,
           float* y);

 private:
  struct Prepared;
  Prepared* prepare(const ConvShape& pointwise, int64_t out_channels, const ConvShape& depthwise);

  const Epilogue pointwise_, depthwise_;
  std::mutex mutex_;
  std::unique_ptr<Prepared> prepared_;
};

}  // namespace graphrun
