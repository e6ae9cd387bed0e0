#include "core/parallel.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace graphrun {
namespace {

// Below this many operations a range runs on the calling thread alone: a
// worker's wake-up and the hand-back cost more than they would save.
constexpr double kMinParallelWork = 2e5;

thread_local bool inside_parallel_body = false;

class Pool {
 public:
  Pool() {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < cores; ++i) workers_.emplace_back([this, i] { work(i); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  int shares() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int64_t count, const std::function<void(int64_t, int64_t)>& body) {
    const int shares_used = static_cast<int>(std::min<int64_t>(shares(), count));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      body_ = &body;
      count_ = count;
      shares_used_ = shares_used;
      pending_ = shares_used - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    run_share(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    body_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_share(int share) {
    const int64_t begin = count_ * share / shares_used_;
    const int64_t end = count_ * (share + 1) / shares_used_;
    inside_parallel_body = true;
    try {
      if (begin < end) (*body_)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    inside_parallel_body = false;
  }

  void work(int share) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (share >= shares_used_) continue;
      }
      run_share(share);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t count_ = 0;
  int shares_used_ = 1;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

Pool& pool() {
  // Made on first use, so a process that never runs a large kernel (most
  // runs) never starts a thread.
  static Pool instance;
  return instance;
}

}  // namespace

void parallel_for(int64_t count, double work, const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  if (count == 1 || work < kMinParallelWork || inside_parallel_body || pool().shares() == 1) {
    body(0, count);
    return;
  }
  pool().run(count, body);
}

}  // namespace graphrun
