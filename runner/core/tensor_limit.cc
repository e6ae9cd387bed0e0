#include "core/tensor_limit.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core/errors.h"
#include "core/int_text.h"

namespace graphrun {

namespace {

constexpr const char* kVariable = "GRAPHDEF_MAX_TENSOR_BYTES";

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  uint64_t bytes = 0;
  // Unknown (sysconf failed): no limit beyond what the address space allows.
  if (pages <= 0 || page_size <= 0 ||
      __builtin_mul_overflow(static_cast<uint64_t>(pages), static_cast<uint64_t>(page_size), &bytes)) {
    return UINT64_MAX;
  }
  return bytes;
}

uint64_t read_limit() {
  const char* text = std::getenv(kVariable);
  if (text == nullptr || *text == '\0') return physical_memory();
  IntText value;
  if (!parse_int_text(text, value) || value.negative || value.magnitude == 0) {
    throw UsageError(std::string(kVariable) + " must be a whole number of bytes of at least 1, got '" + text + "'");
  }
  return value.magnitude;
}

}  // namespace

uint64_t max_tensor_bytes() {
  // A function-local static: read on first use, and read again if the first
  // read threw (so every use reports a bad value the same way).
  static const uint64_t limit = read_limit();
  return limit;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace graphrun
