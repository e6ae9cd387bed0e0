// GatherNd, ScatterNd and one-argument Where: ops between a dense tensor and
// coordinates. Indices [..., q] address the first q dims of a shape; a
// coordinate out of range is an error naming it, as on TF's CPU, and every
// output size is checked against the limit before anything is allocated.
#include <cstring>

#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

using IndicesTypes = TypeList<int16_t, int32_t, int64_t>;

int64_t product(const Shape& shape, std::size_t from, std::size_t to) {
  int64_t p = 1;
  for (std::size_t d = from; d < to; ++d) p *= shape[d];
  return p;
}

void check_policy(KernelContext& context) {
  const std::string& policy = context.attr_string("bad_indices_policy");
  if (!policy.empty() && policy != "DEFAULT" && policy != "ERROR") {
    throw Error("bad_indices_policy '" + policy + "' is not supported; use '' (an error, as on TF's CPU)");
  }
}

// Each coordinate row's row-major offset into target[:q], in slices of
// target[q:]. Checks q against the rank and every coordinate against its dim.
std::vector<int64_t> slice_offsets(const Tensor& indices, const Shape& target, const char* op) {
  if (indices.rank() == 0) throw Error(std::string(op) + ": indices must have at least one dim, got a scalar");
  const int64_t q = indices.shape().back();
  if (q > static_cast<int64_t>(target.size())) {
    throw Error(std::string(op) + ": index depth " + std::to_string(q) + " (indices' last dim) is past the rank " +
                std::to_string(target.size()) + " of " + shape_string(target));
  }
  const std::vector<int64_t> coords = read_ints(indices);
  const int64_t rows =
      q == 0 ? product(indices.shape(), 0, indices.shape().size() - 1) : static_cast<int64_t>(coords.size()) / q;
  std::vector<int64_t> offsets(static_cast<std::size_t>(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int64_t j = 0; j < q; ++j) {
      const int64_t c = coords[r * q + j];
      if (c < 0 || c >= target[j]) {
        std::vector<int64_t> row(coords.begin() + r * q, coords.begin() + (r + 1) * q);
        throw Error(std::string(op) + ": coordinates " + shape_string(row) + " (row " + std::to_string(r) +
                    " of indices) do not index into shape " + shape_string(target));
      }
      offset = offset * target[j] + c;
    }
    offsets[r] = offset;
  }
  return offsets;
}

void compute_gather_nd(KernelContext& context) {
  check_policy(context);
  const Tensor& params = context.input(0);
  const Tensor& indices = context.input(1);
  if (indices.rank() == 0) throw Error("GatherNd: indices must have at least one dim, got a scalar");
  const Shape& p = params.shape();
  const std::size_t q = static_cast<std::size_t>(indices.shape().back());
  Shape out_shape(indices.shape().begin(), indices.shape().end() - 1);
  if (q <= p.size()) out_shape.insert(out_shape.end(), p.begin() + q, p.end());
  checked_num_elements(out_shape, params.dtype());  // before the offsets: a huge output is refused first
  const std::vector<int64_t> offsets = slice_offsets(indices, p, "GatherNd");
  Tensor out = Tensor::uninitialized(params.dtype(), out_shape);
  const std::size_t slice_bytes = static_cast<std::size_t>(product(p, q, p.size())) * dtype_size(params.dtype());
  const char* from = static_cast<const char*>(params.raw_data());
  char* to = static_cast<char*>(out.raw_data());
  for (std::size_t r = 0; r < offsets.size() && slice_bytes; ++r) {
    std::memcpy(to + r * slice_bytes, from + offsets[r] * slice_bytes, slice_bytes);
  }
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("GatherNd")
                    .input("params", "Tparams")
                    .input("indices", "Tindices")
                    .output("Tparams")
                    .type_attr("Tparams")
                    .type_attr("Tindices", dtypes_of(IndicesTypes{}))
                    .string_attr("bad_indices_policy", "")
                    .compute(compute_gather_nd));

void compute_scatter_nd(KernelContext& context) {
  check_policy(context);
  const Tensor& indices = context.input(0);
  const Tensor& updates = context.input(1);
  if (context.input(2).rank() != 1) {
    throw Error("shape must be a vector, got shape " + shape_string(context.input(2).shape()));
  }
  const Shape out_shape = read_ints(context.input(2));
  for (int64_t d : out_shape) {
    if (d < 0) throw Error("shape " + shape_string(out_shape) + " must not be negative");
  }
  Tensor out(updates.dtype(), out_shape);  // checked against the limit, then zero-filled
  if (indices.rank() == 0) throw Error("ScatterNd: indices must have at least one dim, got a scalar");
  const std::size_t q = static_cast<std::size_t>(indices.shape().back());
  if (q <= out_shape.size()) {
    Shape want(indices.shape().begin(), indices.shape().end() - 1);
    want.insert(want.end(), out_shape.begin() + q, out_shape.end());
    if (want != updates.shape()) {
      throw Error("updates " + shape_string(updates.shape()) + " must have shape indices[:-1] + shape[" +
                  std::to_string(q) + ":] = " + shape_string(want));
    }
  }
  const std::vector<int64_t> offsets = slice_offsets(indices, out_shape, "ScatterNd");
  const int64_t slice = product(out_shape, q, out_shape.size());
  dispatch(NumericTypes{}, updates.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* from = updates.data<T>();
    T* to = out.data<T>();
    for (std::size_t r = 0; r < offsets.size(); ++r) {  // in index order: duplicates add up as numpy's add.at
      for (int64_t e = 0; e < slice; ++e) {
        T& cell = to[offsets[r] * slice + e];
        cell = add(cell, from[r * slice + e]);
      }
    }
  });
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("ScatterNd")
                    .input("indices", "Tindices")
                    .input("updates", "T")
                    .input("shape", "Tindices")
                    .output("T")
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .type_attr("Tindices", dtypes_of(IndicesTypes{}))
                    .string_attr("bad_indices_policy", "")
                    .compute(compute_scatter_nd));

void compute_where(KernelContext& context) {
  const Tensor& x = context.input(0);
  if (x.rank() == 0) throw Error("Where needs an input of at least one dim, got a scalar");  // as TF
  std::vector<int64_t> hits;
  dispatch(AllTypes{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if (in[i] != T(0)) hits.push_back(i);  // NaN is true, -0.0 is false
    }
  });
  const int64_t rank = x.rank();
  Tensor out(graphdef::DT_INT64, {static_cast<int64_t>(hits.size()), rank});
  int64_t* coords = out.data<int64_t>();
  for (std::size_t h = 0; h < hits.size(); ++h) {
    int64_t flat = hits[h];
    for (int64_t d = rank - 1; d >= 0; --d) {
      coords[h * rank + d] = flat % x.shape()[d];
      flat /= x.shape()[d];
    }
  }
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("Where")
                    .input("input", "T")
                    .output(graphdef::DT_INT64)
                    .type_attr("T", dtypes_of(AllTypes{}), graphdef::DT_BOOL)
                    .compute(compute_where));

}  // namespace
}  // namespace graphrun
