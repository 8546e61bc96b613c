// qrt — quantized reductions (the StableHLO quantized-reduce RFC): a mean over dequantized
// values whose result is quantized again accumulates the stored values in a wider quantized
// type (i32) and narrows once; the pass makes that accumulator explicit on the op.
#pragma once

#include "ir/graph.h"
#include "passes/pipeline.h"

namespace qrt::passes {

/// Rewrites `qcast(mean(dcast(x_q)))` into `mean(x_q) {accumulator = "i32"}` with the qcast's
/// result type: Σ (q - zp) is summed exactly in i32 (the verifier refuses reductions that could
/// overflow it) and requantized once with multiplier s_x / (n · s_y) — the documented intent
/// of the QDQ pattern (docs/numerics.md), not bit-identical to the f32 mean. Quantized means
/// already in the graph get the attribute too. One log line per reduction.
Graph lower_reduce(const Graph& graph, PassLog& log);

}  // namespace qrt::passes
