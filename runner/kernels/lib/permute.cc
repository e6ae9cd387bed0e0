// Dims that stay next to each other in the same order are merged first, so
// an attention head split ([B, T, N, H] -> [B, N, T, H]) is a 4-D copy of
// runs H long, and a permutation that moves nothing is one memcpy. Runs
// along an input-contiguous innermost dim are memcpy'd; otherwise the
// innermost loop gathers with a stride. Rows of the output are split over
// the cores.
#include "kernels/lib/permute.h"

#include <cstring>
#include <string>

#include "core/parallel.h"

namespace graphrun {
namespace {

// Output dims, each with its input stride in elements, after merging.
struct Walk {
  std::vector<int64_t> dims, strides;
};

Walk merged_walk(const Shape& in_shape, const std::vector<int>& perm) {
  const int rank = static_cast<int>(perm.size());
  std::vector<int64_t> in_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in_shape[d + 1];
  Walk walk;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = in_shape[perm[d]];
    if (size == 1) continue;  // a dim of one moves nothing
    if (!walk.dims.empty() && walk.strides.back() == in_strides[perm[d]] * size) {
      walk.dims.back() *= size;  // continues the previous dim in input order
      walk.strides.back() = in_strides[perm[d]];
    } else {
      walk.dims.push_back(size);
      walk.strides.push_back(in_strides[perm[d]]);
    }
  }
  if (walk.dims.empty()) {
    walk.dims.push_back(1);
    walk.strides.push_back(1);
  }
  return walk;
}

// Copies output rows [begin, end) (a row: one run of the innermost dim).
template <class Item>
void copy_rows(const Walk& walk, const Item* in, Item* out, int64_t begin, int64_t end) {
  const int outer = static_cast<int>(walk.dims.size()) - 1;
  const int64_t inner = walk.dims[outer], step = walk.strides[outer];
  // the input offset and odometer of row `begin`
  std::vector<int64_t> index(outer, 0);
  int64_t offset = 0;
  for (int64_t rest = begin, d = outer - 1; d >= 0; --d) {
    index[d] = rest % walk.dims[d];
    rest /= walk.dims[d];
    offset += index[d] * walk.strides[d];
  }
  for (int64_t row = begin; row < end; ++row) {
    Item* to = out + row * inner;
    const Item* from = in + offset;
    if (step == 1) {
      std::memcpy(to, from, static_cast<std::size_t>(inner) * sizeof(Item));
    } else {
      for (int64_t j = 0; j < inner; ++j) to[j] = from[j * step];
    }
    for (int d = outer - 1; d >= 0; --d) {
      offset += walk.strides[d];
      if (++index[d] < walk.dims[d]) break;
      offset -= walk.strides[d] * walk.dims[d];
      index[d] = 0;
    }
  }
}

template <class Item>
void copy_all(const Walk& walk, const void* in, void* out) {
  const int64_t inner = walk.dims.back();
  int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < walk.dims.size(); ++d) rows *= walk.dims[d];
  parallel_for(rows, static_cast<double>(rows) * static_cast<double>(inner), [&](int64_t begin, int64_t end) {
    copy_rows(walk, static_cast<const Item*>(in), static_cast<Item*>(out), begin, end);
  });
}

}  // namespace

Tensor permuted(const Tensor& in, const std::vector<int>& perm) {
  const int rank = static_cast<int>(in.rank());
  Shape shape(rank);
  for (int d = 0; d < rank; ++d) shape[d] = in.shape()[perm[d]];
  Tensor out = Tensor::uninitialized(in.dtype(), shape);
  if (out.num_elements() == 0) return out;
  const Walk walk = merged_walk(in.shape(), perm);
  switch (dtype_size(in.dtype())) {
    case 1: copy_all<uint8_t>(walk, in.raw_data(), out.raw_data()); break;
    case 2: copy_all<uint16_t>(walk, in.raw_data(), out.raw_data()); break;
    case 4: copy_all<uint32_t>(walk, in.raw_data(), out.raw_data()); break;
    case 8: copy_all<uint64_t>(walk, in.raw_data(), out.raw_data()); break;
    default:
      throw Error("internal error: cannot permute items of " + std::to_string(dtype_size(in.dtype())) + " bytes");
  }
  return out;
}

}  // namespace graphrun
