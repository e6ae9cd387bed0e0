// Where tensors' element buffers come from, and a cache that keeps large
// freed buffers for the next run of a model.
//
// A model's runs allocate the same buffers in the same sizes each time.
// glibc serves blocks above its mmap threshold (at most 32 MiB) with fresh
// pages that the kernel must fault in and clear on every run, and returns
// them when freed: a CNN's activations at batch 8 pass that threshold, so
// each run paid thousands of page faults for them anew. While a plan exists (an
// Executor is alive), a freed buffer of at least kMinCachedBytes (32 MiB) is kept
// and handed to the next request of its size class (the size in whole
// pages) instead. Per size class the cache holds at most as many buffers
// as the last run had live at once (so batch-8 buffers go once batch-1
// runs follow), and it is emptied when the last Executor goes.
#pragma once

#include <cstddef>

namespace graphrun {

// Buffers smaller than this come from malloc directly (from 64 KiB up at a
// varying offset within a page, tensor_memory.cc says why): below the mmap
// threshold core/memory_reuse.cc sets, glibc's heap reuses them, and across
// sizes, which a cache by size cannot (caching smaller buffers too raised
// the peak memory far more; docs/performance.md).
constexpr std::size_t kMinCachedBytes = std::size_t{32} << 20;

// `bytes` (> 0) of memory aligned for every element type (to 64 bytes,
// which vector loads prefer, from 64 KiB up to just under 32 MiB, and for
// the larger buffers not zeroed), zero-filled when `zeroed`.
// Returns nullptr when out of memory.
void* allocate_tensor_memory(std::size_t bytes, bool zeroed);

// Gives back what allocate_tensor_memory(bytes, ...) returned.
void free_tensor_memory(void* memory, std::size_t bytes) noexcept;

// The bytes of freed buffers held for reuse: memory a new tensor may take
// without asking the system for more.
std::size_t cached_tensor_bytes();

// The Executor's hooks: while at least one user is registered, freed large
// buffers are cached; when the last one leaves, the cache is emptied.
void add_tensor_memory_user();
void remove_tensor_memory_user() noexcept;

// Brackets one run (runs may nest or overlap; the outermost pair counts):
// the end trims the cache to the most memory the run had in use at once.
void tensor_memory_run_started();
void tensor_memory_run_ended() noexcept;

}  // namespace graphrun
