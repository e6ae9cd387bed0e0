// A file mapped read-only into memory (mmap), shared by every tensor that
// points into it: its pages are read from disk when first touched, so a
// model's weights cost memory only where a kernel reads them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace graphrun {

class MappedFile {
 public:
  // The mapping of the regular file at `path`; while any holder keeps it,
  // opening the same unchanged file again returns the same mapping. Throws
  // Error ("cannot open <path>: <reason>") when it cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  MappedFile(const unsigned char* data, uint64_t size) : data_(data), size_(size) {}

  const unsigned char* data_;
  uint64_t size_;
};

}  // namespace graphrun
