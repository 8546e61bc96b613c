// qrt — weight-only quantization of float weights (see quantize_weights.h).
#include "passes/quantize_weights.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "passes/dead_code.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

struct Range {
  int64_t qmin, qmax;
};

// Scale and zero point of one group of weights, and its squared error.
struct GroupParams {
  double scale = 1.0;
  int64_t zp = 0;
  double sq_error = 0.0;
};

// The squared error of the group against its dequantized values as the kernels compute them:
// the dcast formula, rounded to the expressed type `kind`.
double group_error(const std::vector<float>& v, float scale, int64_t zp, Range r, FloatKind kind) {
  double e = 0.0;
  for (float w : v) {
    const double d = round_to_float_kind(
        numerics::dequantize_f32(numerics::quantize_f32(w, scale, zp, r.qmin, r.qmax), zp, scale), kind);
    e += (double(w) - d) * (double(w) - d);
  }
  return e;
}

// Parameters for range [lo, hi] (which holds 0): symmetric around the storage's middle, or
// asymmetric with the zero point rounded into the storage.
GroupParams params_for(double lo, double hi, const WeightQuantOptions& o, Range r, FloatKind kind) {
  GroupParams p;
  if (o.symmetric) {
    const double amax = std::max(std::fabs(lo), std::fabs(hi));
    const int64_t half = (int64_t(1) << (o.bits - 1)) - 1;  // 7 or 127: the symmetric levels
    p.zp = o.is_signed ? 0 : int64_t(1) << (o.bits - 1);
    p.scale = amax > 0 ? amax / double(half) : 1.0;
  } else {
    p.scale = hi > lo ? (hi - lo) / double(r.qmax - r.qmin) : 1.0;
    p.zp = numerics::clamp_i64(int64_t(numerics::round_half_even(double(r.qmin) - lo / p.scale)), r.qmin, r.qmax);
  }
  if (o.f16_scales) {
    // A normal f16 value (65504 at most; 2^-14 at least: a smaller range's steps coarsen to it,
    // at most 2^-15 of error per weight), which an f16 or bf16 expressed type keeps exactly.
    p.scale = std::clamp(round_to_float_kind(p.scale, FloatKind::kF16), std::ldexp(1.0, -14), 65504.0);
  }
  // The scale as the kernels see it (rounded to the expressed type, then f32), stored so. One
  // that underflows to 0 there would be illegal: the type's least positive value instead.
  p.scale = double(float(round_to_float_kind(p.scale, kind)));
  if (p.scale == 0.0) {
    p.scale = kind == FloatKind::kF16 ? std::ldexp(1.0, -24) : kind == FloatKind::kBF16 ? std::ldexp(1.0, -133) : std::ldexp(1.0, -149);
  }
  if (!(p.scale > 0.0) || !std::isfinite(p.scale)) p.scale = 1.0;
  if (o.f16_scales && !o.symmetric) {
    // The zero point follows the rounded scale.
    p.zp = numerics::clamp_i64(int64_t(numerics::round_half_even(double(r.qmin) - lo / p.scale)), r.qmin, r.qmax);
  }
  return p;
}

GroupParams quantize_group(const std::vector<float>& v, const WeightQuantOptions& o, Range r, FloatKind kind) {
  double lo = 0.0, hi = 0.0;
  for (float w : v) {
    lo = std::min(lo, double(w));
    hi = std::max(hi, double(w));
  }
  GroupParams best = params_for(lo, hi, o, r, kind);
  best.sq_error = group_error(v, float(best.scale), best.zp, r, kind);
  if (!o.mse) return best;
  // Clipping the range trades the outliers' error for finer steps: try 20 shrinks.
  for (int i = 1; i <= 20; ++i) {
    const double f = 1.0 - 0.025 * i;
    GroupParams p = params_for(lo * f, hi * f, o, r, kind);
    p.sq_error = group_error(v, float(p.scale), p.zp, r, kind);
    if (p.sq_error < best.sq_error) best = p;
  }
  return best;
}

// Quantizes one group (`group`: its float weights) into `out`, the i-th weight at flat index
// at(i), and returns its parameters.
template <typename At>
GroupParams store_group(const std::vector<float>& group, At at, const WeightQuantOptions& o, Range r, FloatKind kind,
                        DenseElements& out) {
  const GroupParams p = quantize_group(group, o, r, kind);
  for (size_t i = 0; i < group.size(); ++i) {
    out.set_int(at(i), numerics::quantize_f32(group[i], float(p.scale), p.zp, r.qmin, r.qmax));
  }
  return p;
}

// The float weights at a matmul as [K, N] (a constant of float type `kind`, or one [N, K]
// behind one 2-D transpose), or false.
bool matmul_weights(const Graph& g, int v, FloatKind kind, std::vector<float>& w, int64_t& k, int64_t& n,
                    const Op*& constant) {
  const Op* p = producer_of(g, v);
  bool transposed = false;
  if (p && p->kind == OpKind::kTranspose && perm_of(*p) == std::vector<int64_t>{1, 0}) {
    transposed = true;
    p = producer_of(g, p->operands[0]);
  }
  if (!p || p->kind != OpKind::kConstant) return false;
  const DenseElements& d = p->attr("value")->dense;
  if (!d.type.element.is_float() || d.type.element.float_kind != kind || d.type.rank() != 2) return false;
  const int64_t r = d.type.dims[0], c = d.type.dims[1];
  k = transposed ? c : r;
  n = transposed ? r : c;
  w.assign(size_t(k * n), 0.0f);
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      const float x = float(d.float_at(size_t(i * c + j)));
      w[size_t(transposed ? j * n + i : i * n + j)] = x;  // W[j][i] of [K, N]
    }
  }
  constant = p;
  return true;
}

std::string storage_name(const WeightQuantOptions& o) { return std::string(o.is_signed ? "i" : "u") + std::to_string(o.bits); }

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

Graph quantize_weights(const Graph& graph, const WeightQuantOptions& o, PassLog& log) {
  const QuantStorage storage = QuantStorage::full_range(o.bits, o.is_signed);
  const Range range{storage.min, storage.max};
  const ElementType stored_int = ElementType::make_int(o.bits, o.is_signed ? Signedness::kSignless : Signedness::kUnsigned);
  Rewriter rw(graph);
  for (const Op& op : graph.ops) {
    // Matmuls and convolutions over f32, bf16 or f16 (the weights keep the activations' type as
    // their expressed type: the kernels round each dequantized weight to it).
    if ((op.kind != OpKind::kMatmul && op.kind != OpKind::kConv2d) || op.operands.size() < 2) {
      rw.copy(op);
      continue;
    }
    const ElementType& xe = graph.values[size_t(op.operands[0])].type.element;
    const FloatKind kind = xe.is_float() ? xe.float_kind : FloatKind::kF32;
    const bool float_x = xe.is_float() && (kind == FloatKind::kF32 || kind == FloatKind::kBF16 || kind == FloatKind::kF16);
    const std::string yname = float_x ? graph.values[size_t(op.results[0])].name : "";
    if (float_x && op.kind == OpKind::kMatmul) {
      std::vector<float> w;
      int64_t k = 0, n = 0;
      const Op* constant = nullptr;
      if (!matmul_weights(graph, op.operands[1], kind, w, k, n, constant)) {
        log.push_back("qrt.matmul %" + yname + ": kept float: its weights are not " + (kind == FloatKind::kBF16 ? "a " : "an ") +
                      float_kind_name(kind) + " constant [K, N] or [N, K]");
        rw.copy(op);
        continue;
      }
      int64_t block = o.block > 0 && o.block < k ? o.block : k;
      std::string note;
      if (k % block != 0) {
        note = " (block " + std::to_string(block) + " does not divide K = " + std::to_string(k) + ": per column)";
        block = k;
      }
      const int64_t blocks = k / block;
      std::vector<double> scales(size_t(blocks * n));
      std::vector<int64_t> zps(size_t(blocks * n));
      DenseElements d = DenseElements::zeros(Type::tensor({k, n}, stored_int));
      double sq = 0.0;
      std::vector<float> group;
      for (int64_t b = 0; b < blocks; ++b) {
        for (int64_t j = 0; j < n; ++j) {
          group.clear();
          for (int64_t kk = b * block; kk < (b + 1) * block; ++kk) group.push_back(w[size_t(kk * n + j)]);
          const GroupParams p =
              store_group(group, [&](size_t i) { return size_t((b * block + int64_t(i)) * n + j); }, o, range, kind, d);
          scales[size_t(b * n + j)] = p.scale;
          zps[size_t(b * n + j)] = p.zp;
          sq += p.sq_error;
        }
      }
      const ElementType e = blocks > 1 ? ElementType::make_sub_channel(storage, kind, {0, 1}, {block, 1}, {blocks, n},
                                                                          std::move(scales), std::move(zps))
                                       : ElementType::make_per_axis(storage, kind, 1, std::move(scales), std::move(zps));
      const Type wt = Type::tensor({k, n}, e);
      const std::string wname = fresh_name(graph, graph.values[size_t(constant->results[0])].name + "_" + storage_name(o));
      const int wq = rw.emit(OpKind::kConstant, {}, wt, {{"value", Attribute::make_dense(std::move(d))}}, constant->loc, wname);
      rw.copy(op, {{1, wq}});
      log.push_back("qrt.matmul %" + yname + ": weights " + std::to_string(k) + "x" + std::to_string(n) + " -> " +
                    storage_name(o) + (blocks > 1 ? ", blocks of " + std::to_string(block) + " along K" : ", per column") + note +
                    ", mean squared error " + fmt(sq / double(k * n)));
      continue;
    }
    if (float_x && op.kind == OpKind::kConv2d) {
      const Op* c = producer_of(graph, op.operands[1]);
      const DenseElements* d = c && c->kind == OpKind::kConstant ? &c->attr("value")->dense : nullptr;
      if (!d || !d->type.element.is_float() || d->type.element.float_kind != kind || d->type.rank() != 4) {
        log.push_back("qrt.conv2d %" + yname + ": kept float: its filter is not " + (kind == FloatKind::kBF16 ? "a " : "an ") +
                      float_kind_name(kind) + " constant");
        rw.copy(op);
        continue;
      }
      // Per output channel (axis 0, both layouts): convolutions take no blocks.
      const int64_t oc = d->type.dims[0], per = d->type.num_elements() / std::max<int64_t>(oc, 1);
      std::vector<double> scales(static_cast<size_t>(oc));
      std::vector<int64_t> zps(static_cast<size_t>(oc));
      DenseElements q = DenseElements::zeros(Type::tensor(d->type.dims, stored_int));
      double sq = 0.0;
      std::vector<float> group;
      for (int64_t ch = 0; ch < oc; ++ch) {
        group.clear();
        for (int64_t i = 0; i < per; ++i) group.push_back(float(d->float_at(size_t(ch * per + i))));
        const GroupParams p = store_group(group, [&](size_t i) { return size_t(ch * per) + i; }, o, range, kind, q);
        scales[size_t(ch)] = p.scale;
        zps[size_t(ch)] = p.zp;
        sq += p.sq_error;
      }
      const Type ft = Type::tensor(d->type.dims, ElementType::make_per_axis(storage, kind, 0, std::move(scales), std::move(zps)));
      const std::string fname = fresh_name(graph, graph.values[size_t(c->results[0])].name + "_" + storage_name(o));
      const int fq = rw.emit(OpKind::kConstant, {}, ft, {{"value", Attribute::make_dense(std::move(q))}}, c->loc, fname);
      rw.copy(op, {{1, fq}});
      log.push_back("qrt.conv2d %" + yname + ": filter " + dims_to_string(d->type.dims) + " -> " + storage_name(o) +
                    ", per output channel, mean squared error " + fmt(sq / double(std::max<int64_t>(1, d->type.num_elements()))));
      continue;
    }
    rw.copy(op);
  }
  return eliminate_dead_ops(rw.finish());
}

}  // namespace qrt::passes
