#include "io/npy.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

namespace graphrun {

namespace {

std::string read_all(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr && errno == ENOENT) throw Error("no such file '" + path + "'");
  if (file == nullptr) throw Error("cannot read '" + path + "' (" + std::strerror(errno) + ")");
  std::string bytes;
  char chunk[1 << 16];
  std::size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) bytes.append(chunk, got);
  const bool failed = std::ferror(file);
  const int read_errno = errno;
  std::fclose(file);
  if (failed) throw Error("cannot read '" + path + "' (" + std::strerror(read_errno) + ")");
  return bytes;
}

// What a header's 'descr' says about the stored elements.
struct StoredType {
  DataType dtype;           // the tensor's dtype (float32 for float16)
  std::size_t size;         // bytes per stored element
  bool big_endian = false;  // stored most significant byte first
  bool half = false;        // IEEE binary16, widened to float32 on reading
};

// numpy's name for a dtype that is not fed (dtype.name), else the descr.
std::string numpy_name(const std::string& descr) {
  static const std::map<std::string, std::string> kNames = {
      {"c8", "complex64"}, {"c16", "complex128"}, {"c32", "complex256"}, {"f16", "float128"}, {"f12", "float96"}};
  const auto found = descr.size() > 1 ? kNames.find(descr.substr(1)) : kNames.end();
  return found == kNames.end() ? descr : found->second;
}

// The messages use graphrun's words (graphdef/framework/npy_check.py), with
// `source` ("'x.npy'") naming the file or archive member.
StoredType stored_type(const std::string& descr, const std::string& source) {
  // A byte order ('<' little, '>' big; '|' for byte-sized types, which have
  // none), a kind and a size in bytes, as numpy writes dtype.str.
  static const std::map<std::string, DataType> kTypes = {
      {"f2", graphdef::DT_FLOAT},  {"f4", graphdef::DT_FLOAT},  {"f8", graphdef::DT_DOUBLE}, {"i1", graphdef::DT_INT8},
      {"i2", graphdef::DT_INT16},  {"i4", graphdef::DT_INT32},  {"i8", graphdef::DT_INT64},  {"u1", graphdef::DT_UINT8},
      {"u2", graphdef::DT_UINT16}, {"u4", graphdef::DT_UINT32}, {"u8", graphdef::DT_UINT64}, {"b1", graphdef::DT_BOOL},
  };
  const auto found = descr.size() == 3 ? kTypes.find(descr.substr(1)) : kTypes.end();
  const char order = descr.empty() ? '?' : descr[0];
  if (descr.size() >= 2 && descr[1] == 'O') {
    // An object array's data is a pickle: loading it could run code.
    throw Error(source +
                " holds Python objects (object); only numbers, bools and strings ('S' or 'U' arrays) can be fed, "
                "and nothing from a file is ever unpickled");
  }
  if (found == kTypes.end() || (order != '<' && order != '>' && order != '|')) {
    throw Error(source + " holds " + numpy_name(descr) +
                " data; only numbers, bools and strings ('S' or 'U' arrays) can be fed");
  }
  StoredType type;
  type.dtype = found->second;
  type.size = static_cast<std::size_t>(descr[2] - '0');
  if (order == '|' && type.size != 1) throw Error(source + ": malformed .npy header");
  type.big_endian = order == '>' && type.size > 1;
  type.half = found->first == "f2";
  return type;
}

// An IEEE binary16 value as the float32 of the same value (always exact).
float half_to_float(uint16_t bits) {
  const uint32_t sign = bits >> 15;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  const uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) {
    // inf or NaN: the same class, sign and payload in float32's layout.
    const uint32_t wide = (sign << 31) | (0xffu << 23) | (mantissa << 13);
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
  }
  // Zero and subnormals are mantissa * 2**-24; normals have the implicit 1.
  const float magnitude = exponent == 0
                              ? std::ldexp(static_cast<float>(mantissa), -24)
                              : std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

// Fortran (column-major) element order -> C (row-major), `item` bytes each.
std::string fortran_to_c_order(const std::string& data, const Shape& shape, std::size_t item) {
  std::string out(data.size(), '\0');
  const int rank = static_cast<int>(shape.size());
  const std::size_t count = item == 0 ? 0 : data.size() / item;
  // Walk the C order with an odometer, tracking the offset of the same
  // index in the column-major data (the first dim moves fastest there).
  std::vector<int64_t> strides(rank, 1);
  for (int d = 1; d < rank; ++d) strides[d] = strides[d - 1] * shape[d - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(&out[i * item], &data[static_cast<std::size_t>(offset) * item], item);
    for (int d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return out;
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This scanner reads exactly that grammar: quoted keys, and values that are a
// quoted string, True/False, or a tuple of non-negative integers.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : text_(text) {}

  void parse(std::string& descr, bool& fortran_order, Shape& shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran_order = boolean();
        have_order = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') ++pos_;
    }
    if (!have_descr || !have_order || !have_shape) fail("'descr', 'fortran_order' or 'shape' is missing");
  }

 private:
  [[noreturn]] void fail(const std::string& why) { throw Error("malformed .npy header: " + why); }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }
  char peek() {
    if (pos_ >= text_.size()) fail("it ends early");
    return text_[pos_];
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string quoted() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_space();
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("expected a dimension");
      int64_t dim = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (__builtin_mul_overflow(dim, 10, &dim) || __builtin_add_overflow(dim, text_[pos_] - '0', &dim)) {
          fail("a dimension is too large");
        }
        ++pos_;
      }
      shape.push_back(dim);
      skip_space();
      if (peek() == ',') ++pos_;
    }
    ++pos_;
    return shape;
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

uint32_t little_endian(const std::string& bytes, std::size_t at, int width) {
  uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

// A fixed-width string descr: "|S5" (5 bytes an element) or "<U5" / ">U5"
// (5 UTF-32 code units). Returns false for any other descr.
bool parse_string_descr(const std::string& descr, char& kind, bool& big_endian, std::size_t& width) {
  if (descr.size() < 3 || (descr[1] != 'S' && descr[1] != 'U')) return false;
  if (descr[1] == 'S' ? descr[0] != '|' : descr[0] != '<' && descr[0] != '>') return false;
  width = 0;
  for (std::size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || width > (std::size_t{1} << 40)) return false;
    width = width * 10 + static_cast<std::size_t>(descr[i] - '0');
  }
  kind = descr[1];
  big_endian = descr[0] == '>';
  return true;
}

// An 'S' or 'U' array as numpy gives its elements: trailing NULs dropped, 'U'
// text as UTF-8 (as graphrun encodes str).
Tensor strings_from_npy(const char* data, std::size_t available, const Shape& shape, char kind, bool big_endian,
                        std::size_t width, const std::string& source) {
  int64_t count;
  try {
    count = checked_num_elements(shape, graphdef::DT_STRING, "array");
  } catch (const TensorLimitError& error) {
    throw TensorLimitError(source + ": " + error.what());
  }
  const std::size_t item = kind == 'S' ? width : width * 4;
  uint64_t needed = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), static_cast<uint64_t>(item), &needed)) {
    needed = UINT64_MAX;
  }
  try {
    check_string_bytes(needed, "the array's");
  } catch (const TensorLimitError& error) {
    throw TensorLimitError(source + ": " + error.what());
  }
  if (available < needed) {
    const std::string file_dtype = (kind == 'S' ? "bytes" : "str") + std::to_string(item * 8);
    throw Error(source + ": the header promises " + shape_string(shape) + " " + file_dtype + " (" +
                std::to_string(needed) + " bytes of data) but only " + std::to_string(available) + " bytes follow it");
  }
  Tensor tensor(graphdef::DT_STRING, shape);
  std::string* out = tensor.data<std::string>();
  for (int64_t i = 0; i < count; ++i) {
    const char* element = data + static_cast<std::size_t>(i) * item;
    std::string& value = out[i];
    if (kind == 'S') {
      std::size_t length = width;
      while (length > 0 && element[length - 1] == '\0') --length;
      value.assign(element, length);
      continue;
    }
    std::size_t length = width;
    const auto unit = [&](std::size_t k) {
      const auto* b = reinterpret_cast<const unsigned char*>(element + 4 * k);
      return big_endian ? (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3]
                        : (uint32_t{b[3]} << 24) | (uint32_t{b[2]} << 16) | (uint32_t{b[1]} << 8) | b[0];
    };
    while (length > 0 && unit(length - 1) == 0) --length;
    for (std::size_t k = 0; k < length; ++k) {
      const uint32_t code = unit(k);
      if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
        throw Error(source + " holds a 'U' element that is not Unicode text (code point " + std::to_string(code) + ")");
      }
      if (code < 0x80) {
        value += static_cast<char>(code);
      } else if (code < 0x800) {
        value += static_cast<char>(0xC0 | (code >> 6));
        value += static_cast<char>(0x80 | (code & 0x3F));
      } else if (code < 0x10000) {
        value += static_cast<char>(0xE0 | (code >> 12));
        value += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        value += static_cast<char>(0x80 | (code & 0x3F));
      } else {
        value += static_cast<char>(0xF0 | (code >> 18));
        value += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        value += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        value += static_cast<char>(0x80 | (code & 0x3F));
      }
    }
  }
  return tensor;
}

}  // namespace

Tensor parse_npy(const std::string& bytes, const std::string& source, std::string* string_descr) {
  if (string_descr != nullptr) string_descr->clear();
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 6 || bytes.compare(0, 6, kMagic, 6) != 0) throw Error(source + ": not an .npy file");
  // Past the magic, every flaw of the header is one class, as graphrun (whose
  // parser is numpy's) reports it.
  const Error malformed(source + ": malformed .npy header");
  if (bytes.size() < 10) throw malformed;
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) throw malformed;
  // Version 1 has a 2-byte header length; versions 2 and 3 a 4-byte one.
  const int length_width = major == 1 ? 2 : 4;
  if (bytes.size() < 8u + length_width) throw malformed;
  const std::size_t header_length = little_endian(bytes, 8, length_width);
  const std::size_t data_start = 8 + length_width + header_length;
  if (data_start > bytes.size()) throw malformed;

  std::string descr;
  bool fortran_order = false;
  Shape shape;
  try {
    HeaderParser(bytes.substr(8 + length_width, header_length)).parse(descr, fortran_order, shape);
  } catch (const Error&) {
    throw malformed;
  }
  char string_kind;
  bool string_big_endian;
  std::size_t string_width;
  if (parse_string_descr(descr, string_kind, string_big_endian, string_width)) {
    // Fortran order changes nothing for one dim or fewer; numpy writes C order otherwise.
    if (fortran_order && shape.size() > 1) throw Error(source + ": a Fortran-order string array cannot be fed");
    if (string_descr != nullptr) *string_descr = descr;
    return strings_from_npy(bytes.data() + data_start, bytes.size() - data_start, shape, string_kind, string_big_endian,
                            string_width, source);
  }
  const StoredType stored = stored_type(descr, source);
  int64_t count;
  try {
    count = checked_num_elements(shape, stored.dtype, "array");
  } catch (const TensorLimitError& error) {
    throw TensorLimitError(source + ": " + error.what());
  }
  const std::size_t needed = static_cast<std::size_t>(count) * stored.size;
  if (bytes.size() - data_start < needed) {
    const std::string file_dtype = stored.half ? "float16" : dtype_name(stored.dtype);
    throw Error(source + ": the header promises " + shape_string(shape) + " " + file_dtype + " (" +
                std::to_string(needed) + " bytes of data) but only " + std::to_string(bytes.size() - data_start) +
                " bytes follow it");
  }
  // The file's bytes are used in place unless their layout differs from the
  // tensor's (a feed can be gigabytes, so no copy is made without need).
  const char* data = bytes.data() + data_start;
  std::string rearranged;
  const bool reorder = fortran_order && shape.size() > 1;
  if (stored.big_endian || reorder) {
    rearranged.assign(data, needed);
    if (stored.big_endian) {
      for (std::size_t at = 0; at < needed; at += stored.size) {
        std::reverse(&rearranged[at], &rearranged[at] + stored.size);
      }
    }
    if (reorder) rearranged = fortran_to_c_order(rearranged, shape, stored.size);
    data = rearranged.data();
  }

  Tensor tensor(stored.dtype, shape);
  if (stored.half) {
    float* out = tensor.data<float>();
    for (int64_t i = 0; i < count; ++i) {
      uint16_t bits;
      std::memcpy(&bits, data + static_cast<std::size_t>(i) * 2, 2);
      out[i] = half_to_float(bits);
    }
  } else if (needed > 0) {
    std::memcpy(tensor.raw_data(), data, needed);
  }
  if (stored.dtype == graphdef::DT_BOOL) {
    auto* values = static_cast<unsigned char*>(tensor.raw_data());
    for (std::size_t i = 0; i < needed; ++i) values[i] = values[i] != 0;
  }
  return tensor;
}

Tensor read_npy(const std::string& path, std::string* string_descr) {
  const std::string bytes = read_all(path);
  // A zip's local header: an archive given where one array is wanted.
  if (bytes.compare(0, 4, "PK\x03\x04") == 0)
    throw Error("'" + path + "' is an .npz archive; give a single .npy array");
  return parse_npy(bytes, "'" + path + "'", string_descr);
}

}  // namespace graphrun
