// qrt — the GEMMs of a quantized convolution: one for an ungrouped convolution, one per group
// (or per run of merged neighbouring groups) for a grouped one. Each part reads a contiguous
// run of input channels and writes a contiguous run of output channels, so grouped,
// depthwise-with-multiplier and NCHW depthwise convolutions run on the GEMM tiles of every
// level with the conv2d's own requantization.
//
// Groups with fewer output channels than kMergedGroupColumns merge B at a time into one GEMM
// whose weights are block-diagonal: the off-block weights hold their column's zero point, so
// (w - zw) = 0 there and every sum is the group's own. A tile computes its panel's columns
// whether they are used or not, so merging costs no extra multiply-adds per output channel
// below one panel, and it saves calls, im2col passes over short channel runs and per-task
// overheads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/nn_params.h"
#include "jit/ops/gemm_pack.h"

namespace qrt::jit {

/// Output channels up to which neighbouring groups merge into one GEMM (the narrowest GEMM
/// panel of any level: AVX2's 16 columns).
constexpr int64_t kMergedGroupColumns = 16;

/// One GEMM of a quantized convolution.
struct ConvGemmPart {
  int64_t in_offset = 0;    ///< the first input channel it reads
  int64_t in_channels = 0;  ///< input channels it reads: spec.k = in_channels · kh · kw
  int64_t out_offset = 0;   ///< the first output channel it writes (spec.n channels)
  GemmSpec spec;
  GemmAnalysis analysis;
};

/// Splits a convolution into its GEMMs. `full` holds the requantization, clamp and bias of all
/// `out_c` output channels (its k, n and w are ignored); `filter` holds the stored filter
/// values in the layout's order (OHWI for NHWC, OIHW for NCHW): per output channel
/// `per_group` · kh · kw values. The k order of each part is im2col's: (ky, kx, c) for NHWC,
/// (c, ky, kx) for NCHW. "" or why no part can run on the GEMM kernels (its analysis' why_not).
std::string split_conv_gemms(const GemmSpec& full, const std::vector<int32_t>& filter, const Window2d& w, int64_t out_c,
                             int64_t per_group, std::vector<ConvGemmPart>& parts);

/// How many neighbouring groups of `out_per_group` output channels each merge into one GEMM
/// (a divisor of `groups`).
int64_t merged_groups(int64_t groups, int64_t out_per_group);

}  // namespace qrt::jit
