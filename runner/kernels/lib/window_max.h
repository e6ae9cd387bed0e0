// The maximum over one pooling window, MaxPool's rule as Python's graphrun
// has it: every channel starts at the type's lowest finite value and a tap
// replaces it only when strictly greater, taps in row-major order. So NaN and
// -inf never win, and of 0.0 and -0.0 the first one seen stays.
//
// A window may also cover zeros that a Pad folded into the pool would have
// written (_ZeroPadMaxPool). They are taken as value 0 where the padded
// tensor had them in that order, which is always before a whole row of the
// window's real taps or after all of them: before, when the window's first
// tap is padding; after its first row, when only its right side is; after
// all, when only its bottom is. One zero stands for all of them, since a
// second 0 is never strictly greater than the first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace graphrun {

struct WindowTaps {
  int64_t rows = 0, cols = 0;  // the window's real taps: rows x cols input pixels
  int64_t row_step = 0, col_step = 0;  // elements from one tap to the next down, across
  int64_t zeros_before_row = -1;  // the Pad's zeros come before real row k (k == rows: after them all); -1: none
};

// out[c] (c < channels) = the maximum over channel c of the taps, the first
// at `first` (unread when rows or cols is 0).
template <class T>
void window_max(const T* first, const WindowTaps& taps, int64_t channels, T* out) {
  std::fill(out, out + channels, std::numeric_limits<T>::lowest());
  for (int64_t i = 0;; ++i) {
    if (i == taps.zeros_before_row) {
      for (int64_t c = 0; c < channels; ++c) out[c] = T(0) > out[c] ? T(0) : out[c];
    }
    if (i >= taps.rows) break;
    const T* tap = first + i * taps.row_step;
    for (int64_t j = 0; j < taps.cols; ++j, tap += taps.col_step) {
      for (int64_t c = 0; c < channels; ++c) out[c] = tap[c] > out[c] ? tap[c] : out[c];
    }
  }
}

// float32: the channels in blocks held in vector registers over the whole
// window, as wide as the CPU allows (lib/cpu_isa.h). The same bits.
void window_max(const float* first, const WindowTaps& taps, int64_t channels, float* out);

}  // namespace graphrun
