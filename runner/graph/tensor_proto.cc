#include "graph/tensor_proto.h"

#include <algorithm>
#include <cstring>

#include "core/tensor_limit.h"

namespace graphrun {

// tensor_content is little-endian on the wire; copying it straight into memory
// is only right on a little-endian host.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "graphrun-cc assumes a little-endian host");

namespace {

// TensorFlow's fill rule for the typed *_val fields.
template <class T, class Values>
void fill_from_values(Tensor& tensor, const Values& values) {
  const int64_t available = values.size();
  if (available == 0) return;  // the buffer is already zeros
  T* out = tensor.data<T>();
  const int64_t count = tensor.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    // int_val carries int8/16 and uint8/16 too: narrowing keeps the low bits,
    // as TensorFlow does.
    out[i] = static_cast<T>(values[static_cast<int>(std::min(i, available - 1))]);
  }
}

void fill_from_typed_field(Tensor& tensor, const graphdef::TensorProto& proto) {
  switch (tensor.dtype()) {
    case graphdef::DT_FLOAT: return fill_from_values<float>(tensor, proto.float_val());
    case graphdef::DT_DOUBLE: return fill_from_values<double>(tensor, proto.double_val());
    case graphdef::DT_INT8: return fill_from_values<int8_t>(tensor, proto.int_val());
    case graphdef::DT_INT16: return fill_from_values<int16_t>(tensor, proto.int_val());
    case graphdef::DT_INT32: return fill_from_values<int32_t>(tensor, proto.int_val());
    case graphdef::DT_UINT8: return fill_from_values<uint8_t>(tensor, proto.int_val());
    case graphdef::DT_UINT16: return fill_from_values<uint16_t>(tensor, proto.int_val());
    case graphdef::DT_INT64: return fill_from_values<int64_t>(tensor, proto.int64_val());
    case graphdef::DT_UINT32: return fill_from_values<uint32_t>(tensor, proto.uint32_val());
    case graphdef::DT_UINT64: return fill_from_values<uint64_t>(tensor, proto.uint64_val());
    case graphdef::DT_BOOL: return fill_from_values<bool>(tensor, proto.bool_val());
    default: throw Error("dtype " + dtype_name(tensor.dtype()) + " is not supported");
  }
}

// string_val by the same rule: the last value repeats, none means empty strings.
void fill_strings(Tensor& tensor, const google::protobuf::RepeatedPtrField<std::string>& values) {
  const int64_t available = values.size();
  if (available == 0) return;
  std::string* out = tensor.data<std::string>();
  const int64_t count = tensor.num_elements();
  for (int64_t i = 0; i < count; ++i) out[i] = values[static_cast<int>(std::min(i, available - 1))];
}

// The caller has checked that content.size() == tensor.byte_size().
void copy_from_content(Tensor& tensor, const std::string& content) {
  std::memcpy(tensor.raw_data(), content.data(), content.size());
  if (tensor.dtype() == graphdef::DT_BOOL) {
    // Any non-zero byte means true; store the canonical 1 so bool stays 0/1.
    auto* bytes = static_cast<unsigned char*>(tensor.raw_data());
    for (std::size_t i = 0; i < content.size(); ++i) bytes[i] = bytes[i] != 0;
  }
}

}  // namespace

Shape shape_from_proto(const graphdef::TensorShapeProto& proto) {
  if (proto.unknown_rank()) throw Error("the shape has unknown rank; a constant needs a full shape");
  // numpy holds at most 64 dims, so the Python runtime refuses more; so does this one, alike
  if (proto.dim_size() > kMaxRank) {
    throw Error("the shape has " + std::to_string(proto.dim_size()) + " dims, more than the " +
                std::to_string(kMaxRank) + " a tensor may have");
  }
  Shape shape;
  shape.reserve(proto.dim_size());
  for (const auto& dim : proto.dim()) shape.push_back(dim.size());
  for (int64_t dim : shape) {
    if (dim < 0) throw Error("shape " + shape_string(shape) + " has a negative dim; a constant needs every dim's size");
  }
  return shape;
}

Tensor tensor_from_proto(const graphdef::TensorProto& proto) {
  const DataType dtype = proto.dtype();
  if (!is_held_dtype(dtype)) throw Error("dtype " + dtype_name(dtype) + " is not supported");
  Shape shape = shape_from_proto(proto.tensor_shape());
  // The claimed size first, in the Python runtime's words, before any length
  // check or allocation: a tiny file claiming a huge shape is refused as such.
  const int64_t count = checked_num_elements(shape, dtype, "tensor");
  const std::string& content = proto.tensor_content();
  if (dtype == graphdef::DT_STRING) {
    if (!content.empty()) {
      throw Error("a string tensor cannot be given as tensor_content; TensorFlow writes its elements in string_val");
    }
    Tensor tensor(dtype, std::move(shape));
    fill_strings(tensor, proto.string_val());
    return tensor;
  }
  if (!content.empty()) {
    if (content.size() != static_cast<uint64_t>(count) * dtype_size(dtype)) {
      throw Error("tensor_content holds " + std::to_string(content.size()) + " bytes but a " + dtype_name(dtype) +
                  " tensor of shape " + shape_string(shape) + " needs " +
                  std::to_string(static_cast<uint64_t>(count) * dtype_size(dtype)));
    }
    Tensor tensor(dtype, std::move(shape));
    copy_from_content(tensor, content);
    return tensor;
  }
  Tensor tensor(dtype, std::move(shape));
  fill_from_typed_field(tensor, proto);
  return tensor;
}

void tensor_to_proto(const Tensor& tensor, graphdef::TensorProto& proto) {
  proto.set_dtype(tensor.dtype());
  auto* shape = proto.mutable_tensor_shape();
  shape->clear_dim();
  for (int64_t dim : tensor.shape()) shape->add_dim()->set_size(dim);
  if (tensor.is_string()) {  // one string_val per element, as TensorFlow writes them
    for (const std::string& value : tensor.strings()) proto.add_string_val(value);
    return;
  }
  proto.set_tensor_content(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
}

}  // namespace graphrun
