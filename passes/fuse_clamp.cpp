// qrt — clamp fusion (see fuse_clamp.h).
#include "passes/fuse_clamp.h"

#include <cmath>
#include <utility>

#include "ir/ops.h"
#include "passes/dead_code.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

bool takes_fused_clamp(OpKind kind) {
  return kind == OpKind::kConv2d || kind == OpKind::kConvTranspose2d || kind == OpKind::kMatmul ||
         kind == OpKind::kAdd || kind == OpKind::kMul;
}

// Float producers whose kernels apply a fused clamp in their epilogue: convolutions
// (transposed ones too: their phases are convolutions), and matmuls with constant weights (a
// batched matmul of two activations would lose its kernel).
bool float_takes_fused_clamp(const Graph& g, const Op& p) {
  if (p.kind == OpKind::kConv2d || p.kind == OpKind::kConvTranspose2d) return true;
  if (p.kind != OpKind::kMatmul || p.operands.size() < 2) return false;
  const int w = g.values[size_t(p.operands[1])].producer;
  return w >= 0 && g.ops[size_t(w)].kind == OpKind::kConstant;
}

}  // namespace

Graph fuse_clamp_into_producers(const Graph& graph, size_t* fused_out) {
  // Dead readers (the dcast a QDQ fold left behind) must not count as uses.
  Graph g = eliminate_dead_ops(graph);
  const std::vector<int> uses = count_uses(g);
  size_t fused = 0;
  for (size_t c = 0; c < g.ops.size(); ++c) {
    const Op& clamp = g.ops[c];
    if (clamp.kind != OpKind::kClamp && clamp.kind != OpKind::kRelu) continue;
    const int y = clamp.operands[0];
    const int producer = g.values[size_t(y)].producer;
    if (producer < 0 || uses[size_t(y)] != 1) continue;
    const Op& p = g.ops[size_t(producer)];
    if (!takes_fused_clamp(p.kind) || fused_clamp(p)) continue;
    const ElementType& e = g.values[size_t(y)].type.element;
    if (!e.is_uniform() && !(e.is_float() && float_takes_fused_clamp(g, p))) continue;
    Attribute lo = Attribute::make_float(0.0, FloatKind::kF32), hi = Attribute::make_float(INFINITY, FloatKind::kF32);
    if (clamp.kind == OpKind::kRelu) {
      // qrt.relu clamps to [zp, max]; clamp(0, inf) quantizes 0 to zp only inside the bounds.
      // A float relu (x < 0 ? +0 : x) is clamp(0, inf): both keep -0 and NaN.
      bool inside = true;
      for (int64_t zp : e.zero_points) inside = inside && zp >= e.storage.min && zp <= e.storage.max;
      if (!inside) continue;
    } else {
      lo = *clamp.attr("min");
      hi = *clamp.attr("max");
    }
    const int z = clamp.results[0];
    Op& fused_op = g.ops[size_t(producer)];
    fused_op.set_attr("clamp_min", lo);
    fused_op.set_attr("clamp_max", hi);
    // Readers of z read y instead; y takes z's name so outputs keep theirs. The clamp, now
    // unread, goes with dead-op elimination.
    for (Op& op : g.ops) {
      if (&op == &g.ops[c]) continue;
      for (int& v : op.operands) v = v == z ? y : v;
    }
    for (int& v : g.outputs) v = v == z ? y : v;
    std::swap(g.values[size_t(y)].name, g.values[size_t(z)].name);
    ++fused;
  }
  if (fused_out) *fused_out = fused;
  return fused ? eliminate_dead_ops(g) : g;  // the fused clamps
}

}  // namespace qrt::passes
