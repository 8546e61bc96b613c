// qrt — persistent thread pool (see thread_pool.h).
#include "runtime/thread_pool.h"

namespace qrt::runtime {

namespace {

// A spin-wait hint (the compiler's builtins: no ISA header outside the JIT backends).
inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

// About 50 µs of spinning before a worker sleeps: consecutive ops of one run find it awake.
constexpr int kSpinIterations = 20000;

// The task index of a job whose claims are closed while its parameters are written.
constexpr uint64_t kClosed = 0xFFFFFFFFu;

}  // namespace

ThreadPool::ThreadPool(size_t threads)
    : threads_(threads < 1 ? 1 : threads), ranges_(std::make_unique<Range[]>(threads_)) {
  for (size_t i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::drain(uint32_t generation, size_t r) {
  // The claim is read first and the job's parameters after it: a claim of `generation` was
  // published (release) after that job's fn_ and tasks_, so they are this job's or a newer
  // one's, and with a newer one's the compare-exchange below fails (the newer job closed the
  // claims of this one before writing them). Reading the parameters first instead let a late
  // worker pair the old claim counter with the next job's task count, run a task that did not
  // exist and decrement the next job's pending count (a hang found by ThreadSanitizer's timing).
  //
  // The tasks run here are counted off `pending_` once, when the range is done: that counter
  // is shared by every thread, and a decrement per task moved its cache line between the
  // cores once per task (about 0.15 µs each on a 2-vCPU Xeon: 8 tasks cost 1.6 µs, 2 tasks
  // 0.67, BM_pool_handoff). Counting late only delays the job's end past this thread's own
  // last task, and no newer job can start before it.
  std::atomic<uint64_t>& range = ranges_[r].claim;
  uint64_t claim = range.load(std::memory_order_acquire);
  size_t done = 0;
  for (;;) {
    const uint32_t gen = uint32_t(claim >> 32), next = uint32_t(claim);
    if (gen != generation) break;
    const jit::TaskFn* fn = fn_.load(std::memory_order_acquire);
    const size_t n = tasks_.load(std::memory_order_acquire);
    if (next >= (r + 1) * n / threads_) break;
    if (range.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel)) {
      (*fn)(next);
      ++done;
      claim = range.load(std::memory_order_acquire);
    }
  }
  if (done > 0) pending_.fetch_sub(done, std::memory_order_acq_rel);
  return uint32_t(claim >> 32) == generation;
}

void ThreadPool::work(uint32_t generation, size_t slot) {
  // Its own range first, then what is left of the others', nearest first.
  for (size_t i = 0; i < threads_; ++i) {
    if (!drain(generation, (slot + i) % threads_)) return;
  }
}

void ThreadPool::worker_loop(size_t slot) {
  uint32_t seen = generation_.load(std::memory_order_acquire);
  for (;;) {
    uint32_t gen = seen;
    for (int i = 0; i < kSpinIterations && (gen = generation_.load(std::memory_order_acquire)) == seen; ++i) {
      cpu_relax();
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1, std::memory_order_acq_rel);
      wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
      sleepers_.fetch_sub(1, std::memory_order_acq_rel);
      if (stop_) return;
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    work(gen, slot);
  }
}

void ThreadPool::for_each(size_t n, jit::TaskFn fn) {
  if (workers_.empty() || n <= 1 || n >= kClosed) {  // (claims count tasks in 32 bits)
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  const uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
  const size_t threads = threads_;
  // Close the claims first (no task index reaches kClosed), so no worker still in the last
  // job can claim against the parameters written next; then open the new job's ranges.
  for (size_t r = 0; r < threads; ++r) ranges_[r].claim.store((uint64_t(gen) << 32) | kClosed, std::memory_order_release);
  fn_.store(&fn, std::memory_order_release);
  tasks_.store(n, std::memory_order_release);
  pending_.store(n, std::memory_order_release);
  for (size_t r = 0; r < threads; ++r) {
    ranges_[r].claim.store((uint64_t(gen) << 32) | uint64_t(r * n / threads), std::memory_order_release);
  }
  {
    // Publishing under the mutex orders it with a worker's check-then-sleep.
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.store(gen, std::memory_order_release);
  }
  if (sleepers_.load(std::memory_order_acquire) > 0) wake_.notify_all();
  work(gen, 0);
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
}

}  // namespace qrt::runtime
