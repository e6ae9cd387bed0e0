#include "kernels/lib/gemm_f32.h"

#include <Eigen/Core>

#include "kernels/lib/cpu_isa.h"

namespace graphrun {

// Everything between push_options and pop_options is compiled for AVX2 and
// FMA. Only functions defined here, in an anonymous namespace, live in that
// region (every header is included above it), so no inline function shared
// with other files is ever compiled with instructions the CPU may lack.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace {

typedef float Vec8 __attribute__((vector_size(32)));
constexpr int kLanes = 8;

inline Vec8 load8(const float* p) {
  Vec8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

inline void store8(float* p, Vec8 v) { __builtin_memcpy(p, &v, sizeof v); }

// acc + x * b with one rounding, spelled out: the build turns off contraction
// (-ffp-contract=off) so that exact ops stay exact, and this product is where
// fusing is wanted (MatMul and Conv2D are inexact under the numerics policy).
inline Vec8 fma8(Vec8 acc, float x, Vec8 b) {
  const Vec8 broadcast = {x, x, x, x, x, x, x, x};
#if defined(__clang__)
  // clang ignores GCC's target pragma, so its builds (the sanitized fuzzer) take the plain
  // product: there speed and the last bit of an inexact op do not matter.
  return acc + broadcast * b;
#else
  return __builtin_ia32_vfmaddps256(broadcast, b, acc);
#endif
}

// R rows of C by P panels (8 * P columns): R * P accumulators stay in
// registers while k runs; each step loads P vectors of B and broadcasts one
// element of A per row.
template <int R, int P>
inline __attribute__((always_inline)) void block(const float* a, int64_t lda, const float* panel, int64_t k, float* c,
                                                 int64_t ldc, int64_t columns) {
  const int64_t panel_stride = k * kLanes;
  Vec8 acc[R][P];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) acc[r][p] = Vec8{};
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    Vec8 b[P];
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) b[p] = load8(panel + p * panel_stride + kk * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const float x = a[r * lda + kk];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) acc[r][p] = fma8(acc[r][p], x, b[p]);
    }
  }
  if (columns == kLanes * P) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) store8(c + r * ldc + p * kLanes, acc[r][p]);
    }
    return;
  }
  for (int r = 0; r < R; ++r) {  // the last, partial panel: only the real columns are written
    float row[kLanes * P];
    for (int p = 0; p < P; ++p) store8(row + p * kLanes, acc[r][p]);
    __builtin_memcpy(c + r * ldc, row, static_cast<std::size_t>(columns) * sizeof(float));
  }
}

template <int R>
inline __attribute__((always_inline)) void row_block(const float* a, int64_t lda, const float* panels, int64_t k,
                                                     int64_t n, float* c, int64_t ldc) {
  const int64_t count = (n + kLanes - 1) / kLanes;
  int64_t p = 0;
  for (; p + 2 <= count; p += 2) {
    const int64_t columns = n - p * kLanes < 2 * kLanes ? n - p * kLanes : 2 * kLanes;
    block<R, 2>(a, lda, panels + p * k * kLanes, k, c + p * kLanes, ldc, columns);
  }
  if (p < count) block<R, 1>(a, lda, panels + p * k * kLanes, k, c + p * kLanes, ldc, n - p * kLanes);
}

void gemm_avx2(const float* a, int64_t m, int64_t lda, const float* panels, int64_t k, int64_t n, float* c,
               int64_t ldc) {
  int64_t i = 0;
  if (n <= kLanes) {  // one panel: 8 rows, for 8 independent accumulators (see conv_gemm_avx2)
    for (; i + 8 <= m; i += 8) block<8, 1>(a + i * lda, lda, panels, k, c + i * ldc, ldc, n);
  }
  for (; i + 4 <= m; i += 4) row_block<4>(a + i * lda, lda, panels, k, n, c + i * ldc, ldc);
  for (; i < m; ++i) row_block<1>(a + i * lda, lda, panels, k, n, c + i * ldc, ldc);
}

// As block(), but row r of A is read through pixels[r] + offsets[s], run
// floats per segment s.
template <int R, int P>
inline __attribute__((always_inline)) void conv_block(const float* const* pixels, const int64_t* offsets,
                                                      int64_t segments, int64_t run, const float* panel, int64_t k,
                                                      float* c, int64_t ldc, int64_t columns) {
  const int64_t panel_stride = k * kLanes;
  Vec8 acc[R][P];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) acc[r][p] = Vec8{};
  }
  const float* b_row = panel;
  for (int64_t s = 0; s < segments; ++s) {
    const float* a[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) a[r] = pixels[r] + offsets[s];
    for (int64_t kk = 0; kk < run; ++kk, b_row += kLanes) {
      Vec8 b[P];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) b[p] = load8(b_row + p * panel_stride);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const float x = a[r][kk];
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) acc[r][p] = fma8(acc[r][p], x, b[p]);
      }
    }
  }
  if (columns == kLanes * P) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) store8(c + r * ldc + p * kLanes, acc[r][p]);
    }
    return;
  }
  for (int r = 0; r < R; ++r) {
    float row[kLanes * P];
    for (int p = 0; p < P; ++p) store8(row + p * kLanes, acc[r][p]);
    __builtin_memcpy(c + r * ldc, row, static_cast<std::size_t>(columns) * sizeof(float));
  }
}

template <int R>
inline __attribute__((always_inline)) void conv_row_block(const float* const* pixels, const int64_t* offsets,
                                                          int64_t segments, int64_t run, const float* panels, int64_t n,
                                                          float* c, int64_t ldc) {
  const int64_t k = segments * run;
  const int64_t count = (n + kLanes - 1) / kLanes;
  int64_t p = 0;
  for (; p + 2 <= count; p += 2) {
    const int64_t columns = n - p * kLanes < 2 * kLanes ? n - p * kLanes : 2 * kLanes;
    conv_block<R, 2>(pixels, offsets, segments, run, panels + p * k * kLanes, k, c + p * kLanes, ldc, columns);
  }
  if (p < count) {
    conv_block<R, 1>(pixels, offsets, segments, run, panels + p * k * kLanes, k, c + p * kLanes, ldc, n - p * kLanes);
  }
}

void conv_gemm_avx2(const float* const* pixels, int64_t m, const int64_t* offsets, int64_t segments, int64_t run,
                    const float* panels, int64_t n, float* c, int64_t ldc) {
  int64_t i = 0;
  if (n <= kLanes) {
    // One panel: 8 rows give the 8 independent accumulators that keep both
    // FMA units busy (4 would leave half of each FMA's latency idle).
    for (; i + 8 <= m; i += 8)
      conv_block<8, 1>(pixels + i, offsets, segments, run, panels, segments * run, c + i * ldc, ldc, n);
  }
  for (; i + 4 <= m; i += 4) conv_row_block<4>(pixels + i, offsets, segments, run, panels, n, c + i * ldc, ldc);
  for (; i < m; ++i) conv_row_block<1>(pixels + i, offsets, segments, run, panels, n, c + i * ldc, ldc);
}

}  // namespace
#pragma GCC pop_options

namespace {

// AVX2 and FMA, unless GRAPHRUN_CC_NO_AVX2 asks for the portable Eigen path (cpu_isa.h).
const bool kVectorized = own_kernel_isa() != CpuIsa::kSse;

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::OuterStride<Eigen::Dynamic>;

}  // namespace

bool gemm_f32_is_vectorized() { return kVectorized; }

PackedRhs::PackedRhs(const float* b, int64_t k, int64_t n, int64_t ldb) : original_(b), k_(k), n_(n), ldb_(ldb) {
  if (!kVectorized) return;
  const int64_t count = (n + kLanes - 1) / kLanes;
  panels_.assign(static_cast<std::size_t>(count * k * kLanes), 0.0f);
  for (int64_t p = 0; p < count; ++p) {
    for (int64_t kk = 0; kk < k; ++kk) {
      float* to = panels_.data() + (p * k + kk) * kLanes;
      for (int64_t j = 0; j < kLanes && p * kLanes + j < n; ++j) to[j] = b[kk * ldb + p * kLanes + j];
    }
  }
}

void gemm_f32(const float* a, int64_t m, int64_t lda, const PackedRhs& b, float* c, int64_t ldc) {
  if (m == 0 || b.n_ == 0) return;
  if (kVectorized) {
    gemm_avx2(a, m, lda, b.panels_.data(), b.k_, b.n_, c, ldc);
    return;
  }
  const Eigen::Map<const RowMajor, 0, Strided> A(a, m, b.k_, Strided(lda));
  const Eigen::Map<const RowMajor, 0, Strided> B(b.original_, b.k_, b.n_, Strided(b.ldb_));
  Eigen::Map<RowMajor, 0, Strided> C(c, m, b.n_, Strided(ldc));
  C.noalias() = A * B;
}

void conv_gemm_f32(const float* const* pixels, int64_t m, const int64_t* offsets, int64_t segments, int64_t run,
                   const PackedRhs& b, float* c, int64_t ldc) {
  if (m == 0 || b.n_ == 0) return;
  if (kVectorized) {
    conv_gemm_avx2(pixels, m, offsets, segments, run, b.panels_.data(), b.n_, c, ldc);
    return;
  }
  // Without AVX2: gather the patch rows, then Eigen's product.
  const int64_t k = segments * run;
  std::vector<float> patches(static_cast<std::size_t>(m * k));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t s = 0; s < segments; ++s) {
      std::memcpy(patches.data() + i * k + s * run, pixels[i] + offsets[s], static_cast<std::size_t>(run) * 4);
    }
  }
  gemm_f32(patches.data(), m, k, b, c, ldc);
}

}  // namespace graphrun
