// GatherV2 and UnsortedSegmentSum (its gradient's scatter-add).
//
// GatherV2: params' slices at `indices` along `axis`, shape
// params[:axis] + indices[batch_dims:] + params[axis+1:], where the first
// batch_dims dims of params and indices are shared (each batch gathers from
// its own params). Every index must lie in [0, params.shape[axis]): TF
// refuses the rest rather than clamping or wrapping.
//
// UnsortedSegmentSum: output[k] is the sum of data's rows whose segment id
// is k, added in row order; negative ids are dropped, an id of
// num_segments or more is an error.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/int_arith.h"
#include <algorithm>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"

namespace graphrun {
namespace {

using IndicesTypes = TypeList<int16_t, int32_t, int64_t>;

int64_t product(const Shape& shape, std::size_t from, std::size_t to) {
  int64_t p = 1;
  for (std::size_t d = from; d < to; ++d) p *= shape[d];
  return p;
}

void compute_gather(KernelContext& context) {
  const Tensor& params = context.input(0);
  const Tensor& indices = context.input(1);
  const Shape& p = params.shape();
  const Shape& i = indices.shape();
  int64_t batch_dims = context.attr_int("batch_dims");
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims < 0 || batch_dims > indices.rank()) {
    throw Error("batch_dims is out of range for indices of rank " + std::to_string(indices.rank()));
  }
  const int64_t axis = normalize_axis(read_scalar_int(context.input(2), "axis"), params.rank());
  if (axis < batch_dims) {
    throw Error("axis " + std::to_string(axis) + " must be at least batch_dims " + std::to_string(batch_dims));
  }
  const std::vector<int64_t> index = read_ints(indices);
  const int64_t limit = p[axis];
  for (int64_t v : index) {
    if (v < 0 || v >= limit) {
      throw Error("index " + std::to_string(v) + " is not in [0, " + std::to_string(limit) + ")");
    }
  }
  const std::size_t b = static_cast<std::size_t>(batch_dims);
  if (!std::equal(p.begin(), p.begin() + b, i.begin())) {
    throw Error("the first " + std::to_string(b) + " (batch) dims of params " + shape_string(p) + " and indices " +
                shape_string(i) + " differ");
  }
  Shape out_shape(p.begin(), p.begin() + axis);
  out_shape.insert(out_shape.end(), i.begin() + b, i.end());
  out_shape.insert(out_shape.end(), p.begin() + axis + 1, p.end());
  Tensor out = Tensor::uninitialized(params.dtype(), out_shape);
  // Per batch: [outer, limit, inner] params and [count] indices give
  // [outer, count, inner].
  const int64_t batches = product(p, 0, b);
  const int64_t outer = product(p, b, axis);
  const int64_t inner = product(p, axis + 1, p.size());
  const int64_t count = product(i, b, i.size());
  if (params.is_string()) {  // std::string objects are copied, never their bytes
    const std::string* from = params.data<std::string>();
    std::string* to = out.data<std::string>();
    for (int64_t batch = 0; inner > 0 && batch < batches; ++batch) {
      const int64_t* picks = index.data() + batch * count;
      for (int64_t o = 0; o < outer; ++o) {
        const std::string* source = from + ((batch * outer + o) * limit) * inner;
        for (int64_t k = 0; k < count; ++k)
          to = std::copy(source + picks[k] * inner, source + (picks[k] + 1) * inner, to);
      }
    }
    context.set_output(0, std::move(out));
    return;
  }
  const std::size_t item = dtype_size(params.dtype());
  const std::size_t block = static_cast<std::size_t>(inner) * item;
  const auto* from = static_cast<const unsigned char*>(params.raw_data());
  auto* to = static_cast<unsigned char*>(out.raw_data());
  if (block > 0) {
    for (int64_t batch = 0; batch < batches; ++batch) {
      const int64_t* picks = index.data() + batch * count;
      for (int64_t o = 0; o < outer; ++o) {
        const unsigned char* source = from + ((batch * outer + o) * limit) * block;
        for (int64_t k = 0; k < count; ++k, to += block) std::memcpy(to, source + picks[k] * block, block);
      }
    }
  }
  context.set_output(0, std::move(out));
}

void compute_segment_sum(KernelContext& context) {
  const Tensor& data = context.input(0);
  const Tensor& ids_tensor = context.input(1);
  const int64_t num = read_scalar_int(context.input(2), "num_segments");
  if (num < 0) throw Error("Input num_segments == " + std::to_string(num) + " must not be negative.");
  const Shape& d = data.shape();
  const Shape& ids_shape = ids_tensor.shape();
  if (ids_shape.size() > d.size() || !std::equal(ids_shape.begin(), ids_shape.end(), d.begin())) {
    throw Error("segment_ids " + shape_string(ids_shape) + " must be a prefix of data's shape " + shape_string(d));
  }
  const std::vector<int64_t> ids = read_ints(ids_tensor);
  int64_t largest = std::numeric_limits<int64_t>::min();
  for (int64_t id : ids) largest = std::max(largest, id);
  if (!ids.empty() && largest >= num) {
    throw Error("segment id " + std::to_string(largest) + " is not below num_segments " + std::to_string(num));
  }
  Shape out_shape{num};
  out_shape.insert(out_shape.end(), d.begin() + ids_shape.size(), d.end());
  Tensor out(data.dtype(), out_shape);  // zeros; a negative num_segments is an error here
  const int64_t row = product(d, ids_shape.size(), d.size());
  dispatch(NumericTypes{}, data.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* rows = data.data<T>();
    T* sums = out.data<T>();
    for (std::size_t j = 0; j < ids.size(); ++j) {
      if (ids[j] < 0) continue;
      T* to = sums + ids[j] * row;
      const T* from = rows + static_cast<int64_t>(j) * row;
      for (int64_t k = 0; k < row; ++k) to[k] = add(to[k], from[k]);
    }
  });
  context.set_output(0, std::move(out));
}

// params[:axis] + indices[batch_dims:] + params[axis+1:], for a constant axis.
void gather_shape(ShapeContext& context) {
  const StaticShape p = context.input(0), i = context.input(1), a = context.input(2);
  if (a.known_rank && !a.dims.empty()) return;
  std::vector<int64_t> axis_value;
  if (!p.known_rank || !i.known_rank || !context.const_ints(2, axis_value) || axis_value.size() != 1) return;
  const int64_t pr = static_cast<int64_t>(p.dims.size()), ir = static_cast<int64_t>(i.dims.size());
  int64_t b = context.attr("batch_dims").i();
  if (b < 0) b += ir;
  int64_t axis = axis_value[0];
  if (b < 0 || b > ir || axis < -pr || axis >= pr) return;
  if (axis < 0) axis += pr;
  if (axis < b) return;
  for (int64_t d = 0; d < b; ++d) {
    if (p.dims[d] >= 0 && i.dims[d] >= 0 && p.dims[d] != i.dims[d]) return;
  }
  std::vector<int64_t> out(p.dims.begin(), p.dims.begin() + axis);
  out.insert(out.end(), i.dims.begin() + b, i.dims.end());
  out.insert(out.end(), p.dims.begin() + axis + 1, p.dims.end());
  if (out.size() <= static_cast<std::size_t>(kMaxStaticRank)) context.set_output(0, known_shape(out));
}

REGISTER_KERNEL(Kernel("GatherV2")
                    .input("params", "Tparams")
                    .input("indices", "Tindices")
                    .input("axis", "Taxis")
                    .output("Tparams")
                    .int_attr("batch_dims", std::numeric_limits<int64_t>::min(), 0)
                    .type_attr("Tparams", dtypes_and_string())
                    .type_attr("Tindices", dtypes_of(IndicesTypes{}))
                    .type_attr("Taxis", dtypes_of(IndexTypes{}))
                    .shape(gather_shape)
                    .compute(compute_gather));

// [num_segments] + data's dims past segment_ids' (which must prefix them).
void segment_sum_shape(ShapeContext& context) {
  const StaticShape data = context.input(0), ids = context.input(1), num_shape = context.input(2);
  if (num_shape.known_rank && !num_shape.dims.empty()) return;
  if (!data.known_rank || !ids.known_rank || ids.dims.size() > data.dims.size()) return;
  for (std::size_t d = 0; d < ids.dims.size(); ++d) {
    if (data.dims[d] >= 0 && ids.dims[d] >= 0 && data.dims[d] != ids.dims[d]) return;
  }
  std::vector<int64_t> num;
  std::vector<int64_t> out{context.const_ints(2, num) && num.size() == 1 ? num[0] : -1};
  out.insert(out.end(), data.dims.begin() + ids.dims.size(), data.dims.end());
  context.set_output(0, known_shape(out));
}

REGISTER_KERNEL(Kernel("UnsortedSegmentSum")
                    .input("data", "T")
                    .input("segment_ids", "Tindices")
                    .input("num_segments", "Tnumsegments")
                    .output("T")
                    .type_attr("T", dtypes_of(NumericTypes{}))
                    .type_attr("Tindices", dtypes_of(IndicesTypes{}))
                    .type_attr("Tnumsegments", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .shape(segment_sum_shape)
                    .compute(compute_segment_sum));

}  // namespace
}  // namespace graphrun
