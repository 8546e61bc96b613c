// qrt — StableHLO's quantized ops (numerics profile stablehlo) on kernels instead of the
// reference. The specification defines each quantized op as dequantize, the float op in the
// expressed type, quantize (docs/numerics.md, "Profiles"), and the reference computes exactly
// that, so a plan can too: the quantized operands dequantize (a 256-entry table per 8-bit
// operand, folded at plan time for constants), the float op runs on the float kernels (which
// are bit-exact with the float reference by contract), and the result quantizes with the
// StableHLO formula and the op's fused clamp.
#pragma once

#include <memory>
#include <string>

#include "jit/ops/select.h"

namespace qrt::jit {

/// The kernel of `op` under the stablehlo profile, where profile_formula names it: for
/// quant.qcast, quant.dcast and qrt.requantize a conversion kernel (8-bit to 8-bit requantize
/// as a byte table of the best level in `allowed`); for the other ops (add, mul, matmul,
/// convolutions, pools, means, softmax, logistic, concat) the float op's kernel chosen among
/// `allowed` from `generator`, wrapped in the dequantization of its operands and the
/// quantization of its result. A null kernel with `why_not` where the types are outside what
/// the wrapper handles (sub-channel or wider than 32-bit storage at run time, f8 expressed
/// types) or no float kernel runs the float op; errors are real failures.
Result<KernelChoice> select_stablehlo_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                             Generator generator);

}  // namespace qrt::jit
