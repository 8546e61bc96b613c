// qrt — hybrid (weight-only) ops from the StableHLO hybrid RFC: float activations times
// quantized weights keep dequantize-then-op semantics, computed by one hybrid matmul whose
// kernel dequantizes the weights once, when the plan is made.
#pragma once

#include "ir/graph.h"
#include "passes/pipeline.h"

namespace qrt::passes {

/// Rewrites `matmul(x, transpose*(dcast(w_q)))` with float x (not itself a dcast: those are
/// QDQ regions for fold-qdq) and a quantized constant w_q into the hybrid
/// `matmul(x, transpose*(w_q))`, keeping a float bias. The result is bit-identical: the hybrid
/// kernel dequantizes w_q with the dcast formula and runs the float matmul's k-ordered f32
/// arithmetic. Activations are never quantized here: dynamic-range quantization is a
/// different numerics contract and never substituted silently.
Graph lower_hybrid(const Graph& graph, PassLog& log);

}  // namespace qrt::passes
