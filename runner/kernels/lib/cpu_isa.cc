#include "kernels/lib/cpu_isa.h"

#include <cstdlib>
#include <cstring>

namespace graphrun {

namespace {

bool turned_off(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

CpuIsa detect() {
  __builtin_cpu_init();  // may run from a static initializer, before libgcc's own
  if (turned_off("GRAPHRUN_CC_NO_AVX2") || !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    return CpuIsa::kSse;
  }
  if (turned_off("GRAPHRUN_CC_NO_AVX512") || !__builtin_cpu_supports("avx512f")) return CpuIsa::kAvx2;
  return CpuIsa::kAvx512;
}

}  // namespace

CpuIsa own_kernel_isa() {
  static const CpuIsa isa = detect();
  return isa;
}

}  // namespace graphrun
