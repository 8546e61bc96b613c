// qrt — dead-op elimination (see dead_code.h).
#include "passes/dead_code.h"

namespace qrt::passes {

Graph eliminate_dead_ops(const Graph& graph, size_t* removed_out) {
  std::vector<bool> live_value(graph.values.size(), false);
  for (int v : graph.outputs) live_value[size_t(v)] = true;
  std::vector<bool> live_op(graph.ops.size(), false);
  // Ops appear in def-before-use order, so one backward sweep finds every live op.
  for (size_t o = graph.ops.size(); o-- > 0;) {
    const Op& op = graph.ops[o];
    for (int r : op.results) live_op[o] = live_op[o] || live_value[size_t(r)];
    if (!live_op[o]) continue;
    for (int v : op.operands) live_value[size_t(v)] = true;
  }

  Graph out;
  out.name = graph.name;
  out.return_loc = graph.return_loc;
  out.numerics = graph.numerics;
  std::vector<int> remap(graph.values.size(), -1);
  for (int in : graph.inputs) {
    const Value& v = graph.values[size_t(in)];
    remap[size_t(in)] = out.add_input(v.type, v.name);
    out.values.back().loc = v.loc;
  }
  size_t removed = 0;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    if (!live_op[o]) {
      ++removed;
      continue;
    }
    const Op& op = graph.ops[o];
    std::vector<int> operands;
    for (int v : op.operands) operands.push_back(remap[size_t(v)]);
    std::vector<Type> result_types;
    for (int r : op.results) result_types.push_back(graph.values[size_t(r)].type);
    const int idx = out.add_op(op.kind, std::move(operands), result_types, op.attrs, op.loc);
    for (size_t r = 0; r < op.results.size(); ++r) {
      const int nv = out.ops[size_t(idx)].results[r];
      remap[size_t(op.results[r])] = nv;
      out.values[size_t(nv)].name = graph.values[size_t(op.results[r])].name;
      out.values[size_t(nv)].loc = graph.values[size_t(op.results[r])].loc;
    }
  }
  for (int v : graph.outputs) out.outputs.push_back(remap[size_t(v)]);
  if (removed_out) *removed_out = removed;
  return out;
}

}  // namespace qrt::passes
