// The x86 vector instructions graphrun-cc's own kernels may use. The build
// has no -march flag, so the binary runs on any x86-64 CPU; a kernel compiled
// for more than SSE picks its form at run time from this.
#pragma once

namespace graphrun {

enum class CpuIsa {
  kSse,     // every x86-64 CPU
  kAvx2,    // AVX2 and FMA
  kAvx512,  // AVX-512F as well
};

// This CPU's, read once. So that a machine with more can test what one with
// less computes (tests/support/cpu_profiles.py), GRAPHRUN_CC_NO_AVX2 set to anything
// but "" or "0" makes it kSse on any CPU (as for gemm_f32.h's kernel), and
// GRAPHRUN_CC_NO_AVX512 at most kAvx2.
CpuIsa own_kernel_isa();

// True on a CPU with AVX-512 whose vector units are 256 bits wide, so that
// each 512-bit operation takes two of their turns (AMD's Zen 4, family 19h):
// there AVX-512 buys no arithmetic over AVX2, and a kernel that pads its
// channels to 16 lanes does wasted work. Read once.
bool splits_512bit_operations();

}  // namespace graphrun
