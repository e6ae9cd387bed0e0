// The most bytes one tensor may take. Every tensor is checked against it
// before its buffer is allocated, so a hostile shape in a model or feed is
// refused with one line instead of exhausting memory. The Python runtime
// applies the same rule, with the same variable and the same default.
#pragma once

#include <cstdint>
#include <string>

namespace graphrun {

// GRAPHDEF_MAX_TENSOR_BYTES (a whole number of bytes, at least 1) when set,
// else the machine's physical memory. Read once. Throws UsageError for a
// value that is not a positive whole number.
uint64_t max_tensor_bytes();

// "3.6 TiB", "24.0 GiB", "512 bytes": a byte count for people.
std::string format_bytes(uint64_t bytes);

}  // namespace graphrun
