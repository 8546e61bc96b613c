// qrt — quantized max and average pooling (NHWC, 8-bit per tensor) on a generated AVX2
// kernel that reads each output pixel's window through tap pointers, like the depthwise
// kernel: windows touching the padding get one pointer row per pixel (padding taps point at
// a row of qmin for max, of the zero point for average), interior runs step one row along the
// input.
//
// Max: the largest stored value of the window (vpmaxub / vpmaxsb); a row of qmin never wins,
// and every window holds at least one input position (pads < window, checked).
// Average: acc = Σ_taps x - zx·taps = Σ_inside (x - zx) exactly in int32, then
// clamp(rne(f32(acc) · M) + zo) with M = f32(s_in / (s_out · count)) per pixel (count = the
// positions inside the input, or the whole window with count_include_pad).
#pragma once

#include <cstdint>

#include "ir/nn_params.h"
#include "jit/op_kernels.h"

namespace qrt::jit {

/// The argument block of a generated pooling kernel: void pool(const PoolArgs*).
struct PoolArgs {
  const uint8_t* const* taps;  ///< tap pointers, as DepthwiseArgs
  void* out;                   ///< the first output pixel
  int64_t out_stride;          ///< bytes between output pixels
  int64_t pixels;              ///< output pixels to compute
  int64_t taps_stride;         ///< bytes between the pixels' pointer rows (0: stepping mode)
  int64_t pixel_step;          ///< bytes added to every tap pointer per pixel
  float m;                     ///< average: the multiplier of these pixels
  int32_t bias;                ///< average: -zx · taps
  int32_t zo;                  ///< average: output zero point
  float lo, hi;                ///< average: output bounds minus zo
};

/// Builds the kernel of a quantized qrt.max_pool2d / qrt.avg_pool2d, or says why the
/// reference runs it.
Result<KernelChoice> select_pool_kernel(const Graph& graph, const Op& op);

}  // namespace qrt::jit
