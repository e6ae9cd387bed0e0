// A float32 NHWC convolution (plain, grouped or depthwise) as a oneDNN
// primitive, made once per input shape and kept with the node. When the
// filter is a constant, its copy in the layout oneDNN picked (blocked for the
// CPU's vector width) is kept too: reordering it is most of what a small
// convolution would otherwise cost per run.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "kernels/lib/dnnl_runtime.h"
#include "kernels/lib/im2col.h"

namespace graphrun {

class DnnlConvolution {
 public:
  explicit DnnlConvolution(const Epilogue& epilogue);
  ~DnnlConvolution();

  // y [N, OH, OW, out] = x [N, H, W, C] convolved with the TF filter
  // [KH, KW, C / groups, out] over the placed window of `s` (s.c is C), then
  // the epilogue (bias [out] when it has one; with a residual, y holds it on
  // entry and the result is added to it). Returns false, having written
  // nothing, when oneDNN has no primitive for the problem (empty or
  // degenerate shapes): the caller then runs its own kernel. Throws Error
  // when oneDNN fails while running. With `blocked`, x, y and the residual
  // are in channel blocks of 8 (core/tensor.h, Layout).
  bool run(const ConvShape& s, int64_t groups, int64_t out_channels, const float* x, const float* filter,
           bool constant_filter, const float* bias, float* y, bool blocked = false);

  // Whether run() with these arguments would run (and not return false),
  // so a kernel can choose its layout before it converts anything.
  bool ready(const ConvShape& s, int64_t groups, int64_t out_channels, bool blocked, const float* filter,
             bool constant_filter);

 private:
  struct Prepared;
  Prepared* prepare(const ConvShape& s, int64_t groups, int64_t out_channels, bool blocked);
  Prepared* ready_locked(const ConvShape& s, int64_t groups, int64_t out_channels, bool blocked, const float* filter,
                         bool constant_filter);

  const Epilogue epilogue_;
  std::mutex mutex_;
  std::unique_ptr<Prepared> prepared_[2];  // plain, channel blocks: a kernel may ask for both
};

}  // namespace graphrun
