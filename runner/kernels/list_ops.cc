// TensorList ops, as Keras RNN loops use them: a list is a DT_VARIANT scalar
// holding a shared, immutable TensorList; every op that "changes" a list
// makes a new one (sharing the element tensors), so a list value seen by two
// consumers or two loop iterations never changes under either.
#include <algorithm>
#include <cstring>
#include <memory>

#include "core/tensor_limit.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {
namespace {

constexpr int64_t kMaxShapeRank = 64;  // as Fill and every other shape vector

// A possibly partial element shape: unknown rank, or dims with -1 unknown.
struct PartialShape {
  bool known_rank = false;
  std::vector<int64_t> dims;

  std::string str() const {
    if (!known_rank) return "<unknown>";
    std::string out = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + (dims[i] < 0 ? "?" : std::to_string(dims[i]));
    return out + "]";
  }
  bool fully_defined() const {
    if (!known_rank) return false;
    for (int64_t dim : dims) {
      if (dim < 0) return false;
    }
    return true;
  }
  bool admits(const Shape& shape) const {
    if (!known_rank) return true;
    if (shape.size() != dims.size()) return false;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] >= 0 && dims[i] != shape[i]) return false;
    }
    return true;
  }
};

// The most specific shape both allow; throws when they disagree.
PartialShape merge(const PartialShape& a, const PartialShape& b) {
  if (!a.known_rank) return b;
  if (!b.known_rank) return a;
  if (a.dims.size() != b.dims.size()) throw Error("element shapes " + a.str() + " and " + b.str() + " differ in rank");
  PartialShape out = a;
  for (std::size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) {
      throw Error("element shapes " + a.str() + " and " + b.str() + " are incompatible");
    }
    if (out.dims[i] < 0) out.dims[i] = b.dims[i];
  }
  return out;
}

PartialShape known(const Shape& shape) { return {true, shape}; }

class TensorList : public VariantValue {
 public:
  DataType element_dtype = graphdef::DT_INVALID;
  PartialShape element_shape;
  std::vector<TensorPtr> items;  // nullptr: a reserved slot nothing has set yet
  int64_t max_size = -1;         // EmptyTensorList's max_num_elements; -1: no bound

  std::string type_name() const override { return "TensorList"; }
};

using ListPtr = std::shared_ptr<const TensorList>;

// The element_shape input: a scalar -1 (unknown rank) or a vector of dims,
// -1 for an unknown one, in int32 or int64.
PartialShape read_element_shape(const Tensor& value) {
  std::vector<int64_t> numbers;
  dispatch(IndexTypes{}, value.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = value.data<T>();
    numbers.assign(data, data + value.num_elements());
  });
  if (value.rank() == 0) {
    if (numbers[0] != -1)
      throw Error("a scalar element_shape must be -1 (unknown rank), not " + std::to_string(numbers[0]));
    return {};
  }
  if (value.rank() != 1) throw Error("element_shape must be a scalar or a vector, not " + shape_string(value.shape()));
  if (value.num_elements() > kMaxShapeRank) {
    throw Error("element_shape has " + std::to_string(value.num_elements()) + " dims; at most " +
                std::to_string(kMaxShapeRank) + " are supported");
  }
  for (int64_t dim : numbers) {
    if (dim < -1) throw Error("element_shape has dim " + std::to_string(dim) + "; dims are -1 (unknown) or >= 0");
  }
  return {true, numbers};
}

// Input i's list; with check_dtype, its elements must be of attr element_dtype.
const TensorList& read_list(KernelContext& context, int i, bool check_dtype = true) {
  const Tensor& handle = context.input(i);
  const auto* list = dynamic_cast<const TensorList*>(&handle.variant_value());
  if (list == nullptr)
    throw Error("input " + std::to_string(i) + " holds a " + handle.variant_value().type_name() + ", not a TensorList");
  if (check_dtype && list->element_dtype != context.attr_type("element_dtype")) {
    throw Error("the list holds " + dtype_name(list->element_dtype) + " elements but element_dtype is " +
                dtype_name(context.attr_type("element_dtype")));
  }
  return *list;
}

// A list with this many slots, refused when its slots alone would pass the
// tensor byte limit (a hostile num_elements must not exhaust memory).
std::shared_ptr<TensorList> new_list(DataType dtype, PartialShape shape, int64_t size, int64_t max_size = -1) {
  if (size < 0) throw Error("a list cannot have " + std::to_string(size) + " elements");
  const uint64_t bytes = static_cast<uint64_t>(size) * sizeof(TensorPtr);
  if (bytes > max_tensor_bytes()) {
    throw Error("a list of " + std::to_string(size) + " elements would take " + format_bytes(bytes) +
                ", over the limit of " + format_bytes(max_tensor_bytes()) +
                " (set GRAPHDEF_MAX_TENSOR_BYTES to change it)");
  }
  auto list = std::make_shared<TensorList>();
  list->element_dtype = dtype;
  list->element_shape = std::move(shape);
  list->items.resize(static_cast<std::size_t>(size));
  list->max_size = max_size;
  return list;
}

int64_t read_index(const Tensor& index, int64_t size) {
  if (index.rank() != 0) throw Error("index must be a scalar, not " + shape_string(index.shape()));
  const int64_t i = index.data<int32_t>()[0];
  if (i < 0 || i >= size) {
    throw Error("index " + std::to_string(i) + " is out of range for a list of " + std::to_string(size) + " elements");
  }
  return i;
}

// The value of a slot nobody set: zeros of the element shape, which must then be fully known.
TensorPtr zeros_for_unset(DataType dtype, const PartialShape& shape, const std::string& what) {
  if (!shape.fully_defined()) {
    throw Error(what + " was never set and the element shape " + shape.str() +
                " is not fully defined, so its zeros have no shape");
  }
  return std::make_shared<const Tensor>(dtype, shape.dims);
}

void emit_list(KernelContext& context, int output, std::shared_ptr<TensorList> list) {
  context.set_output(output, Tensor::variant(std::move(list)));
}

REGISTER_KERNEL(Kernel("TensorListReserve")
                    .input("element_shape", "shape_type")
                    .input("num_elements", graphdef::DT_INT32)
                    .output(graphdef::DT_VARIANT)
                    .type_attr("element_dtype")
                    .type_attr("shape_type", dtypes_of(IndexTypes{}))
                    .compute([](KernelContext& context) {
                      const Tensor& count = context.input(1);
                      if (count.rank() != 0)
                        throw Error("num_elements must be a scalar, not " + shape_string(count.shape()));
                      emit_list(context, 0,
                                new_list(context.attr_type("element_dtype"), read_element_shape(context.input(0)),
                                         count.data<int32_t>()[0]));
                    }));

REGISTER_KERNEL(Kernel("TensorListFromTensor")
                    .input("tensor", "element_dtype")
                    .input("element_shape", "shape_type")
                    .output(graphdef::DT_VARIANT)
                    .type_attr("element_dtype")
                    .type_attr("shape_type", dtypes_of(IndexTypes{}))
                    .compute([](KernelContext& context) {
                      const TensorPtr& tensor = context.input_ptr(0);
                      if (tensor->rank() == 0) throw Error("tensor must have at least one dim to be split into a list");
                      const Shape element(tensor->shape().begin() + 1, tensor->shape().end());
                      const PartialShape declared = read_element_shape(context.input(1));
                      if (!declared.admits(element)) {
                        throw Error("the elements' shape " + shape_string(element) + " does not match element_shape " +
                                    declared.str());
                      }
                      auto list = new_list(tensor->dtype(), declared, tensor->shape()[0]);
                      const std::size_t row_bytes =
                          tensor->shape()[0] > 0 ? tensor->byte_size() / tensor->shape()[0] : 0;
                      const auto* bytes = static_cast<const char*>(tensor->raw_data());
                      for (std::size_t i = 0; i < list->items.size(); ++i) {
                        Tensor row = Tensor::uninitialized(tensor->dtype(), element);
                        if (row_bytes > 0) std::memcpy(row.raw_data(), bytes + i * row_bytes, row_bytes);
                        list->items[i] = std::make_shared<const Tensor>(std::move(row));
                      }
                      emit_list(context, 0, std::move(list));
                    }));

REGISTER_KERNEL(Kernel("TensorListGetItem")
                    .input("input_handle", graphdef::DT_VARIANT)
                    .input("index", graphdef::DT_INT32)
                    .input("element_shape", "Tshape")
                    .output("element_dtype")
                    .type_attr("element_dtype")
                    .type_attr("Tshape", dtypes_of(IndexTypes{}), graphdef::DT_INT32)
                    .compute([](KernelContext& context) {
                      const TensorList& list = read_list(context, 0);
                      const int64_t i = read_index(context.input(1), static_cast<int64_t>(list.items.size()));
                      const PartialShape shape = merge(list.element_shape, read_element_shape(context.input(2)));
                      const TensorPtr& item = list.items[static_cast<std::size_t>(i)];
                      if (item && !shape.admits(item->shape())) {
                        throw Error("element " + std::to_string(i) + " has shape " + shape_string(item->shape()) +
                                    ", not the element_shape " + shape.str());
                      }
                      context.set_output(
                          0, item ? item : zeros_for_unset(list.element_dtype, shape, "element " + std::to_string(i)));
                    }));

REGISTER_KERNEL(Kernel("TensorListSetItem")
                    .input("input_handle", graphdef::DT_VARIANT)
                    .input("index", graphdef::DT_INT32)
                    .input("item", "element_dtype")
                    .output(graphdef::DT_VARIANT)
                    .type_attr("element_dtype")
                    .bool_attr("resize_if_index_out_of_bounds", false)
                    .compute([](KernelContext& context) {
                      const TensorList& list = read_list(context, 0);
                      const TensorPtr& item = context.input_ptr(2);
                      if (!list.element_shape.admits(item->shape())) {
                        throw Error("the item's shape " + shape_string(item->shape()) +
                                    " does not match the list's element shape " + list.element_shape.str());
                      }
                      int64_t size = static_cast<int64_t>(list.items.size());
                      const Tensor& index = context.input(1);
                      if (context.attr_bool("resize_if_index_out_of_bounds") && index.rank() == 0 &&
                          index.data<int32_t>()[0] >= size) {
                        size = int64_t{index.data<int32_t>()[0]} + 1;
                      }
                      const int64_t i = read_index(index, size);
                      auto out = new_list(list.element_dtype, list.element_shape, size, list.max_size);
                      std::copy(list.items.begin(), list.items.end(), out->items.begin());
                      out->items[static_cast<std::size_t>(i)] = item;
                      emit_list(context, 0, std::move(out));
                    }));

// [num_elements] + the element shape: the list's, the input's and the set
// elements' shapes must agree, and unset slots read as zeros.
REGISTER_KERNEL(Kernel("TensorListStack")
                    .input("input_handle", graphdef::DT_VARIANT)
                    .input("element_shape", graphdef::DT_INT32)
                    .output("element_dtype")
                    .type_attr("element_dtype")
                    .int_attr("num_elements", -1, -1)
                    .compute([](KernelContext& context) {
                      const TensorList& list = read_list(context, 0);
                      const int64_t size = static_cast<int64_t>(list.items.size());
                      const int64_t expected = context.attr_int("num_elements");
                      if (expected != -1 && expected != size) {
                        throw Error("num_elements is " + std::to_string(expected) + " but the list has " +
                                    std::to_string(size));
                      }
                      PartialShape shape = merge(list.element_shape, read_element_shape(context.input(1)));
                      for (const TensorPtr& item : list.items) {
                        if (item) shape = merge(shape, known(item->shape()));
                      }
                      if (!shape.fully_defined()) {
                        throw Error("cannot stack: the element shape " + shape.str() + " is not fully defined");
                      }
                      Shape out_shape{size};
                      out_shape.insert(out_shape.end(), shape.dims.begin(), shape.dims.end());
                      Tensor out(list.element_dtype, out_shape);  // zeros for the unset slots
                      const std::size_t row_bytes = size > 0 ? out.byte_size() / static_cast<std::size_t>(size) : 0;
                      auto* bytes = static_cast<char*>(out.raw_data());
                      for (std::size_t i = 0; i < list.items.size(); ++i) {
                        if (list.items[i] && row_bytes > 0)
                          std::memcpy(bytes + i * row_bytes, list.items[i]->raw_data(), row_bytes);
                      }
                      context.set_output(0, std::move(out));
                    }));

REGISTER_KERNEL(Kernel("EmptyTensorList")
                    .input("element_shape", "shape_type")
                    .input("max_num_elements", graphdef::DT_INT32)
                    .output(graphdef::DT_VARIANT)
                    .type_attr("element_dtype")
                    .type_attr("shape_type", dtypes_of(IndexTypes{}))
                    .compute([](KernelContext& context) {
                      const Tensor& bound = context.input(1);
                      if (bound.rank() != 0)
                        throw Error("max_num_elements must be a scalar, not " + shape_string(bound.shape()));
                      const int64_t max_size = bound.data<int32_t>()[0];
                      if (max_size < -1)
                        throw Error("max_num_elements is " + std::to_string(max_size) +
                                    "; it must be -1 (no bound) or >= 0");
                      emit_list(context, 0,
                                new_list(context.attr_type("element_dtype"), read_element_shape(context.input(0)), 0,
                                         max_size));
                    }));

REGISTER_KERNEL(Kernel("TensorListPushBack")
                    .input("input_handle", graphdef::DT_VARIANT)
                    .input("tensor", "element_dtype")
                    .output(graphdef::DT_VARIANT)
                    .type_attr("element_dtype")
                    .compute([](KernelContext& context) {
                      const TensorList& list = read_list(context, 0);
                      const TensorPtr& item = context.input_ptr(1);
                      if (!list.element_shape.admits(item->shape())) {
                        throw Error("the tensor's shape " + shape_string(item->shape()) +
                                    " does not match the list's element shape " + list.element_shape.str());
                      }
                      const int64_t size = static_cast<int64_t>(list.items.size());
                      if (list.max_size >= 0 && size >= list.max_size) {
                        throw Error("the list is full: it holds its max_num_elements, " +
                                    std::to_string(list.max_size));
                      }
                      auto out = new_list(list.element_dtype, list.element_shape, size + 1, list.max_size);
                      std::copy(list.items.begin(), list.items.end(), out->items.begin());
                      out->items.back() = item;
                      emit_list(context, 0, std::move(out));
                    }));

REGISTER_KERNEL(Kernel("TensorListPopBack")
                    .input("input_handle", graphdef::DT_VARIANT)
                    .input("element_shape", graphdef::DT_INT32)
                    .output(graphdef::DT_VARIANT)
                    .output("element_dtype")
                    .type_attr("element_dtype")
                    .output_names({"output_handle", "tensor"})
                    .compute([](KernelContext& context) {
                      const TensorList& list = read_list(context, 0);
                      if (list.items.empty()) throw Error("cannot pop from an empty list");
                      const PartialShape shape = merge(list.element_shape, read_element_shape(context.input(1)));
                      const TensorPtr& item = list.items.back();
                      if (item && !shape.admits(item->shape())) {
                        throw Error("the last element has shape " + shape_string(item->shape()) +
                                    ", not the element_shape " + shape.str());
                      }
                      auto out = new_list(list.element_dtype, list.element_shape,
                                          static_cast<int64_t>(list.items.size()) - 1, list.max_size);
                      std::copy(list.items.begin(), list.items.end() - 1, out->items.begin());
                      emit_list(context, 0, std::move(out));
                      context.set_output(1,
                                         item ? item : zeros_for_unset(list.element_dtype, shape, "the last element"));
                    }));

REGISTER_KERNEL(Kernel("TensorListLength")
                    .input("input_handle", graphdef::DT_VARIANT)
                    .output(graphdef::DT_INT32)
                    .compute([](KernelContext& context) {
                      const TensorList& list = read_list(context, 0, false);
                      Tensor out(graphdef::DT_INT32, {});
                      out.data<int32_t>()[0] = static_cast<int32_t>(list.items.size());
                      context.set_output(0, std::move(out));
                    }));

REGISTER_KERNEL(Kernel("TensorListElementShape")
                    .input("input_handle", graphdef::DT_VARIANT)
                    .output("shape_type")
                    .type_attr("shape_type", dtypes_of(IndexTypes{}))
                    .compute([](KernelContext& context) {
                      const TensorList& list = read_list(context, 0, false);
                      const PartialShape& shape = list.element_shape;
                      const DataType dtype = context.attr_type("shape_type");
                      Tensor out(dtype, shape.known_rank ? Shape{static_cast<int64_t>(shape.dims.size())} : Shape{});
                      dispatch(IndexTypes{}, dtype, [&](auto tag) {
                        using T = typename decltype(tag)::type;
                        T* data = out.data<T>();
                        if (!shape.known_rank) data[0] = -1;
                        for (std::size_t i = 0; i < shape.dims.size(); ++i) data[i] = static_cast<T>(shape.dims[i]);
                      });
                      context.set_output(0, std::move(out));
                    }));

}  // namespace
}  // namespace graphrun
