// The most bytes one tensor may take. Every tensor is checked against it
// before its buffer is allocated, so a hostile shape in a model or feed is
// refused with one line instead of exhausting memory. The Python runtime
// applies the same rule, with the same variable and the same default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace graphrun {

// The most dims a tensor in a file or a --shape may have: numpy's limit, so
// both runtimes refuse the same shapes (graphdef.framework.limits.MAX_RANK).
constexpr int kMaxRank = 64;

// GRAPHDEF_MAX_TENSOR_BYTES (a whole number of bytes, at least 1) when set,
// else default_max_tensor_bytes("/"). Read once. Throws UsageError for a
// value that is not a positive whole number.
uint64_t max_tensor_bytes();

// The memory this process may really have, so a tensor too large for its
// container or ulimit is refused before the OOM killer ends the process: the
// least of physical memory, cgroup_memory_limit(root), and the soft
// RLIMIT_AS and RLIMIT_DATA. graphdef/framework/limits.py computes the same.
uint64_t default_max_tensor_bytes(const std::string& root);

// The tightest memory limit over the process's cgroup and its ancestors: v2
// memory.max ("max" is none), v1 memory.limit_in_bytes (2^62 and up is none),
// found through <root>/proc/self/cgroup and <root>/proc/self/mountinfo, the
// mount points read under `root` too (tests point it at fake files).
std::optional<uint64_t> cgroup_memory_limit(const std::string& root);

// Tensors of this many bytes or more are also checked against the memory
// free at that moment (graphdef/framework/limits.py FREE_CHECK_BYTES): the
// limit is per tensor, and a run holds many.
constexpr uint64_t kFreeCheckBytes = uint64_t{64} << 20;

// The bytes this process can still get now, if anything says: the least of
// MemAvailable (<root>/proc/meminfo), the room left under each memory
// cgroup's limit (limit minus usage), and the soft RLIMIT_AS / RLIMIT_DATA
// less VmSize / VmData (<root>/proc/self/status).
std::optional<uint64_t> free_memory_now(const std::string& root);

// Throws TensorLimitError ("<described> would take 6.0 GiB, more than the
// 3.1 GiB of memory free now (free memory, or ask for less)") when a tensor
// needs more than free_memory_now() (its root from GRAPHDEF_CGROUP_ROOT, as
// for the limit) plus `reclaimable`, memory this process holds for reuse.
// `described` is "output [2,3] float32". Callers ask for tensors of at least
// kFreeCheckBytes only.
void check_free_memory(uint64_t bytes, uint64_t reclaimable, const std::string& described);

// What a failed allocation of a tensor under the limit reports after the
// node's name: "out of memory, under the limit of 2.0 GiB per tensor (free
// memory, or set GRAPHDEF_MAX_TENSOR_BYTES lower)". The Python runtime words
// it alike. Never throws (a bad variable reads as no limit here).
std::string out_of_memory_text();

// "3.6 TiB", "24.0 GiB", "512 bytes": a byte count for people.
std::string format_bytes(uint64_t bytes);

}  // namespace graphrun
