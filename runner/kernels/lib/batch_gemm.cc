// A float32 batch runs the convolution GEMM (gemm_f32) once per matrix pair,
// packing that pair's right-hand side; an adjoint is a transposed copy first,
// since gemm_f32 reads both sides row-major.
#include "kernels/lib/batch_gemm.h"

#include <cstring>

#include "core/int_arith.h"
#include "kernels/lib/broadcast.h"
#include "kernels/lib/gemm_f32.h"

namespace graphrun {
namespace {

// For each batch of the output, the index of the x and y matrices it multiplies.
void batch_offsets(const Shape& x, const Shape& y, const Shape& out, std::vector<int64_t>& xs,
                   std::vector<int64_t>& ys) {
  const Shape xb(x.begin(), x.end() - 2), yb(y.begin(), y.end() - 2), ob(out.begin(), out.end() - 2);
  const std::vector<int64_t> xstride = broadcast_strides(xb, ob), ystride = broadcast_strides(yb, ob);
  int64_t count = 1;
  for (int64_t d : ob) count *= d;
  xs.assign(count, 0);
  ys.assign(count, 0);
  std::vector<int64_t> index(ob.size(), 0);
  int64_t xo = 0, yo = 0;
  for (int64_t i = 0; i < count; ++i) {
    xs[i] = xo;
    ys[i] = yo;
    for (int d = static_cast<int>(ob.size()) - 1; d >= 0; --d) {
      xo += xstride[d];
      yo += ystride[d];
      if (++index[d] < ob[d]) break;
      xo -= xstride[d] * ob[d];
      yo -= ystride[d] * ob[d];
      index[d] = 0;
    }
  }
}

template <class T>
void transpose_matrix(const T* in, int64_t rows, int64_t cols, T* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
  }
}

void multiply_f32(const float* a, const float* b, int64_t m, int64_t k, int64_t n, bool adj_x, bool adj_y,
                  std::vector<float>& a_buf, std::vector<float>& b_buf, float* c) {
  if (adj_x) {
    a_buf.resize(m * k);
    transpose_matrix(a, k, m, a_buf.data());
    a = a_buf.data();
  }
  if (adj_y) {
    b_buf.resize(k * n);
    transpose_matrix(b, n, k, b_buf.data());
    b = b_buf.data();
  }
  const PackedRhs packed(b, k, n, n);
  gemm_f32(a, m, k, packed, c, n);
}

template <class T>
void multiply_any(const T* a, const T* b, int64_t m, int64_t k, int64_t n, bool adj_x, bool adj_y, T* c) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T u = adj_x ? a[p * m + i] : a[i * k + p];
        const T v = adj_y ? b[j * k + p] : b[p * n + j];
        sum = add(sum, mul(u, v));
      }
      c[i * n + j] = sum;
    }
  }
}

}  // namespace

Shape batch_matmul_shape(const Shape& x, const Shape& y, bool adj_x, bool adj_y, bool broadcasting) {
  if (x.size() < 2 || y.size() < 2) {
    throw Error("inputs must have rank >= 2 (batches of matrices), got " + shape_string(x) + " and " + shape_string(y));
  }
  const int64_t m = adj_x ? x.back() : x[x.size() - 2], k = adj_x ? x[x.size() - 2] : x.back();
  const int64_t k2 = adj_y ? y.back() : y[y.size() - 2], n = adj_y ? y[y.size() - 2] : y.back();
  const std::string flags =
      " (adj_x=" + std::string(adj_x ? "true" : "false") + ", adj_y=" + std::string(adj_y ? "true" : "false") + ")";
  if (k != k2) {
    throw Error("cannot multiply " + shape_string(x) + " by " + shape_string(y) + flags + ": inner dimensions " +
                std::to_string(k) + " and " + std::to_string(k2) + " differ");
  }
  const Shape xb(x.begin(), x.end() - 2), yb(y.begin(), y.end() - 2);
  Shape out;
  if (broadcasting) {
    out = plan_broadcast(xb, yb).out;
  } else {
    if (xb != yb) {
      throw Error("BatchMatMul needs the same batch dims in " + shape_string(x) + " and " + shape_string(y) +
                  "; BatchMatMulV2 broadcasts them");
    }
    out = xb;
  }
  out.push_back(m);
  out.push_back(n);
  return out;
}

void batch_matmul(const Tensor& x, const Tensor& y, bool adj_x, bool adj_y, Tensor& out) {
  const Shape& os = out.shape();
  const int64_t m = os[os.size() - 2], n = os.back();
  const int64_t k = adj_x ? x.shape()[x.rank() - 2] : x.shape().back();
  if (out.num_elements() == 0 || k == 0) return;  // the output is already zeros
  std::vector<int64_t> xs, ys;
  batch_offsets(x.shape(), y.shape(), os, xs, ys);
  const int64_t x_size = m * k, y_size = k * n, o_size = m * n;
  if (x.dtype() == graphdef::DT_FLOAT) {
    std::vector<float> a_buf, b_buf;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      multiply_f32(x.data<float>() + xs[i] * x_size, y.data<float>() + ys[i] * y_size, m, k, n, adj_x, adj_y, a_buf,
                   b_buf, out.data<float>() + i * o_size);
    }
    return;
  }
  dispatch(TypeList<double, int32_t, int64_t>{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      multiply_any<T>(x.data<T>() + xs[i] * x_size, y.data<T>() + ys[i] * y_size, m, k, n, adj_x, adj_y,
                      out.data<T>() + i * o_size);
    }
  });
}

}  // namespace graphrun
