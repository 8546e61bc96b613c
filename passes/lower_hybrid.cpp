// qrt — hybrid weight-only lowering (see lower_hybrid.h).
#include "passes/lower_hybrid.h"

#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

// w_q when v = transpose*(dcast(w_q)) of a quantized constant; the transposes, innermost first.
int quantized_weights(const Graph& g, int v, std::vector<const Op*>& transposes) {
  const Op* p = producer_of(g, v);
  if (!p) return -1;
  if (p->kind == OpKind::kTranspose) {
    const int w = quantized_weights(g, p->operands[0], transposes);
    if (w >= 0) transposes.push_back(p);
    return w;
  }
  if (p->kind != OpKind::kDCast) return -1;
  const Op* c = producer_of(g, p->operands[0]);
  return c && c->kind == OpKind::kConstant && g.values[size_t(p->operands[0])].type.element.is_uniform()
             ? p->operands[0]
             : -1;
}

}  // namespace

Graph lower_hybrid(const Graph& graph, PassLog& log) {
  Rewriter rw(graph);
  for (const Op& op : graph.ops) {
    std::vector<const Op*> transposes;
    const Op* x_producer = op.kind == OpKind::kMatmul ? producer_of(graph, op.operands[0]) : nullptr;
    const bool float_x = op.kind == OpKind::kMatmul && graph.values[size_t(op.operands[0])].type.element.is_float() &&
                         !(x_producer && x_producer->kind == OpKind::kDCast);
    const int w = float_x ? quantized_weights(graph, op.operands[1], transposes) : -1;
    if (w < 0) {
      rw.copy(op);
      continue;
    }
    // The transposes re-applied to the stored weights (per-axis axes follow the permutation).
    int v = rw.at(w);
    Type t = graph.values[size_t(w)].type;
    for (const Op* tr : transposes) {
      Type nt = t;
      const auto& perm = tr->attr("perm")->array;
      for (size_t i = 0; i < perm.size(); ++i) {
        nt.dims[i] = t.dims[size_t(perm[i].i)];
        if (t.element.kind == ElementKind::kUniformPerAxis && perm[i].i == t.element.axis) nt.element.axis = int32_t(i);
      }
      v = rw.emit(OpKind::kTranspose, {v}, nt, tr->attrs, tr->loc, fresh_name(graph, graph.values[size_t(w)].name + "_t"));
      t = nt;
    }
    Op hybrid = op;
    const int synthetic = int(graph.values.size());
    rw.map(synthetic, v);
    hybrid.operands[1] = synthetic;
    rw.copy(hybrid);
    log.push_back("qrt.matmul %" + graph.values[size_t(op.results[0])].name + ": hybrid, f32 x " +
                  t.element.to_string() + " (weights dequantized once at load)");
  }
  return rw.finish();
}

}  // namespace qrt::passes
