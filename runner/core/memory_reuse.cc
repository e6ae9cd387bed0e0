// Keeps freed tensor memory in the process for the next run.
//
// Kernels allocate their outputs on every run. By default glibc serves large
// blocks with fresh mmap'd pages and hands freed memory back to the kernel,
// so every run of a model pays page faults and page clearing for each large
// tensor again (a third of a small CNN's run time). Keeping blocks up to the
// largest threshold glibc allows on the heap, and never trimming it, lets
// later runs reuse the same memory. Set once, before main, by a static
// initializer, so no entry point has to remember it.
#include <malloc.h>

#include <limits>

namespace graphrun {
namespace {

const bool kMemoryReuse = [] {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  return true;
}();

}  // namespace
}  // namespace graphrun
