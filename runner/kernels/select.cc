// Select (TF1) and SelectV2 (tf.where): t where the condition holds, else e.
//
// Elements are copied as bytes, so one loop serves every dtype.
#include <algorithm>
#include <cstring>

#include "kernels/lib/broadcast.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

// SelectV2: condition, t and e broadcast together, as numpy.where does.
void compute_select_v2(KernelContext& context) {
  const Tensor& condition = context.input(0);
  const Tensor& t = context.input(1);
  const Tensor& e = context.input(2);
  Shape shape;
  try {
    shape = plan_broadcast(plan_broadcast(condition.shape(), t.shape()).out, e.shape()).out;
  } catch (const Error&) {
    throw Error("condition " + shape_string(condition.shape()) + ", t " + shape_string(t.shape()) + " and e " +
                shape_string(e.shape()) + " cannot be broadcast together");
  }
  Tensor output(t.dtype(), shape);
  const int rank = static_cast<int>(shape.size());
  const std::vector<int64_t> c_strides = broadcast_strides(condition.shape(), shape);
  const std::vector<int64_t> t_strides = broadcast_strides(t.shape(), shape);
  const std::vector<int64_t> e_strides = broadcast_strides(e.shape(), shape);
  const bool* c = condition.data<bool>();
  // An odometer over the output, tracking each input's offset; `copy(i,
  // from_t, t_at, e_at)` writes output element i.
  auto for_each_element = [&](auto&& copy) {
    std::vector<int64_t> index(rank, 0);
    int64_t c_at = 0, t_at = 0, e_at = 0;
    for (int64_t i = 0; i < output.num_elements(); ++i) {
      copy(i, c[c_at], t_at, e_at);
      for (int d = rank - 1; d >= 0; --d) {
        c_at += c_strides[d];
        t_at += t_strides[d];
        e_at += e_strides[d];
        if (++index[d] < shape[d]) break;
        c_at -= c_strides[d] * shape[d];
        t_at -= t_strides[d] * shape[d];
        e_at -= e_strides[d] * shape[d];
        index[d] = 0;
      }
    }
  };
  if (t.is_string()) {  // std::string objects are copied, never their bytes
    const std::string* t_strings = t.data<std::string>();
    const std::string* e_strings = e.data<std::string>();
    std::string* out = output.data<std::string>();
    for_each_element([&](int64_t i, bool from_t, int64_t t_at, int64_t e_at) {
      out[i] = from_t ? t_strings[t_at] : e_strings[e_at];
    });
  } else {
    const std::size_t item = dtype_size(t.dtype());
    const auto* t_bytes = static_cast<const unsigned char*>(t.raw_data());
    const auto* e_bytes = static_cast<const unsigned char*>(e.raw_data());
    auto* out = static_cast<unsigned char*>(output.raw_data());
    for_each_element([&](int64_t i, bool from_t, int64_t t_at, int64_t e_at) {
      std::memcpy(out + i * item, from_t ? t_bytes + t_at * item : e_bytes + e_at * item, item);
    });
  }
  context.set_output(0, std::move(output));
}

// Select: t and e have one shape; the condition is a scalar (choosing a
// whole tensor), a vector over t's first dim (choosing whole rows), or t's
// own shape (choosing elements). No other broadcasting, as in TensorFlow.
void compute_select(KernelContext& context) {
  const Tensor& condition = context.input(0);
  const Tensor& t = context.input(1);
  const Tensor& e = context.input(2);
  if (t.shape() != e.shape()) {
    throw Error("t " + shape_string(t.shape()) + " and e " + shape_string(e.shape()) + " must have the same shape");
  }
  const bool* c = condition.data<bool>();
  if (condition.rank() == 0) {
    context.set_output(0, c[0] ? context.input_ptr(1) : context.input_ptr(2));
    return;
  }
  // Each condition element picks a run of `chunk` elements.
  int64_t chunk;
  if (condition.shape() == t.shape()) {
    chunk = 1;
  } else if (condition.rank() == 1 && t.rank() >= 1 && condition.shape()[0] == t.shape()[0]) {
    chunk = t.shape()[0] == 0 ? 0 : t.num_elements() / t.shape()[0];
  } else {
    throw Error("condition " + shape_string(condition.shape()) +
                " must be a scalar, a vector over t's first dim, or t's shape " + shape_string(t.shape()));
  }
  Tensor output(t.dtype(), t.shape());
  if (t.is_string()) {  // std::string objects are copied, never their bytes
    const std::string* t_strings = t.data<std::string>();
    const std::string* e_strings = e.data<std::string>();
    std::string* out = output.data<std::string>();
    for (int64_t i = 0; i < condition.num_elements(); ++i) {
      const std::string* from = (c[i] ? t_strings : e_strings) + i * chunk;
      std::copy(from, from + chunk, out + i * chunk);
    }
    context.set_output(0, std::move(output));
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(chunk) * dtype_size(t.dtype());
  const auto* t_bytes = static_cast<const unsigned char*>(t.raw_data());
  const auto* e_bytes = static_cast<const unsigned char*>(e.raw_data());
  auto* out = static_cast<unsigned char*>(output.raw_data());
  for (int64_t i = 0; i < condition.num_elements(); ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * bytes;
    if (bytes > 0) std::memcpy(out + at, (c[i] ? t_bytes : e_bytes) + at, bytes);
  }
  context.set_output(0, std::move(output));
}

Kernel select_kernel(const char* op, ComputeFn compute) {
  return Kernel(op)
      .input("condition", graphdef::DT_BOOL)
      .input("t", "T")
      .input("e", "T")
      .output("T")
      .type_attr("T", dtypes_and_string())
      .shape(broadcast_inputs())
      .compute(std::move(compute));
}

REGISTER_KERNEL(select_kernel("Select", compute_select));
REGISTER_KERNEL(select_kernel("SelectV2", compute_select_v2));

}  // namespace
}  // namespace graphrun
