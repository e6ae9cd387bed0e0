#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <iterator>
#include <tuple>

#include "core/errors.h"

namespace graphrun {

namespace {

// The same file, unchanged: same path, inode and device, size and mtime.
using FileKey = std::tuple<std::string, dev_t, ino_t, off_t, int64_t, int64_t>;

std::mutex& cache_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<FileKey, std::weak_ptr<const MappedFile>>& cache() {
  static auto* mappings = new std::map<FileKey, std::weak_ptr<const MappedFile>>();
  return *mappings;
}

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  // O_NONBLOCK: a FIFO in place of a weights file must be refused, not waited on.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const int error = errno;
    ::close(fd);
    throw Error("cannot open " + path + ": " + (S_ISREG(info.st_mode) ? std::strerror(error) : "not a regular file"));
  }
  const FileKey key{path,
                    info.st_dev,
                    info.st_ino,
                    info.st_size,
                    static_cast<int64_t>(info.st_mtim.tv_sec),
                    static_cast<int64_t>(info.st_mtim.tv_nsec)};
  std::lock_guard<std::mutex> lock(cache_mutex());
  auto& mappings = cache();
  for (auto it = mappings.begin(); it != mappings.end();)
    it = it->second.expired() ? mappings.erase(it) : std::next(it);
  auto found = mappings.find(key);
  if (found != mappings.end()) {
    // Its last holder may have let go since the sweep above (that happens outside this lock):
    // then it is mapped anew.
    if (std::shared_ptr<const MappedFile> alive = found->second.lock()) {
      ::close(fd);
      return alive;
    }
  }
  const uint64_t size = static_cast<uint64_t>(info.st_size);
  void* memory = nullptr;
  if (size > 0) {
    // PROT_READ: a kernel writing into a mapped weight would fault at once
    // instead of silently changing the model for later runs.
    memory = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (memory == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      throw Error("cannot map " + path + ": " + std::strerror(error));
    }
  }
  ::close(fd);  // the mapping keeps the file
  std::shared_ptr<const MappedFile> mapped(new MappedFile(static_cast<const unsigned char*>(memory), size));
  mappings[key] = mapped;
  return mapped;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace graphrun
