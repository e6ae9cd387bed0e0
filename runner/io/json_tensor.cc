#include "io/json_tensor.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/value_conversion.h"

namespace graphrun {

namespace {

using Json = nlohmann::json;

FeedScalar read_scalar(const Json& value) {
  switch (value.type()) {
    case Json::value_t::number_integer: return FeedScalar::of_signed(value.get<int64_t>());
    case Json::value_t::number_unsigned: return FeedScalar::of_unsigned(value.get<uint64_t>());
    case Json::value_t::boolean: return FeedScalar::of_bool(value.get<bool>());
    case Json::value_t::number_float: {
      const double f = value.get<double>();
      // JSON has no infinity; a literal like 1e400 overflowed while parsing.
      if (!std::isfinite(f)) throw Error("a number is beyond the range of float64");
      return FeedScalar::of_float(f);
    }
    default: throw Error("expected a number, true/false, or a rectangular nested array of them");
  }
}

// The shape implied by following first elements down; fill_elements then
// checks every array against it.
Shape implied_shape(const Json& root) {
  Shape shape;
  const Json* node = &root;
  while (node->is_array()) {
    shape.push_back(static_cast<int64_t>(node->size()));
    if (node->empty()) break;
    node = &(*node)[0];
  }
  return shape;
}

template <class T>
void fill_elements(const Json& root, const Shape& shape, Tensor& tensor) {
  T* out = tensor.data<T>();
  const std::size_t rank = shape.size();
  // Depth-first with an explicit stack (children pushed last-first), so
  // elements come out in row-major order and deep nesting cannot overflow.
  std::vector<std::pair<const Json*, std::size_t>> stack = {{&root, 0}};
  int64_t written = 0;
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth == rank) {
      if (node->is_array()) throw Error("the nested arrays are not rectangular");
      out[written++] = convert_exactly<T>(read_scalar(*node));
      continue;
    }
    if (!node->is_array() || static_cast<int64_t>(node->size()) != shape[depth]) {
      throw Error("the nested arrays are not rectangular");
    }
    for (std::size_t k = node->size(); k-- > 0;) stack.push_back({&(*node)[k], depth + 1});
  }
}

}  // namespace

Tensor tensor_from_json(const std::string& text, DataType dtype) {
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    const std::string shown = text.size() <= 60 ? text : text.substr(0, 60) + "...";
    throw Error("cannot parse '" + shown + "' as JSON; give a number, true/false, a nested array, or @file.npy");
  }
  const Shape shape = implied_shape(root);
  Tensor tensor(dtype, shape);
  dispatch(AllTypes{}, dtype, [&](auto tag) { fill_elements<typename decltype(tag)::type>(root, shape, tensor); });
  return tensor;
}

}  // namespace graphrun
