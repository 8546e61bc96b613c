// qrt — a 2-D quantized weight's parameters per block of k and column, in the f32 compute form
// the weight-only and dynamic-i8 matmul kernels read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"

namespace qrt::jit {

/// Scales and zero points of a [K, N] weight per (block along K, column).
struct WeightBlocks {
  std::vector<float> scales;  ///< [blocks, N] compute scales (numerics::compute_scale_f32)
  std::vector<int16_t> zps;   ///< [blocks, N]; empty when every zero point is 0
  int64_t block = 0;          ///< k values per block (K for per-layer and per-column weights)
};

/// The parameters of `e` on a [k, n] weight: per-layer, per-axis along N (axis 1) or
/// sub-channel. false, with *why, for forms that have a scale per row of K or are not
/// !quant.uniform.
bool weight_blocks(const ElementType& e, int64_t k, int64_t n, WeightBlocks& out, std::string* why);

}  // namespace qrt::jit
