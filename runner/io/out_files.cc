#include "io/out_files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "io/npy_write.h"

namespace graphrun {

namespace {

std::string file_name(const std::string& tensor_name) {
  std::string name = tensor_name;
  for (char& c : name) {
    if (c == '/' || c == ':' || c == '\\' || c == '>') c = '_';
  }
  return name + ".npy";
}

// os.path.join(directory, name).
std::string join(const std::string& directory, const std::string& name) {
  if (directory.empty() || directory.back() == '/') return directory + name;
  return directory + "/" + name;
}

// os.makedirs(directory, exist_ok=True): 0 or the errno that stopped it.
int make_directories(const std::string& directory) {
  if (directory.empty()) return ENOENT;
  for (std::size_t slash = directory.find('/', 1);; slash = directory.find('/', slash + 1)) {
    const std::string prefix = directory.substr(0, slash);
    if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) return errno;
    if (slash == std::string::npos) break;
  }
  struct stat info;
  if (stat(directory.c_str(), &info) != 0) return errno;
  return S_ISDIR(info.st_mode) ? 0 : EEXIST;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  bool ok = file != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  const int error = errno;
  if (file != nullptr) ok = std::fclose(file) == 0 && ok;
  if (!ok) throw UsageError("--out: cannot write " + path + " (" + std::strerror(error) + ")");
}

std::string shape_list(const Shape& shape, const char* separator) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? separator : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace

std::string write_out_files(const std::string& directory, const std::vector<FetchResult>& results, bool json) {
  std::map<std::string, std::string> owner;  // file name -> the tensor written there
  std::vector<std::string> paths;
  for (const FetchResult& result : results) {
    const std::string base = file_name(result.name);
    const auto found = owner.find(base);
    if (found != owner.end() && found->second != result.name) {
      throw UsageError("--out: '" + found->second + "' and '" + result.name + "' would both be written to " + base);
    }
    owner.emplace(base, result.name);
    paths.push_back(join(directory, base));
  }
  for (const FetchResult& result : results) {
    if (!result.value->is_string()) continue;
    for (const std::string& value : result.value->strings()) {
      if (!value.empty() && value.back() == '\0') {
        throw UsageError("--out: '" + result.name +
                         "' holds a string ending in NUL bytes, which a .npy 'S' array would drop; print it with "
                         "--json instead");
      }
    }
  }
  if (const int error = make_directories(directory)) {
    throw UsageError("--out " + directory + ": cannot create the directory (" + std::strerror(error) + ")");
  }
  std::string text = json ? "{\"outputs\": [" : "";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Tensor& value = *results[i].value;
    write_file(paths[i], npy_bytes(value));
    if (json) {
      if (i > 0) text += ", ";
      text += "{\"name\": ";
      append_json_string(text, results[i].name);
      text += ", \"dtype\": \"" + dtype_name(value.dtype()) + "\", \"shape\": " + shape_list(value.shape(), ", ") +
              ", \"file\": ";
      append_json_string(text, paths[i]);
      text += "}";
    } else {
      text += results[i].name + " " + dtype_name(value.dtype()) + " " + shape_list(value.shape(), ",") + " -> " +
              paths[i] + "\n";
    }
  }
  return json ? text + "]}\n" : text;
}

}  // namespace graphrun
