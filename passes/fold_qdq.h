// qrt — QDQ folding: `dcast → float op → qcast` regions of imported QDQ models become integer
// ops with requantizing epilogues (the MLIR quantization design's "fake-quant to real
// quantized op" step, for the kernels qrt has).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace qrt::passes {

/// What fold_qdq did: one line per region folded (the op, its new result type) or left (why).
struct QdqFoldReport {
  size_t folded = 0;
  std::vector<std::string> lines;
};

/// Rewrites, for each `qcast` whose operand is the only use of a float op F:
///  - F = conv2d / matmul over `dcast(x_q)`, weights `dcast(w_q)` of a constant (through
///    transposes), optional bias `dcast(b_q)` of an i32 constant with scale s_x·s_w: the
///    quantized conv2d / matmul of (x_q, w_q, b_q) with the qcast's result type, i.e. exact
///    integer accumulation and one requantization (docs/numerics.md) instead of f32 math and a
///    qcast — the documented intent of QDQ (ONNX QLinearConv semantics), not bit-identical
///    to evaluating the float graph;
///  - F = add of such a matmul (its only use) and a bias as above (Gemm-style layers): the
///    matmul with that bias;
///  - F = relu of any of these (its only use): the same, then a quantized relu;
///  - F = max_pool2d / reshape / transpose of `dcast(x_q)` where x_q has the qcast's element
///    type: the same op on x_q (identical results: these ops commute with dequantization).
/// Values the rewritten regions no longer need are left for dead-op elimination.
Graph fold_qdq(const Graph& graph, QdqFoldReport* report = nullptr);

}  // namespace qrt::passes
