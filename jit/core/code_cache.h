// qrt — the JIT code cache: one generated kernel per description, generated once,
// thread-safe, never generating under the lock; code pages are writable or executable,
// never both.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ir/status.h"
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
  /// writes the code for address `base` into `dst`, and seals the pages read-execute.
  static Result<std::shared_ptr<ExecutableCode>> create(size_t size,
                                                        const std::function<Status(void* dst, uint64_t base)>& emit);
  ~ExecutableCode() override;

 private:
  ExecutableCode() = default;
  void* pages_ = nullptr;
  size_t mapped_ = 0;
};

/// Generates code for a description (dispatching to the backend of desc.isa).
using Generator = std::function<Result<std::shared_ptr<const CompiledKernel>>(const KernelDesc&)>;

/// Maps descriptions to generated code. The first caller for a description generates it
/// outside the lock; concurrent callers for the same description wait for that result.
class CodeCache {
 public:
  explicit CodeCache(Generator generator) : generator_(std::move(generator)) {}
  /// The code for `desc`, generated on first use.
  Result<std::shared_ptr<const CompiledKernel>> get(const KernelDesc& desc);
  /// Number of kernels generated so far (not counting failures).
  size_t generated() const;

 private:
  using Entry = std::shared_future<Result<std::shared_ptr<const CompiledKernel>>>;
  Generator generator_;
  mutable std::mutex mutex_;
  std::unordered_map<KernelDesc, Entry, KernelDescHash> entries_;
  size_t generated_ = 0;
};

/// The code cache shared by every plan in the process, with every backend of the kernel list
/// behind it (defined in jit/kernel_list.cpp).
CodeCache& code_cache();

}  // namespace qrt::jit
