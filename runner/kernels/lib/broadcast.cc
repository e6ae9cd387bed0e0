#include "kernels/lib/broadcast.h"

#include <algorithm>

namespace graphrun {

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

BroadcastPlan plan_broadcast(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  BroadcastPlan plan;
  plan.out.assign(rank, 1);
  plan.a_strides.assign(rank, 0);
  plan.b_strides.assign(rank, 0);
  const std::vector<int64_t> a_own = row_major_strides(a);
  const std::vector<int64_t> b_own = row_major_strides(b);
  for (std::size_t i = 0; i < rank; ++i) {
    // i counts from the last dim; a dim missing from the shorter shape is 1.
    const std::size_t d = rank - 1 - i;
    const bool a_has = i < a.size();
    const bool b_has = i < b.size();
    const int64_t a_dim = a_has ? a[a.size() - 1 - i] : 1;
    const int64_t b_dim = b_has ? b[b.size() - 1 - i] : 1;
    if (a_dim != b_dim && a_dim != 1 && b_dim != 1) {
      throw Error("cannot broadcast " + shape_string(a) + " with " + shape_string(b));
    }
    plan.out[d] = a_dim == 1 ? b_dim : a_dim;
    if (a_has && a_dim != 1) plan.a_strides[d] = a_own[a.size() - 1 - i];
    if (b_has && b_dim != 1) plan.b_strides[d] = b_own[b.size() - 1 - i];
  }
  return plan;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  const std::vector<int64_t> own = row_major_strides(in);
  std::vector<int64_t> strides(out.size(), 0);
  const std::size_t lead = out.size() - in.size();
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1) strides[lead + d] = own[d];
  }
  return strides;
}

}  // namespace graphrun
