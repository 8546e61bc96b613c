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

/// Activation rows per task when `rows` rows split into `worth` tasks (worthwhile_tasks):
/// whole tiles of `tile` rows, at most an L2 block of `block` rows; one block at a time when
/// the work is worth one task.
inline int64_t rows_per_task(int64_t rows, int64_t tile, int64_t block, int64_t worth) {
  if (worth <= 1) return block;
  const int64_t share = ((rows + worth - 1) / worth + tile - 1) / tile * tile;
  return std::min(block, std::max(tile, share));
}

/// A process-wide Serial.
inline Parallel& serial() {
  static Serial s;
  return s;
}

}  // namespace qrt::jit
