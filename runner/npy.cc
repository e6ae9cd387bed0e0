#include "npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

namespace graphrun {

namespace {

std::string read_all(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::string bytes;
  char chunk[1 << 16];
  std::size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) bytes.append(chunk, got);
  const bool failed = std::ferror(file);
  const int read_errno = errno;
  std::fclose(file);
  if (failed) throw Error("cannot read " + path + ": " + std::strerror(read_errno));
  return bytes;
}

DataType dtype_from_descr(const std::string& descr) {
  // Byte-sized types have no byte order: numpy writes '|'.
  static const std::map<std::string, DataType> kDescrs = {
      {"<f4", graphdef::DT_FLOAT},  {"<f8", graphdef::DT_DOUBLE}, {"|i1", graphdef::DT_INT8},
      {"<i1", graphdef::DT_INT8},   {"<i2", graphdef::DT_INT16},  {"<i4", graphdef::DT_INT32},
      {"<i8", graphdef::DT_INT64},  {"|u1", graphdef::DT_UINT8},  {"<u1", graphdef::DT_UINT8},
      {"<u2", graphdef::DT_UINT16}, {"<u4", graphdef::DT_UINT32}, {"<u8", graphdef::DT_UINT64},
      {"|b1", graphdef::DT_BOOL},   {"<b1", graphdef::DT_BOOL},
  };
  auto found = kDescrs.find(descr);
  if (found == kDescrs.end()) throw Error("unsupported .npy dtype '" + descr + "'");
  return found->second;
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

}  // namespace

Tensor read_npy(const std::string& path) {
  const std::string bytes = read_all(path);
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) throw Error(path + " is not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) throw Error(path + ": unsupported .npy format version " + std::to_string(major));
  // Version 1 has a 2-byte header length; versions 2 and 3 a 4-byte one.
  const int length_width = major == 1 ? 2 : 4;
  if (bytes.size() < 8u + length_width) throw Error(path + " is truncated");
  const std::size_t header_length = little_endian(bytes, 8, length_width);
  const std::size_t data_start = 8 + length_width + header_length;
  if (data_start > bytes.size()) throw Error(path + " is truncated");

  std::string descr;
  bool fortran_order = false;
  Shape shape;
  try {
    HeaderParser(bytes.substr(8 + length_width, header_length)).parse(descr, fortran_order, shape);
  } catch (const Error& error) {
    throw Error(path + ": " + error.what());
  }
  if (fortran_order) {
    throw Error(path + " is in Fortran order; save a C-order array (numpy.ascontiguousarray) instead");
  }
  const DataType dtype = dtype_from_descr(descr);
  const int64_t count = checked_num_elements(shape, dtype);
  const std::size_t needed = static_cast<std::size_t>(count) * dtype_size(dtype);
  if (bytes.size() - data_start < needed) {
    throw Error(path + " is truncated: shape " + shape_string(shape) + " needs " + std::to_string(needed) +
                " bytes of data, the file has " + std::to_string(bytes.size() - data_start));
  }
  Tensor tensor(dtype, shape);
  std::memcpy(tensor.raw_data(), bytes.data() + data_start, needed);
  if (dtype == graphdef::DT_BOOL) {
    auto* data = static_cast<unsigned char*>(tensor.raw_data());
    for (std::size_t i = 0; i < needed; ++i) data[i] = data[i] != 0;
  }
  return tensor;
}

}  // namespace graphrun
