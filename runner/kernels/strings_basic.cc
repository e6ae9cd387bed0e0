// The first string ops (graphdef/ops/strings.py has the reference of each,
// word for word): StringLength, StringToNumber and Substr.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "exec/kernel_context.h"
#include "graph/kernel.h"
#include "graph/shape_rules.h"
#include "kernels/axis.h"
#include "kernels/lib/broadcast.h"

namespace graphrun {
namespace {

// StringLength: bytes, or UTF-8 characters (every byte that is not a
// continuation byte starts one, whether or not the text is valid UTF-8, as
// TensorFlow counts).
void compute_string_length(KernelContext& context) {
  const Tensor& input = context.input(0);
  const bool chars = context.attr_string("unit") == "UTF8_CHAR";
  Tensor out(graphdef::DT_INT32, input.shape());
  const std::string* from = input.data<std::string>();
  int32_t* to = out.data<int32_t>();
  for (int64_t i = 0; i < input.num_elements(); ++i) {
    const std::string& s = from[i];
    int64_t length = static_cast<int64_t>(s.size());
    if (chars) {
      for (char c : s) length -= (static_cast<unsigned char>(c) & 0xC0) == 0x80;
    }
    to[i] = static_cast<int32_t>(length);
  }
  context.set_output(0, std::move(out));
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// The string without the whitespace around it.
std::string trimmed(const std::string& s) {
  std::size_t begin = 0, end = s.size();
  while (begin < end && is_space(s[begin])) ++begin;
  while (end > begin && is_space(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

bool all_digits(const std::string& s, std::size_t from) {
  if (from >= s.size()) return false;
  for (std::size_t i = from; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool equals_lower(const std::string& s, std::size_t from, const char* word) {
  std::size_t i = from;
  for (; *word != '\0'; ++word, ++i) {
    if (i >= s.size() || (s[i] | 0x20) != *word) return false;
  }
  return i == s.size();
}

// A decimal: [+-] then digits[.digits][e[+-]digits] or .digits[e..], or
// inf, infinity or nan in any case (graphrun's _FLOAT).
bool is_float_text(const std::string& s) {
  std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if (equals_lower(s, i, "inf") || equals_lower(s, i, "infinity") || equals_lower(s, i, "nan")) return true;
  bool digits = false;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') digits = ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    bool fraction = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') fraction = ++i;
    if (!digits && !fraction) return false;
  } else if (!digits) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    return all_digits(s, i);
  }
  return i == s.size();
}

// As graphrun shows the string: invalid UTF-8 bytes as \xNN (the error line
// escapes control characters itself).
std::string shown(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t length = c < 0x80                 ? 1
                         : c >= 0xC2 && c <= 0xDF ? 2
                         : c >= 0xE0 && c <= 0xEF ? 3
                         : c >= 0xF0 && c <= 0xF4 ? 4
                                                  : 0;
    const auto at = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
    for (std::size_t k = 1; k < length; ++k) {
      const unsigned char b = at(k);
      const bool ok = k == 1 && c == 0xE0   ? b >= 0xA0 && b <= 0xBF
                      : k == 1 && c == 0xED ? b >= 0x80 && b <= 0x9F
                      : k == 1 && c == 0xF0 ? b >= 0x90 && b <= 0xBF
                      : k == 1 && c == 0xF4 ? b >= 0x80 && b <= 0x8F
                                            : (b & 0xC0) == 0x80;
      if (!ok) length = 0;
    }
    if (length == 0) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else {
      out.append(s, i, length);
      i += length;
    }
  }
  return out;
}

// TensorFlow's words; graphrun's line ends without the trailing whitespace.
[[noreturn]] void cannot_convert(const std::string& s) {
  std::string message = "StringToNumberOp could not correctly convert string: " + shown(s);
  while (is_space(message.back())) message.pop_back();
  throw Error(message);
}

template <class T>
T to_number(const std::string& s) {
  const std::string text = trimmed(s);
  if constexpr (std::is_floating_point_v<T>) {
    if (!is_float_text(text)) cannot_convert(s);
    // As float(s) in Python: the nearest double, then (float32) rounded again.
    return static_cast<T>(std::strtod(text.c_str(), nullptr));
  } else {
    const std::size_t digits_from = (!text.empty() && (text[0] == '+' || text[0] == '-')) ? 1 : 0;
    if (!all_digits(text, digits_from)) cannot_convert(s);
    const bool negative = text[0] == '-';
    if (negative && std::numeric_limits<T>::min() == 0) cannot_convert(s);
    // magnitude digit by digit, refusing anything out of T's range
    using Wide = unsigned long long;
    const Wide bound = negative ? static_cast<Wide>(-(std::numeric_limits<T>::min() + 1)) + 1
                                : static_cast<Wide>(std::numeric_limits<T>::max());
    Wide value = 0;
    for (std::size_t i = digits_from; i < text.size(); ++i) {
      const Wide digit = static_cast<Wide>(text[i] - '0');
      if (value > (bound - digit) / 10) cannot_convert(s);
      value = value * 10 + digit;
    }
    if (!negative) return static_cast<T>(value);
    return value == 0 ? T(0) : static_cast<T>(-static_cast<T>(value - 1) - 1);
  }
}

void compute_string_to_number(KernelContext& context) {
  const Tensor& input = context.input(0);
  const DataType out_type = context.attr_type("out_type");
  Tensor out(out_type, input.shape());
  const std::string* from = input.data<std::string>();
  dispatch(TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>{}, out_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* to = out.data<T>();
    for (int64_t i = 0; i < input.num_elements(); ++i) to[i] = to_number<T>(from[i]);
  });
  context.set_output(0, std::move(out));
}

// A shape as Python prints a list: "[2, 3]".
std::string list_text(const Shape& shape) {
  std::string out = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
  return out + "]";
}

// Substr: each string's piece from pos (from the end when negative), len
// bytes or characters long, with text, pos and len broadcast together (pos
// and len of one shape), in graphrun's words and TensorFlow's rules.
void compute_substr(KernelContext& context) {
  const Tensor& text = context.input(0);
  const Tensor& pos = context.input(1);
  const Tensor& len = context.input(2);
  if (pos.shape() != len.shape()) {
    throw Error("pos and len should have the same shape, got: " + list_text(pos.shape()) + " vs. " +
                list_text(len.shape()));
  }
  Shape shape;
  try {
    shape = plan_broadcast(text.shape(), pos.shape()).out;
  } catch (const Error&) {
    throw Error("Incompatible shapes: " + list_text(text.shape()) + " vs. " + list_text(pos.shape()));
  }
  const std::vector<int64_t> positions = read_ints(pos);
  const std::vector<int64_t> lengths = read_ints(len);
  const bool chars = context.attr_string("unit") == "UTF8_CHAR";
  Tensor out(graphdef::DT_STRING, shape);
  const int rank = static_cast<int>(shape.size());
  const std::vector<int64_t> s_strides = broadcast_strides(text.shape(), shape);
  const std::vector<int64_t> p_strides = broadcast_strides(pos.shape(), shape);
  const std::string* from = text.data<std::string>();
  std::string* to = out.data<std::string>();
  std::vector<int64_t> index(rank, 0);
  int64_t s_at = 0, p_at = 0;
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const std::string& s = from[s_at];
    const int64_t p = positions[p_at], n = lengths[p_at];
    const int64_t magnitude = p < 0 ? -(p + 1) + 1 : p;  // |p| without overflow at INT64_MIN
    if (!chars) {
      const int64_t size = static_cast<int64_t>(s.size());
      if (static_cast<uint64_t>(magnitude) > static_cast<uint64_t>(size)) {
        throw Error("pos " + std::to_string(p) + " out of range for string b'" + shown(s) + "' at index " +
                    std::to_string(i));
      }
      const int64_t first = p < 0 ? p + size : p;
      to[i] = n < 0 ? s.substr(first) : s.substr(first, static_cast<std::size_t>(std::min(n, size - first)));
    } else {
      // TF's character walk: every byte that is not a continuation byte starts a character
      std::vector<std::size_t> starts;
      for (std::size_t k = 0; k < s.size(); ++k) {
        if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) starts.push_back(k);
      }
      const int64_t size = static_cast<int64_t>(starts.size());
      if (static_cast<uint64_t>(magnitude) > static_cast<uint64_t>(size) || (p < 0 && n < 0)) {
        throw Error("pos " + std::to_string(p) + " out of range for string at index " + std::to_string(i));
      }
      const int64_t first = p < 0 ? p + size : p;
      const int64_t last = n < 0 ? first : std::min(size, first + std::min(n, size));
      starts.push_back(s.size());
      to[i] = s.substr(starts[first], starts[last] - starts[first]);
    }
    for (int d = rank - 1; d >= 0; --d) {
      s_at += s_strides[d];
      p_at += p_strides[d];
      if (++index[d] < shape[d]) break;
      s_at -= s_strides[d] * shape[d];
      p_at -= p_strides[d] * shape[d];
      index[d] = 0;
    }
  }
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("StringLength")
                    .input("input", graphdef::DT_STRING)
                    .output(graphdef::DT_INT32)
                    .choice_attr("unit", {"BYTE", "UTF8_CHAR"}, "BYTE")
                    .shape(same_as_input(0))
                    .compute(compute_string_length));

REGISTER_KERNEL(Kernel("StringToNumber")
                    .input("string_tensor", graphdef::DT_STRING)
                    .output("out_type")
                    .type_attr("out_type",
                               {graphdef::DT_FLOAT, graphdef::DT_DOUBLE, graphdef::DT_INT32, graphdef::DT_INT64,
                                graphdef::DT_UINT32, graphdef::DT_UINT64},
                               graphdef::DT_FLOAT)
                    .shape(same_as_input(0))
                    .compute(compute_string_to_number));

REGISTER_KERNEL(Kernel("Substr")
                    .input("input", graphdef::DT_STRING)
                    .input("pos", "T")
                    .input("len", "T")
                    .output(graphdef::DT_STRING)
                    .type_attr("T", dtypes_of(IndexTypes{}))
                    .choice_attr("unit", {"BYTE", "UTF8_CHAR"}, "BYTE")
                    .shape(broadcast_inputs())
                    .compute(compute_substr));

}  // namespace
}  // namespace graphrun
