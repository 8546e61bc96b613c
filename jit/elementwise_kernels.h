// qrt — quantized element-wise kernels (qrt.add, qrt.mul, qrt.requantize on 8-bit per-tensor
// operands of one shape): a generated AVX2 body for blocks of 8 elements, the scalar
// formulas of docs/numerics.md for the tail.
#pragma once

#include <cstdint>

#include "jit/op_kernels.h"

namespace qrt::jit {

/// The argument block of a generated element-wise kernel: void ew(const ElementwiseArgs*).
/// Quantization parameters travel here, not in the code, so one kernel serves every op of a
/// kind and signedness.
struct ElementwiseArgs {
  const void* a;           ///< first operand's stored values
  const void* b;           ///< second operand's (add, mul)
  void* y;                 ///< result's stored values
  int64_t blocks;          ///< groups of 8 elements
  float m_a;               ///< add: M_a; mul, requantize: M
  float m_b;               ///< add: M_b
  int32_t za, zb, zo;      ///< zero points
  float lo, hi;            ///< output bounds minus zo
};

/// Builds the kernel of a quantized qrt.add / qrt.mul / qrt.requantize, or says why the
/// reference runs it.
Result<KernelChoice> select_elementwise_kernel(const Graph& graph, const Op& op);

}  // namespace qrt::jit
