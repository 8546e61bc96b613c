// qrt — QDQ folding (see fold_qdq.h).
#include "passes/fold_qdq.h"

#include <map>

#include "ir/numerics.h"
#include "ir/op_verify.h"
#include "ir/ops.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

// A constant seen through transposes: the constant's value and the perms applied, in order.
struct ConstChain {
  int constant = -1;
  std::vector<std::vector<int64_t>> perms;
};

class Folder {
 public:
  explicit Folder(const Graph& g) : g_(g), uses_(count_uses(g)), rw_(g) {}

  Graph run(QdqFoldReport* report) {
    for (const Op& op : g_.ops) {
      if (op.kind == OpKind::kQCast && try_fold(op, report)) continue;
      rw_.copy(op);
    }
    return rw_.finish();
  }

 private:
  const Op* producer(int v) const { return producer_of(g_, v); }
  const Type& type(int v) const { return g_.values[size_t(v)].type; }

  // x_q when v = dcast(x_q).
  int dq_source(int v) const {
    const Op* p = producer(v);
    return p && p->kind == OpKind::kDCast ? p->operands[0] : -1;
  }

  // The quantized constant behind v = transpose*(dcast(constant)).
  bool const_chain(int v, ConstChain& c) const {
    const Op* p = producer(v);
    if (!p) return false;
    if (p->kind == OpKind::kTranspose) {
      if (!const_chain(p->operands[0], c)) return false;
      c.perms.push_back(perm_of(*p));
      return true;
    }
    const int q = dq_source(v);
    const Op* k = q >= 0 ? producer(q) : nullptr;
    if (!k || k->kind != OpKind::kConstant) return false;
    c.constant = q;
    return true;
  }

  int emit(OpKind kind, std::vector<int> operands, const Type& t, const Op& like, const std::string& name) {
    return rw_.emit(kind, std::move(operands), t, like.attrs, like.loc, name);
  }

  // The constant's quantized value with the transposes applied (per-axis axes follow).
  int emit_weights(const ConstChain& c, const Op& like) {
    int v = rw_.at(c.constant);
    Type t = type(c.constant);
    for (const auto& perm : c.perms) {
      const Type nt = transposed_type(t, perm);
      v = rw_.emit(OpKind::kTranspose, {v}, nt, {{"perm", Attribute::make_int_array(perm)}}, like.loc, "");
      t = nt;
    }
    return v;
  }

  // qcast(dcast(x_q)): the same type is x_q itself; another one a single requantize, and a
  // requantize of a requantize (nothing else reading the inner one) collapses into one.
  template <typename Note>
  bool fold_rescale(const Op& dq, const Op& q, Note note, QdqFoldReport* report) {
    int x = dq.operands[0];
    const Type& qt = type(q.results[0]);
    const std::string name = g_.values[size_t(q.results[0])].name;
    if (type(x).element == qt.element) {
      rw_.map(q.results[0], rw_.at(x));
      note("dcast -> qcast %" + name + ": the same type, removed");
    } else {
      // x itself became a requantize of `from` here, and only this rescale reads it.
      auto from = requantized_from_.find(x);
      const bool chain = from != requantized_from_.end() && uses_[size_t(x)] == 1 && uses_[size_t(dq.results[0])] == 1;
      if (chain) x = from->second;
      rw_.map(q.results[0], emit(OpKind::kRequantize, {rw_.at(x)}, qt, q, name));
      requantized_from_[q.results[0]] = x;
      note("dcast -> qcast %" + name + ": one requantize from " + type(x).element.to_string() +
           (chain ? " (a requantize chain collapsed)" : ""));
    }
    if (report) ++report->folded;
    return true;
  }

  // True when relu/clamp `act` on values of per-layer type `e` changes nothing: its bounds in
  // stored units (as the reference computes them) are the storage range or wider.
  static bool activation_implied(const Op& act, const ElementType& e) {
    if (e.kind != ElementKind::kUniform) return false;
    const int64_t zp = e.zero_points[0];
    if (act.kind == OpKind::kRelu) return zp <= e.storage.min;
    const double lo = act.attr("min")->f, hi = act.attr("max")->f;
    int64_t ql, qh;
    if (e.float_kind == FloatKind::kF64) {
      ql = numerics::quantize_f64(lo, e.scales[0], zp, e.storage.min, e.storage.max);
      qh = numerics::quantize_f64(hi, e.scales[0], zp, e.storage.min, e.storage.max);
    } else {
      const float sc = numerics::compute_scale_f32(e.scales[0], e.float_kind);
      ql = numerics::quantize_f32(float(lo), sc, zp, e.storage.min, e.storage.max);
      qh = numerics::quantize_f32(float(hi), sc, zp, e.storage.min, e.storage.max);
    }
    return ql <= e.storage.min && qh >= e.storage.max;
  }

  // The add/mul that `f` is (or that `f`, a relu/clamp, reads as its only use) when both its
  // operands are dcasts of per-layer quantized values; else nullptr.
  const Op* elementwise_of(const Op* f) const {
    const Op* e = f;
    if (f->kind == OpKind::kRelu || f->kind == OpKind::kClamp) {
      e = producer(f->operands[0]);
      if (!e || uses_[size_t(f->operands[0])] != 1) return nullptr;
    }
    if (e->kind != OpKind::kAdd && e->kind != OpKind::kMul) return nullptr;
    for (int v : e->operands) {
      const int x = dq_source(v);
      if (x < 0 || type(x).element.kind != ElementKind::kUniform) return nullptr;
    }
    return e;
  }

  bool try_fold(const Op& q, QdqFoldReport* report) {
    const int fv = q.operands[0];
    const Op* f = producer(fv);
    const Type& qt = type(q.results[0]);
    const std::string name = g_.values[size_t(q.results[0])].name;
    auto note = [&](const std::string& s) {
      if (report) report->lines.push_back(s);
    };
    if (f && f->kind == OpKind::kDCast && qt.element.is_uniform()) return fold_rescale(*f, q, note, report);
    if (!f || uses_[size_t(fv)] != 1) return false;
    // Shape-only and order-only ops commute with dequantization.
    // (A nearest resize only: linear and cubic ones interpolate.)
    const bool nearest_resize = f->kind == OpKind::kResize && (!f->attr("mode") || f->attr("mode")->s == "nearest");
    if (f->kind == OpKind::kMaxPool2d || f->kind == OpKind::kReshape || f->kind == OpKind::kTranspose || nearest_resize) {
      const int xq = dq_source(f->operands[0]);
      if (xq >= 0) {
        if (!(type(xq).element == qt.element)) return false;
        rw_.map(q.results[0], emit(f->kind, {rw_.at(xq)}, qt, *f, name));
        note(std::string(op_info(f->kind).name) + " -> %" + name + ": runs on stored values (" + qt.element.to_string() + ")");
        if (report) ++report->folded;
        return true;
      }
      // Else a reshape or transpose of a convolution's result: below.
    }
    // Slices, gathers and broadcasts only move elements (their other operands are indices),
    // and a zero-padding adds quantize(0) = the zero point under every profile's formula: on
    // stored values of the qcast's own per-tensor type they are identical.
    const bool zero_pad = f->kind == OpKind::kPad && (!f->attr("value") || f->attr("value")->f == 0.0);
    if (f->kind == OpKind::kSlice || f->kind == OpKind::kGather || f->kind == OpKind::kGatherElements ||
        f->kind == OpKind::kGatherNd || f->kind == OpKind::kBroadcastTo || zero_pad) {
      const int xq = dq_source(f->operands[0]);
      if (xq < 0 || !(type(xq).element == qt.element) || qt.element.kind != ElementKind::kUniform) return false;
      std::vector<int> operands{rw_.at(xq)};
      for (size_t i = 1; i < f->operands.size(); ++i) operands.push_back(rw_.at(f->operands[i]));
      rw_.map(q.results[0], emit(f->kind, std::move(operands), qt, *f, name));
      note(std::string(op_info(f->kind).name) + " -> %" + name + ": runs on stored values (" + qt.element.to_string() + ")");
      if (report) ++report->folded;
      return true;
    }
    // A concatenation of dequantized values of the qcast's own type moves stored values:
    // identical. (Differently quantized operands would requantize — not identical — and stay.)
    if (f->kind == OpKind::kConcat) {
      std::vector<int> stored;
      for (int v : f->operands) {
        const int xq = dq_source(v);
        if (xq < 0 || !(type(xq).element == qt.element)) return false;
        stored.push_back(rw_.at(xq));
      }
      rw_.map(q.results[0], emit(OpKind::kConcat, stored, qt, *f, name));
      note("qrt.concat -> %" + name + ": runs on stored values (" + qt.element.to_string() + ")");
      if (report) ++report->folded;
      return true;
    }
    // Ops whose quantized form is defined as dequantize, the f32 op, quantize: identical.
    if (f->kind == OpKind::kLogistic || f->kind == OpKind::kSoftmax) {
      const int xq = dq_source(f->operands[0]);
      if (xq < 0 || !type(xq).element.is_uniform() || qt.element.kind != ElementKind::kUniform) return false;
      rw_.map(q.results[0], emit(f->kind, {rw_.at(xq)}, qt, *f, name));
      note(std::string(op_info(f->kind).name) + " -> %" + name + ": quantized op (dequantize, f32, quantize: identical)");
      if (report) ++report->folded;
      return true;
    }
    // Averages of a dequantized per-layer value: the quantized op sums exactly and rounds
    // once to the qcast's type (numerics.md): QDQ's intent.
    if (f->kind == OpKind::kAvgPool2d || f->kind == OpKind::kMean) {
      const int xq = dq_source(f->operands[0]);
      if (xq < 0 || type(xq).element.kind != ElementKind::kUniform || qt.element.kind != ElementKind::kUniform) return false;
      rw_.map(q.results[0], emit(f->kind, {rw_.at(xq)}, qt, *f, name));
      note(std::string(op_info(f->kind).name) + " -> %" + name + ": quantized op, exact sums, one rounding to " +
           qt.element.to_string());
      if (report) ++report->folded;
      return true;
    }
    // An activation kept between QDQ pairs (dcast -> relu/clamp -> qcast, ONNX Runtime's QDQ
    // Clip/Relu): the quantized op on x_q when the qcast keeps x_q's type (identical); else one
    // requantize to the qcast's type and the activation there — a monotone rescale commutes
    // with clamping — or only the requantize when its clamp already implies the activation.
    if ((f->kind == OpKind::kRelu || f->kind == OpKind::kClamp) && dq_source(f->operands[0]) >= 0) {
      const int xq = dq_source(f->operands[0]);
      if (type(xq).element.kind != ElementKind::kUniform || qt.element.kind != ElementKind::kUniform) return false;
      const bool same = type(xq).element == qt.element, implied = activation_implied(*f, qt.element);
      int y = rw_.at(xq);
      if (!same) y = emit(OpKind::kRequantize, {y}, qt, q, implied ? name : name + "_rescaled");
      if (!implied) y = emit(f->kind, {y}, qt, *f, name);
      rw_.map(q.results[0], y);
      note(std::string(op_info(f->kind).name) + " -> %" + name + ": " +
           (same ? "quantized op on stored values" : "one requantize to " + qt.element.to_string()) +
           (implied ? std::string(", the activation implied by the output bounds") : std::string()));
      if (report) ++report->folded;
      return true;
    }
    // add/mul of two dequantized per-layer values (optionally under relu/clamp): the quantized
    // op — each operand rescaled to the result, one rounding (numerics.md): QDQ's intent.
    if (const Op* e = elementwise_of(f)) {
      const int a = dq_source(e->operands[0]), b = dq_source(e->operands[1]);
      if (qt.element.kind == ElementKind::kUniform) {
        emit_with_activation(*e, {rw_.at(a), rw_.at(b)}, e != f ? f : nullptr, q,
                             "quantized element-wise op, each operand rescaled to", report);
        return true;
      }
    }
    const Op* g = f;
    bool relu = false;
    if (f->kind == OpKind::kRelu || f->kind == OpKind::kClamp) {
      g = producer(f->operands[0]);
      if (!g || uses_[size_t(f->operands[0])] != 1) return false;
      relu = true;
    }
    // matmul + add of a bias (how Gemm-style layers import): the bias joins the matmul.
    int float_bias = -1;
    if (g->kind == OpKind::kAdd) {
      for (int side = 0; side < 2 && float_bias < 0; ++side) {
        const Op* m = producer(g->operands[size_t(side)]);
        if (m && m->kind == OpKind::kMatmul && m->operands.size() == 2 && uses_[size_t(g->operands[size_t(side)])] == 1 &&
            type(g->operands[size_t(1 - side)]).rank() == 1) {
          float_bias = g->operands[size_t(1 - side)];
          g = m;
        }
      }
      if (float_bias < 0) return false;
    }
    // Transposes and reshapes after a convolution, as importers write them (an NCHW graph's
    // transposed convolution is NHWC; 1-D and 3-D convolutions run as 2-D ones between
    // reshapes and transposes): with a per-tensor result they run on stored values, before
    // the activation (they commute with it). `outs` lists them in data-flow order.
    std::vector<const Op*> outs;
    if (qt.element.kind == ElementKind::kUniform) {
      const Op* t = g;
      std::vector<const Op*> chain;
      while (t && (t->kind == OpKind::kTranspose || t->kind == OpKind::kReshape) && chain.size() < 4) {
        chain.insert(chain.begin(), t);
        const int in = t->operands[0];
        t = uses_[size_t(in)] == 1 ? producer(in) : nullptr;
      }
      if (!chain.empty() && t && (t->kind == OpKind::kConvTranspose2d || t->kind == OpKind::kConv2d)) {
        outs = std::move(chain);
        g = t;
      }
    }
    if (g->kind != OpKind::kConv2d && g->kind != OpKind::kConvTranspose2d && g->kind != OpKind::kMatmul) return false;
    if (g->operands.size() > 2) float_bias = g->operands[2];
    int xq = dq_source(g->operands[0]);
    // A reshape between the dcast and the op (Flatten before a Gemm), or a transpose before a
    // transposed convolution (NCHW to its NHWC), runs on stored values.
    const Op* reshape = nullptr;
    if (const Op* r = producer(g->operands[0]);
        xq < 0 && r && uses_[size_t(g->operands[0])] == 1 &&
        (r->kind == OpKind::kReshape || (r->kind == OpKind::kTranspose && g->kind == OpKind::kConvTranspose2d))) {
      xq = dq_source(r->operands[0]);
      reshape = r;
    }
    ConstChain w;
    if (xq < 0 || !const_chain(g->operands[1], w)) return false;
    const ElementType& xe = type(xq).element;
    const ElementType& we = type(w.constant).element;
    if (xe.kind != ElementKind::kUniform || !we.is_uniform() || !qt.element.is_uniform()) return false;
    int bq = -1;
    if (float_bias >= 0) {
      bq = dq_source(float_bias);
      const Op* bc = bq >= 0 ? producer(bq) : nullptr;
      if (!bc || bc->kind != OpKind::kConstant) return false;
      const ElementType& be = type(bq).element;
      if (!be.is_uniform() || be.storage.width != 32) return false;
      for (size_t n = 0; n < be.num_channels(); ++n) {
        if (be.zero_points[n] != 0 || !scales_match(accumulator_scale(xe, we, n), be.scales[n])) {
          note(std::string(op_info(g->kind).name) + " -> %" + name + ": left in float: the bias scale is not s_x * s_w");
          return false;
        }
      }
    }
    // The integer op must keep its int32 accumulator exact (the verifier's bound); a float op
    // with many terms of extreme zero points stays float.
    // (A transposed convolution's filter as the op reads it: importers transpose ONNX's
    // [C, O / groups, kh, kw] to its [O, kh, kw, C / groups].)
    const Type& wt = g->kind == OpKind::kConvTranspose2d ? type(g->operands[1]) : type(w.constant);
    int64_t k = -1;
    if (wt.rank() >= 2 && wt.dims[0] > 0) {
      k = g->kind == OpKind::kMatmul ? wt.dims[wt.rank() - 2] : wt.num_elements() / wt.dims[0];
    }
    if (!op_verify::check_accumulator_bound(*g, xe, we, k).is_ok()) {
      note(std::string(op_info(g->kind).name) + " -> %" + name + ": left in float: K = " + std::to_string(k) +
           " terms could overflow the int32 accumulator");
      return false;
    }
    int x_operand = rw_.at(xq);
    if (reshape) {
      x_operand = emit(reshape->kind, {x_operand}, transposed_or_reshaped(*reshape, xe), *reshape, "");
    }
    std::vector<int> operands{x_operand, emit_weights(w, *g)};
    if (bq >= 0) operands.push_back(rw_.at(bq));
    emit_with_activation(*g, operands, relu ? f : nullptr, q, "integer accumulation, one requantization to", report, outs);
    return true;
  }

  // The result type of reshape or transpose `op` over stored values of element `e` (a
  // transpose moves a per-axis type's axis with its dimension).
  Type transposed_or_reshaped(const Op& op, const ElementType& e) {
    if (op.kind == OpKind::kTranspose) {
      Type in = type(op.operands[0]);
      in.element = e;
      std::vector<int64_t> perm;
      for (const Attribute& a : op.attr("perm")->array) perm.push_back(a.i);
      return transposed_type(in, perm);
    }
    Type t = type(op.results[0]);
    t.element = e;
    return t;
  }

  // Emits `op` on `operands` with qcast q's result type, then `act` (a relu/clamp, or null)
  // unless its bounds in stored units cover the output's storage range — then the
  // requantization's clamp already implies it and it folds into the output bounds
  // (identical). q's result then stands for the last op; one report line says what happened.
  // With `outs` (transposes and reshapes of op's float result, in order; per-tensor qt): op's
  // result takes the first one's operand's shape, and they follow it on stored values.
  void emit_with_activation(const Op& op, std::vector<int> operands, const Op* act, const Op& q, const std::string& what,
                            QdqFoldReport* report, const std::vector<const Op*>& outs = {}) {
    const Type& qt = type(q.results[0]);
    const std::string name = g_.values[size_t(q.results[0])].name;
    const bool implied = act && activation_implied(*act, qt.element);
    const bool separate = act && !implied;
    int y;
    if (!outs.empty()) {
      Type pre = type(outs.front()->operands[0]);
      pre.element = qt.element;
      y = emit(op.kind, std::move(operands), pre, op, "");
      for (size_t i = 0; i < outs.size(); ++i) {
        Type t = type(outs[i]->results[0]);
        t.element = qt.element;
        const bool last = i + 1 == outs.size();
        y = emit(outs[i]->kind, {y}, t, *outs[i], last ? (separate ? name + "_int" : name) : "");
      }
    } else {
      y = emit(op.kind, std::move(operands), qt, op, separate ? name + "_int" : name);
    }
    rw_.map(q.results[0], separate ? emit(act->kind, {y}, qt, *act, name) : y);
    if (!report) return;
    std::string moved;
    for (const Op* o : outs) moved += std::string(" + ") + op_info(o->kind).name;
    report->lines.push_back(std::string(op_info(op.kind).name) + moved +
                            (act ? std::string(" + ") + op_info(act->kind).name : "") +
                            " -> %" + name + ": " + what + " " + qt.element.to_string() +
                            (implied ? std::string("; ") + op_info(act->kind).name + " folded into the output bounds" : ""));
    ++report->folded;
  }

  const Graph& g_;
  std::vector<int> uses_;
  Rewriter rw_;
  std::map<int, int> requantized_from_;  // value -> the value its requantize reads
};

}  // namespace

Graph fold_qdq(const Graph& graph, QdqFoldReport* report) { return Folder(graph).run(report); }

}  // namespace qrt::passes
