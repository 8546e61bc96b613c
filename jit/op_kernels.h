// qrt — generated kernels that run whole graph ops, and the choice of one per op.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/parallel.h"
#include "jit/tensor.h"

namespace qrt::jit {

/// A generated kernel bound to one op of one graph (constants prepacked). Immutable after
/// creation: any number of threads may run it at once.
class OpKernel {
 public:
  /// `result_type`: the op's declared result type (dimensions may be dynamic).
  explicit OpKernel(Type result_type) : result_type_(std::move(result_type)) {}
  virtual ~OpKernel() = default;
  /// The result's dimensions for operands shaped as at run time; errors name the op.
  virtual Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const = 0;
  /// Computes the result into `out` (of the result type with result_dims(); it may be a view
  /// into an arena), spreading the work over `parallel`. Results do not depend on the number
  /// of threads.
  virtual Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const = 0;
  /// Allocates the result and computes it on the calling thread.
  Result<Tensor> run(const std::vector<const Tensor*>& operands) const;
  /// The declared result type.
  const Type& result_type() const { return result_type_; }

 protected:
  /// `dims` if they agree with the declared result type's static dimensions, else an error
  /// naming `op` and both shapes.
  Result<std::vector<int64_t>> checked_result_dims(const Op& op, std::vector<int64_t> dims) const;

 public:
  /// The generated kernel's contract name and how it computes, e.g.
  /// "qu8_qs8_qu8_gemm_4x16_maddubs__avx2 (no weight pair can saturate ...)".
  virtual std::string describe() const = 0;
  /// Whether run() reads operand `index`; kernels with prepacked constants read only their
  /// activations, so the ops that compute those constants need not run at all.
  virtual bool reads_operand(size_t index) const {
    (void)index;
    return true;
  }
  /// Whether the result may share operand `index`'s bytes (element-wise kernels that read
  /// each element before writing it, with the same element size).
  virtual bool can_overwrite_operand(size_t index) const {
    (void)index;
    return false;
  }

 protected:
  Type result_type_;
};

/// The outcome of choosing a kernel for an op: a kernel, or why the reference runs it.
struct KernelChoice {
  std::unique_ptr<OpKernel> kernel;
  std::string why_not;  ///< set when `kernel` is null
};

/// Chooses and builds the kernel for `op` on this CPU (generating code through the cache).
/// An op no kernel covers yields a null kernel and the reason; errors are real failures.
Result<KernelChoice> select_kernel(const Graph& graph, const Op& op);

/// The value of `value` if it is known at plan time (a constant, or ops over constants only,
/// evaluated by the reference), else null.
std::unique_ptr<Tensor> constant_operand(const Graph& graph, int value);

/// f32 and hybrid (f32 x quantized weights) matmul (float_matmul_kernels.cpp).
Result<KernelChoice> select_float_matmul_kernel(const Graph& graph, const Op& op);
/// Matmul (and conv) kernels, in their own files.
Result<KernelChoice> select_matmul_kernel(const Graph& graph, const Op& op);
Result<KernelChoice> select_conv_kernel(const Graph& graph, const Op& op);
/// Clamp/relu (quantized), pad, transpose and reshape (layout_kernels.cpp).
Result<KernelChoice> select_layout_kernel(const Graph& graph, const Op& op);

}  // namespace qrt::jit
