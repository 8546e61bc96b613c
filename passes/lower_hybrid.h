// qrt — hybrid (weight-only) ops from the StableHLO hybrid RFC: float activations times
// quantized weights keep dequantize-then-op semantics, computed by one hybrid matmul whose
// kernel dequantizes the weights once, when the plan is made.
#pragma once

#include "ir/graph.h"
#include "passes/pipeline.h"

namespace qrt::passes {

/// Rewrites `matmul(x, transpose*(dcast(w_q)))` with float x (not itself a dcast: those are
/// QDQ regions for fold-qdq) and a quantized constant w_q.
///
/// Weight-only (`dynamic_range` false, the default): the hybrid `matmul(x, transpose*(w_q))`,
/// keeping a float bias. Bit-identical: the hybrid kernel dequantizes w_q with the dcast
/// formula and runs the float matmul's k-ordered f32 arithmetic.
///
/// Dynamic range (`dynamic_range` true, only when asked for: a different numerics contract):
/// x is quantized per call to u8 (`qrt.dynamic_quantize`: stored values, scale s_x, zero point
/// z_x), multiplied by the stored weights in an exact i32 matmul, and the result is
/// `(acc − z_x · Σ_k w[k, n]) · s_w[n] · s_x` in f32 (+ bias). Needs symmetric weights (zero
/// points 0) of 8-bit storage and static shapes for the weights; other matmuls keep their form
/// and the log says why.
///
/// Dynamic i8 (`kDynamicI8`, only when asked for: its own numerics contract): the hybrid matmul
/// with `activations = "dynamic_i8"`: x quantized to i8 per call, per row and per block of the
/// weights along K, exact integer block sums, f32 block terms (docs/numerics.md). Takes weights
/// of up to 8 bits, per-layer, per-column or block-wise, with or without zero points (llama.cpp's
/// Q4/Q8 form); others keep the weight-only form and the log says why.
enum class HybridMode { kWeightOnly, kDynamicRange, kDynamicI8 };
Graph lower_hybrid(const Graph& graph, HybridMode mode, PassLog& log);

}  // namespace qrt::passes
