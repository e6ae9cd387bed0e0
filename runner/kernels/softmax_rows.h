// Softmax and log-softmax of one row (the last axis), computed as Python's
// kernels compute them: the row's max is subtracted first, so exp never
// overflows, and the row sum is numpy's (see pairwise_sum.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/lib/exp_tanh_f32.h"
#include "kernels/lib/min_max.h"
#include "kernels/lib/pairwise_sum.h"
#include "kernels/lib/vec4.h"

namespace graphrun {

// The row's max; NaN if any element is NaN (as np.max). n >= 1.
template <class T>
T row_max(const T* x, int64_t n) {
  T m = x[0];
  int64_t i = 1;
  if constexpr (std::is_same_v<T, float>) {
    // four running maxima (which of 0.0 and -0.0 wins may differ from the
    // scalar order: x - max and its exp are the same either way)
    if (n >= 8) {
      F32x4 m4 = load4(x);
      I32x4 nan = {0, 0, 0, 0};
      for (i = 4; i + 4 <= n; i += 4) {
        const F32x4 v = load4(x + i);
        m4 = v > m4 ? v : m4;
        nan |= v != v;
      }
      if (nan[0] | nan[1] | nan[2] | nan[3]) i = 1;  // the loop below finds the scalar order's NaN
      else m = maximum(maximum(m4[0], m4[1]), maximum(m4[2], m4[3]));
    }
  }
  for (; i < n; ++i) m = maximum(m, x[i]);
  return m;
}

// out[i] = x[i] - m, then out[i] / sum: four lanes at a time for float32.
template <class T>
void subtract_row(const T* x, T m, int64_t n, T* out) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    const F32x4 m4 = {m, m, m, m};
    for (; i + 4 <= n; i += 4) store4(out + i, load4(x + i) - m4);
  }
  for (; i < n; ++i) out[i] = x[i] - m;
}

template <class T>
void divide_row(T* out, int64_t n, T sum) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    const F32x4 s4 = {sum, sum, sum, sum};
    for (; i + 4 <= n; i += 4) store4(out + i, load4(out + i) / s4);
  }
  for (; i < n; ++i) out[i] = out[i] / sum;
}

// out[i] = exp(in[i]) for the row; float32 rows in vector lanes (exp_tanh_f32.h).
template <class T>
void exp_row(const T* in, int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    exp_f32(in, n, out);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
  }
}

// out = exp(x - max) / sum(exp(x - max)).
template <class T>
void softmax_row(const T* x, int64_t n, T* out) {
  if (n == 0) return;
  const T m = row_max(x, n);
  subtract_row(x, m, n, out);
  exp_row(out, n, out);
  divide_row(out, n, numpy_sum(out, n));
}

// out = (x - max) - log(sum(exp(x - max))). `scratch` is reused between rows.
template <class T>
void log_softmax_row(const T* x, int64_t n, T* out, std::vector<T>& scratch) {
  if (n == 0) return;
  const T m = row_max(x, n);
  scratch.resize(static_cast<std::size_t>(n));
  subtract_row(x, m, n, out);
  exp_row(out, n, scratch.data());
  const T log_sum = std::log(numpy_sum(scratch.data(), n));
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] - log_sum;
}

}  // namespace graphrun
