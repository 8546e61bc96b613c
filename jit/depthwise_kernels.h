// qrt — depthwise convolution (NHWC, channel multiplier 1, quantized) with its own AVX2
// kernel: every output pixel reads its window through an indirection row of tap pointers
// (positions in the padding point at a row of zero points), 16 channels at a time, two taps
// per vpmaddwd.
//
// Exactness: with w''[t][c] = w[t][c] - zw[c] in s16 and x widened to s16,
//   acc[c] = Σ_t x_t[c]·w''[t][c] - zx·Σ_t w''[t][c] + bias[c]
// where the second term folds into the bias at pack time; pair sums of s16 products fit s32,
// and every result is proven to fit int32, so the kernel is exact for every input.
#pragma once

#include <cstdint>

#include "ir/nn_params.h"
#include "jit/op_kernels.h"

namespace qrt::jit {

/// The argument block of a generated depthwise kernel: void dw(const DepthwiseArgs*).
/// Pixel p reads tap t at taps[p * taps_stride / 8 + t] + p * pixel_step: a row of pointers
/// per pixel (taps_stride = 8 * taps, pixel_step = 0) where windows touch the padding, or one
/// row stepped along the input (taps_stride = 0) for runs of interior pixels.
struct DepthwiseArgs {
  const uint8_t* const* taps;  ///< padded-taps pointers to input channel vectors
  void* out;                   ///< the first output pixel
  int64_t out_stride;          ///< bytes between output pixels
  int64_t pixels;              ///< output pixels to compute
  const void* weights;         ///< packed s16 weights: per 16-channel block, per tap pair, 64 bytes
  const void* epilogue;        ///< per 16-channel block, kEpFields × 16 values (permuted lanes)
  int64_t taps_stride;         ///< bytes between the pixels' pointer rows
  int64_t pixel_step;          ///< bytes added to every tap pointer per pixel
};

/// Builds the depthwise kernel for a qrt.conv2d with groups == channels and one input channel
/// per group, or says why the reference runs it.
Result<KernelChoice> select_depthwise_kernel(const Graph& graph, const Op& op, const Window2d& w,
                                             const Tensor& filter, const Tensor* bias);

}  // namespace qrt::jit
