// qrt — graph rewriting helpers (see rewriter.h).
#include "passes/rewriter.h"

#include <set>

namespace qrt::passes {

Rewriter::Rewriter(const Graph& source) : src_(source) {
  for (int in : source.inputs) {
    const Value& v = source.values[size_t(in)];
    map_[in] = out_.add_input(v.type, v.name);
  }
  out_.name = source.name;
  out_.return_loc = source.return_loc;
}

void Rewriter::copy(const Op& op, const std::map<size_t, int>& replaced) {
  std::vector<int> operands;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    auto r = replaced.find(i);
    operands.push_back(r != replaced.end() ? r->second : map_.at(op.operands[i]));
  }
  std::vector<Type> types;
  for (int r : op.results) types.push_back(src_.values[size_t(r)].type);
  const int o = out_.add_op(op.kind, operands, types, op.attrs, op.loc);
  for (size_t r = 0; r < op.results.size(); ++r) {
    const int nv = out_.ops[size_t(o)].results[r];
    out_.values[size_t(nv)].name = src_.values[size_t(op.results[r])].name;
    map_[op.results[r]] = nv;
  }
}

int Rewriter::emit(OpKind kind, std::vector<int> operands, const Type& t,
                   std::vector<std::pair<std::string, Attribute>> attrs, SourceLoc loc, const std::string& name) {
  const int o = out_.add_op(kind, std::move(operands), {t}, std::move(attrs), loc);
  const int v = out_.result(o);
  out_.values[size_t(v)].name = name;
  return v;
}

Graph Rewriter::finish() {
  for (int v : src_.outputs) out_.outputs.push_back(map_.at(v));
  return std::move(out_);
}

std::vector<int> count_uses(const Graph& graph) {
  std::vector<int> uses(graph.values.size(), 0);
  for (const Op& op : graph.ops) {
    for (int v : op.operands) ++uses[size_t(v)];
  }
  for (int v : graph.outputs) ++uses[size_t(v)];
  return uses;
}

std::vector<bool> constant_values(const Graph& graph) {
  std::vector<bool> constant(graph.values.size(), false);
  for (const Op& op : graph.ops) {
    bool all = op.kind == OpKind::kConstant || !op.operands.empty();
    for (int v : op.operands) all = all && constant[size_t(v)];
    for (int r : op.results) constant[size_t(r)] = all;
  }
  return constant;
}

Type transposed_type(const Type& t, const std::vector<int64_t>& perm) {
  Type nt = t;
  for (size_t i = 0; i < perm.size(); ++i) nt.dims[i] = t.dims[size_t(perm[i])];
  nt.element = t.element.permuted(perm);
  return nt;
}

std::vector<int64_t> perm_of(const Op& transpose) {
  std::vector<int64_t> perm;
  for (const Attribute& a : transpose.attr("perm")->array) perm.push_back(a.i);
  return perm;
}

const Op* producer_of(const Graph& graph, int v) {
  const int p = graph.values[size_t(v)].producer;
  return p < 0 ? nullptr : &graph.ops[size_t(p)];
}

std::string fresh_name(const Graph& graph, const std::string& base) {
  std::set<std::string> taken;
  for (const Value& v : graph.values) taken.insert(v.name);
  if (!taken.count(base)) return base;
  for (int i = 1;; ++i) {
    const std::string n = base + "_" + std::to_string(i);
    if (!taken.count(n)) return n;
  }
}

}  // namespace qrt::passes
