#include "io/npy_write.h"

#include <algorithm>

namespace graphrun {

namespace {

// numpy's dtype.str on a little-endian machine: one-byte types have no byte order.
std::string descr(DataType dtype) {
  switch (dtype) {
    case graphdef::DT_FLOAT: return "<f4";
    case graphdef::DT_DOUBLE: return "<f8";
    case graphdef::DT_INT8: return "|i1";
    case graphdef::DT_INT16: return "<i2";
    case graphdef::DT_INT32: return "<i4";
    case graphdef::DT_INT64: return "<i8";
    case graphdef::DT_UINT8: return "|u1";
    case graphdef::DT_UINT16: return "<u2";
    case graphdef::DT_UINT32: return "<u4";
    case graphdef::DT_UINT64: return "<u8";
    case graphdef::DT_BOOL: return "|b1";
    default: throw Error("cannot save dtype " + dtype_name(dtype) + " as .npy");
  }
}

// Python's repr of a shape tuple: "()", "(5,)", "(2, 3)".
std::string shape_repr(const Shape& shape) {
  if (shape.size() == 1) return "(" + std::to_string(shape[0]) + ",)";
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + ")";
}

}  // namespace

std::string npy_bytes(const Tensor& tensor) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the data is written in native (little-endian) order");
  const Shape& shape = tensor.shape();
  // A string tensor as a fixed-width bytes ('S') array, which .npy holds
  // without pickling, as graphrun writes it (out_files.cc refuses trailing NULs).
  std::size_t width = 1;
  if (tensor.is_string()) {
    for (const std::string& value : tensor.strings()) width = std::max(width, value.size());
  }
  const std::string type = tensor.is_string() ? "|S" + std::to_string(width) : descr(tensor.dtype());
  std::string header = "{'descr': '" + type + "', 'fortran_order': False, 'shape': " + shape_repr(shape) + ", }";
  // numpy leaves room for the first axis to grow to 21 digits in place.
  constexpr std::size_t kGrowthDigits = 21;
  if (!shape.empty()) header += std::string(kGrowthDigits - std::to_string(shape[0]).size(), ' ');
  constexpr std::size_t kPrefix = 10;  // magic (6) + version (2) + header length (2)
  const std::size_t length = header.size() + 1;  // with the closing '\n'
  const std::size_t padding = 64 - (kPrefix + length) % 64;
  header += std::string(padding, ' ') + '\n';
  const std::size_t stored = header.size();
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(stored & 0xFF);
  out += static_cast<char>((stored >> 8) & 0xFF);
  out += header;
  if (tensor.is_string()) {
    out.reserve(out.size() + width * tensor.strings().size());
    for (const std::string& value : tensor.strings()) {
      out += value;
      out.append(width - value.size(), '\0');
    }
    return out;
  }
  out.append(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
  return out;
}

}  // namespace graphrun
