// Ops that group or count values, or split a tensor's rows by index:
//   Unique, UniqueWithCounts, UniqueV2  the distinct values (or slices along
//       an axis) in order of first appearance, each input's position among
//       them, and for UniqueWithCounts how often each appears; every NaN is a
//       value of its own and -0.0 equals 0.0 (the first one's bits are kept);
//   Bincount, DenseBincount  how many of each value below `size` (larger ones
//       ignored), or the sum of their weights: float weights add up in double
//       in index order, integer ones in int64, then cast, as numpy's bincount;
//   DynamicPartition  data's rows split by partition, keeping their order.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

// Slices of `width` elements: equal when every element is (NaN never is).
template <class T>
bool same_slice(const T* a, const T* b, int64_t width) {
  for (int64_t k = 0; k < width; ++k) {
    if (!(a[k] == b[k])) return false;
  }
  return true;
}

template <class T>
uint64_t slice_hash(const T* a, int64_t width) {
  uint64_t hash = 1469598103934665603ull;
  for (int64_t k = 0; k < width; ++k) {
    T v = a[k];
    if constexpr (std::is_floating_point_v<T>) {
      if (v == T(0)) v = T(0);  // -0.0 hashes as 0.0, which it equals
    }
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    hash = (hash ^ bits) * 1099511628211ull;
  }
  return hash;
}

struct Grouping {
  std::vector<int64_t> first;  // the first slice of each distinct value, in order of appearance
  std::vector<int64_t> index;  // each slice's position among them
};

// `n` slices of `width` elements each, in order.
Grouping group_slices(const Tensor& x, int64_t n, int64_t width) {
  Grouping g;
  g.index.resize(static_cast<std::size_t>(n));
  if (width == 0) {  // slices with no elements are all equal
    if (n > 0) g.first.push_back(0);
    return g;
  }
  dispatch(AllTypes{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = x.data<T>();
    std::unordered_multimap<uint64_t, int64_t> seen;  // hash -> position among the distinct values
    for (int64_t i = 0; i < n; ++i) {
      const T* slice = data + i * width;
      const uint64_t hash = slice_hash(slice, width);
      int64_t found = -1;
      auto [from, to] = seen.equal_range(hash);
      for (auto it = from; it != to && found < 0; ++it) {
        if (same_slice(data + g.first[it->second] * width, slice, width)) found = it->second;
      }
      if (found < 0) {
        found = static_cast<int64_t>(g.first.size());
        g.first.push_back(i);
        seen.emplace(hash, found);
      }
      g.index[i] = found;
    }
  });
  return g;
}

Tensor index_tensor(DataType dtype, const std::vector<int64_t>& values) {
  Tensor out(dtype, {static_cast<int64_t>(values.size())});
  dispatch(IndexTypes{}, dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    I* to = out.data<I>();
    for (std::size_t i = 0; i < values.size(); ++i) to[i] = static_cast<I>(values[i]);
  });
  return out;
}

// Unique along `axis` of x (axis 0 of a vector when axis < 0).
void unique_along(KernelContext& context, const Tensor& x, int64_t axis, bool with_counts) {
  const Shape& shape = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= shape[d];
  const int64_t n = shape[axis], width = outer * inner;
  // slice i of the axis, gathered contiguous: [n, outer * inner]
  Tensor slices = Tensor::uninitialized(x.dtype(), {n, width});
  const std::size_t element = dtype_size(x.dtype());
  const char* from = static_cast<const char*>(x.raw_data());
  char* to = static_cast<char*>(slices.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(to + (i * width + o * inner) * element, from + ((o * n + i) * inner) * element, inner * element);
    }
  }
  const Grouping g = group_slices(slices, n, width);
  Shape out_shape = shape;
  out_shape[axis] = static_cast<int64_t>(g.first.size());
  Tensor y = Tensor::uninitialized(x.dtype(), out_shape);
  char* out = static_cast<char*>(y.raw_data());
  const int64_t kept = out_shape[axis];
  for (int64_t j = 0; j < kept; ++j) {
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out + ((o * kept + j) * inner) * element, to + (g.first[j] * width + o * inner) * element,
                  inner * element);
    }
  }
  const DataType idx = context.attr_type("out_idx");
  context.set_output(0, std::move(y));
  context.set_output(1, index_tensor(idx, g.index));
  if (with_counts) {
    std::vector<int64_t> counts(g.first.size(), 0);
    for (int64_t k : g.index) ++counts[k];
    context.set_output(2, index_tensor(idx, counts));
  }
}

template <bool kWithCounts>
void compute_unique(KernelContext& context) {
  const Tensor& x = context.input(0);
  if (x.rank() != 1) throw Error("unique expects a 1D vector.");
  unique_along(context, x, 0, kWithCounts);
}

void compute_unique_v2(KernelContext& context) {
  const Tensor& x = context.input(0);
  const std::vector<int64_t> axis = read_ints(context.input(1));
  const int64_t rank = std::max<int64_t>(x.rank(), 1);
  if (axis.size() > 1) {
    throw Error("axis does not support input tensors larger than 1 elements, got " + std::to_string(axis.size()));
  }
  if (axis.empty()) {
    if (x.rank() != 1) throw Error("unique expects a 1D vector.");
    unique_along(context, x, 0, false);
    return;
  }
  if (axis[0] < -rank || axis[0] >= rank) {
    throw Error("axis has to be between [" + std::to_string(-rank) + ", " + std::to_string(rank) + "), got " +
                std::to_string(axis[0]));
  }
  if (x.rank() == 0) throw Error("unique expects a 1D vector.");
  unique_along(context, x, axis[0] < 0 ? axis[0] + rank : axis[0], false);
}

void unique_shape(ShapeContext& context) {
  const StaticShape x = context.input(0);
  const int64_t n = x.known_rank && x.dims.size() == 1 ? x.dims[0] : -1;
  context.set_output(0, known_shape({-1}));
  context.set_output(1, known_shape({n}));
  if (context.num_outputs() > 2) context.set_output(2, known_shape({-1}));
}

Kernel unique_kernel(const char* op, bool with_counts) {
  Kernel kernel(op);
  kernel.input("x", "T").output("T").output("out_idx");
  if (with_counts) kernel.output("out_idx");
  return kernel.type_attr("T", dtypes_of(AllTypes{}))
      .type_attr("out_idx", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
      .output_names(with_counts ? std::vector<std::string>{"y", "idx", "count"} : std::vector<std::string>{"y", "idx"})
      .shape(unique_shape)
      .compute(with_counts ? compute_unique<true> : compute_unique<false>);
}

// y keeps x's rank with the axis' size unknown; idx has that axis' size.
void unique_v2_shape(ShapeContext& context) {
  const StaticShape x = context.input(0);
  std::vector<int64_t> axis;
  if (!x.known_rank || !context.const_ints(1, axis) || axis.size() > 1) {
    if (x.known_rank) context.set_output(0, known_shape(std::vector<int64_t>(x.dims.size(), -1)));
    context.set_output(1, known_shape({-1}));
    return;
  }
  const int64_t rank = std::max<int64_t>(static_cast<int64_t>(x.dims.size()), 1);
  if (axis.empty() && x.dims.size() != 1) return;
  int64_t a = axis.empty() ? 0 : axis[0];
  if (a < -rank || a >= rank || x.dims.empty()) return;
  if (a < 0) a += rank;
  std::vector<int64_t> y = x.dims;
  const int64_t n = y[a];
  y[a] = -1;
  context.set_output(0, known_shape(y));
  context.set_output(1, known_shape({n}));
}

REGISTER_KERNEL(unique_kernel("Unique", false));
REGISTER_KERNEL(unique_kernel("UniqueWithCounts", true));
REGISTER_KERNEL(Kernel("UniqueV2")
                    .input("x", "T")
                    .input("axis", "Taxis")
                    .output("T")
                    .output("out_idx")
                    .type_attr("T", dtypes_of(AllTypes{}))
                    .type_attr("out_idx", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .type_attr("Taxis", dtypes_of(IndexTypes{}), graphdef::DT_INT64)
                    .output_names({"y", "idx"})
                    .shape(unique_v2_shape)
                    .compute(compute_unique_v2));

// --- Bincount, DenseBincount ---

int64_t bin_count(const Tensor& size) {
  if (size.rank() != 0) throw Error("size should be a scalar, got shape " + shape_string(size.shape()));
  const int64_t n = read_scalar_int(size, "size");
  if (n < 0) throw Error("size (" + std::to_string(n) + ") must be non-negative");
  return n;
}

// Bins [rows, size] of `values` ([rows, width]), weighted when `weights` is
// not empty, 1 for any count when `binary`.
Tensor count_rows(const std::vector<int64_t>& values, int64_t rows, int64_t size, const Tensor& weights, DataType dtype,
                  bool binary) {
  const int64_t width = rows == 0 ? 0 : static_cast<int64_t>(values.size()) / rows;
  Tensor out(dtype, {rows, size});
  dispatch(TypeList<int32_t, int64_t, float, double>{}, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Sum = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    std::vector<Sum> sums(static_cast<std::size_t>(rows * size), Sum(0));
    const T* w = weights.num_elements() > 0 ? weights.data<T>() : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < width; ++k) {
        const int64_t at = r * width + k, v = values[at];
        if (v >= size) continue;
        Sum& bin = sums[r * size + v];
        if (binary) bin = Sum(1);
        else bin = w != nullptr ? static_cast<Sum>(bin + static_cast<Sum>(w[at])) : static_cast<Sum>(bin + 1);
      }
    }
    T* to = out.data<T>();
    for (std::size_t i = 0; i < sums.size(); ++i) to[i] = static_cast<T>(sums[i]);
  });
  return out;
}

void compute_bincount(KernelContext& context) {
  const Tensor& arr = context.input(0);
  const Tensor& weights = context.input(2);
  const int64_t size = bin_count(context.input(1));
  const std::vector<int64_t> values = read_ints(arr);
  for (int64_t v : values) {
    if (v < 0) throw Error("Input arr must be non-negative!");
  }
  if (weights.num_elements() > 0 && weights.shape() != arr.shape()) {
    throw Error("Input indices and weights must have the same size, got " + shape_string(arr.shape()) + " and " +
                shape_string(weights.shape()));
  }
  Tensor bins = count_rows(values, 1, size, weights, weights.dtype(), false);
  context.set_output(0, bins.reshaped({size}));
}

void compute_dense_bincount(KernelContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& weights = context.input(2);
  const int64_t size = bin_count(context.input(1));
  if (x.rank() > 2) throw Error("input must be a vector or a matrix, got shape " + shape_string(x.shape()));
  const std::vector<int64_t> values = read_ints(x);
  if (!values.empty()) {
    const int64_t lowest = *std::min_element(values.begin(), values.end());
    if (lowest < 0)
      throw Error("Input 'in' must be non-negative! Negative input value found: " + std::to_string(lowest));
  }
  if (weights.num_elements() > 0 && weights.shape() != x.shape()) {
    throw Error("weights " + shape_string(weights.shape()) + " must have input's shape " + shape_string(x.shape()) +
                " or be empty");
  }
  const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
  Tensor bins = count_rows(values, rows, size, weights, weights.dtype(), context.attr_bool("binary_output"));
  context.set_output(0, x.rank() == 2 ? std::move(bins) : bins.reshaped({size}));
}

using CountedTypes = TypeList<int32_t, int64_t, float, double>;

// [size] for a vector (or scalar) input, [rows, size] for a matrix; size
// unknown unless constant.
template <bool kDense>
void bincount_shape(ShapeContext& context) {
  std::vector<int64_t> size;
  const int64_t n = context.const_ints(1, size) && size.size() == 1 && size[0] >= 0 ? size[0] : -1;
  const StaticShape x = context.input(0);
  if (kDense) {
    if (!x.known_rank || x.dims.size() > 2) return;
    if (x.dims.size() == 2) {
      context.set_output(0, known_shape({x.dims[0], n}));
      return;
    }
  }
  context.set_output(0, known_shape({n}));
}

REGISTER_KERNEL(Kernel("Bincount")
                    .input("arr", graphdef::DT_INT32)
                    .input("size", graphdef::DT_INT32)
                    .input("weights", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(CountedTypes{}))
                    .shape(bincount_shape<false>)
                    .compute(compute_bincount));
REGISTER_KERNEL(Kernel("DenseBincount")
                    .input("input", "Tidx")
                    .input("size", "Tidx")
                    .input("weights", "T")
                    .output("T")
                    .type_attr("Tidx", dtypes_of(IndexTypes{}))
                    .type_attr("T", dtypes_of(CountedTypes{}))
                    .bool_attr("binary_output", false)
                    .shape(bincount_shape<true>)
                    .compute(compute_dense_bincount));

// --- DynamicPartition ---

void compute_dynamic_partition(KernelContext& context) {
  const Tensor& data = context.input(0);
  const Tensor& parts = context.input(1);
  const int64_t n = context.attr_int("num_partitions");
  const Shape& d = data.shape();
  const Shape& p = parts.shape();
  if (p.size() > d.size() || !std::equal(p.begin(), p.end(), d.begin())) {
    throw Error("data.shape must start with partitions.shape, got data.shape = " + shape_string(d) +
                ", partitions.shape = " + shape_string(p));
  }
  const int32_t* which = parts.data<int32_t>();
  const int64_t count = parts.num_elements();
  std::vector<int64_t> sizes(static_cast<std::size_t>(n), 0);
  for (int64_t i = 0; i < count; ++i) {
    if (which[i] < 0 || which[i] >= n) {
      std::string at;  // the bad element's coordinates, row-major
      int64_t rest = i;
      for (std::size_t k = p.size(); k-- > 0;) {
        at = std::to_string(rest % p[k]) + (at.empty() ? "" : ",") + at;
        rest /= p[k];
      }
      throw Error("partitions[" + at + "] = " + std::to_string(which[i]) + " is not in [0, " + std::to_string(n) + ")");
    }
    ++sizes[which[i]];
  }
  int64_t width = 1;
  for (std::size_t k = p.size(); k < d.size(); ++k) width *= d[k];
  const std::size_t row_bytes = static_cast<std::size_t>(width) * dtype_size(data.dtype());
  std::vector<Tensor> outputs;
  std::vector<char*> cursor;
  for (int64_t k = 0; k < n; ++k) {
    Shape shape{sizes[k]};
    shape.insert(shape.end(), d.begin() + static_cast<std::ptrdiff_t>(p.size()), d.end());
    outputs.push_back(Tensor::uninitialized(data.dtype(), shape));
    cursor.push_back(static_cast<char*>(outputs.back().raw_data()));
  }
  const char* rows = static_cast<const char*>(data.raw_data());
  for (int64_t i = 0; i < count; ++i) {
    if (row_bytes == 0) continue;
    std::memcpy(cursor[which[i]], rows + static_cast<std::size_t>(i) * row_bytes, row_bytes);
    cursor[which[i]] += row_bytes;
  }
  for (int64_t k = 0; k < n; ++k) context.set_output(static_cast<int>(k), std::move(outputs[k]));
}

REGISTER_KERNEL(Kernel("DynamicPartition")
                    .input("data", "T")
                    .input("partitions", graphdef::DT_INT32)
                    .list_output("num_partitions", "T")
                    .int_attr("num_partitions", 1)
                    .type_attr("T", dtypes_of(AllTypes{}))
                    .compute(compute_dynamic_partition));

}  // namespace
}  // namespace graphrun
