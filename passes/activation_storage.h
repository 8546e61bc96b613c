// qrt — re-stores 8-bit activations in the signedness a target's kernels read as they are.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace qrt::passes {

/// What retype_activation_storage changed.
struct ActivationStorageReport {
  size_t values = 0;          ///< values re-stored
  size_t groups = 0;          ///< groups of values re-stored together
  size_t kept_groups = 0;     ///< groups of candidate values left as they were
  std::vector<std::string> lines;  ///< one per kept group: the value and the reason
};

/// Re-stores internal per-tensor 8-bit activations of one signedness in the other:
/// `to_unsigned` turns `i8` with zero point z and bounds [lo, hi] into `u8` with z + 128 and
/// [lo + 128, hi + 128] (otherwise `u8` into `i8`, minus 128). Every stored value is then its
/// old one with the top bit flipped, and every real value is unchanged.
///
/// Why: x86's u8 x s8 instructions (vpdpbusd, vpmaddubsw) read i8 activations only after a
/// pass that flips them (the GEMM's row packing); a TFLite int8 model's convolutions then copy
/// every activation once more. Re-stored, the producers' epilogues write the flipped bytes and
/// the GEMMs read their rows in place.
///
/// Exact, because only formulas that see stored values as `q - zp` before any rounding, and
/// add the zero point after it (or round to nearest even, under which a shift by 128 commutes),
/// touch a re-stored value:
/// - free: operand 0 and the result of conv2d and matmul, the operands and results of add,
///   mul and requantize, the operand of dcast, the result of qcast. Each is re-stored on its
///   own (the kernels take any mix of i8 and u8).
/// - linked: every 8-bit operand and result of max_pool2d, reshape, transpose, concat, slice,
///   relu and clamp, which keep (or compare) stored values, are re-stored together or not at
///   all.
/// Any other use (mean and avg_pool2d, whose TFLite formulas round stored sums half away from
/// zero; scast, which exposes the bits; every other op), a graph input or output, or a
/// constant keeps the whole linked group as it is. Under the stablehlo profile, whose
/// quantize adds the zero point before rounding, nothing changes.
Graph retype_activation_storage(const Graph& graph, bool to_unsigned, ActivationStorageReport* report = nullptr);

}  // namespace qrt::passes
