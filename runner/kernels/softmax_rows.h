// Softmax and log-softmax of one row (the last axis), computed as Python's
// kernels compute them: the row's max is subtracted first, so exp never
// overflows, and the row sum is numpy's (see pairwise_sum.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

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

// out = exp(x - max) / sum(exp(x - max)).
template <class T>
void softmax_row(const T* x, int64_t n, T* out) {
  if (n == 0) return;
  const T m = row_max(x, n);
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(x[i] - m);
  const T sum = numpy_sum(out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] / sum;
}

// out = (x - max) - log(sum(exp(x - max))). `scratch` is reused between rows.
template <class T>
void log_softmax_row(const T* x, int64_t n, T* out, std::vector<T>& scratch) {
  if (n == 0) return;
  const T m = row_max(x, n);
  scratch.resize(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out[i] = x[i] - m;
    scratch[i] = std::exp(out[i]);
  }
  const T log_sum = std::log(numpy_sum(scratch.data(), n));
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] - log_sum;
}

}  // namespace graphrun
