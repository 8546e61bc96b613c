// qrt — how kernels spread work over threads without knowing who provides them: a kernel
// splits its op into tasks and hands them to a Parallel (the runtime's thread pool, or the
// calling thread alone). Nothing here allocates.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace qrt::jit {

/// A non-owning reference to a callable `void(size_t)`: no allocation, valid while the
/// callable lives.
class TaskFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, TaskFn>>>
  TaskFn(F&& f) : object_(const_cast<void*>(static_cast<const void*>(&f))),  // NOLINT: implicit by design
                  call_([](void* o, size_t task) { (*static_cast<std::remove_reference_t<F>*>(o))(task); }) {}
  void operator()(size_t task) const { call_(object_, task); }

 private:
  void* object_;
  void (*call_)(void*, size_t);
};

/// Runs tasks [0, n) on one or more threads and returns when all are done. Tasks must be
/// independent; which thread runs which task is unspecified (results must not depend on it).
class Parallel {
 public:
  virtual ~Parallel() = default;
  /// Number of threads that may run tasks at once (1: the caller only).
  virtual size_t threads() const = 0;
  /// Runs fn(0) .. fn(n - 1).
  virtual void for_each(size_t n, TaskFn fn) = 0;
  /// True where every op should split into as many tasks as its kernel allows, however small
  /// (tests: results must not depend on the split); false splits only work worth a hand-off.
  virtual bool split_small_work() const { return false; }
};

/// The calling thread alone.
class Serial final : public Parallel {
 public:
  size_t threads() const override { return 1; }
  void for_each(size_t n, TaskFn fn) override {
    for (size_t i = 0; i < n; ++i) fn(i);
  }
};

/// How many tasks `work` units of work (multiply-adds, vector steps: the caller's measure) are
/// worth splitting into on `parallel`, when a task should carry at least `min_task_work`
/// units: handing a task to another thread (its wake-up, the claim and the completion count
/// crossing cores) costs about a microsecond, so smaller tasks make two threads slower than
/// one. At most 4 tasks per thread (for balance), at least 1.
inline int64_t worthwhile_tasks(int64_t work, int64_t min_task_work, const Parallel& parallel) {
  const int64_t threads = int64_t(parallel.threads()), cap = 4 * threads;
  if (threads <= 1) return 1;
  if (parallel.split_small_work() || min_task_work <= 0) return cap;
  const int64_t by_work = work / min_task_work;
  return by_work < 1 ? 1 : by_work > cap ? cap : by_work;
}

/// Elements of a stream task (element-wise ops, quantize, dequantize): a few microseconds of
/// work, well above a hand-off.
constexpr int64_t kMinStreamTaskElements = 4096;

/// Like worthwhile_tasks, but at most one task per thread: for work that splits into equal
/// parts with nothing to balance, where each extra task costs more than its hand-off (the
/// depthwise rows path interleaves the kh - 1 input rows above each task again; streams read
/// data another core wrote). 4 per thread under split_small_work (tests).
inline int64_t even_tasks(int64_t work, int64_t min_task_work, const Parallel& parallel) {
  const int64_t threads = int64_t(parallel.threads());
  if (threads <= 1) return 1;
  if (parallel.split_small_work() || min_task_work <= 0) return 4 * threads;
  const int64_t by_work = work / min_task_work;
  return by_work < 1 ? 1 : by_work > threads ? threads : by_work;
}

/// The start of part `i` of `n` items split into `parts` near-equal parts, in multiples of
/// `quantum` (part `parts` ends at n).
inline int64_t part_start(int64_t n, int64_t parts, int64_t i, int64_t quantum = 1) {
  if (i >= parts) return n;
  return std::min(n, n * i / parts / quantum * quantum);
}

/// How many near-equal tasks `items` items (rows, pixels, output rows) split into on
/// `parallel`'s threads: as many as the work is worth (`worth`, from worthwhile_tasks), at
/// least `least` items each where every thread still gets a task, at most `most` items each
/// (an L2 block), and a multiple of the threads once there are that many, so that every thread
/// gets as many items. Task t covers [part_start(items, tasks, t, q), part_start(items, tasks,
/// t + 1, q)). Fixed chunks left the last task short instead: 128 GEMM rows in chunks of 24 ran
/// 72 rows on one of two threads and 56 on the other, at most 1.78x one thread
/// (performance.md, the Zen 4 section). Under split_small_work (tests) every item may be a
/// task of its own.
inline int64_t balanced_tasks(int64_t items, int64_t least, int64_t most, int64_t worth, const Parallel& parallel) {
  if (items <= 0) return 1;
  const int64_t threads = int64_t(parallel.threads());
  if (parallel.split_small_work()) least = 1;
  // Every thread gets a task where there are items for it (49 rows of a wide GEMM: 2 of 24).
  if (threads > 1) least = std::min(least, std::max<int64_t>(1, items / threads));
  int64_t n = std::min(worth, std::max<int64_t>(1, items / std::max<int64_t>(least, 1)));
  if (threads > 1 && n >= threads) n = n / threads * threads;
  const int64_t by_most = (items + std::max<int64_t>(most, 1) - 1) / std::max<int64_t>(most, 1);
  if (n < by_most) n = threads > 1 ? (by_most + threads - 1) / threads * threads : by_most;
  return std::max<int64_t>(1, std::min(n, items));
}

/// A process-wide Serial.
inline Parallel& serial() {
  static Serial s;
  return s;
}

}  // namespace qrt::jit
