// qrt — per-axis conversions the vector kernels do not take: quant.qcast, quant.dcast and
// qrt.requantize where a side is quantized per axis (a per-channel convolution's result
// requantized to per-tensor, per-channel weights dequantized at run time, StableHLO per-axis
// values), in portable C++ with the reference's formulas.
#pragma once

#include <memory>

#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// A kernel for `op` when it is a quant.qcast (f32 to per-axis), quant.dcast (per-axis to f32)
/// or qrt.requantize with a per-axis side (the other per tensor, or per axis along the same
/// axis), of 8-, 16- or 32-bit storage with f32 expressed types, static or dynamic shape, without a
/// fused clamp: the default formulas, or TFLite's qcast and requantize where a tflite profile
/// redefines them; nullptr for anything else (stablehlo, f16/bf16/f64 expressed types).
std::unique_ptr<OpKernel> make_per_axis_convert_kernel(const Graph& graph, const Op& op);

}  // namespace qrt::jit
