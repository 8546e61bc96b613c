// qrt — quantized contractions whose activations store 9 to 16 bits (TFLite's 16x8 kernels,
// ONNX's 16-bit QDQ) on the 8-bit contraction kernels. With x = 256·hi + lo (hi: the high
// byte, signed like x; lo: the low byte, unsigned) and the zero point split the same way
// (zx = 256·zh + zl),
//
//     Σ (x − zx)(w − zw) = 256 · Σ (hi − zh)(w − zw) + Σ (lo − zl)(w − zw),
//
// two exact 8-bit contractions into int32 that the GEMM, im2col, 1x1, grouped and depthwise
// kernels already compute (padding included: a padded position holds zx, so both halves hold
// their zero points there). Their sums combine in int64, the bias follows, then the graph's
// numerics profile requantizes (docs/numerics.md, "Wide accumulation").
#pragma once

#include "jit/ops/select.h"

namespace qrt::jit {

/// Whether `op` is a quantized qrt.matmul or qrt.conv2d with per-tensor activations of 9- to
/// 16-bit storage under a profile that defines it by its integer accumulator (default, tflite,
/// onnx; stablehlo computes in float): the ops select_wide_input_kernel serves.
bool wide_input_applies(const Graph& graph, const Op& op);

/// The kernel for such an op: both byte halves on the 8-bit kernels of the best level in
/// `allowed` (from `generator`), then the combination and requantization in portable C++. A
/// null kernel and the reason where the halves have no kernel (8-bit weights only, results of
/// at most 16 bits other than the int32 accumulator type).
Result<KernelChoice> select_wide_input_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                              Generator generator);

}  // namespace qrt::jit
