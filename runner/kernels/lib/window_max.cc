#include "kernels/lib/window_max.h"

#include <cstring>

#include "kernels/lib/cpu_isa.h"

namespace graphrun {

namespace {

typedef float F32x4 __attribute__((vector_size(16)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef float F32x16 __attribute__((vector_size(64)));

// The helpers below are always inlined into the three entry points, each
// compiled for its own instruction set with a vector type one register wide.
// The entry is picked once by own_kernel_isa() rather than by GCC's
// target_clones, so GRAPHRUN_CC_NO_AVX2 can still test the SSE form here.
// Wider registers pay even where the data stays in cache (ResNet50's stem
// pool at batch 1).
#define GRAPHRUN_INLINE inline __attribute__((always_inline))

// Channels [0, R * lanes of V) of the window, in R registers. Each tap
// goes first into the comparison, so that a NaN in it loses (the compiler
// makes it MAXPS, which keeps its second operand unless the first is greater).
template <class V, int R>
GRAPHRUN_INLINE void block_max(const float* first, const WindowTaps& taps, float* out) {
  constexpr int kLanes = sizeof(V) / sizeof(float);
  // Locals, so that the stores to `out` cannot make the loops reload them.
  const int64_t rows = taps.rows, cols = taps.cols, row_step = taps.row_step, col_step = taps.col_step;
  const int64_t zeros_before_row = taps.zeros_before_row;
  const V zero = {};
  V best[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) best[r] = zero + std::numeric_limits<float>::lowest();
  for (int64_t i = 0;; ++i) {
    if (i == zeros_before_row) {
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) best[r] = zero > best[r] ? zero : best[r];
    }
    if (i >= rows) break;
    const float* tap = first + i * row_step;
    for (int64_t j = 0; j < cols; ++j, tap += col_step) {
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        V v;
        std::memcpy(&v, tap + r * kLanes, sizeof v);
        best[r] = v > best[r] ? v : best[r];
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) std::memcpy(out + r * kLanes, &best[r], sizeof(V));
}

// Four registers at a time while the channels last, then one; the last
// channels, fewer than a register holds, one by one.
template <class V>
GRAPHRUN_INLINE void blocks_max(const float* first, const WindowTaps& taps, int64_t channels, float* out) {
  constexpr int kLanes = sizeof(V) / sizeof(float);
  int64_t c = 0;
  for (; c + 4 * kLanes <= channels; c += 4 * kLanes) block_max<V, 4>(first + c, taps, out + c);
  for (; c + kLanes <= channels; c += kLanes) block_max<V, 1>(first + c, taps, out + c);
  if (c < channels) window_max<float>(first + c, taps, channels - c, out + c);
}

__attribute__((target("avx512f"))) void window_max_avx512(const float* first, const WindowTaps& taps, int64_t channels,
                                                          float* out) {
  blocks_max<F32x16>(first, taps, channels, out);
}

__attribute__((target("avx2"))) void window_max_avx2(const float* first, const WindowTaps& taps, int64_t channels,
                                                     float* out) {
  blocks_max<F32x8>(first, taps, channels, out);
}

void window_max_sse(const float* first, const WindowTaps& taps, int64_t channels, float* out) {
  blocks_max<F32x4>(first, taps, channels, out);
}

using WindowMaxFn = void (*)(const float*, const WindowTaps&, int64_t, float*);

WindowMaxFn pick() {
  switch (own_kernel_isa()) {
    case CpuIsa::kAvx512: return window_max_avx512;
    case CpuIsa::kAvx2: return window_max_avx2;
    default: return window_max_sse;
  }
}

}  // namespace

void window_max(const float* first, const WindowTaps& taps, int64_t channels, float* out) {
  static const WindowMaxFn chosen = pick();
  chosen(first, taps, channels, out);
}

}  // namespace graphrun
