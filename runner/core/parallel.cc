#include "core/parallel.h"

#include <algorithm>
#include <exception>
#include <mutex>

// libgomp, the OpenMP runtime our oneDNN build runs on. Its entry points are
// called directly rather than through `#pragma omp parallel`: the fuzzer's
// clang would compile the pragma against another runtime (libomp), a second
// pool again. GOMP_parallel is the stable entry point g++ compiles the pragma
// into (libgomp's GOMP_4.0 ABI); the omp_* functions are OpenMP's own API.
extern "C" {
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
int omp_get_max_threads(void);
int omp_get_level(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
}

namespace graphrun {
namespace {

// Below this many operations a range runs on the calling thread alone: a
// worker's wake-up and the hand-back cost more than they would save.
constexpr double kMinParallelWork = 2e5;

struct Region {
  int64_t count;
  const std::function<void(int64_t, int64_t)>* body;
  std::mutex error_mutex;
  std::exception_ptr error;
};

// One team thread's share. The team may be smaller than asked for
// (OMP_DYNAMIC, OMP_THREAD_LIMIT): the range is split over those that came.
void run_share(void* data) {
  Region& region = *static_cast<Region*>(data);
  const int64_t team = omp_get_num_threads();
  const int64_t share = omp_get_thread_num();
  const int64_t begin = region.count * share / team;
  const int64_t end = region.count * (share + 1) / team;
  try {
    if (begin < end) (*region.body)(begin, end);
  } catch (...) {
    // An exception may not leave an OpenMP region: the first is kept and rethrown by the caller.
    std::lock_guard<std::mutex> lock(region.error_mutex);
    if (!region.error) region.error = std::current_exception();
  }
}

}  // namespace

// The shares run on libgomp's threads, the ones oneDNN runs its convolutions
// and matmuls on: with a pool of our own beside them, each pool's waiting
// threads took the cores the other's working threads needed.
void parallel_for(int64_t count, double work, const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  // omp_get_level counts every enclosing region, a one-thread one included: a body
  // that calls parallel_for runs it inline instead of starting a nested team.
  const int threads = omp_get_max_threads();
  if (count == 1 || work < kMinParallelWork || threads <= 1 || omp_get_level() > 0) {
    body(0, count);
    return;
  }
  Region region{count, &body, {}, nullptr};
  GOMP_parallel(run_share, &region, static_cast<unsigned>(std::min<int64_t>(threads, count)), 0);
  if (region.error) std::rethrow_exception(region.error);
}

}  // namespace graphrun
