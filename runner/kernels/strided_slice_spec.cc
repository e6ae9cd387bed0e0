#include "kernels/strided_slice_spec.h"

#include <algorithm>

namespace graphrun {
namespace {

constexpr int64_t kNewAxis = -1;
constexpr int64_t kShrink = -2;

struct DenseDim {
  int64_t begin = 0, end = 0, stride = 1;
  bool begin_masked = true, end_masked = true, shrink = false;
};

bool bit(int64_t mask, int64_t i) { return i < 63 && ((mask >> i) & 1); }

// The sparse spec (n positions) as one DenseDim per input dim, and for each
// output dim where it comes from: an input dim, kNewAxis or kShrink.
void expand(int64_t rank, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
            const std::vector<int64_t>& strides, SliceMasks masks, std::vector<DenseDim>& dense,
            std::vector<int64_t>& gather) {
  const int64_t n = static_cast<int64_t>(strides.size());
  const uint64_t ellipsis_bits = static_cast<uint64_t>(masks.ellipsis);  // unsigned: the mask may be INT64_MIN
  if (ellipsis_bits & (ellipsis_bits - 1)) throw Error("a slice may hold at most one ellipsis (...)");
  bool seen = false;
  int64_t new_after = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (seen && bit(masks.new_axis, i)) ++new_after;
    if (bit(masks.ellipsis, i)) seen = true;
  }
  int64_t positions = n;
  if (!seen) {  // an implicit ellipsis at the end keeps the remaining dims whole
    if (n < 63) masks.ellipsis |= int64_t{1} << n;
    ++positions;
  }
  dense.assign(static_cast<std::size_t>(rank), DenseDim{});
  int64_t full = 0;
  for (int64_t i = 0; i < positions; ++i) {
    if (bit(masks.ellipsis, i) || (!seen && i == n)) {
      const int64_t stop = std::min(rank - (positions - i) + 1 + new_after, rank);
      for (; full < stop; ++full) gather.push_back(full);
    } else if (bit(masks.new_axis, i)) {
      gather.push_back(kNewAxis);
    } else {
      if (full == rank) {
        throw Error(rank == 0 ? "cannot slice a scalar"
                              : "the slice has more indices than the input's " + std::to_string(rank) + " dims");
      }
      DenseDim& d = dense[full];
      d.begin = begin[i];
      d.end = end[i];
      d.stride = strides[i];
      d.begin_masked = bit(masks.begin, i);
      d.end_masked = bit(masks.end, i);
      d.shrink = bit(masks.shrink_axis, i);
      gather.push_back(d.shrink ? kShrink : full);
      ++full;
    }
  }
}

}  // namespace

ResolvedSlice resolve_strided_slice(const Shape& shape, const std::vector<int64_t>& begin,
                                    const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                                    const SliceMasks& masks) {
  const std::size_t n = strides.size();
  if (begin.size() != n || end.size() != n) {
    throw Error("begin, end and strides must have one entry each; begin has " + std::to_string(begin.size()) +
                ", end " + std::to_string(end.size()) + ", strides " + std::to_string(n));
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<DenseDim> dense;
  std::vector<int64_t> gather;
  expand(rank, begin, end, strides, masks, dense, gather);
  ResolvedSlice r;
  for (int64_t i = 0; i < rank; ++i) {
    const DenseDim& dd = dense[i];
    const int64_t d = shape[i];
    const int64_t s = dd.stride;
    if (s == 0) throw Error("strides[" + std::to_string(i) + "] must be non-zero");
    if (dd.shrink && s <= 0) throw Error("an integer index needs stride 1");
    const int64_t lo = s > 0 ? 0 : -1;
    const int64_t hi = s > 0 ? d : d - 1;
    auto canonical = [&](int64_t x, bool masked, bool is_end) {
      if (masked) return (s > 0) == is_end ? hi : lo;
      if (x < 0) x += d;
      return std::min(std::max(x, lo), hi);
    };
    int64_t b, e;
    if (dd.shrink) {
      b = dd.begin < 0 ? dd.begin + d : dd.begin;
      if (b < 0 || b >= d) {
        throw Error("index " + std::to_string(dd.begin) + " is out of bounds for dim " + std::to_string(i) +
                    " of size " + std::to_string(d));
      }
      e = b + 1;
    } else {
      b = canonical(dd.begin, dd.begin_masked, false);
      e = canonical(dd.end, dd.end_masked, true);
    }
    // The count of b, b + s, ... short of e: ceil(|e - b| / |s|) when the
    // interval runs the stride's way, else 0. |s| in unsigned arithmetic, so
    // the most negative stride cannot overflow.
    const int64_t length = e - b;
    int64_t size = 0;
    if (length != 0 && (length < 0) == (s < 0)) {
      const uint64_t span = length < 0 ? static_cast<uint64_t>(-length) : static_cast<uint64_t>(length);
      const uint64_t step = s < 0 ? static_cast<uint64_t>(-(s + 1)) + 1 : static_cast<uint64_t>(s);
      size = static_cast<int64_t>(span / step + (span % step != 0));
    }
    r.begin.push_back(size > 0 ? b : 0);
    r.stride.push_back(s);
    r.box.push_back(size);
  }
  for (int64_t g : gather) {
    if (g == kNewAxis) r.final_shape.push_back(1);
    else if (g != kShrink) r.final_shape.push_back(r.box[g]);
  }
  return r;
}

}  // namespace graphrun
