// qrt — the requantization epilogue shared by every integer contraction (GEMM, convolution,
// depthwise): per-output-channel quantization read from the op's types, the proof that every
// accumulator fits int32, and the epilogue constants in the layout of jit/core/microkernel.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/core/kernel.h"

#include <memory>

#include "ir/graph.h"
#include "ir/nn_params.h"
#include "jit/core/tensor.h"

namespace qrt::jit {

/// What an integer contraction into `n` output channels computes, in storage terms (see
/// docs/numerics.md, qrt.matmul / qrt.conv2d).
struct ChannelQuant {
  bool a_signed = false;              ///< activations: s8 or u8 storage
  int32_t a_zero_point = 0;
  int32_t a_min = 0, a_max = 255;     ///< the activations' storage bounds
  bool w_signed = true;               ///< weights: s8 or u8 storage
  std::vector<int32_t> w_zero_point;  ///< per output channel
  OutKind out = OutKind::kU8;
  std::vector<float> multiplier;      ///< per channel: M[n] (u8/s8 output) or dcast scale (f32 output)
  std::vector<int32_t> out_zero_point;  ///< per channel (u8/s8 output)
  /// Per channel (u8/s8 output): the stored bounds of the result, the storage bounds narrowed
  /// by a fused clamp.
  std::vector<int32_t> out_lo, out_hi;
  /// u8/s8 output under the tflite profile (double rounding): TFLite's fixed-point
  /// requantization by a Q31 multiplier and shift per channel instead of `multiplier`.
  bool q31 = false;
  std::vector<int32_t> q31_multiplier, q31_shift;  ///< per channel, with q31
};

/// Fills `q` for `n` output channels from the element types of an integer matmul or conv:
/// activations `x` (per tensor), weights `w` (per tensor or per output channel), result
/// `out` (the i32 accumulator type, or 8-bit storage per tensor or per output channel).
/// Returns "" or why no integer kernel can compute it.
std::string fill_channel_quant(const ElementType& x, const ElementType& w, const ElementType& out, size_t n,
                               ChannelQuant& q);

/// Narrows q's output bounds to the clamp fused into `op` (ir/ops.h, FusedClamp) on a result
/// of element type `out`: "" (also when there is none) or why no kernel can apply it.
std::string apply_fused_clamp(const Op& op, const ElementType& out, ChannelQuant& q);

/// Applies `graph`'s numerics profile to a contraction's requantization `q` (filled by
/// fill_channel_quant for activations `x`, weights `w`, result `out`): nothing under the
/// default profile or for int32 results; under tflite (double rounding) 8-bit results take TFLite's Q31 multipliers
/// (q.q31). Returns "" or why the integer kernels do not implement the profile for it.
std::string apply_numerics_profile(const Graph& graph, const ElementType& x, const ElementType& w,
                                   const ElementType& out, ChannelQuant& q);

/// The largest |a - za| over the activations' storage bounds (after the u8 flip, the same).
int64_t activation_deviation(const ChannelQuant& q);

/// "" when channel `channel`'s accumulator provably fits int32: |bias| + a_dev · Σ|w - zw|
/// (`bound`) ≤ 2^31 - 1; else why not, naming the channel and the bound.
std::string int32_bound_why_not(int64_t channel, int64_t bound);

/// "" when every multiplier is finite, else why not.
std::string multipliers_why_not(const ChannelQuant& q);

/// The constant operands and window of a quantized qrt.conv2d, as both convolution families
/// (GEMM and depthwise) read them.
struct ConvOperands {
  Window2d w;
  std::unique_ptr<Tensor> filter;
  std::unique_ptr<Tensor> bias;  ///< null without a bias operand
};

/// Reads `op`'s window and constant filter and bias into `out`: "" or why no integer
/// convolution kernel can run it (float operands, a filter or bias computed at run time,
/// per-axis quantization along another axis). Errors are malformed windows.
Result<std::string> read_conv_operands(const Graph& graph, const Op& op, ConvOperands& out);

/// Writes channel `j`'s epilogue constants (folded bias, zw', M, bounds, zo) into lane
/// `lane` of an epilogue block `width` lanes wide (kEpFields vectors of `width` 32-bit values).
void put_epilogue_lane(uint8_t* block, unsigned width, unsigned lane, const ChannelQuant& q, size_t j,
                       int32_t folded_bias, int32_t zw);

}  // namespace qrt::jit
