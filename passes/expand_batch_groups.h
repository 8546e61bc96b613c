// qrt — splits a convolution of several batch groups (StableHLO's batch_group_count) into one
// convolution per group, which the JIT's kernels take.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace qrt::passes {

/// Rewrites every qrt.conv2d with `batch_groups` B > 1 as StableHLO defines it: the input
/// split into B batch slices, the filter (and bias) into B slices of output channels, one
/// convolution per pair, and the results concatenated along the channel dimension. Each piece
/// computes exactly what the whole op computes for its channels, so the result is
/// bit-identical. A convolution stays whole (and runs on the reference) where a piece cannot
/// be expressed: a dynamic batch, a per-axis result, a per-axis or sub-channel filter or bias
/// that is not a constant, or weights of fewer than 8 bits. `log` gets one line per
/// convolution, split or kept, with the reason.
Graph expand_batch_groups(const Graph& graph, std::vector<std::string>& log);

}  // namespace qrt::passes
