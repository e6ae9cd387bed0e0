// A float32 matrix product (optionally transposed operands, batched with
// broadcasting batch dims) as a oneDNN matmul primitive, made once per shape
// and kept with the node; a constant right-hand side is kept in the layout
// oneDNN picked.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/lib/dnnl_runtime.h"

namespace graphrun {

class DnnlMatMul {
 public:
  explicit DnnlMatMul(const Epilogue& epilogue);
  ~DnnlMatMul();

  // c [..., M, N] = a [..., M, K] x b [..., K, N] (with a stored [..., K, M]
  // when transpose_a, b stored [..., N, K] when transpose_b), batch dims
  // (equal rank, each equal or 1 in one operand) broadcast; then the epilogue
  // (bias [N] when it has one). Returns false, having written nothing, when
  // oneDNN does not serve the problem (empty dims): the caller's kernel runs.
  bool run(const std::vector<int64_t>& a_dims, const std::vector<int64_t>& b_dims, bool transpose_a, bool transpose_b,
           const float* a, const float* b, bool constant_b, const float* bias, float* c);

 private:
  struct Prepared;
  Prepared* prepare(const std::vector<int64_t>& a_dims, const std::vector<int64_t>& b_dims, bool transpose_a,
                    bool transpose_b, bool constant_b);

  const Epilogue epilogue_;
  std::mutex mutex_;
  std::unique_ptr<Prepared> prepared_;
};

}  // namespace graphrun
