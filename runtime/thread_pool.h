// qrt — the persistent thread pool behind a context's runs: workers are created once, spin
// briefly for the next op and then sleep. An op's tasks split into one contiguous range per
// thread, each claimed through that thread's atomic counter (no queue, no allocation on the
// run path); a thread that finishes its range takes tasks from the others'. The calling
// thread works too.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
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

  size_t threads() const override { return threads_; }
  /// Runs fn(0) .. fn(n - 1) on the caller and the workers; returns when all are done.
  /// Thread s (the caller 0, worker i i + 1) starts on tasks [s n / T, (s + 1) n / T): ops
  /// that split the same rows alike find their inputs in the cache of the core that wrote
  /// them. One for_each at a time (a context runs one op at a time).
  void for_each(size_t n, jit::TaskFn fn) override;

 private:
  // One thread's range of the current job's tasks, on a cache line of its own. `claim`
  // holds (generation << 32 | next task): a thread claims a task only by a compare-exchange
  // that also proves the job is still the one it read.
  struct alignas(64) Range {
    std::atomic<uint64_t> claim{0};
  };
  void work(uint32_t generation, size_t slot);
  // Claims and runs the tasks left in range `r` of job `generation`; false once the job has
  // changed.
  bool drain(uint32_t generation, size_t r);
  void worker_loop(size_t slot);

  const size_t threads_;  // the workers and the caller
  std::vector<std::thread> workers_;
  std::unique_ptr<Range[]> ranges_;  // one per thread
  // Cache lines of their own: the spinning workers read `generation_`, every claim reads
  // `fn_` and `tasks_`, and the caller spins on `pending_` while the threads count it down.
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<const jit::TaskFn*> fn_{nullptr};  // read by late workers of an old job: atomic
  std::atomic<size_t> tasks_{0};
  alignas(64) std::atomic<size_t> pending_{0};  // tasks of the job not finished yet
  alignas(64) std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
  bool stop_ = false;
};

}  // namespace qrt::runtime
