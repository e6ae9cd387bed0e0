// A float32 matrix product tuned for convolutions: C = A * B where A is a tall
// patch matrix (thousands of rows, tens to hundreds of columns) and B a
// filter with few columns (output channels). Eigen's general product is
// compiled for the baseline x86-64 (SSE2) here and packs both sides for
// every call; this one packs only B, once per call, and runs an AVX2/FMA
// register-blocked kernel when the CPU has it (checked at run time), so the
// build needs no -march flag. Without AVX2 it falls back to Eigen.
#pragma once

#include <cstdint>
#include <vector>

namespace graphrun {

// B [k, n] (row-major, any row stride) rearranged for the kernel: column
// panels 8 wide, zero-padded, each k rows deep.
class PackedRhs {
 public:
  PackedRhs(const float* b, int64_t k, int64_t n, int64_t ldb);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }

 private:
  friend void gemm_f32(const float* a, int64_t m, int64_t lda, const PackedRhs& b, float* c, int64_t ldc);
  friend void conv_gemm_f32(const float* const* pixels, int64_t m, const int64_t* offsets, int64_t segments,
                            int64_t run, const PackedRhs& b, float* c, int64_t ldc);
  const float* original_;  // for the fallback; must outlive the PackedRhs
  int64_t k_, n_, ldb_;
  std::vector<float> panels_;
};

// C [m, n] (row stride ldc) = A [m, k] (row stride lda) * B. Each element is
// one dot product accumulated in k order.
void gemm_f32(const float* a, int64_t m, int64_t lda, const PackedRhs& b, float* c, int64_t ldc);

// A convolution as an implicit product, with no patch matrix: row p of A is
// the concatenation, over segments s, of the `run` floats at
// pixels[p] + offsets[s] (one window row of pixel p's patch, read straight
// from a padded input), so A [m, segments * run] times B [segments * run, n]
// gives C [m, n] (row stride ldc).
void conv_gemm_f32(const float* const* pixels, int64_t m, const int64_t* offsets, int64_t segments, int64_t run,
                   const PackedRhs& b, float* c, int64_t ldc);

// Whether gemm_f32 runs its AVX2/FMA kernel on this CPU.
bool gemm_f32_is_vectorized();

}  // namespace graphrun
