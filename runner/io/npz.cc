#include "io/npz.h"

#include <zip.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "io/npy.h"
#include "core/tensor_limit.h"

namespace graphrun {

namespace {

struct ArchiveCloser {
  // Read-only: discarding releases the archive without writing anything.
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
using Archive = std::unique_ptr<zip_t, ArchiveCloser>;

std::string error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

bool starts_like_npy(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  char magic[6] = {};
  const bool npy =
      std::fread(magic, 1, sizeof magic, file) == sizeof magic && std::string(magic, sizeof magic) == "\x93NUMPY";
  std::fclose(file);
  return npy;
}

Archive open_archive(const std::string& path) {
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &code);
  if (archive != nullptr) return Archive(archive);
  if (code == ZIP_ER_NOENT) throw Error("no such file");
  if (code == ZIP_ER_NOZIP && starts_like_npy(path)) {
    throw Error("the file is a single .npy array; feed it with --feed NAME=@" + path);
  }
  throw Error("cannot read the file as an .npz archive (" + error_text(code) + ")");
}

// graphrun's words for a member whose bytes do not match their CRC-32.
constexpr const char* kDamaged = "the member is damaged (its CRC-32 does not match); write the archive again";

// The member's uncompressed bytes. Reading on to the end makes libzip check
// the CRC, so a damaged member is an error rather than wrong values.
std::string read_member(zip_t* archive, zip_uint64_t index, const std::string& name) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive, index, 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE)) {
    throw Error(name + ": cannot read its size (" + zip_strerror(archive) + ")");
  }
  // A member holds one tensor and a small header; anything larger could
  // only fail later, after exhausting memory.
  if (stat.size - std::min<zip_uint64_t>(stat.size, 1 << 20) > max_tensor_bytes()) {
    throw TensorLimitError(name + " would take " + format_bytes(stat.size) + ", over the limit of " +
                           format_bytes(max_tensor_bytes()) + " (set GRAPHDEF_MAX_TENSOR_BYTES to change it)");
  }
  zip_file_t* file = zip_fopen_index(archive, index, 0);
  if (file == nullptr) throw Error(name + ": " + zip_strerror(archive));
  std::string bytes(static_cast<std::size_t>(stat.size), '\0');
  zip_uint64_t done = 0;
  zip_int64_t got = 1;
  while (got > 0 && done < stat.size) {
    got = zip_fread(file, &bytes[done], stat.size - done);
    if (got > 0) done += static_cast<zip_uint64_t>(got);
  }
  char extra;
  if (got >= 0) got = zip_fread(file, &extra, 1);  // 0 at the end, after the CRC check
  std::string problem;
  if (got < 0 && zip_error_code_zip(zip_file_get_error(file)) == ZIP_ER_CRC) problem = kDamaged;
  else if (got < 0) problem = zip_error_strerror(zip_file_get_error(file));
  else if (got > 0 || done != stat.size) problem = "its size differs from the archive's directory";
  const int closed = zip_fclose(file);
  if (problem.empty() && closed != 0) problem = error_text(closed);
  if (!problem.empty()) throw Error(name + ": " + problem);
  return bytes;
}

}  // namespace

std::vector<NpzArray> read_npz(const std::string& path) {
  const Archive archive = open_archive(path);
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  std::vector<NpzArray> arrays;
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw_name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), 0);
    if (raw_name == nullptr)
      throw Error("cannot read the archive's directory (" + std::string(zip_strerror(archive.get())) + ")");
    const std::string member = raw_name;
    const std::string suffix = ".npy";
    const bool npy =
        member.size() > suffix.size() && member.compare(member.size() - suffix.size(), suffix.size(), suffix) == 0;
    // np.load keys a member by its name less ".npy" (any other name whole).
    NpzArray array{npy ? member.substr(0, member.size() - suffix.size()) : member, Tensor(graphdef::DT_FLOAT, {0}), "",
                   false, ""};
    const std::string source = "'" + array.name + "'";
    try {
      if (!npy) throw Error(source + ": not an .npy file");
      array.value =
          parse_npy(read_member(archive.get(), static_cast<zip_uint64_t>(i), source), source, &array.string_descr);
    } catch (const TensorLimitError& error) {
      array.error = error.what();
      array.over_limit = true;
    } catch (const Error& error) {
      array.error = error.what();
    }
    arrays.push_back(std::move(array));
  }
  return arrays;
}

}  // namespace graphrun
