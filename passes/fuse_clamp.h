// qrt — folds a clamp or relu into the op that produces its operand.
#pragma once

#include <cstddef>

#include "ir/graph.h"

namespace qrt::passes {

/// Rewrites `y = conv2d/matmul/add/mul(...); z = clamp(y)` (or relu) into one op carrying
/// `clamp_min` / `clamp_max` (ir/ops.h, FusedClamp): the producer's kernel then narrows its
/// requantization bounds, and the clamp's pass over memory is gone. Exact by definition: the
/// fused attributes mean the same clamp on the result. Applies where the producer's result is
/// quantized (!quant.uniform), or float from a conv2d or a matmul with constant weights (whose
/// f32 kernels clamp in their epilogue), the clamp is its only reader and it has no fused clamp
/// yet; a quantized relu folds as clamp(0, +inf) when its zero point lies in the storage
/// bounds, a float relu always (x < 0 ? +0 : x is that clamp).
/// The fused op takes the clamp's result name (graph outputs keep their names).
/// `fused_out`, if given, gets the number of clamps folded.
Graph fuse_clamp_into_producers(const Graph& graph, size_t* fused_out = nullptr);

}  // namespace qrt::passes
