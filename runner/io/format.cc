#include "io/format.h"

#include <cmath>
#include <cstdio>

#include "core/errors.h"
#include "core/float_repr.h"

namespace graphrun {

namespace {

// As graphrun's MAX_PRINTED: past a million values text is megabytes no one reads, and a
// hostile empty shape such as [2^40, 0] would print 2^40 "[]" groups.
constexpr int64_t kMaxPrinted = int64_t{1} << 20;

// Values (or empty "[]" groups) the text of `shape` holds, saturating past kMaxPrinted.
int64_t printed_items(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d == 0) break;
    if (count > kMaxPrinted / d) return kMaxPrinted + 1;
    count *= d;
  }
  return count;
}

// The refusal graphrun gives, word for word, before a single value is formatted.
void check_printable(const std::vector<FetchResult>& results) {
  for (const FetchResult& result : results) {
    const Shape& shape = result.value->shape();
    if (printed_items(shape) <= kMaxPrinted) continue;
    int64_t exact = 1;  // graphrun prints the exact count; Python ints do not overflow
    bool overflow = false;
    for (int64_t d : shape) {
      if (d == 0) break;
      overflow = overflow || __builtin_mul_overflow(exact, d, &exact);
    }
    throw UsageError("cannot print " + result.name + ": its shape " + shape_string(shape) + " would print " +
                     (overflow ? std::string("more than 2^63") : std::to_string(exact)) + " items, more than the " +
                     std::to_string(kMaxPrinted) + " printed; save it as .npy with --out DIR");
  }
}

enum class Style { kText, kJson };

// The length of the well-formed UTF-8 sequence at text[i], or 0 if none
// starts there: Python's strict decoder, so no overlong forms, surrogates or
// code points past U+10FFFF.
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto at = [&](std::size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0; };
  const unsigned char c = at(0);
  const auto tail = [&](std::size_t k) { return (at(k) & 0xC0) == 0x80; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned char second = at(1);
    const bool ok = c == 0xE0   ? second >= 0xA0 && second <= 0xBF
                    : c == 0xED ? second >= 0x80 && second <= 0x9F
                                : tail(1);
    return ok && tail(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned char second = at(1);
    const bool ok = c == 0xF0   ? second >= 0x90 && second <= 0xBF
                    : c == 0xF4 ? second >= 0x80 && second <= 0x8F
                                : tail(1);
    return ok && tail(2) && tail(3) ? 4 : 0;
  }
  return 0;
}

bool is_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

void append_hex(std::string& out, const char* prefix, unsigned value, int digits) {
  static const char kHex[] = "0123456789abcdef";
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 15];
}

// A string element on the text line, as graphrun writes it: quoted, `\` and
// `"` escaped, valid UTF-8 as text, every other byte and every control
// character (C0, DEL, C1; tab and line breaks too) as \xNN, so a value can
// neither drive the terminal nor break its line.
void append_text_string(std::string& out, const std::string& value) {
  out += '"';
  for (std::size_t i = 0; i < value.size();) {
    const auto c = static_cast<unsigned char>(value[i]);
    const std::size_t length = utf8_length(value, i);
    if (length == 0 || (length == 1 && (c < 0x20 || c == 0x7F))) {
      append_hex(out, "\\x", c, 2);
      i += 1;
      continue;
    }
    if (length == 1 && (c == '\\' || c == '"')) out += '\\';
    if (length == 2 && c == 0xC2 && static_cast<unsigned char>(value[i + 1]) < 0xA0) {
      append_hex(out, "\\x", static_cast<unsigned char>(value[i + 1]), 2);  // C1, by its code point
    } else {
      out.append(value, i, length);
    }
    i += length;
  }
  out += '"';
}

void append_base64(std::string& out, const std::string& bytes) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(v >> shift) & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const uint32_t v =
        (static_cast<unsigned char>(bytes[i]) << 16) | (two ? static_cast<unsigned char>(bytes[i + 1]) << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += two ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
}

// A string element in --json, as graphrun writes it: valid UTF-8 as a JSON
// string (json.dumps without ensure_ascii, and DEL, C1, U+2028 and U+2029 as
// \uXXXX since a terminal would act on them), any other as {"b64": "..."},
// TensorFlow Serving's REST form of bytes.
void append_json_value_string(std::string& out, const std::string& value) {
  if (!is_utf8(value)) {
    out += "{\"b64\": \"";
    append_base64(out, value);
    out += "\"}";
    return;
  }
  out += '"';
  for (std::size_t i = 0; i < value.size();) {
    const auto c = static_cast<unsigned char>(value[i]);
    const std::size_t length = utf8_length(value, i);
    const auto next = [&](std::size_t k) { return static_cast<unsigned char>(value[i + k]); };
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c == '\b') out += "\\b";
    else if (c == '\f') out += "\\f";
    else if (c < 0x20 || c == 0x7F) append_hex(out, "\\u", c, 4);
    else if (length == 2 && c == 0xC2 && next(1) < 0xA0) append_hex(out, "\\u", next(1), 4);
    else if (length == 3 && c == 0xE2 && next(1) == 0x80 && (next(2) == 0xA8 || next(2) == 0xA9)) {
      append_hex(out, "\\u", 0x2000 + (next(2) & 0x3F), 4);
    } else {
      out.append(value, i, length);
    }
    i += length;
  }
  out += '"';
}

void append_element(std::string& out, const std::string& value, Style style) {
  if (style == Style::kText) append_text_string(out, value);
  else append_json_value_string(out, value);
}

template <class T>
void append_element(std::string& out, const T& value, Style style) {
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
  } else if constexpr (std::is_floating_point_v<T>) {
    const char* special = nullptr;
    if (std::isnan(value)) special = "nan";
    else if (std::isinf(value)) special = value > 0 ? "inf" : "-inf";
    if (special == nullptr) out += float_repr(value);
    else if (style == Style::kJson) out += std::string("\"") + special + "\"";
    else out += special;
  } else if constexpr (std::is_signed_v<T>) {
    out += std::to_string(static_cast<long long>(value));
  } else {
    out += std::to_string(static_cast<unsigned long long>(value));
  }
}

// Nested brackets, elements separated by ", ". Iterative, so even a hostile
// rank cannot exhaust the stack; an empty dim prints "[]" and stops there
// ([2,0] -> "[[], []]").
template <class T>
void append_values(std::string& out, const Tensor& tensor, Style style) {
  const T* data = tensor.data<T>();
  const Shape& shape = tensor.shape();
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) {
    append_element(out, data[0], style);
    return;
  }
  std::vector<int64_t> position(rank, 0);
  int64_t flat = 0;
  int depth = 0;
  out += '[';
  while (true) {
    if (position[depth] < shape[depth]) {
      if (position[depth] > 0) out += ", ";
      if (depth == rank - 1) {
        append_element(out, data[flat++], style);
        ++position[depth];
      } else {
        ++depth;
        position[depth] = 0;
        out += '[';
      }
    } else {
      out += ']';
      if (depth == 0) break;
      --depth;
      ++position[depth];
    }
  }
}

void append_tensor_values(std::string& out, const Tensor& tensor, Style style) {
  dispatch(AllAndStringTypes{}, tensor.dtype(),
           [&](auto tag) { append_values<typename decltype(tag)::type>(out, tensor, style); });
}

}  // namespace

// Escaped as Python's json.dumps does by default (ensure_ascii), so names
// print identically from both runners.
void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    char escape[16];
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c == '\b') out += "\\b";
    else if (c == '\f') out += "\\f";
    else if (c < 0x20) {
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // Decode one UTF-8 sequence (protobuf guarantees string fields are
      // valid UTF-8) and write it as \uXXXX, with a surrogate pair above U+FFFF.
      const int length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      uint32_t code = c & (0x7F >> length);
      for (int k = 1; k < length && i + 1 < text.size(); ++k) code = (code << 6) | (text[++i] & 0x3F);
      if (code >= 0x10000) {
        code -= 0x10000;
        std::snprintf(escape, sizeof escape, "\\u%04x\\u%04x", 0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF));
      } else {
        std::snprintf(escape, sizeof escape, "\\u%04x", code);
      }
      out += escape;
    }
  }
  out += '"';
}

std::string format_text(const std::vector<FetchResult>& results) {
  check_printable(results);
  std::string out;
  for (const FetchResult& result : results) {
    const Tensor& tensor = *result.value;
    out += result.name + " " + dtype_name(tensor.dtype()) + " " + shape_string(tensor.shape()) + " = ";
    append_tensor_values(out, tensor, Style::kText);
    out += '\n';
  }
  return out;
}

std::string format_json(const std::vector<FetchResult>& results) {
  check_printable(results);
  std::string out = "{\"outputs\": [";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Tensor& tensor = *results[i].value;
    if (i > 0) out += ", ";
    out += "{\"name\": ";
    append_json_string(out, results[i].name);
    out += ", \"dtype\": \"" + dtype_name(tensor.dtype()) + "\", \"shape\": [";
    for (std::size_t d = 0; d < tensor.shape().size(); ++d) {
      if (d > 0) out += ", ";
      out += std::to_string(tensor.shape()[d]);
    }
    out += "], \"values\": ";
    append_tensor_values(out, tensor, Style::kJson);
    out += '}';
  }
  out += "]}\n";
  return out;
}

}  // namespace graphrun
