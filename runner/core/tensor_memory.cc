#include "core/tensor_memory.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
// A cached buffer is poisoned while it waits, so a use after free stays a
// use after free under the fuzzers' AddressSanitizer.
#define GRAPHRUN_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define GRAPHRUN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define GRAPHRUN_POISON(p, n) ((void)(p), (void)(n))
#define GRAPHRUN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace graphrun {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kAlignment = 64;

// Cached buffers are handed out by their size rounded up to whole pages, so
// the same tensor shape finds its buffer again whatever its dtype.
std::size_t size_class(std::size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

// The buffers of one size class. A freed buffer is cached only while
// an Executor lives, and taken again before any new one is made, so
// live + cached never exceeds the most ever live at once: the cache holds
// no more than the runs needed. The end of each run trims it further, to
// what that run needed of each size (a batch-8 run's buffers go once
// batch-1 runs follow).
struct SizeClass {
  std::vector<void*> cached;  // most recently freed last
  std::size_t live = 0;      // handed out and not yet freed
  std::size_t run_peak = 0;  // the most live at once in the run under way (or the last one)
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::size_t, SizeClass> classes;  // by size class
  std::size_t cached_bytes = 0;
  int users = 0;
  int runs = 0;  // runs under way

  // Frees cached buffers of `size` until at most `keep` remain.
  void trim(std::size_t size, SizeClass& c, std::size_t keep) {
    while (c.cached.size() > keep) {
      GRAPHRUN_UNPOISON(c.cached.front(), size);
      std::free(c.cached.front());
      c.cached.erase(c.cached.begin());
      cached_bytes -= size;
    }
  }

  // Each class trimmed to what the last run had live of it at most; classes
  // with nothing left are forgotten.
  void trim_to_last_run(bool everything) {
    for (auto it = classes.begin(); it != classes.end();) {
      SizeClass& c = it->second;
      const std::size_t needed = c.run_peak > c.live ? c.run_peak - c.live : 0;
      trim(it->first, c, everything ? 0 : needed);
      if (c.live == 0 && c.cached.empty()) {
        it = classes.erase(it);
      } else {
        c.run_peak = c.live;
        ++it;
      }
    }
  }
};

Cache& cache() {
  // Never destroyed: tensors held by statics may be freed after main returns.
  static Cache* instance = new Cache();
  return *instance;
}

// A CNN's activations are often whole pages long (28x28x192 floats is 147
// pages), so buffers malloc places one after another start at the same
// offset within their pages, and a kernel streaming through its input and
// output at once finds them on the same cache sets, and its loads held up by
// stores to the other buffer whose addresses match in the low 12 bits (4K
// aliasing). So a buffer of kMinColoredBytes or more starts past its
// (64-byte aligned) malloc address by one of 64 cache-line steps, its color,
// and successive buffers take different colors. MobileNetV2's first
// convolution and depthwise steps and the whole model (and ResNet50) ran
// faster so (docs/performance.md).
// The malloc address is kept just below the buffer. The padding stays
// poisoned under AddressSanitizer, so an overrun is still caught.
constexpr std::size_t kMinColoredBytes = std::size_t{64} << 10;
constexpr std::size_t kColors = kPage / kAlignment;
constexpr std::size_t kColorPadding = kPage + kAlignment;
// A colored block stays under glibc's mmap threshold (core/memory_reuse.cc),
// so the heap still reuses it from run to run.
constexpr std::size_t kMaxColoredBytes = kMinCachedBytes - kColorPadding - kAlignment;  // room for malloc's header

void* allocate_colored(std::size_t bytes, bool zeroed) {
  static std::atomic<std::size_t> next{0};
  // 21 is coprime with 64: successive buffers step through every color.
  const std::size_t color = next.fetch_add(1, std::memory_order_relaxed) * 21 % kColors * kAlignment;
  // calloc's blocks fresh from the system arrive as zero pages: no clearing pass.
  char* start = static_cast<char*>(zeroed ? std::calloc(bytes + kColorPadding, 1) : std::malloc(bytes + kColorPadding));
  if (start == nullptr) return nullptr;
  // At least one pointer's room below the buffer, at most kAlignment - 1 + sizeof(char*) + 4032 bytes.
  const std::uintptr_t aligned =
      (reinterpret_cast<std::uintptr_t>(start) + sizeof(char*) + kAlignment - 1) / kAlignment * kAlignment;
  char* buffer = reinterpret_cast<char*>(aligned) + color;
  std::memcpy(buffer - sizeof(char*), &start, sizeof(char*));
  GRAPHRUN_POISON(start, buffer - start);
  GRAPHRUN_POISON(buffer + bytes, start + bytes + kColorPadding - (buffer + bytes));
  return buffer;
}

bool colored(std::size_t bytes) { return bytes >= kMinColoredBytes && bytes < kMaxColoredBytes; }

void free_colored(void* memory, std::size_t bytes) {
  char* buffer = static_cast<char*>(memory);
  GRAPHRUN_UNPOISON(buffer - sizeof(char*), sizeof(char*));
  char* start = nullptr;
  std::memcpy(&start, buffer - sizeof(char*), sizeof(char*));
  GRAPHRUN_UNPOISON(start, bytes + kColorPadding);
  std::free(start);
}

}  // namespace

void* allocate_tensor_memory(std::size_t bytes, bool zeroed) {
  if (colored(bytes)) return allocate_colored(bytes, zeroed);
  if (bytes < kMinCachedBytes) return zeroed ? std::calloc(bytes, 1) : std::malloc(bytes);
  const std::size_t size = size_class(bytes);
  void* memory = nullptr;
  {
    Cache& cache_ = cache();
    std::lock_guard<std::mutex> lock(cache_.mutex);
    SizeClass& c = cache_.classes[size];
    if (!c.cached.empty()) {
      // The most recently freed buffer: its pages are the likeliest to be in the CPU's caches.
      memory = c.cached.back();
      c.cached.pop_back();
      cache_.cached_bytes -= size;
    }
    ++c.live;
    c.run_peak = std::max(c.run_peak, c.live);
  }
  if (memory != nullptr) {
    GRAPHRUN_UNPOISON(memory, size);
    if (zeroed) std::memset(memory, 0, bytes);
    return memory;
  }
  // calloc's large blocks arrive as untouched zero pages: no clearing pass.
  memory = zeroed ? std::calloc(size, 1) : std::aligned_alloc(kAlignment, size);
  if (memory == nullptr) {
    Cache& cache_ = cache();
    std::lock_guard<std::mutex> lock(cache_.mutex);
    --cache_.classes[size].live;
  }
  return memory;
}

void free_tensor_memory(void* memory, std::size_t bytes) noexcept {
  if (memory == nullptr) return;
  if (colored(bytes)) {
    free_colored(memory, bytes);
    return;
  }
  if (bytes < kMinCachedBytes) {
    std::free(memory);
    return;
  }
  const std::size_t size = size_class(bytes);
  {
    Cache& cache_ = cache();
    std::lock_guard<std::mutex> lock(cache_.mutex);
    auto found = cache_.classes.find(size);
    if (found != cache_.classes.end()) {
      SizeClass& c = found->second;
      --c.live;
      if (cache_.users > 0) {
        try {
          c.cached.push_back(memory);
          cache_.cached_bytes += size;
          GRAPHRUN_POISON(memory, size);
          return;
        } catch (...) {  // no room to note it: freed instead
        }
      }
    }
  }
  std::free(memory);
}

std::size_t cached_tensor_bytes() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.cached_bytes;
}

void add_tensor_memory_user() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  ++c.users;
}

void remove_tensor_memory_user() noexcept {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (--c.users > 0) return;
  c.trim_to_last_run(true);
}

void tensor_memory_run_started() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.runs++ > 0) return;
  for (auto& entry : c.classes) entry.second.run_peak = entry.second.live;
}

void tensor_memory_run_ended() noexcept {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (--c.runs > 0) return;
  c.trim_to_last_run(false);
}

}  // namespace graphrun
