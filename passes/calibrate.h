// qrt — calibration statistics in the graph: quant.stats ops record them (the runtime measures
// them, see qrt_model_calibrate), and the calibrate pass turns them into !quant.calibrated
// annotations at the boundaries of quantization regions for propagation to resolve.
#pragma once

#include <map>

#include "ir/graph.h"
#include "ir/quant_params.h"
#include "passes/pipeline.h"

namespace qrt::passes {

/// Records `stats` (keyed by value index of `graph`) in quant.stats ops: a value already read
/// by a quant.stats op has that op's statistics widened to cover both; any other float value
/// gets a new quant.stats op after it, which all of its uses then read. Values produced by
/// quant.stats ops, constants (and values computed from constants alone) and values already at
/// a quantization boundary (a dcast's result, or read only by qcasts) are left alone.
Graph insert_stats(const Graph& graph, const std::map<int, ValueStats>& stats);

/// True when the value read by stats op `s` lies inside a quantization region and so gets no
/// quantize/dequantize pair: the result of a conv2d/matmul (or of its bias add) whose only
/// reader is the relu/clamp (or bias add) fused into the same integer kernel.
bool stats_inside_region(const Graph& graph, const Op& s, const std::vector<int>& uses);

/// Rewrites each quant.stats op at a region boundary into quant.qcast to
/// `!quant.calibrated<f32<min:max>>` followed by quant.dcast; those inside a region are
/// dropped (their value is computed in the integer accumulator). One log line per op.
Graph stats_to_calibrated(const Graph& graph, PassLog& log);

}  // namespace qrt::passes
