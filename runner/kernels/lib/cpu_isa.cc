#include "kernels/lib/cpu_isa.h"

#include <cstdlib>
#include <cstring>

#include <cpuid.h>

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

bool zen4() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (std::strcmp(vendor, "AuthenticAMD") != 0 || !__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const unsigned family = ((eax >> 8) & 0xf) + ((eax >> 20) & 0xff);  // base + extended, as AMD defines it
  __builtin_cpu_init();
  return family == 0x19 && __builtin_cpu_supports("avx512f");
}

}  // namespace

CpuIsa own_kernel_isa() {
  static const CpuIsa isa = detect();
  return isa;
}

bool splits_512bit_operations() {
  static const bool split = zen4();
  return split;
}

}  // namespace graphrun
