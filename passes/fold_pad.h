// qrt — folds an explicit qrt.pad into the quantized convolution that reads it.
#pragma once

#include "ir/graph.h"

namespace qrt::passes {

/// Rewrites `pad → conv2d` into one conv2d with larger `pads` where that is exact: the conv is
/// quantized (a padded position then contributes (zx - zx)·w = 0, exactly what the conv's
/// own padding contributes), the pad fills with 0.0 (stored as the zero point), pads only the
/// spatial dimensions, and the conv is the pad's only reader. The pad op is left for dead-op
/// elimination. Float convolutions are left alone (0·w is not "skipped" when w is inf or NaN).
/// `folded_out`, if given, gets the number of pads folded.
Graph fold_pad_into_conv(const Graph& graph, size_t* folded_out = nullptr);

}  // namespace qrt::passes
