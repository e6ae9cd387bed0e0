// Segment reductions: SegmentSum/Mean/Max/Min/Prod (sorted ids, one
// output row per id up to the last) and UnsortedSegmentMax/Min/Prod (ids in
// any order, num_segments rows, negative ids dropped). Each segment's rows
// combine left to right from its first row, so float results have the bits
// of graphrun's; integers wrap; max and min let NaN through, as numpy's.
// An empty segment is 0 (1 for Prod) in the sorted ops and the dtype's
// lowest or highest value (1 for Prod) in the unsorted ones.
#include <cmath>
#include <limits>

#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd };

template <class T>
T combine(Reduce kind, T a, T b) {
  switch (kind) {
    case Reduce::kSum:
    case Reduce::kMean: return add(a, b);
    case Reduce::kProd: return mul(a, b);
    case Reduce::kMax:
    case Reduce::kMin:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return a;
        if (std::isnan(b)) return b;
      }
      return (kind == Reduce::kMax ? b > a : b < a) ? b : a;
  }
  return a;
}

template <class T>
T empty_value(Reduce kind, bool unsorted) {
  if (kind == Reduce::kProd) return T(1);
  if (!unsorted) return T(0);
  if (kind == Reduce::kMax) return std::numeric_limits<T>::lowest();
  if (kind == Reduce::kMin) return std::numeric_limits<T>::max();
  return T(0);
}

// Rows of `width` elements of data, the j-th going to segment ids[j] (< 0:
// dropped), into `out`, which holds `segments` rows.
void reduce_rows(Reduce kind, bool unsorted, const Tensor& data, const std::vector<int64_t>& ids, int64_t width,
                 Tensor& out) {
  const int64_t segments = width == 0 ? 0 : out.num_elements() / width;
  std::vector<int64_t> counts(static_cast<std::size_t>(out.shape()[0]), 0);
  dispatch(NumericTypes{}, data.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* rows = data.data<T>();
    T* result = out.data<T>();
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const int64_t id = ids[j];
      if (id < 0) continue;
      T* to = result + id * width;
      const T* from = rows + static_cast<int64_t>(j) * width;
      if (counts[id]++ == 0) {
        for (int64_t k = 0; k < width; ++k) to[k] = from[k];
      } else {
        for (int64_t k = 0; k < width; ++k) to[k] = combine(kind, to[k], from[k]);
      }
    }
    for (int64_t s = 0; s < segments; ++s) {
      T* row = result + s * width;
      const int64_t n = counts[s];
      if (n == 0) {
        for (int64_t k = 0; k < width; ++k) row[k] = empty_value<T>(kind, unsorted);
      } else if (kind == Reduce::kMean && n > 1) {
        // floats divide by the count in T; integers truncate toward zero
        for (int64_t k = 0; k < width; ++k) row[k] = static_cast<T>(row[k] / static_cast<T>(n));
      }
    }
  });
}

template <Reduce kKind>
void compute_sorted(KernelContext& context) {
  const Tensor& data = context.input(0);
  const Tensor& ids_tensor = context.input(1);
  if (ids_tensor.rank() != 1) throw Error("segment_ids should be a vector.");
  if (data.rank() == 0 || data.shape()[0] != ids_tensor.num_elements())
    throw Error("segment_ids should be the same size as dimension 0 of input.");
  const std::vector<int64_t> ids = read_ints(ids_tensor);
  for (std::size_t j = 1; j < ids.size(); ++j) {
    if (ids[j] < ids[j - 1]) throw Error("segment ids are not increasing");
  }
  const int64_t segments = ids.empty() ? 0 : ids.back() + 1;
  if (!ids.empty() && ids.front() < 0) {
    throw Error("Segment id " + std::to_string(ids.front()) + " out of range [0, " + std::to_string(segments) +
                "), possibly because 'segment_ids' input is not sorted.");
  }
  Shape out_shape = data.shape();
  out_shape[0] = segments;
  Tensor out(data.dtype(), out_shape);
  const int64_t rows = data.shape()[0];
  reduce_rows(kKind, false, data, ids, rows == 0 ? 0 : data.num_elements() / rows, out);
  context.set_output(0, std::move(out));
}

template <Reduce kKind>
void compute_unsorted(KernelContext& context) {
  const Tensor& data = context.input(0);
  const Tensor& ids_tensor = context.input(1);
  if (context.input(2).rank() != 0)
    throw Error("num_segments should be a scalar, not shape " + shape_string(context.input(2).shape()));
  const int64_t num = read_scalar_int(context.input(2), "num_segments");
  if (num < 0) throw Error("Input num_segments == " + std::to_string(num) + " must not be negative.");
  const Shape& d = data.shape();
  const Shape& ids_shape = ids_tensor.shape();
  if (ids_shape.size() > d.size() || !std::equal(ids_shape.begin(), ids_shape.end(), d.begin())) {
    throw Error("segment_ids " + shape_string(ids_shape) + " must be a prefix of data's shape " + shape_string(d));
  }
  const std::vector<int64_t> ids = read_ints(ids_tensor);
  for (std::size_t j = 0; j < ids.size(); ++j) {
    if (ids[j] >= num) {
      throw Error("segment_ids[" + std::to_string(j) + "] = " + std::to_string(ids[j]) + " is out of range [0, " +
                  std::to_string(num) + ")");
    }
  }
  Shape out_shape{num};
  out_shape.insert(out_shape.end(), d.begin() + static_cast<std::ptrdiff_t>(ids_shape.size()), d.end());
  Tensor out(data.dtype(), out_shape);
  int64_t width = 1;
  for (std::size_t k = ids_shape.size(); k < d.size(); ++k) width *= d[k];
  reduce_rows(kKind, true, data, ids, width, out);
  context.set_output(0, std::move(out));
}

// [last constant id + 1 (or unknown)] + data's dims past the first.
void sorted_shape(ShapeContext& context) {
  const StaticShape data = context.input(0);
  if (!data.known_rank || data.dims.empty()) return;
  std::vector<int64_t> ids;
  std::vector<int64_t> out = data.dims;
  out[0] = -1;
  if (context.const_ints(1, ids) && !ids.empty() && ids.front() >= 0) {
    bool sorted = true;
    for (std::size_t j = 1; j < ids.size(); ++j) sorted = sorted && ids[j] >= ids[j - 1];
    if (sorted) out[0] = ids.back() + 1;
  }
  context.set_output(0, known_shape(out));
}

// [num_segments] + data's dims past segment_ids' (which must prefix them).
void unsorted_shape(ShapeContext& context) {
  const StaticShape data = context.input(0), ids = context.input(1), num_shape = context.input(2);
  if (num_shape.known_rank && !num_shape.dims.empty()) return;
  if (!data.known_rank || !ids.known_rank || ids.dims.size() > data.dims.size()) return;
  for (std::size_t d = 0; d < ids.dims.size(); ++d) {
    if (data.dims[d] >= 0 && ids.dims[d] >= 0 && data.dims[d] != ids.dims[d]) return;
  }
  std::vector<int64_t> num;
  std::vector<int64_t> out{context.const_ints(2, num) && num.size() == 1 && num[0] >= 0 ? num[0] : -1};
  out.insert(out.end(), data.dims.begin() + static_cast<std::ptrdiff_t>(ids.dims.size()), data.dims.end());
  context.set_output(0, known_shape(out));
}

template <Reduce kKind>
Kernel sorted_kernel(const char* op) {
  return Kernel(op)
      .input("data", "T")
      .input("segment_ids", "Tindices")
      .output("T")
      .type_attr("T", dtypes_of(NumericTypes{}))
      .type_attr("Tindices", dtypes_of(IndexTypes{}))
      .shape(sorted_shape)
      .compute(compute_sorted<kKind>);
}

template <Reduce kKind>
Kernel unsorted_kernel(const char* op) {
  return Kernel(op)
      .input("data", "T")
      .input("segment_ids", "Tindices")
      .input("num_segments", "Tnumsegments")
      .output("T")
      .type_attr("T", dtypes_of(NumericTypes{}))
      .type_attr("Tindices", dtypes_of(IndexTypes{}))
      .type_attr("Tnumsegments", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
      .shape(unsorted_shape)
      .compute(compute_unsorted<kKind>);
}

REGISTER_KERNEL(sorted_kernel<Reduce::kSum>("SegmentSum"));
REGISTER_KERNEL(sorted_kernel<Reduce::kMean>("SegmentMean"));
REGISTER_KERNEL(sorted_kernel<Reduce::kMax>("SegmentMax"));
REGISTER_KERNEL(sorted_kernel<Reduce::kMin>("SegmentMin"));
REGISTER_KERNEL(sorted_kernel<Reduce::kProd>("SegmentProd"));
REGISTER_KERNEL(unsorted_kernel<Reduce::kMax>("UnsortedSegmentMax"));
REGISTER_KERNEL(unsorted_kernel<Reduce::kMin>("UnsortedSegmentMin"));
REGISTER_KERNEL(unsorted_kernel<Reduce::kProd>("UnsortedSegmentProd"));

}  // namespace
}  // namespace graphrun
