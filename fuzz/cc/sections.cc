#include "sections.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace graphrun_fuzz {

std::vector<std::string> split_sections(const uint8_t* data, size_t size, size_t count) {
  std::vector<std::string> sections(count);
  size_t pos = 0;
  for (size_t i = 0; i < count && pos < size; ++i) {
    uint32_t length = 0;
    const size_t header = size - pos < 4 ? size - pos : 4;
    std::memcpy(&length, data + pos, header);
    pos += header;
    const size_t take = length < size - pos ? length : size - pos;
    sections[i].assign(reinterpret_cast<const char*>(data + pos), take);
    pos += take;
  }
  return sections;
}

std::string join_sections(const std::vector<std::string>& sections) {
  std::string out;
  for (const std::string& section : sections) {
    const uint32_t length = static_cast<uint32_t>(section.size());
    out.append(reinterpret_cast<const char*>(&length), 4);
    out += section;
  }
  return out;
}

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base ? base : "/tmp") + "/graphrun-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    return pattern;
  }();
  return dir;
}

void put_file(const std::string& path, const std::string& bytes) {
  unlink(path.c_str());
  if (bytes.empty()) return;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size()) {
    std::perror(path.c_str());
    std::abort();
  }
  std::fclose(file);
}

}  // namespace graphrun_fuzz
