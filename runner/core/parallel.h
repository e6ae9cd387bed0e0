// Splitting a kernel's work over the machine's cores. A kernel hands over
// a range of independent items (pixels, rows) and a body that processes a
// sub-range; the calling thread takes the first share and one of OpenMP's
// (libgomp's) pooled threads per further core takes each of the others: the
// threads oneDNN's primitives run on, so the process has one pool. Small
// ranges run inline: waking a worker costs microseconds.
#pragma once

#include <cstdint>
#include <functional>

namespace graphrun {

// Calls body(begin, end) over disjoint sub-ranges covering [0, count),
// concurrently when `work` (a rough count of operations for the whole range)
// makes that worthwhile. Returns after every call has returned; the first
// exception a body throws is rethrown here. A body must not call
// parallel_for itself (a nested call runs inline).
void parallel_for(int64_t count, double work, const std::function<void(int64_t, int64_t)>& body);

}  // namespace graphrun
