// qrt — quantized reductions with an explicit accumulator (see lower_reduce.h).
#include "passes/lower_reduce.h"

#include <algorithm>
#include <cstdlib>

#include "ir/ops.h"
#include "passes/rewriter.h"

namespace qrt::passes {

Graph lower_reduce(const Graph& graph, PassLog& log) {
  const std::vector<int> uses = count_uses(graph);
  Rewriter rw(graph);
  for (const Op& op : graph.ops) {
    if (op.kind == OpKind::kMean && graph.values[size_t(op.results[0])].type.element.is_uniform() && !op.attr("accumulator")) {
      Op explicit_acc = op;
      explicit_acc.set_attr("accumulator", Attribute::make_string("i32"));
      rw.copy(explicit_acc);
      log.push_back("qrt.mean %" + graph.values[size_t(op.results[0])].name + ": accumulator i32 made explicit");
      continue;
    }
    const Op* mean = op.kind == OpKind::kQCast ? producer_of(graph, op.operands[0]) : nullptr;
    const Op* dq = mean && mean->kind == OpKind::kMean && uses[size_t(op.operands[0])] == 1
                       ? producer_of(graph, mean->operands[0])
                       : nullptr;
    const Type& out = graph.values[size_t(op.results[0])].type;
    if (!dq || dq->kind != OpKind::kDCast || graph.values[size_t(dq->operands[0])].type.element.kind != ElementKind::kUniform ||
        out.element.kind != ElementKind::kUniform) {
      rw.copy(op);
      continue;
    }
    const ElementType& xe = graph.values[size_t(dq->operands[0])].type.element;
    const Type& xt = graph.values[size_t(dq->operands[0])].type;
    int64_t count = 1;
    for (const Attribute& a : mean->attr("axes")->array) count *= xt.dims[size_t(a.i)] < 0 ? 1 : xt.dims[size_t(a.i)];
    const int64_t widest = std::max(std::llabs(xe.storage.max - xe.zero_points[0]), std::llabs(xe.storage.min - xe.zero_points[0]));
    if ((long double)count * (long double)widest > 2147483647.0L) {
      log.push_back("qrt.mean %" + graph.values[size_t(op.results[0])].name + ": left in float: " + std::to_string(count) +
                    " terms could overflow the i32 accumulator");
      rw.copy(op);
      continue;
    }
    Op lowered = *mean;
    lowered.set_attr("accumulator", Attribute::make_string("i32"));
    lowered.operands = {dq->operands[0]};
    lowered.results = {op.results[0]};
    // The mean now produces the qcast's value (its type and name).
    rw.copy(lowered);
    log.push_back("qrt.mean %" + graph.values[size_t(op.results[0])].name + ": sums " +
                  graph.values[size_t(dq->operands[0])].type.element.to_string() + " in i32, narrows once to " +
                  out.element.to_string());
  }
  Graph g = rw.finish();
  return g;
}

}  // namespace qrt::passes
