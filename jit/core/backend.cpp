// qrt — checks every backend's why_not() shares (see backend.h).
#include "jit/core/backend.h"

namespace qrt::jit {

std::string gemm_tile_why_not(const KernelDesc& d, const std::optional<GemmTraits>& t) {
  if (!t) return "no GEMM path of this kind at this level";
  if (d.panel != t->panel || d.mr < 1 || d.mr > t->mr || d.nr < 1 || d.nr > t->panel) {
    return "GEMM tile " + std::to_string(d.mr) + "x" + std::to_string(d.nr) + " (panel " + std::to_string(d.panel) +
           ") is outside 1.." + std::to_string(t->mr) + " x 1.." + std::to_string(t->panel);
  }
  if (t->k_step ? d.k_tail >= t->k_step || d.k_tail % t->k_group != 0 : d.k_tail != 0) {
    return "GEMM tile k tail " + std::to_string(d.k_tail) + " does not fit a " + std::to_string(t->k_step) + "-byte k step";
  }
  if (d.q31 && !t->q31_epilogue) return "no tflite (Q31) requantization epilogue in this level's GEMM tiles";
  if (d.taps && (!t->window_taps || d.k_tail || d.row_correction || t->a_bytes != 1)) {
    return "no window tiles (a convolution read in place) at this level for this GEMM";
  }
  if (d.q31 && ((d.out != OutKind::kU8 && d.out != OutKind::kS8) || d.saturate)) {
    return "the Q31 epilogue stores clamped 8-bit results";
  }
  return "";
}

std::string window_kernel_why_not(const KernelDesc& d, unsigned block) {
  if (d.q31) return std::string("no tflite (Q31) requantization epilogue in the ") + kernel_op_name(d.op) + " kernels";
  if (d.op == KernelOp::kDepthwise && (d.taps == 0 || d.taps % 2 != 0 || d.channels == 0 || d.panel != block)) {
    return "depthwise kernels need an even, non-zero tap count, channels and " + std::to_string(block) +
           "-channel blocks";
  }
  if ((d.op == KernelOp::kMaxPool || d.op == KernelOp::kAvgPool) && (d.taps == 0 || d.channels == 0)) {
    return "pooling kernels need taps and channels";
  }
  return "";
}

std::string dw_rows_why_not(const KernelDesc& d, unsigned panel, bool q31_epilogue, bool signed_quads, bool paired_pixels,
                            bool word_weights) {
  if (panel == 0) return "no dot4 depthwise rows at this level";
  if ((d.path == GemmPath::kSdot4) != signed_quads) {
    return signed_quads ? "this level's depthwise rows multiply s8 quads (sdot)" : "this level's depthwise rows multiply u8 quads";
  }
  if (d.op == KernelOp::kDwRows && (d.path == GemmPath::kMaddwd) != word_weights) {
    return word_weights ? "this level's depthwise rows take s16 weights (vpmaddwd: GemmPath::kMaddwd)"
                        : "this level's depthwise rows take s8 quad weights";
  }
  if (d.q31 && (!q31_epilogue || d.op != KernelOp::kDwRows || (d.out != OutKind::kU8 && d.out != OutKind::kS8))) {
    return "no tflite (Q31) requantization epilogue in this level's depthwise rows";
  }
  if (d.panel != panel || (panel != 16 && panel != 32 && panel != 64) || d.channels == 0 || d.taps == 0 || d.taps > 64) {
    return "dot4 depthwise rows need channels, a window 1..64 wide and " + std::to_string(panel) + "-lane blocks";
  }
  if (d.op == KernelOp::kDwRows && (d.kh == 0 || (d.out != OutKind::kU8 && d.out != OutKind::kS8 && d.out != OutKind::kS32))) {
    return "dot4 depthwise rows need a window height and an 8-bit or int32 output";
  }
  // The width first: it rules the description out on every level.
  if (d.paired_pixels && d.pair_shift == 1 && d.taps % 4 == 0) {
    return "paired depthwise rows need a window width that is not a multiple of 4 (the second pixel's taps shift one on)";
  }
  if (d.paired_pixels && (d.pair_shift < 1 || d.pair_shift > 2)) {
    return "paired depthwise rows serve strides 1 and 2 (pair_shift " + std::to_string(d.pair_shift) + ")";
  }
  if (d.paired_pixels && (d.op != KernelOp::kDwRows || !paired_pixels)) {
    return d.op == KernelOp::kDwRows ? "this level's depthwise rows serve one pixel per interleaved position"
                                     : "paired pixels are a property of the depthwise rows, not of the interleave";
  }
  return "";
}

}  // namespace qrt::jit
