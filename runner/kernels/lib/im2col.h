// The patch matrix of a convolution, built a tile of output pixels at a
// time so it stays in cache: row p (pixel p of the N*OH*OW output, row-major)
// holds the KH*KW*C input values its window covers, in [KH][KW][C] order
// (the filter's own layout), with zeros for padding. The convolution is then
// that matrix times the [KH*KW*C, out] filter; col2im_add is the adjoint,
// adding each patch row back where it was read from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/lib/window.h"

namespace graphrun {

// An NHWC input's dims, and the window placed over it.
struct ConvShape {
  int64_t n = 0, h = 0, w = 0, c = 0;
  WindowGeometry window;

  int64_t pixels() const { return n * window.rows.out * window.cols.out; }
  int64_t patch_size() const { return window.kh * window.kw * c; }
};

// Copies n elements. A memcpy of constant size becomes a few moves, while a
// variable one is a libc call; patch runs are often a handful of elements
// (a 5-wide window over one channel), where the call would dominate.
template <class T>
inline void copy_run(const T* from, int64_t n, T* to) {
  for (; n >= 8; n -= 8, from += 8, to += 8) std::memcpy(to, from, 8 * sizeof(T));
  if (n >= 4) {
    std::memcpy(to, from, 4 * sizeof(T));
    n -= 4, from += 4, to += 4;
  }
  for (; n > 0; --n) *to++ = *from++;
}

// Visits pixels [first_pixel, first_pixel + count) one output row at a time:
// visit(n, oy, first_ox, pixels, offset) where offset counts pixels from
// first_pixel. Saves dividing the flat index for every pixel.
template <class Visit>
void for_each_output_row(const ConvShape& s, int64_t first_pixel, int64_t count, Visit&& visit) {
  const int64_t oh = s.window.rows.out, ow = s.window.cols.out;
  if (count <= 0 || oh == 0 || ow == 0) return;
  int64_t n = first_pixel / (oh * ow);
  int64_t oy = first_pixel / ow % oh;
  int64_t ox = first_pixel % ow;
  for (int64_t done = 0; done < count;) {
    const int64_t pixels = std::min(ow - ox, count - done);
    visit(n, oy, ox, pixels, done);
    done += pixels;
    ox = 0;
    if (++oy == oh) oy = 0, ++n;
  }
}

// Writes the patch rows of pixels [first_pixel, first_pixel + count) to
// `patches`, one after another.
template <class T>
void im2col_tile(const ConvShape& s, const T* x, int64_t first_pixel, int64_t count, T* patches) {
  const WindowGeometry& g = s.window;
  const int64_t run = g.kw * s.c;  // one window row of a patch
  const int64_t k = s.patch_size();
  for_each_output_row(s, first_pixel, count, [&](int64_t n, int64_t oy, int64_t ox0, int64_t pixels, int64_t done) {
    for (int64_t a = 0; a < g.kh; ++a) {
      T* to = patches + done * k + a * run;
      const int64_t r = oy * g.stride_h - g.rows.before + a * g.dilation_h;
      if (r < 0 || r >= s.h) {
        for (int64_t i = 0; i < pixels; ++i) std::fill(to + i * k, to + i * k + run, T(0));
        continue;
      }
      const T* row = x + (n * s.h + r) * s.w * s.c;
      for (int64_t i = 0; i < pixels; ++i, to += k) {
        const int64_t col0 = (ox0 + i) * g.stride_w - g.cols.before;
        if (g.dilation_w == 1 && col0 >= 0 && col0 + g.kw <= s.w) {
          copy_run(row + col0 * s.c, run, to);
          continue;
        }
        for (int64_t b = 0; b < g.kw; ++b) {
          const int64_t col = col0 + b * g.dilation_w;
          if (col < 0 || col >= s.w) std::fill(to + b * s.c, to + (b + 1) * s.c, T(0));
          else copy_run(row + col * s.c, s.c, to + b * s.c);
        }
      }
    }
  });
}

// The adjoint of im2col_tile: dx[where patch element came from] += patch
// element, for `count` pixels from first_pixel; padding elements are dropped.
// `add` is the element addition (wrapping for integers).
template <class T, class Add>
void col2im_tile_add(const ConvShape& s, const T* patches, int64_t first_pixel, int64_t count, T* dx, Add add) {
  const WindowGeometry& g = s.window;
  const int64_t run = g.kw * s.c;
  const int64_t k = s.patch_size();
  for_each_output_row(s, first_pixel, count, [&](int64_t n, int64_t oy, int64_t ox0, int64_t pixels, int64_t done) {
    for (int64_t a = 0; a < g.kh; ++a) {
      const int64_t r = oy * g.stride_h - g.rows.before + a * g.dilation_h;
      if (r < 0 || r >= s.h) continue;
      T* row = dx + (n * s.h + r) * s.w * s.c;
      const T* from_row = patches + done * k + a * run;
      for (int64_t i = 0; i < pixels; ++i, from_row += k) {
        const int64_t col0 = (ox0 + i) * g.stride_w - g.cols.before;
        for (int64_t b = 0; b < g.kw; ++b) {
          const int64_t col = col0 + b * g.dilation_w;
          if (col < 0 || col >= s.w) continue;
          T* to = row + col * s.c;
          const T* from = from_row + b * s.c;
          for (int64_t q = 0; q < s.c; ++q) to[q] = add(to[q], from[q]);
        }
      }
    }
  });
}

// How many pixels one tile holds: a patch tile of about 32 KiB (it is read
// once per filter panel, so it should stay in L1/L2), a multiple of 4 rows
// (the GEMM kernel's row block), at least 4.
inline int64_t tile_pixels(int64_t patch_size, std::size_t item) {
  const int64_t bytes = std::max<int64_t>(patch_size, 1) * static_cast<int64_t>(item);
  return std::max<int64_t>(4, (32 * 1024 / bytes) / 4 * 4);
}

}  // namespace graphrun
