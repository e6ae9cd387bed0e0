// numpy-style broadcasting for binary elementwise ops.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace graphrun {

// Row-major strides, in elements.
std::vector<int64_t> row_major_strides(const Shape& shape);

struct BroadcastPlan {
  Shape out;
  // Per output dim, how far each input moves; 0 where that input is broadcast.
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
};

// Shapes align at their last dims; each pair must be equal or contain a 1.
// Throws Error("cannot broadcast [2,3] with [4]").
BroadcastPlan plan_broadcast(const Shape& a, const Shape& b);

// Per dim of `out`, how far a tensor of shape `in` moves when it is broadcast
// to `out` (shapes aligned at their last dims): 0 along the dims `in` lacks or
// has as 1. `out` must be a broadcast of `in`.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// out[i] = f(a[...], b[...]) over the output in row-major order, stepping an
// odometer over all but the innermost dim so the inner loop stays simple.
template <class In, class Out, class F>
void broadcast_apply(const BroadcastPlan& plan, const In* a, const In* b, Out* out, F f) {
  const int rank = static_cast<int>(plan.out.size());
  if (rank == 0) {
    out[0] = f(a[0], b[0]);
    return;
  }
  int64_t total = 1;
  for (int64_t dim : plan.out) total *= dim;
  if (total == 0) return;
  const int64_t inner = plan.out[rank - 1];
  const int64_t a_inner = plan.a_strides[rank - 1];
  const int64_t b_inner = plan.b_strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t a_offset = 0;
  int64_t b_offset = 0;
  for (int64_t done = 0; done < total; done += inner) {
    for (int64_t j = 0; j < inner; ++j) *out++ = f(a[a_offset + j * a_inner], b[b_offset + j * b_inner]);
    for (int d = rank - 2; d >= 0; --d) {
      a_offset += plan.a_strides[d];
      b_offset += plan.b_strides[d];
      if (++index[d] < plan.out[d]) break;
      a_offset -= plan.a_strides[d] * plan.out[d];
      b_offset -= plan.b_strides[d] * plan.out[d];
      index[d] = 0;
    }
  }
}

}  // namespace graphrun
