// qrt — points and regions for propagation (see quant_regions.h).
#include "passes/quant_regions.h"

#include "ir/ops.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

bool is_quant_op(OpKind k) {
  return k == OpKind::kQCast || k == OpKind::kDCast || k == OpKind::kSCast || k == OpKind::kConstant ||
         k == OpKind::kStats || k == OpKind::kFakeQuant;
}

class RegionFinder {
 public:
  explicit RegionFinder(const Graph& g) : g_(g), uses_(count_uses(g)), constant_(constant_values(g)) {}

  QuantView run() {
    view_.point_of_value.assign(g_.values.size(), -1);
    for (size_t o = 0; o < g_.ops.size(); ++o) {
      const Op& op = g_.ops[o];
      if (op.kind == OpKind::kQCast) {
        view_.point_of_value[size_t(op.results[0])] = int(view_.points.size());
        view_.points.push_back({int(o), op.results[0]});
      }
    }
    std::vector<bool> member(g_.ops.size(), false);
    for (size_t o = 0; o < g_.ops.size(); ++o) {
      const Op& op = g_.ops[o];
      if (member[o] || is_quant_op(op.kind) || constant_[size_t(op.results[0])]) continue;
      QuantRegion r = grow(int(o));
      for (int m : r.ops) member[size_t(m)] = true;
      view_.regions.push_back(std::move(r));
    }
    return std::move(view_);
  }

 private:
  // The single reader of v, or nullptr.
  const Op* only_reader(int v, int* index) const {
    if (uses_[size_t(v)] != 1) return nullptr;
    for (size_t o = 0; o < g_.ops.size(); ++o) {
      for (int x : g_.ops[o].operands) {
        if (x == v) {
          *index = int(o);
          return &g_.ops[o];
        }
      }
    }
    return nullptr;
  }

  RegionPort input_port(int v) const {
    RegionPort p;
    p.value = v;
    int x = v;
    std::vector<std::vector<int64_t>> perms;
    // Constants seen through transposes (how transposed weights import).
    while (const Op* t = producer_of(g_, x)) {
      if (t->kind != OpKind::kTranspose || !constant_[size_t(x)]) break;
      std::vector<int64_t> perm;
      for (const Attribute& a : t->attr("perm")->array) perm.push_back(a.i);
      perms.insert(perms.begin(), perm);
      x = t->operands[0];
    }
    const Op* d = producer_of(g_, x);
    if (d && d->kind == OpKind::kConstant && g_.values[size_t(x)].type.element.is_float()) {
      p.float_constant = x;
      p.perms = perms;
    } else if (d && d->kind == OpKind::kDCast) {
      const int q = d->operands[0];
      if (view_.point_of_value[size_t(q)] >= 0 && perms.empty()) {
        p.point = view_.point_of_value[size_t(q)];
      } else if (constant_[size_t(q)]) {
        p.quant_constant = q;
        p.perms = perms;
      }
    }
    return p;
  }

  QuantRegion grow(int root) {
    QuantRegion r;
    const Op& op = g_.ops[size_t(root)];
    r.kernel = op_info(op.kind).name;
    r.ops.push_back(root);
    for (int v : op.operands) r.inputs.push_back(input_port(v));
    int last = op.results[0];
    const bool accumulates = op.kind == OpKind::kConv2d || op.kind == OpKind::kMatmul;
    int next_index = -1;
    const Op* next = accumulates ? only_reader(last, &next_index) : nullptr;
    // matmul + add(bias): the bias becomes the logical kernel's third operand.
    if (next && op.kind == OpKind::kMatmul && op.operands.size() == 2 && next->kind == OpKind::kAdd) {
      const int other = next->operands[0] == last ? next->operands[1] : next->operands[0];
      if (g_.values[size_t(other)].type.rank() == 1 && constant_[size_t(other)]) {
        r.inputs.push_back(input_port(other));
        r.ops.push_back(next_index);
        last = next->results[0];
        next = only_reader(last, &next_index);
      }
    }
    if (next && (next->kind == OpKind::kRelu || next->kind == OpKind::kClamp)) {
      r.ops.push_back(next_index);
      last = next->results[0];
    }
    RegionPort o;
    o.value = last;
    for (const Op& reader : g_.ops) {
      if (reader.kind == OpKind::kQCast && reader.operands[0] == last) {
        o.point = view_.point_of_value[size_t(reader.results[0])];
        break;
      }
    }
    r.outputs.push_back(o);
    for (size_t i = 0; i < r.inputs.size() && r.unquantized.empty(); ++i) {
      const RegionPort& p = r.inputs[i];
      if (p.point < 0 && p.quant_constant < 0 && p.float_constant < 0) {
        r.unquantized = "operand " + std::to_string(i) + " (%" + g_.values[size_t(p.value)].name + ") is not dequantized";
      }
    }
    if (r.unquantized.empty() && o.point < 0) {
      r.unquantized = "its result %" + g_.values[size_t(last)].name + " is not quantized";
    }
    return r;
  }

  const Graph& g_;
  std::vector<int> uses_;
  std::vector<bool> constant_;
  QuantView view_;
};

}  // namespace

QuantView find_quant_regions(const Graph& graph) { return RegionFinder(graph).run(); }

}  // namespace qrt::passes
