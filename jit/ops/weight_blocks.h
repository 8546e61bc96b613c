// qrt — a 2-D quantized weight's parameters per block of k and column, in the f32 compute form
// the weight-only and dynamic-i8 matmul kernels read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/types.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// Scales and zero points of a [K, N] weight per (block along K, column).
struct WeightBlocks {
  std::vector<float> scales;  ///< [blocks, N] compute scales (numerics::compute_scale_f32)
  std::vector<int16_t> zps;   ///< [blocks, N]; empty when every zero point is 0
  int64_t block = 0;          ///< k values per block (K for per-layer and per-column weights)
};

/// The parameters of `e` on a [k, n] weight: per-layer, per-axis along N (axis 1) or
/// sub-channel. false, with *why, for forms that have a scale per row of K or are not
/// !quant.uniform.
bool weight_blocks(const ElementType& e, int64_t k, int64_t n, WeightBlocks& out, std::string* why);

/// The f32 bias of matmul `op` (operand 2) as `n` floats into *bias (left empty without one);
/// false, with *why, when it is not an f32, bf16 or f16 constant.
bool constant_f32_bias(const Graph& graph, const Op& op, int64_t n, std::vector<float>* bias, std::string* why);

/// The result dims of [.., K] activations `x` times [K, n] weights a kernel of matmul `op`
/// holds: x's dims with the last one n (before OpKernel::checked_result_dims); an error naming
/// the op when x's last dim is not k.
Result<std::vector<int64_t>> held_weights_result_dims(const Op& op, const Tensor& x, int64_t k, int64_t n);

/// What the weight-only and dynamic-i8 matmul kernels share: [.., K] activations times [K, N]
/// weights the kernel holds (so it reads only operand 0), the bias, the fused clamp's bounds
/// (f32, bf16 or f16 activations and results: float_widening.h).
class HeldWeightsMatmulKernel : public OpKernel {
 protected:
  HeldWeightsMatmulKernel(const Graph& graph, const Op& op, int64_t k, int64_t n, std::vector<float> bias);

 public:
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override;
  bool reads_operand(size_t index) const override { return index == 0; }
  /// The bias is copied; the weights are read where the graph holds them (weight-only) unless
  /// a subclass says otherwise.
  bool holds_operand_copy(size_t index) const override { return index == 2; }

 protected:
  Op op_;
  int64_t k_ = 0, n_ = 0;
  std::vector<float> bias_;
  float lo_, hi_;  ///< the fused clamp (rounded to a bf16/f16 result's type), else ±inf
  FloatKind x_kind_, y_kind_;  ///< f32, bf16 or f16
};

}  // namespace qrt::jit
