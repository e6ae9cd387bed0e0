#include "kernels/paddings.h"

#include <string>

#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {

std::vector<int64_t> read_paddings(const Tensor& x, const Tensor& paddings, Shape& padded) {
  const int64_t rank = x.rank();
  if (paddings.rank() != 2 || paddings.shape()[0] != rank || paddings.shape()[1] != 2) {
    throw Error("paddings must have shape [" + std::to_string(rank) + ", 2] for input " + shape_string(x.shape()) +
                ", got " + shape_string(paddings.shape()));
  }
  std::vector<int64_t> p = read_ints(paddings);
  padded = x.shape();
  for (int64_t d = 0; d < rank; ++d) {
    if (p[2 * d] < 0 || p[2 * d + 1] < 0) throw Error("paddings " + shape_string(p) + " must not be negative");
    if (__builtin_add_overflow(padded[d], p[2 * d], &padded[d]) ||
        __builtin_add_overflow(padded[d], p[2 * d + 1], &padded[d])) {
      throw Error("paddings " + shape_string(p) + " are too large");
    }
  }
  return p;
}

}  // namespace graphrun
