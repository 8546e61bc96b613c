// qrt — NCHW regions to NHWC (see layout_nhwc.h).
#include "passes/layout_nhwc.h"

#include <algorithm>
#include <map>

#include "passes/dead_code.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};  // NCHW -> NHWC
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};  // NHWC -> NCHW

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != int64_t(i)) return false;
  }
  return true;
}

class NhwcRewriter {
 public:
  explicit NhwcRewriter(const Graph& g) : g_(g), rw_(g) {}

  Graph run(LayoutReport* report) {
    for (const Op& op : g_.ops) {
      if (rewrite(op)) continue;
      for (int v : op.operands) materialize(v);
      rw_.copy(op);
    }
    for (int v : g_.outputs) materialize(v);
    Graph out = eliminate_dead_ops(rw_.finish());
    if (report) {
      // Transposes added, net of those cancelled (the filters' are constants, folded at plan time).
      auto transposes = [](const Graph& g) {
        size_t n = 0;
        for (const Op& op : g.ops) n += op.kind == OpKind::kTranspose;
        return n;
      };
      *report = report_;
      report->transposes = transposes(out) - std::min(transposes(out), transposes(g_));
    }
    return out;
  }

 private:
  const Type& type(int v) const { return g_.values[size_t(v)].type; }
  bool nhwc(int v) const { return nhwc_.count(v) != 0; }

  std::string derived_name(int v, const std::string& suffix) const {
    const std::string& n = g_.values[size_t(v)].name;
    return n.empty() ? "" : fresh_name(g_, n + suffix);
  }

  int emit_transpose(int nv, const Type& result, const std::vector<int64_t>& perm, SourceLoc loc, const std::string& name) {
    return rw_.emit(OpKind::kTranspose, {nv}, result, {{"perm", Attribute::make_int_array(perm)}}, loc, name);
  }

  // Source value v (NCHW) as an NHWC value of the new graph: its pending NHWC form, or one
  // transpose of it (remembered, so other readers share it).
  int nhwc_of(int v, SourceLoc loc) {
    if (nhwc(v)) return nhwc_[v];
    const int nv = emit_transpose(rw_.at(v), transposed_type(type(v), kToNhwc), kToNhwc, loc, derived_name(v, "_nhwc"));
    nhwc_[v] = nv;
    return nv;
  }

  // Gives source value v its NCHW form in the new graph, if it has only an NHWC one.
  void materialize(int v) {
    if (rw_.mapped(v) || !nhwc(v)) return;
    rw_.map(v, emit_transpose(nhwc_[v], type(v), kToNchw, g_.values[size_t(v)].loc, g_.values[size_t(v)].name));
  }

  // Emits `op` in NHWC on `operands` (new-graph NHWC values): its result stays NHWC.
  void emit_nhwc(const Op& op, std::vector<int> operands, const std::vector<std::pair<std::string, Attribute>>& attrs) {
    const int y = op.results[0];
    nhwc_[y] = rw_.emit(op.kind, std::move(operands), transposed_type(type(y), kToNhwc), attrs, op.loc, derived_name(y, "_nhwc"));
  }

  bool rewrite(const Op& op) {
    if (op.results.size() != 1 || op.operands.empty() || type(op.operands[0]).rank() != 4) return false;
    switch (op.kind) {
      case OpKind::kConv2d:
      case OpKind::kMaxPool2d:
      case OpKind::kAvgPool2d: {
        const Attribute* layout = op.attr("layout");
        if (!layout || layout->s != "NCHW") return false;
        std::vector<int> operands{nhwc_of(op.operands[0], op.loc)};
        if (op.kind == OpKind::kConv2d) {
          // OIHW -> OHWI: the filter's per-axis axis 0 stays 0.
          const int f = op.operands[1];
          operands.push_back(emit_transpose(rw_.at(f), transposed_type(type(f), kToNhwc), kToNhwc, op.loc, ""));
          if (op.operands.size() > 2) operands.push_back(rw_.at(op.operands[2]));
        }
        Op like = op;
        like.set_attr("layout", Attribute::make_string("NHWC"));
        emit_nhwc(op, std::move(operands), like.attrs);
        ++report_.converted;
        return true;
      }
      case OpKind::kRelu:
      case OpKind::kClamp:
      case OpKind::kRequantize:
      case OpKind::kQCast:
      case OpKind::kDCast:
      case OpKind::kLogistic:
        if (op.operands.size() != 1 || !nhwc(op.operands[0])) return false;
        emit_nhwc(op, {nhwc_[op.operands[0]]}, op.attrs);
        ++report_.followed;
        return true;
      case OpKind::kAdd:
      case OpKind::kMul: {
        const int a = op.operands[0], b = op.operands[1];
        if (!nhwc(a) || !nhwc(b) || type(a).dims != type(b).dims) return false;
        emit_nhwc(op, {nhwc_[a], nhwc_[b]}, op.attrs);
        ++report_.followed;
        return true;
      }
      case OpKind::kConcat: {
        std::vector<int> operands;
        for (int v : op.operands) {
          if (!nhwc(v)) return false;
          operands.push_back(nhwc_[v]);
        }
        const Attribute* axis = op.attr("axis");
        if (!axis) return false;
        const int64_t a = axis->i < 0 ? axis->i + 4 : axis->i;
        Op like = op;
        like.set_attr("axis", Attribute::make_int(kToNchw[size_t(a)]));  // NCHW axis a sits at NHWC kToNchw[a]
        emit_nhwc(op, std::move(operands), like.attrs);
        ++report_.followed;
        return true;
      }
      case OpKind::kTranspose: {
        const int x = op.operands[0];
        if (!nhwc(x)) return false;
        // y = transpose(x, P) with x = transpose(n, kToNchw): y = transpose(n, C),
        // C[i] = kToNchw[P[i]]; the identity cancels both.
        std::vector<int64_t> combined;
        for (int64_t p : perm_of(op)) combined.push_back(kToNchw[size_t(p)]);
        const int y = op.results[0];
        rw_.map(y, is_identity(combined) ? nhwc_[x]
                                         : emit_transpose(nhwc_[x], type(y), combined, op.loc, g_.values[size_t(y)].name));
        ++report_.followed;
        return true;
      }
      case OpKind::kReshape: {
        const int x = op.operands[0];
        const std::vector<int64_t>& d = type(x).dims;
        // [N, C, 1, 1] and [N, 1, 1, C] hold their values in one order.
        if (!nhwc(x) || d[2] != 1 || d[3] != 1) return false;
        const int y = op.results[0];
        rw_.map(y, rw_.emit(OpKind::kReshape, {nhwc_[x]}, type(y), op.attrs, op.loc, g_.values[size_t(y)].name));
        ++report_.followed;
        return true;
      }
      default: return false;
    }
  }

  const Graph& g_;
  Rewriter rw_;
  std::map<int, int> nhwc_;  // source value -> its NHWC form in the new graph
  LayoutReport report_;
};

}  // namespace

Graph to_nhwc(const Graph& graph, LayoutReport* report) { return NhwcRewriter(graph).run(report); }

}  // namespace qrt::passes
