// numpy's summation of a contiguous run of floats, step for step.
//
// np.sum over a contiguous axis does not add left to right: it starts from 0
// and adds numpy's pairwise sum of the run (8 interleaved accumulators per
// block of up to 128 elements, blocks split in halves). Kernels whose Python
// twin sums a contiguous row (L2Loss, the softmax family) use this so the two
// runners round alike, and so agree bit for bit wherever the summands do.
#pragma once

#include <cstdint>

namespace graphrun {

template <class T>
T numpy_pairwise(const T* a, int64_t n) {
  if (n < 8) {
    T sum = T(0);
    for (int64_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    T sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  // Halves, the first a multiple of 8 long.
  int64_t half = n / 2;
  half -= half % 8;
  return numpy_pairwise(a, half) + numpy_pairwise(a + half, n - half);
}

// What np.sum gives for the run: the reduction's identity plus the pairwise sum.
template <class T>
T numpy_sum(const T* a, int64_t n) {
  return T(0) + numpy_pairwise(a, n);
}

}  // namespace graphrun
