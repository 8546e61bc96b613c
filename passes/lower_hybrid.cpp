// qrt — hybrid weight-only lowering (see lower_hybrid.h).
#include "passes/lower_hybrid.h"

#include <cstring>

#include "ir/numerics_dynamic.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

// w_q when v = transpose*(dcast(w_q)) of a quantized constant, or v = w_q itself (a matmul
// already hybrid, as quantize-weights and the importers write it); the transposes, innermost
// first.
int quantized_weights(const Graph& g, int v, std::vector<const Op*>& transposes) {
  const Op* p = producer_of(g, v);
  if (!p) return -1;
  if (p->kind == OpKind::kConstant && g.values[size_t(v)].type.element.is_any_uniform()) return v;
  if (p->kind == OpKind::kTranspose) {
    const int w = quantized_weights(g, p->operands[0], transposes);
    if (w >= 0) transposes.push_back(p);
    return w;
  }
  if (p->kind != OpKind::kDCast) return -1;
  const Op* c = producer_of(g, p->operands[0]);
  return c && c->kind == OpKind::kConstant && g.values[size_t(p->operands[0])].type.element.is_any_uniform()
             ? p->operands[0]
             : -1;
}

}  // namespace

namespace {

// A float constant [n] (or a scalar when n < 0) of `values`.
int emit_f32_constant(Rewriter& rw, const std::vector<float>& values, const std::string& name, SourceLoc loc) {
  DenseElements d;
  d.type = Type::tensor({int64_t(values.size())}, ElementType::make_float(FloatKind::kF32));
  d.bytes.resize(values.size() * 4);
  std::memcpy(d.bytes.data(), values.data(), d.bytes.size());
  return rw.emit(OpKind::kConstant, {}, d.type, {{"value", Attribute::make_dense(d)}}, loc, name);
}

// The dynamic-range form of `op` (see lower_hybrid.h), or "" after emitting it; else why not.
std::string emit_dynamic_range(const Graph& g, const Op& op, int w, int w_view, const Type& wt, bool transposed,
                               Rewriter& rw) {
  const ElementType& we = wt.element;
  if (we.storage.width != 8) return "dynamic range needs 8-bit weights";
  if (we.is_sub_channel()) return "dynamic range needs one scale per column, not blocks along K";
  if (we.kind == ElementKind::kUniformPerAxis && we.axis != 1) return "dynamic range needs one scale per column (axis 1)";
  for (int64_t z : we.zero_points) {
    if (z != 0) return "dynamic range needs symmetric weights (zero point 0)";
  }
  const Type& xt = g.values[size_t(op.operands[0])].type;
  const Type& yt = g.values[size_t(op.results[0])].type;
  if (wt.rank() != 2 || xt.element.float_kind != FloatKind::kF32) return "dynamic range needs f32 x and 2-D weights";
  const int64_t k = wt.dims[0], n = wt.dims[1];
  // Σ_k w[k, n] of the stored weights (as seen at the matmul, transposes applied).
  const Op* c = producer_of(g, w);
  const DenseElements& data = c->attr("value")->dense;
  std::vector<float> neg_colsum(static_cast<size_t>(n), 0.0f), scales(static_cast<size_t>(n));
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t nn = 0; nn < n; ++nn) {
      // Index into the constant's own layout: [K, N], or [N, K] behind one transpose.
      const size_t i = transposed ? size_t(nn * k + kk) : size_t(kk * n + nn);
      neg_colsum[size_t(nn)] -= float(data.int_at(i));
    }
  }
  for (int64_t nn = 0; nn < n; ++nn) scales[size_t(nn)] = float(we.scales[we.num_channels() == 1 ? 0 : size_t(nn)]);
  const std::string base = g.values[size_t(op.results[0])].name;
  const SourceLoc loc = op.loc;
  const ElementType u8 = ElementType::make_int(8, Signedness::kUnsigned);
  const ElementType f32 = ElementType::make_float(FloatKind::kF32);
  const int dq = rw.graph().add_op(OpKind::kDynamicQuantize, {rw.at(op.operands[0])},
                                   {Type::tensor(xt.dims, u8), Type::tensor({}, f32), Type::tensor({}, u8)}, {}, loc);
  const std::vector<int> r = rw.graph().ops[size_t(dq)].results;
  const ElementType unit_u8 = ElementType::make_uniform(QuantStorage::full_range(8, false), FloatKind::kF32, 1.0, 0);
  const ElementType unit_i8 = ElementType::make_uniform(we.storage, FloatKind::kF32, 1.0, 0);
  const ElementType unit_i32 = ElementType::make_uniform(QuantStorage::full_range(32, true), FloatKind::kF32, 1.0, 0);
  const int xq = rw.emit(OpKind::kSCast, {r[0]}, Type::tensor(xt.dims, unit_u8), {}, loc, base + "_xq");
  // The stored weights retyped to scale 1: the matmul then yields the exact sum Σ x·w.
  const int wq = rw.emit(OpKind::kSCast, {rw.emit(OpKind::kSCast, {w_view}, Type::tensor(wt.dims, ElementType::make_int(8)), {}, loc,
                                                  base + "_w_int")},
                         Type::tensor(wt.dims, unit_i8), {}, loc, base + "_w_unit");
  const int acc = rw.emit(OpKind::kMatmul, {xq, wq}, Type::tensor(yt.dims, unit_i32), {}, loc, base + "_acc");
  const int accf = rw.emit(OpKind::kDCast, {acc}, yt, {}, loc, base + "_acc_f32");
  const int zq = rw.emit(OpKind::kSCast, {r[2]}, Type::tensor({}, unit_u8), {}, loc, base + "_zx");
  const int zf = rw.emit(OpKind::kDCast, {zq}, Type::tensor({}, f32), {}, loc, base + "_zx_f32");
  const Type vec = Type::tensor({n}, f32);
  const int corr = rw.emit(OpKind::kMul, {zf, emit_f32_constant(rw, neg_colsum, base + "_neg_colsum", loc)}, vec, {}, loc,
                           base + "_zero_point_term");
  const int centred = rw.emit(OpKind::kAdd, {accf, corr}, yt, {}, loc, base + "_centred");
  const int scaled = rw.emit(OpKind::kMul, {centred, emit_f32_constant(rw, scales, base + "_w_scales", loc)}, yt, {}, loc,
                             base + "_w_scaled");
  int y = rw.emit(OpKind::kMul, {scaled, r[1]}, yt, {}, loc, op.operands.size() > 2 ? base + "_nobias" : base);
  if (op.operands.size() > 2) y = rw.emit(OpKind::kAdd, {y, rw.at(op.operands[2])}, yt, {}, loc, base);
  rw.map(op.results[0], y);
  return "";
}

}  // namespace

namespace {

// Why the dynamic-i8 form cannot take weights of type `t` behind `x`, or "".
std::string dynamic_i8_why_not(const Type& xt, const Type& t) {
  const ElementType& e = t.element;
  const FloatKind xk = xt.element.float_kind;
  if (xk != FloatKind::kF32 && xk != FloatKind::kBF16 && xk != FloatKind::kF16) return "dynamic i8 needs f32, bf16 or f16 activations";
  if (t.rank() != 2) return "dynamic i8 needs 2-D weights";
  if (e.storage.width > 8) return "dynamic i8 needs weights of at most 8 bits";
  if (numerics::dynamic_i8_block(e, t.dims[0]) > numerics::kMaxDynamicBlock) return "dynamic i8 sums blocks of at most 65536 k values in int32";
  return "";
}

}  // namespace

Graph lower_hybrid(const Graph& graph, HybridMode mode, PassLog& log) {
  const bool dynamic_range = mode == HybridMode::kDynamicRange;
  Rewriter rw(graph);
  for (const Op& op : graph.ops) {
    std::vector<const Op*> transposes;
    const Op* x_producer = op.kind == OpKind::kMatmul ? producer_of(graph, op.operands[0]) : nullptr;
    const bool float_x = op.kind == OpKind::kMatmul && graph.values[size_t(op.operands[0])].type.element.is_float() &&
                         !(x_producer && x_producer->kind == OpKind::kDCast) && !op.attr("activations");
    const int w = float_x ? quantized_weights(graph, op.operands[1], transposes) : -1;
    if (w < 0) {
      rw.copy(op);
      continue;
    }
    // The transposes re-applied to the stored weights (per-axis axes follow the permutation).
    int v = rw.at(w);
    Type t = graph.values[size_t(w)].type;
    for (const Op* tr : transposes) {
      const Type nt = transposed_type(t, perm_of(*tr));
      v = rw.emit(OpKind::kTranspose, {v}, nt, tr->attrs, tr->loc, fresh_name(graph, graph.values[size_t(w)].name + "_t"));
      t = nt;
    }
    const std::string yname = graph.values[size_t(op.results[0])].name;
    if (dynamic_range) {
      const bool one_transpose = transposes.size() == 1 && t.rank() == 2;
      const std::string why = transposes.size() > 1 ? "dynamic range takes weights behind at most one transpose"
                                                     : emit_dynamic_range(graph, op, w, v, t, one_transpose, rw);
      if (why.empty()) {
        log.push_back("qrt.matmul %" + yname + ": dynamic range, x quantized to u8 per call, i32 products, f32 rescale");
        continue;
      }
      log.push_back("qrt.matmul %" + yname + ": kept weight-only: " + why);
    }
    if (mode == HybridMode::kDynamicI8) {
      const std::string why = dynamic_i8_why_not(graph.values[size_t(op.operands[0])].type, t);
      if (why.empty()) {
        rw.copy(op, {{1, v}});
        rw.graph().ops.back().set_attr("activations", Attribute::make_string("dynamic_i8"));
        log.push_back("qrt.matmul %" + yname + ": dynamic i8, x quantized to i8 per row and block of K, exact block sums, " +
                      t.element.to_string());
        continue;
      }
      log.push_back("qrt.matmul %" + yname + ": kept weight-only: " + why);
    }
    rw.copy(op, {{1, v}});
    log.push_back("qrt.matmul %" + graph.values[size_t(op.results[0])].name + ": hybrid, f32 x " + t.element.to_string());
  }
  return rw.finish();
}

}  // namespace qrt::passes
