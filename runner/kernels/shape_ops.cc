// Shape, ShapeN, Size and Rank: what is known about a tensor, as a tensor. They never
// read the input's elements.
#include <limits>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

const std::vector<DataType> kIndexDtypes = dtypes_of(IndexTypes{});

// `value` as an int32 or int64 element; an int32 output cannot hold a dim or
// count of 2**31 or more (possible for an empty tensor), so that is an error
// rather than a silently wrapped number.
template <class T>
T index_value(int64_t value, const char* what) {
  if (value > static_cast<int64_t>(std::numeric_limits<T>::max())) {
    throw Error(std::string(what) + " " + std::to_string(value) + " does not fit in " + dtype_name(dtype_of<T>()) +
                "; use out_type int64");
  }
  return static_cast<T>(value);
}

void compute_shape(KernelContext& context) {
  const Shape& shape = context.input(0).shape();
  const DataType out_type = context.attr_type("out_type");
  Tensor out(out_type, {static_cast<int64_t>(shape.size())});
  dispatch(IndexTypes{}, out_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* values = out.data<T>();
    for (std::size_t d = 0; d < shape.size(); ++d) values[d] = index_value<T>(shape[d], "dimension");
  });
  context.set_output(0, std::move(out));
}

// The shapes of N inputs, one 1-D output each (TF's gradient code asks for
// several shapes at once this way).
void compute_shape_n(KernelContext& context) {
  const DataType out_type = context.attr_type("out_type");
  for (int i = 0; i < context.num_inputs(); ++i) {
    const Shape& shape = context.input(i).shape();
    Tensor out(out_type, {static_cast<int64_t>(shape.size())});
    dispatch(IndexTypes{}, out_type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* values = out.data<T>();
      for (std::size_t d = 0; d < shape.size(); ++d) values[d] = index_value<T>(shape[d], "dimension");
    });
    context.set_output(i, std::move(out));
  }
}

void compute_size(KernelContext& context) {
  const int64_t count = context.input(0).num_elements();
  const DataType out_type = context.attr_type("out_type");
  Tensor out(out_type, {});
  dispatch(IndexTypes{}, out_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    out.data<T>()[0] = index_value<T>(count, "size");
  });
  context.set_output(0, std::move(out));
}

void compute_rank(KernelContext& context) {
  Tensor out(graphdef::DT_INT32, {});
  out.data<int32_t>()[0] = static_cast<int32_t>(context.input(0).rank());
  context.set_output(0, std::move(out));
}

// A 1-D shape vector as long as the input's rank, when that is known.
StaticShape shape_vector(const StaticShape& in) {
  return in.known_rank ? known_shape({static_cast<int64_t>(in.dims.size())}) : known_shape({-1});
}

void shape_shape(ShapeContext& context) { context.set_output(0, shape_vector(context.input(0))); }

void shape_n_shape(ShapeContext& context) {
  for (int k = 0; k < context.num_outputs() && k < context.num_inputs(); ++k) {
    context.set_output(k, shape_vector(context.input(k)));
  }
}

REGISTER_KERNEL(Kernel("Shape")
                    .input("input", "T")
                    .output("out_type")
                    .type_attr("T", dtypes_and_string())
                    .type_attr("out_type", kIndexDtypes, graphdef::DT_INT32)
                    .shape(shape_shape)
                    .compute(compute_shape));

REGISTER_KERNEL(Kernel("ShapeN")
                    .list_input("input", "N", "T")
                    .list_output("N", "out_type")
                    .int_attr("N", 1)
                    .type_attr("T", dtypes_and_string())
                    .type_attr("out_type", kIndexDtypes, graphdef::DT_INT32)
                    .shape(shape_n_shape)
                    .compute(compute_shape_n));

REGISTER_KERNEL(Kernel("Size")
                    .input("input", "T")
                    .output("out_type")
                    .type_attr("T", dtypes_and_string())
                    .type_attr("out_type", kIndexDtypes, graphdef::DT_INT32)
                    .shape(scalar_output())
                    .compute(compute_size));

REGISTER_KERNEL(Kernel("Rank")
                    .input("input", "T")
                    .output(graphdef::DT_INT32)
                    .type_attr("T", dtypes_and_string())
                    .shape(scalar_output())
                    .compute(compute_rank));

}  // namespace
}  // namespace graphrun
