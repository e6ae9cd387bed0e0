#include "hostile_feeds.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace graphrun_fuzz {

namespace {

std::vector<std::string> values;

// An .npy file: the magic, version 1.0, a header padded to a multiple of 64
// bytes and ending in '\n', then `payload` as is (whatever the header says).
void write_npy(const std::string& path, const std::string& header_dict, const std::string& payload) {
  std::string header = header_dict;
  const std::size_t preamble = 10;  // magic (6) + version (2) + header length (2)
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header + payload;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return;
  std::fwrite(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
}

template <class T>
std::string raw(std::initializer_list<T> items) {
  std::string out;
  for (T item : items) out.append(reinterpret_cast<const char*>(&item), sizeof item);
  return out;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

}  // namespace

void write_hostile_npy_files() {
  if (!values.empty()) return;
  char dir_template[] = "/tmp/graphrun-fuzz-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct File {
    const char* name;
    std::string header;
    std::string payload;
  };
  const File files[] = {
      {"nan_f32", dict("<f4", "(2, 2)"), raw<float>({nan, 1.0f, -nan, 0.0f})},
      {"inf_f64", dict("<f8", "(3,)"), raw<double>({inf, -inf, std::nan("")})},
      {"extreme_i64", dict("<i8", "(2,)"), raw<int64_t>({INT64_MAX, INT64_MIN})},
      {"neg_i32", dict("<i32", "(3,)"), raw<int32_t>({-1, INT32_MIN, 1 << 30})},
      {"neg_i32b", dict("<i4", "(3,)"), raw<int32_t>({-1, INT32_MIN, 1 << 30})},
      {"empty_f32", dict("<f4", "(0,)"), ""},
      {"empty_2d", dict("<f4", "(0, 3)"), ""},
      {"bool", dict("|b1", "(2,)"), std::string("\x01\x00", 2)},
      {"scalar_u8", dict("|u1", "()"), std::string("\xff", 1)},
      {"big_endian", dict(">f4", "(2,)"), raw<float>({1.0f, 2.0f})},
      {"fortran", dict("<f4", "(2, 3)", true), raw<float>({1, 2, 3, 4, 5, 6})},
      {"lying_header", dict("<f4", "(1000, 1000)"), raw<float>({1.0f, 2.0f})},
      {"lying_huge", dict("<f4", "(100000000000, 100000000000)"), raw<float>({1.0f})},
      {"negative_dim", dict("<f4", "(-1,)"), raw<float>({1.0f})},
      {"pickled_object", dict("|O", "(1,)"),
       std::string("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00\x8c\x01x\x94.", 16)},
      {"bad_magic", "", "not an npy file"},
      {"rank_9", dict("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), raw<float>({1.0f})},
  };
  if (dir != nullptr) {
    for (const File& file : files) {
      const std::string path = std::string(dir) + "/" + file.name + ".npy";
      write_npy(path, file.header, file.payload);
      values.push_back("@" + path);
    }
    values.push_back(std::string("@") + dir + "/missing.npy");
  }
  // clang-format off: a value table, laid out by hand
  const char* json[] = {
      "0", "-1", "1.5", "true", "[]", "[[]]", "[1,2,3]", "[[1,2],[3,4]]", "[[1],[2,3]]", "1e400",
      "9223372036854775807", "-9223372036854775809", "18446744073709551616", "[[[[[[[[1]]]]]]]]",
      "[0.5,-0.5,255,256]", "\"text\"", "null", "{}", "[1,", "",
  };
  // clang-format on
  for (const char* text : json) values.push_back(text);
  values.push_back(std::string(5000, '[') + std::string(5000, ']'));  // deep nesting
}

const std::vector<std::string>& hostile_feed_values() { return values; }

}  // namespace graphrun_fuzz
