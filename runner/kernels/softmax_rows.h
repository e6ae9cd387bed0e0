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

namespace graphrun {

// The row's max; NaN if any element is NaN (as np.max). n >= 1.
template <class T>
T row_max(const T* x, int64_t n) {
  T m = x[0];
  for (int64_t i = 1; i < n; ++i) m = maximum(m, x[i]);
  return m;
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
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] - m;
  exp_row(out, n, out);
  const T sum = numpy_sum(out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] / sum;
}

// out = (x - max) - log(sum(exp(x - max))). `scratch` is reused between rows.
template <class T>
void log_softmax_row(const T* x, int64_t n, T* out, std::vector<T>& scratch) {
  if (n == 0) return;
  const T m = row_max(x, n);
  scratch.resize(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] - m;
  exp_row(out, n, scratch.data());
  const T log_sum = std::log(numpy_sum(scratch.data(), n));
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] - log_sum;
}

}  // namespace graphrun
