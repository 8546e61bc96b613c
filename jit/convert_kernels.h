// qrt — JIT-compiled quant.qcast / quant.dcast kernels and the process-wide code cache.
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"
#include "jit/code_cache.h"
#include "jit/kernel.h"
#include "jit/tensor.h"

namespace qrt::jit {

/// A generated quantize or dequantize kernel for one op, ready to run.
class ConvertKernel {
 public:
  /// Whether a kernel applies to `op`: "" when it does, else why not (e.g. "per-axis types
  /// are not supported by this kernel"). Decided apart from generating code.
  static std::string why_not(const Graph& graph, const Op& op);
  /// Generates (or fetches from the cache) the kernel for `op`; why_not() must be "".
  static Result<ConvertKernel> create(const Graph& graph, const Op& op);
  /// Converts `in` into `out` (already shaped); every element, tails included.
  void run(const Tensor& in, Tensor& out) const { run(in, out, 0, size_t(in.num_elements())); }
  /// Converts elements [begin, end) of `in` into `out`; `begin` must be a multiple of 8.
  void run(const Tensor& in, Tensor& out, size_t begin, size_t end) const;
  /// The kernel's contract.
  const KernelDesc& desc() const { return desc_; }

 private:
  KernelDesc desc_;
  std::shared_ptr<ExecutableCode> code_;
};

}  // namespace qrt::jit
