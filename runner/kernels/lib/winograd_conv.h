// A float32 NHWC 3x3 convolution with stride 1 by Winograd's minimal
// filtering F(2x2, 3x3): each 2x2 block of output pixels (a tile) comes from
// its 4x4 input patch through 16 products per channel pair where a direct
// convolution needs 36. The patches are transformed (adds and subtracts), the
// 16 products of every tile are 16 matrix products [tiles, C] x [C, out] run
// as one batched oneDNN matmul against the filter transformed once, and the
// results are transformed back (adds and subtracts) with the bias and the
// activation. On ResNet50's 3x3 layers this takes less time than oneDNN
// 3.2's direct convolution.
//
// Only F(2x2, 3x3): its transforms multiply by 0, 1, -1 and (for the
// filter, done in float64) 1/2, so its rounding error stays within the
// numerics policy's 8 ulps of the largest output, and below oneDNN's direct
// kernel's own error on ResNet50's shapes (its sums run over 9 x C
// products, these over C). Larger tiles (F(4x4, 3x3))
// save more products but multiply by 2, 4 and 8 and err by far more than
// the policy allows.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "kernels/lib/dnnl_runtime.h"
#include "kernels/lib/im2col.h"

namespace graphrun {

class WinogradConvolution {
 public:
  explicit WinogradConvolution(const Epilogue& epilogue);
  ~WinogradConvolution();

  // Whether this kernel takes the problem: one group, a 3x3 window with
  // stride and dilation 1, at least 64 in and out channels, at least 32
  // tiles (fewer leave the products too small to win), the epilogue a bias
  // and Relu, Relu6 or nothing (no residual); oneDNN enabled and
  // GRAPHRUN_CC_WINOGRAD not "0" (which keeps the direct convolution, for
  // comparing the two).
  bool suits(const ConvShape& s, int64_t groups, int64_t out_channels) const;

  // y [N, OH, OW, out] = x [N, H, W, C] convolved with the constant TF filter
  // [3, 3, C, out] (transformed at the first call and kept: the filter must
  // not change between calls), plus the bias (when the epilogue has one),
  // then the activation. Returns false when it cannot give the direct sum's
  // answer: a filter or input value that is not finite (inf - inf makes NaN
  // where the direct sum gives inf), an overflow in the transformed domain,
  // or no oneDNN matmul for the shapes. y may then hold anything; the caller
  // computes it another way.
  bool run(const ConvShape& s, int64_t out_channels, const float* x, const float* filter, const float* bias, float* y);

 private:
  struct Prepared;
  Prepared* prepare(const ConvShape& s, int64_t out_channels, const float* filter);

  const Epilogue epilogue_;
  std::mutex mutex_;
  std::unique_ptr<Prepared> prepared_;
  bool filter_checked_ = false, filter_finite_ = false;  // whether every weight is finite, read once
};

}  // namespace graphrun
