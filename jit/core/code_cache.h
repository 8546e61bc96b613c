// qrt — the JIT code cache: one generated kernel per description, generated once,
// thread-safe, never generating under the lock; code pages are writable or executable,
// never both.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ir/status.h"
#include "jit/core/ew_program.h"
#include "jit/core/kernel.h"

namespace qrt::jit {

/// A micro-kernel ready to call (see microkernel.h): generated machine code, or a compiled
/// C++ function (the scalar twins, intrinsics kernels).
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  /// The entry point: fn(const Args*, const KernelDesc*).
  const void* entry() const { return entry_; }

 protected:
  const void* entry_ = nullptr;
};

/// A C++ function used as a micro-kernel (no code generated; nothing to free).
class StaticKernel final : public CompiledKernel {
 public:
  /// `fn` must have the micro-kernel signature of the kind it serves.
  explicit StaticKernel(const void* fn) { entry_ = fn; }
};

/// Machine code in its own pages: written while read-write, then switched to read-execute.
class ExecutableCode final : public CompiledKernel {
 public:
  /// Copies `size` bytes of position-independent code produced by `emit(dst, base)`, which
  /// writes the code for address `base` into `dst`, and seals the pages read-execute. With
  /// QRT_PERF_MAP=1 in the environment, `name` and the code's range are appended to
  /// /tmp/perf-<pid>.map, where `perf report` looks up JIT code (perf_map_path()).
  static Result<std::shared_ptr<ExecutableCode>> create(size_t size,
                                                        const std::function<Status(void* dst, uint64_t base)>& emit,
                                                        const std::string& name = {});
  ~ExecutableCode() override;

 private:
  ExecutableCode() = default;
  void* pages_ = nullptr;
  size_t mapped_ = 0;
};

/// The map file `perf` reads for this process's JIT code, /tmp/perf-<pid>.map, where
/// ExecutableCode::create records each kernel when QRT_PERF_MAP=1; empty when it is off.
std::string perf_map_path();

/// Maps keys (kernel descriptions, programs) to generated code. The first caller for a key
/// generates it outside the lock; concurrent callers for the same key wait for that result.
template <typename Key, typename Hash>
class OnceCache {
 public:
  /// Generates the code of a key (dispatching to the backend of its level).
  using Generator = std::function<Result<std::shared_ptr<const CompiledKernel>>(const Key&)>;
  explicit OnceCache(Generator generator) : generator_(std::move(generator)) {}

  /// The code for `key`, generated on first use.
  Result<std::shared_ptr<const CompiledKernel>> get(const Key& key) {
    std::promise<Result<std::shared_ptr<const CompiledKernel>>> promise;
    Entry entry;
    bool generate = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(key);
      if (it == entries_.end()) {
        entry = promise.get_future().share();
        entries_.emplace(key, entry);
        generate = true;
      } else {
        entry = it->second;
      }
    }
    if (generate) {
      Result<std::shared_ptr<const CompiledKernel>> code = generator_(key);
      if (code.is_ok()) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++generated_;
      }
      promise.set_value(std::move(code));
    }
    return entry.get();
  }

  /// Number of kernels generated so far (not counting failures).
  size_t generated() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return generated_;
  }

 private:
  using Entry = std::shared_future<Result<std::shared_ptr<const CompiledKernel>>>;
  Generator generator_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, Entry, Hash> entries_;
  size_t generated_ = 0;
};

/// Generated kernels by description.
using CodeCache = OnceCache<KernelDesc, KernelDescHash>;

/// An element-wise program at one level: the program cache's key (compared by its text).
struct ProgramKey {
  Isa isa = Isa::kScalar;
  EwProgram program;
  std::string text;  ///< program.key()

  bool operator==(const ProgramKey& o) const { return isa == o.isa && text == o.text; }
};

/// Hash functor of ProgramKey.
struct ProgramKeyHash {
  size_t operator()(const ProgramKey& k) const { return std::hash<std::string>()(k.text) ^ size_t(k.isa); }
};

/// Compiled element-wise programs by level and program.
using ProgramCache = OnceCache<ProgramKey, ProgramKeyHash>;

/// The code cache shared by every plan in the process, with every backend of the kernel list
/// behind it (defined in jit/kernel_list.cpp).
CodeCache& code_cache();
/// The program cache shared by every plan (jit/kernel_list.cpp): programs compiled by the
/// kEwProgram backend of their level.
ProgramCache& program_cache();

}  // namespace qrt::jit
