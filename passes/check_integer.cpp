// qrt — the integer-path check (see check_integer.h).
#include "passes/check_integer.h"

#include "ir/ops.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

bool is_integer_kernel(const Graph& g, const Op& op) {
  if (op.kind == OpKind::kQCast || op.kind == OpKind::kDCast || op.kind == OpKind::kSCast ||
      op.kind == OpKind::kConstant || op.results.empty()) {
    return false;
  }
  for (int r : op.results) {
    if (!g.values[size_t(r)].type.element.is_uniform()) return false;
  }
  return true;
}

}  // namespace

size_t check_integer(const Graph& graph, PassLog& log) {
  std::vector<std::vector<int>> readers(graph.values.size());
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    for (int v : graph.ops[o].operands) readers[size_t(v)].push_back(int(o));
  }
  size_t kernels = 0, entries = 0, exits = 0, paths = 0;
  for (const Op& op : graph.ops) {
    if (is_integer_kernel(graph, op)) ++kernels;
    if (op.kind == OpKind::kQCast) ++entries;
    if (op.kind != OpKind::kDCast) continue;
    const Op* from = producer_of(graph, op.operands[0]);
    if (!from || !is_integer_kernel(graph, *from)) continue;
    ++exits;
    // Follow the dequantized value through float ops to a quantize feeding integer kernels.
    for (int r : readers[size_t(op.results[0])]) {
      const Op& f = graph.ops[size_t(r)];
      const std::string dq = "%" + graph.values[size_t(op.results[0])].name;
      if (f.kind == OpKind::kQCast) {
        ++paths;
        log.push_back(dq + " -> quant.qcast %" + graph.values[size_t(f.results[0])].name +
                      ": a rescale between integer kernels left as dcast/qcast (the storage types differ, "
                      "or the requantize has no kernel)");
        continue;
      }
      for (int r2 : readers[size_t(f.results[0])]) {
        if (graph.ops[size_t(r2)].kind != OpKind::kQCast) continue;
        ++paths;
        log.push_back(dq + " -> " + op_info(f.kind).name + " %" + graph.values[size_t(f.results[0])].name +
                      " -> quant.qcast: runs in float between integer kernels (no integer form of this op with "
                      "these types; see fold-qdq's lines)");
      }
    }
  }
  log.push_back(std::to_string(kernels) + " integer kernel(s), " + std::to_string(entries) + " quantize(s), " +
                std::to_string(exits) + " dequantize(s) of integer results, " + std::to_string(paths) +
                " float path(s) between integer kernels");
  return paths;
}

}  // namespace qrt::passes
