// qrt — calibration statistics (see calibrate.h).
#include "passes/calibrate.h"

#include <algorithm>

#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

ValueStats merged(const ValueStats& a, const ValueStats& b) {
  ValueStats m = a;
  m.min = std::min(a.min, b.min);
  m.max = std::max(a.max, b.max);
  if (a.axis != b.axis || a.axis_min.size() != b.axis_min.size()) {
    m.axis = -1;  // channel statistics that disagree in shape are dropped, layer ones kept
    m.axis_min.clear();
    m.axis_max.clear();
    return m;
  }
  for (size_t c = 0; c < m.axis_min.size(); ++c) {
    m.axis_min[c] = std::min(a.axis_min[c], b.axis_min[c]);
    m.axis_max[c] = std::max(a.axis_max[c], b.axis_max[c]);
  }
  return m;
}

bool is_bias_add(const Graph& g, const Op& op) {
  if (op.kind != OpKind::kAdd) return false;
  for (int v : op.operands) {
    const Op* p = producer_of(g, v);
    if (p && p->kind == OpKind::kConstant && g.values[size_t(v)].type.rank() == 1) return true;
  }
  return false;
}

}  // namespace

Graph insert_stats(const Graph& graph, const std::map<int, ValueStats>& stats) {
  // Values that already have a stats reader get it updated instead of a second op.
  std::map<int, size_t> reader;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    if (graph.ops[o].kind == OpKind::kStats) reader[graph.ops[o].operands[0]] = o;
  }
  // Constants and what is computed from them alone (weight transposes) are data, not
  // activations: weights get their own rule in propagation.
  const std::vector<bool> constant = constant_values(graph);
  // Values that already sit at a quantization boundary (a dcast's result, or read only by
  // qcasts) keep the parameters the graph gives them.
  std::vector<int> readers(graph.values.size(), 0), qcast_readers(graph.values.size(), 0);
  for (const Op& op : graph.ops) {
    for (int v : op.operands) {
      ++readers[size_t(v)];
      qcast_readers[size_t(v)] += op.kind == OpKind::kQCast;
    }
  }
  auto at_boundary = [&](int v) {
    const Op* p = producer_of(graph, v);
    return (p && p->kind == OpKind::kDCast) || (readers[size_t(v)] > 0 && readers[size_t(v)] == qcast_readers[size_t(v)]);
  };
  Rewriter rw(graph);
  // An op result hands its name to the stats op (returned values keep their names) and
  // becomes NAME_raw; an argument keeps its name (it is the graph's interface).
  auto annotate = [&](int v, bool take_name) {
    auto it = stats.find(v);
    const Value& val = graph.values[size_t(v)];
    if (it == stats.end() || reader.count(v) || constant[size_t(v)] || at_boundary(v) || !val.type.element.is_float()) {
      return;
    }
    const Op* p = producer_of(graph, v);
    if (p && p->kind == OpKind::kStats) return;
    const std::string base = val.name.empty() ? "v" + std::to_string(v) : val.name;
    if (take_name) rw.graph().values[size_t(rw.at(v))].name = fresh_name(graph, base + "_raw");
    const int s = rw.emit(OpKind::kStats, {rw.at(v)}, val.type, stats_attributes(it->second), val.loc,
                          take_name ? base : fresh_name(graph, base + "_stats"));
    rw.map(v, s);
  };
  for (int in : graph.inputs) annotate(in, false);
  for (const Op& op : graph.ops) {
    if (op.kind == OpKind::kStats && stats.count(op.operands[0])) {
      Op updated = op;
      for (auto& [name, attr] : stats_attributes(merged(read_stats(op), stats.at(op.operands[0])))) {
        updated.set_attr(name, attr);
      }
      rw.copy(updated);
      continue;
    }
    rw.copy(op);
    for (int r : op.results) annotate(r, true);
  }
  return rw.finish();
}

bool stats_inside_region(const Graph& graph, const Op& s, const std::vector<int>& uses) {
  const Op* a = producer_of(graph, s.operands[0]);
  const int y = s.results[0];
  if (!a || uses[size_t(y)] != 1 || uses[size_t(s.operands[0])] != 1) return false;
  const bool accumulates = a->kind == OpKind::kConv2d || a->kind == OpKind::kMatmul || is_bias_add(graph, *a);
  if (!accumulates) return false;
  for (const Op& b : graph.ops) {
    if (std::find(b.operands.begin(), b.operands.end(), y) == b.operands.end()) continue;
    if (b.kind == OpKind::kRelu || b.kind == OpKind::kClamp) return true;
    return a->kind == OpKind::kMatmul && is_bias_add(graph, b);
  }
  return false;
}

Graph stats_to_calibrated(const Graph& graph, PassLog& log) {
  const std::vector<int> uses = count_uses(graph);
  Rewriter rw(graph);
  for (const Op& op : graph.ops) {
    if (op.kind != OpKind::kStats) {
      rw.copy(op);
      continue;
    }
    const Value& x = graph.values[size_t(op.operands[0])];
    const Value& y = graph.values[size_t(op.results[0])];
    if (stats_inside_region(graph, op, uses)) {
      rw.map(op.results[0], rw.at(op.operands[0]));
      log.push_back("%" + x.name + ": inside a quantization region (kept in the accumulator), statistics dropped");
      continue;
    }
    const ValueStats st = read_stats(op);
    Type ct = y.type;
    ct.element = ElementType::make_calibrated(y.type.element.float_kind, st.min, st.max);
    const bool renamed_arg = y.name.size() > 6 && y.name.compare(y.name.size() - 6, 6, "_stats") == 0;
    const int q = rw.emit(OpKind::kQCast, {rw.at(op.operands[0])}, ct, {}, op.loc,
                          fresh_name(graph, (renamed_arg ? x.name : y.name) + "_q"));
    rw.map(op.results[0], rw.emit(OpKind::kDCast, {q}, y.type, {}, op.loc, y.name));
    log.push_back("%" + x.name + ": " + ct.element.to_string());
  }
  return rw.finish();
}

}  // namespace qrt::passes
