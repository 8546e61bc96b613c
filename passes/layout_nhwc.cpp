// qrt — NCHW regions to NHWC (see layout_nhwc.h).
#include "passes/layout_nhwc.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <utility>

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
  explicit NhwcRewriter(const Graph& g) : g_(g), rw_(g), users_(g.values.size()), returned_(g.values.size(), false) {
    for (size_t o = 0; o < g.ops.size(); ++o) {
      for (size_t i = 0; i < g.ops[o].operands.size(); ++i) users_[size_t(g.ops[o].operands[i])].emplace_back(o, i);
    }
    for (int v : g.outputs) returned_[size_t(v)] = true;
  }

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
    if (op.kind == OpKind::kMatmul) return rewrite_matmul(op);
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
        if (!nhwc(x)) return false;
        const int y = op.results[0];
        // [N, C, 1, 1] and [N, 1, 1, C] hold their values in one order. A flatten to
        // [N, C·H·W] that only quantized matmuls with constant weights read takes the NHWC
        // order too ([N, H·W·C]): their weights' rows follow (kMatmul below).
        const bool in_order = d[2] == 1 && d[3] == 1;
        if (!in_order && !flatten_feeds_matmuls(op)) return false;
        rw_.map(y, rw_.emit(OpKind::kReshape, {nhwc_[x]}, type(y), op.attrs, op.loc, g_.values[size_t(y)].name));
        if (!in_order) {
          flattened_[y] = {d[1], d[2], d[3]};
          ++report_.flattens;
        }
        ++report_.followed;
        return true;
      }
      default: return false;
    }
  }

  // The constant behind matmul weights `w`: a qrt.constant [K, M], or one [M, K] under a
  // transpose [1, 0] (an ONNX Gemm's transB); nullptr for anything else.
  std::pair<const DenseElements*, bool> constant_weights(int w) const {
    const Op* p = producer_of(g_, w);
    bool transposed = false;
    if (p && p->kind == OpKind::kTranspose && perm_of(*p) == std::vector<int64_t>{1, 0}) {
      transposed = true;
      p = producer_of(g_, p->operands[0]);
    }
    const Attribute* a = p && p->kind == OpKind::kConstant ? p->attr("value") : nullptr;
    if (!a || a->kind != Attribute::Kind::kDense) return {nullptr, false};
    return {&a->dense, transposed};
  }

  // Whether every reader of flatten `op`'s result ([N, C, H, W] -> [N, C·H·W], static C, H, W)
  // is the left operand of a quantized matmul (integer sums: any order of k gives the same
  // result) whose weights are a constant with whole-byte elements, per layer or per output
  // column, so their rows can be permuted at compile time; and the result is not returned.
  bool flatten_feeds_matmuls(const Op& op) const {
    const std::vector<int64_t>& d = type(op.operands[0]).dims;
    const int y = op.results[0];
    const Type& t = type(y);
    if (d[1] <= 0 || d[2] <= 0 || d[3] <= 0 || t.rank() != 2 || t.dims[1] != d[1] * d[2] * d[3]) return false;
    if (returned_[size_t(y)] || users_[size_t(y)].empty()) return false;
    for (const auto& [o, index] : users_[size_t(y)]) {
      const Op& user = g_.ops[o];
      if (user.kind != OpKind::kMatmul || index != 0 || user.operands.size() < 2 || user.operands[1] == y) return false;
      const Type& w = type(user.operands[1]);
      if (!w.element.is_quant() || w.element.is_sub_channel() || is_nibble_packed(w.element)) return false;
      if (w.rank() != 2 || w.dims[0] != t.dims[1] || w.dims[1] <= 0) return false;
      const auto [constant, transposed] = constant_weights(user.operands[1]);
      if (!constant || constant->type.num_elements() <= 0 || constant->size() % size_t(constant->type.num_elements()) != 0) return false;
      // The per-axis channel (if any) must be the output column, not k.
      if (w.element.kind == ElementKind::kUniformPerAxis && w.element.axis != 1) return false;
    }
    return true;
  }

  // Matmul `op` reading a flattened NHWC value (flatten_feeds_matmuls): its weights' rows in
  // NHWC order, row (h·W + w)·C + c taking NCHW row (c·H + h)·W + w, as a new constant (under
  // the same transpose where the weights had one).
  void emit_permuted_matmul(const Op& op, const std::array<int64_t, 3>& chw) {
    const auto [constant, transposed] = constant_weights(op.operands[1]);
    const int64_t c = chw[0], h = chw[1], w = chw[2], k = c * h * w;
    const int64_t m = type(op.operands[1]).dims[1];
    const size_t eb = constant->size() / size_t(constant->type.num_elements());
    DenseElements permuted = DenseElements::zeros(constant->type);
    for (int64_t ih = 0; ih < h; ++ih) {
      for (int64_t iw = 0; iw < w; ++iw) {
        for (int64_t ic = 0; ic < c; ++ic) {
          const int64_t to = (ih * w + iw) * c + ic, from = (ic * h + ih) * w + iw;
          if (!transposed) {  // [K, M]: whole rows
            std::memcpy(permuted.bytes.data() + size_t(to * m) * eb, constant->data() + size_t(from * m) * eb, size_t(m) * eb);
            continue;
          }
          for (int64_t j = 0; j < m; ++j) {  // [M, K]: column k of every row
            std::memcpy(permuted.bytes.data() + size_t(j * k + to) * eb, constant->data() + size_t(j * k + from) * eb, eb);
          }
        }
      }
    }
    const int wsrc = op.operands[1];
    const Op* wop = producer_of(g_, wsrc);
    const int csrc = transposed ? wop->operands[0] : wsrc;
    const std::string base = g_.values[size_t(csrc)].name.empty() ? "weights" : g_.values[size_t(csrc)].name;
    int nw = rw_.emit(OpKind::kConstant, {}, type(csrc), {{"value", Attribute::make_dense(std::move(permuted))}},
                      g_.values[size_t(csrc)].loc, fresh_name(g_, base + "_nhwc_rows"));
    if (transposed) nw = emit_transpose(nw, type(wsrc), {1, 0}, wop->loc, "");
    rw_.copy(op, {{0, rw_.at(op.operands[0])}, {1, nw}});
    ++report_.permuted;
  }

  bool rewrite_matmul(const Op& op) {
    if (op.operands.empty()) return false;
    const auto f = flattened_.find(op.operands[0]);
    if (f == flattened_.end()) return false;
    emit_permuted_matmul(op, f->second);
    return true;
  }

  const Graph& g_;
  Rewriter rw_;
  std::vector<std::vector<std::pair<size_t, size_t>>> users_;  // per value: (op, operand index) reading it
  std::vector<bool> returned_;                                 // per value: a graph output
  std::map<int, int> nhwc_;  // source value -> its NHWC form in the new graph
  std::map<int, std::array<int64_t, 3>> flattened_;  // flatten result read in NHWC order -> its (C, H, W)
  LayoutReport report_;
};

}  // namespace

Graph to_nhwc(const Graph& graph, LayoutReport* report) {
  // Dead ops first (fold-qdq leaves the float ops it replaced): a reader that no longer
  // computes anything must not keep a value in NCHW.
  const Graph live = eliminate_dead_ops(graph);
  return NhwcRewriter(live).run(report);
}

}  // namespace qrt::passes
