// qrt — the persistent thread pool behind a context's runs: workers are created once, spin
// briefly for the next op and then sleep; an op's tasks are claimed through one atomic
// counter (no queue, no allocation on the run path) and the calling thread works too.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "jit/core/parallel.h"

namespace qrt::runtime {

/// `threads` - 1 workers plus the caller. With threads == 1 it runs everything inline.
class ThreadPool final : public jit::Parallel {
 public:
  explicit ThreadPool(size_t threads);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t threads() const override { return workers_.size() + 1; }
  /// Runs fn(0) .. fn(n - 1) on the caller and the workers; returns when all are done.
  /// One for_each at a time (a context runs one op at a time).
  void for_each(size_t n, jit::TaskFn fn) override;

 private:
  void work(uint32_t generation);
  void worker_loop();

  std::vector<std::thread> workers_;
  // The current job. `claim_` holds (generation << 32 | next task): a worker claims a task
  // only by a compare-exchange that also proves the job is still the one it read.
  std::atomic<uint64_t> claim_{0};
  std::atomic<uint32_t> generation_{0};
  std::atomic<const jit::TaskFn*> fn_{nullptr};  // read by late workers of an old job: atomic
  std::atomic<size_t> tasks_{0};
  std::atomic<size_t> pending_{0};  // tasks of the job not finished yet
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
  bool stop_ = false;
};

}  // namespace qrt::runtime
