// qrt — weight-only quantization of a float model (`qopt --weight-only`, the
// `quantize-weights` pass): float matmul and conv2d weights become quantized constants and the
// ops become hybrid (float activations, quantized weights), the form the StableHLO hybrid RFC
// defines and the weight-only kernels run with the weights kept packed.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "passes/pipeline.h"

namespace qrt::passes {

/// How weights are quantized.
struct WeightQuantOptions {
  unsigned bits = 8;        ///< 8 or 4
  bool is_signed = true;    ///< i8/i4 or u8/u4 storage
  int64_t block = 0;        ///< matmul: weights per block along K (0: one block, per column)
  bool symmetric = false;   ///< zero point at the storage's middle (0 for signed), scale amax / (2^(bits-1) - 1)
  bool mse = false;         ///< search the clipping range for the least squared error per block
  /// Every scale an f16 value (rounded to nearest, raised to f16's least normal 2^-14 if
  /// below): llama.cpp's Q4_0 form, and what lets the dynamic-i8 kernel's records hold 16-bit
  /// scales (4.5 bits per 4-bit weight in blocks of 32, symmetric; 4.75 with zero points).
  bool f16_scales = false;
};

/// Quantizes every float constant weight of a qrt.matmul with f32 activations (the constant
/// [K, N], or [N, K] behind one transpose) to `options.bits` bits, per column and, with a
/// block size dividing K, per block of K (a sub-channel type `{0:block, 1:1}`); and every
/// float constant filter of a qrt.conv2d per output channel (axis 0; convolutions take no
/// blocks). Round to nearest even, saturating to the storage. Asymmetric ranges include 0.
/// The log has a line per op and the mean squared weight error.
Graph quantize_weights(const Graph& graph, const WeightQuantOptions& options, PassLog& log);

}  // namespace qrt::passes
