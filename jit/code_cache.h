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
#include "jit/kernel.h"

namespace qrt::jit {

/// Machine code in its own pages: written while read-write, then switched to read-execute.
class ExecutableCode {
 public:
  /// Copies `size` bytes of position-independent code produced by `emit(dst, base)`, which
  /// writes the code for address `base` into `dst`, and seals the pages read-execute.
  static Result<std::shared_ptr<ExecutableCode>> create(size_t size,
                                                        const std::function<Status(void* dst, uint64_t base)>& emit);
  ~ExecutableCode();
  /// The entry point.
  const void* entry() const { return pages_; }

 private:
  ExecutableCode() = default;
  void* pages_ = nullptr;
  size_t mapped_ = 0;
};

/// Generates code for a description (an ISA backend's generator).
using Generator = std::function<Result<std::shared_ptr<ExecutableCode>>(const KernelDesc&)>;

/// Maps descriptions to generated code. The first caller for a description generates it
/// outside the lock; concurrent callers for the same description wait for that result.
class CodeCache {
 public:
  explicit CodeCache(Generator generator) : generator_(std::move(generator)) {}
  /// The code for `desc`, generated on first use.
  Result<std::shared_ptr<ExecutableCode>> get(const KernelDesc& desc);
  /// Number of kernels generated so far (not counting failures).
  size_t generated() const;

 private:
  using Entry = std::shared_future<Result<std::shared_ptr<ExecutableCode>>>;
  Generator generator_;
  mutable std::mutex mutex_;
  std::unordered_map<KernelDesc, Entry, KernelDescHash> entries_;
  size_t generated_ = 0;
};

/// The code cache shared by every plan in the process, with every x86 generator behind it
/// (defined in op_kernels.cpp).
CodeCache& code_cache();

}  // namespace qrt::jit
