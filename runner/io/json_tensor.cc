#include "io/json_tensor.h"

#include <cmath>
#include <string>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "core/tensor_limit.h"
#include "core/value_conversion.h"

namespace graphrun {

namespace {

using Json = nlohmann::json;

std::string clipped(const std::string& text) { return text.size() <= 60 ? text : text.substr(0, 60) + "..."; }

// How deep arrays and objects nest, counted outside strings before parsing,
// so that a hostile depth costs one pass and no parser stack.
std::size_t nesting_depth(const std::string& text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

FeedScalar read_scalar(const Json& value) {
  switch (value.type()) {
    case Json::value_t::number_integer: return FeedScalar::of_signed(value.get<int64_t>());
    case Json::value_t::number_unsigned: return FeedScalar::of_unsigned(value.get<uint64_t>());
    case Json::value_t::boolean: return FeedScalar::of_bool(value.get<bool>());
    default: return FeedScalar::of_float(value.get<double>());
  }
}

// The shape implied by following first elements down; check_elements then
// holds every array to it.
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

// Visits every element (a node at depth == rank) in row-major order, with an
// explicit stack (children pushed last-first), so deep nesting cannot
// overflow; throws when an array's length differs from the shape's.
template <class Visit>
void for_each_element(const Json& root, const Shape& shape, Visit visit) {
  const std::size_t rank = shape.size();
  std::vector<std::pair<const Json*, std::size_t>> stack = {{&root, 0}};
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth == rank) {
      if (node->is_array()) throw Error("the nested arrays are not rectangular");
      visit(*node);
      continue;
    }
    if (!node->is_array() || static_cast<int64_t>(node->size()) != shape[depth]) {
      throw Error("the nested arrays are not rectangular");
    }
    for (std::size_t k = node->size(); k-- > 0;) stack.push_back({&(*node)[k], depth + 1});
  }
}

bool decode_base64(const std::string& text, std::string& out);

// graphrun reads {"b64": "..."} as bytes (TF Serving's REST form); any other
// object is refused, the first in document order.
void refuse_objects(const Json& root) {
  std::vector<const Json*> stack = {&root};
  while (!stack.empty()) {
    const Json* node = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      const auto b64 = node->find("b64");
      if (node->size() != 1 || b64 == node->end() || !b64->is_string()) {
        throw Error("a JSON object in a feed must be {\"b64\": \"<base64>\"} (bytes), got " + clipped(node->dump()));
      }
      std::string bytes;  // decoded again later; graphrun refuses bad base64 before any other check
      const std::string& encoded = b64->get_ref<const std::string&>();
      if (!decode_base64(encoded, bytes)) throw Error("'" + clipped(encoded) + "' is not base64");
    } else if (node->is_array()) {
      for (std::size_t k = node->size(); k-- > 0;) stack.push_back(&(*node)[k]);
    }
  }
}

// Python's base64.b64decode(text, validate=True): only the standard alphabet,
// then at most two '=', and enough of them to complete the last group.
bool decode_base64(const std::string& text, std::string& out) {
  std::size_t data = text.size();
  while (data > 0 && text[data - 1] == '=' && text.size() - data < 2) --data;
  const std::size_t pads = text.size() - data;
  auto value_of = [](char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  const std::size_t tail = data % 4;
  if (tail == 1 || (tail == 2 && pads < 2) || (tail == 3 && pads < 1)) return false;
  out.clear();
  out.reserve(data / 4 * 3 + 2);
  uint32_t bits = 0;
  int held = 0;
  for (std::size_t i = 0; i < data; ++i) {
    const int v = value_of(text[i]);
    if (v < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out += static_cast<char>((bits >> held) & 0xFF);
    }
  }
  return true;
}

// A string feed's elements: JSON strings as their UTF-8 bytes, {"b64": ...}
// objects as the bytes they encode; a bad encoding refused as graphrun does.
Tensor strings_from_json(const Json& root, const Shape& shape) {
  Tensor tensor(graphdef::DT_STRING, shape);
  std::string* out = tensor.data<std::string>();
  uint64_t total = 0;
  for_each_element(root, shape, [&](const Json& element) {
    if (element.is_string()) {
      *out = element.get<std::string>();
    } else {
      const std::string& encoded = element.find("b64")->get_ref<const std::string&>();
      if (!decode_base64(encoded, *out)) throw Error("'" + clipped(encoded) + "' is not base64");
    }
    total += out->size();
    ++out;
  });
  check_string_bytes(total, "the feed's");
  return tensor;
}

// The text of the k-th number in the document (0-based), counted outside
// strings. In an array of numbers only, that is the k-th element in
// row-major order.
std::string nth_number_text(const std::string& text, int64_t k) {
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t end = i;
      while (end < text.size() && std::string("+-.eE0123456789").find(text[end]) != std::string::npos) ++end;
      if (k-- == 0) return text.substr(i, end - i);
      i = end - 1;
    }
  }
  return "";
}

}  // namespace

std::string conversion_error_for(const std::string& message, DataType dtype, const std::string& target) {
  const std::string name = dtype_name(dtype);
  auto strip = [&](const std::string& tail, std::string& head) {
    if (message.size() < tail.size() || message.compare(message.size() - tail.size(), tail.size(), tail) != 0) {
      return false;
    }
    head = message.substr(0, message.size() - tail.size());
    return true;
  };
  std::string value;
  if (strip(" cannot be fed as " + name, value)) {
    if (dtype == graphdef::DT_BOOL) return target + " takes true/false, not numbers";
    return "true/false cannot be fed to " + target;
  }
  if (strip(" is not an integer, as needed for " + name, value)) {
    return value + " is not an integer, which " + target + " needs";
  }
  if (strip(" is out of range for " + name, value)) return value + " is out of range for " + target;
  return message;
}

Tensor tensor_from_json(const std::string& text, DataType dtype, const std::string& target) {
  const std::size_t depth = nesting_depth(text);
  if (depth > static_cast<std::size_t>(kMaxRank)) {
    throw Error("the arrays nest " + std::to_string(depth) + " deep, more than the " + std::to_string(kMaxRank) +
                " dims a tensor may have");
  }
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& error) {
    // 406 is a number beyond float64 (1e400), which Python's parser reads as
    // inf and graphrun refuses in these words.
    if (error.id == 406) throw Error("a number is beyond the range of float64");
    throw Error("cannot parse '" + clipped(text) +
                "' as JSON; give a number, true/false, a nested array, or @file.npy");
  }
  refuse_objects(root);
  const Shape shape = implied_shape(root);
  // The kinds of all elements first, as graphrun sees the whole array
  // before converting any element.
  bool strings = false, others = false, bools = false, numbers = false, beyond_float64 = false;
  for_each_element(root, shape, [&](const Json& element) {
    if (element.is_string() || element.is_object()) strings = true;  // an object left is {"b64": ...}
    else if (element.is_boolean()) bools = true;
    else if (!element.is_number()) others = true;
    else {
      numbers = true;
      // JSON has no infinity; a literal like 1e400 overflowed while parsing.
      if (element.is_number_float() && !std::isfinite(element.get<double>())) beyond_float64 = true;
    }
  });
  if (dtype == graphdef::DT_STRING) {
    if (!others && !bools && !numbers) return strings_from_json(root, shape);  // [] too: no strings, no dtype
    if (!strings && !others) {
      throw Error(target + " takes strings, not " + (bools ? "true/false" : "numbers") +
                  "; quote them: '[\"a\", \"b\"]'");
    }
  }
  if (strings && !others && !bools && !numbers) throw Error(target + " cannot be fed strings");
  if (strings || others) {
    throw Error("'" + clipped(text) +
                "' is not a number, true/false, a string, or a rectangular nested array of one kind of them");
  }
  if (bools && numbers) throw Error("the array mixes true/false with numbers");
  if (beyond_float64) throw Error("a number is beyond the range of float64");
  if (dtype == graphdef::DT_VARIANT && (bools || numbers)) {  // no JSON value is a variant
    throw Error(bools ? "true/false cannot be fed to " + target : target + " cannot be fed numbers");
  }
  Tensor tensor(dtype, shape);
  dispatch(AllTypes{}, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = tensor.data<T>();
    int64_t written = 0;
    try {
      for_each_element(root, shape,
                       [&](const Json& element) { out[written++] = convert_exactly<T>(read_scalar(element)); });
    } catch (const Error& error) {
      std::string message = conversion_error_for(error.what(), dtype, target);
      // An integer past 64 bits was read as a float; graphrun names it exactly.
      const std::string number = nth_number_text(text, written);
      const std::size_t value_end = message.find(" is out of range for ");
      if (std::is_integral_v<T> && !number.empty() && number.find_first_of(".eE") == std::string::npos &&
          value_end != std::string::npos) {
        message = number + message.substr(value_end);
      }
      throw Error(message);
    }
  });
  return tensor;
}

}  // namespace graphrun
