// qrt — reference interpreter (see reference.h). Written for clarity, not speed: every
// element goes through the scalar formulas of ir/numerics.h.
#include "jit/ref/reference.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/ops.h"
#include "ir/numerics.h"
#include "ir/numerics_dynamic.h"
#include "ir/quant_params.h"
#include "jit/ref/reference_profiles.h"
#include "jit/ref/reference_util.h"

namespace qrt {

namespace {

using namespace ref_detail;

// Calls fn(out_index, a_index, b_index) for every element of `out` in row-major order.
template <typename Fn>
void for_each_broadcast(const std::vector<int64_t>& out, const std::vector<int64_t>& a,
                        const std::vector<int64_t>& b, Fn fn) {
  const auto sa = broadcast_strides(a, out), sb = broadcast_strides(b, out);
  std::vector<int64_t> idx(out.size(), 0);
  size_t total = 1;
  for (int64_t d : out) total *= size_t(d);
  size_t ia = 0, ib = 0;
  for (size_t i = 0; i < total; ++i) {
    fn(i, ia, ib);
    for (size_t k = out.size(); k-- > 0;) {
      ++idx[k];
      ia += sa[k];
      ib += sb[k];
      if (idx[k] < out[k]) break;
      ia -= sa[k] * size_t(out[k]);
      ib -= sb[k] * size_t(out[k]);
      idx[k] = 0;
    }
  }
}

Tensor eval_qcast(const Tensor& x, const Type& rt, NumericsProfile profile) {
  Tensor y = make_result(rt, x.type.dims);
  const ElementType& q = rt.element;
  const QuantView view(q, y.type.dims);
  const bool tflite = is_tflite(profile);
  for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
    if (profile == NumericsProfile::kStableHlo) {
      y.set_int(i, numerics::quantize_stablehlo(x.float_at(i), view.scale(i), view.zp(i), q.storage.min, q.storage.max,
                                                q.float_kind));
      continue;
    }
    if (tflite) {
      y.set_int(i, numerics::quantize_tflite(float(x.float_at(i)), float(view.scale(i)), view.zp(i), q.storage.min,
                                             q.storage.max));
      continue;
    }
    const int64_t v =
        is_f64(q) ? numerics::quantize_f64(x.float_at(i), view.scale(i), view.zp(i), q.storage.min,
                                           q.storage.max)
                  : numerics::quantize_f32(float(x.float_at(i)),
                                           numerics::compute_scale_f32(view.scale(i), q.float_kind),
                                           view.zp(i), q.storage.min, q.storage.max);
    y.set_int(i, v);
  }
  return y;
}

Tensor eval_dcast(const Tensor& x, const Type& rt, NumericsProfile profile) {
  Tensor y = make_result(rt, x.type.dims);
  const ElementType& q = x.type.element;
  const QuantView view(q, x.type.dims);
  for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
    if (profile == NumericsProfile::kStableHlo) {
      y.set_float(i, numerics::dequantize_stablehlo(x.int_at(i), view.zp(i), view.scale(i), q.float_kind));
    } else if (is_f64(q)) {
      y.set_float(i, numerics::dequantize_f64(x.int_at(i), view.zp(i), view.scale(i)));
    } else {
      y.set_float(i, numerics::dequantize_f32(x.int_at(i), view.zp(i),
                                              numerics::compute_scale_f32(view.scale(i), q.float_kind)));
    }
  }
  return y;
}

Tensor eval_scast(const Tensor& x, const Type& rt) {
  Tensor y = make_result(rt, x.type.dims);
  y.storage.assign(x.bytes(), x.bytes() + x.byte_size());  // same width, same bits: only the type changes
  return y;
}

Tensor eval_constant(const Op& op, const Type& rt) {
  Tensor y = Tensor::zeros(rt);
  const DenseElements& d = op.attr("value")->dense;
  if (is_nibble_packed(d.type.element)) {  // tensors hold one element per byte
    // The stored bits as the result type reads them: a signless i4 constant may back a u4
    // type, whose 12 is not the constant's -4.
    const unsigned width = d.type.element.int_width;
    const bool is_unsigned = element_is_unsigned(rt.element);
    for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
      int64_t v = d.int_at(i) & ((int64_t(1) << width) - 1);
      if (!is_unsigned && (v >> (width - 1)) != 0) v -= int64_t(1) << width;
      y.set_int(i, v);
    }
    return y;
  }
  y.storage.assign(d.data(), d.data() + d.size());
  return y;
}

Tensor eval_float_binary(OpKind kind, const Tensor& a, const Tensor& b, const Type& rt,
                         const std::vector<int64_t>& dims) {
  Tensor y = make_result(rt, dims);
  const bool f64 = is_f64(rt.element);
  for_each_broadcast(dims, a.type.dims, b.type.dims, [&](size_t i, size_t ia, size_t ib) {
    if (f64) {
      const double x = a.float_at(ia), z = b.float_at(ib);
      y.set_float(i, kind == OpKind::kAdd ? x + z : x * z);
    } else {
      const float x = float(a.float_at(ia)), z = float(b.float_at(ib));
      y.set_float(i, kind == OpKind::kAdd ? double(x + z) : double(x * z));
    }
  });
  return y;
}

Tensor eval_quant_binary(OpKind kind, const Tensor& a, const Tensor& b, const Type& rt,
                         const std::vector<int64_t>& dims, const TfliteBinary* tflite) {
  Tensor y = make_result(rt, dims);
  if (tflite) {
    for_each_broadcast(dims, a.type.dims, b.type.dims, [&](size_t i, size_t ia, size_t ib) {
      y.set_int(i, tflite->apply(a.int_at(ia), b.int_at(ib)));
    });
    return y;
  }
  const ElementType& eo = rt.element;
  // Per-layer or per-axis on each side: element i of each tensor uses its channel's
  // parameters, and the multipliers are those of the channels that meet (the per-layer
  // formulas of docs/numerics.md, channel by channel).
  const QuantView va(a.type.element, a.type.dims), vb(b.type.element, b.type.dims), vo(eo, dims);
  if (kind == OpKind::kAdd) {
    for_each_broadcast(dims, a.type.dims, b.type.dims, [&](size_t i, size_t ia, size_t ib) {
      const double so = vo.scale(i);
      const float ta = float(a.int_at(ia) - va.zp(ia)) * numerics::multiplier(va.scale(ia), so);
      const float tb = float(b.int_at(ib) - vb.zp(ib)) * numerics::multiplier(vb.scale(ib), so);
      const float sum = ta + tb;
      y.set_int(i, numerics::add_zero_point_and_clamp(numerics::round_half_even(sum), vo.zp(i),
                                                       eo.storage.min, eo.storage.max));
    });
  } else {
    for_each_broadcast(dims, a.type.dims, b.type.dims, [&](size_t i, size_t ia, size_t ib) {
      const int64_t product = (a.int_at(ia) - va.zp(ia)) * (b.int_at(ib) - vb.zp(ib));
      const float m = numerics::multiplier(va.scale(ia) * vb.scale(ib), vo.scale(i));
      y.set_int(i, numerics::requantize(product, m, vo.zp(i), eo.storage.min, eo.storage.max));
    });
  }
  return y;
}

struct MatmulShape {
  std::vector<int64_t> batch;   // broadcast batch dims
  size_t m = 0, k = 0, n = 0;
  std::vector<size_t> lhs_batch_strides, rhs_batch_strides;  // in matrices
};

MatmulShape matmul_shape(const Tensor& lhs, const Tensor& rhs, const std::vector<int64_t>& batch) {
  MatmulShape s;
  s.batch = batch;
  s.m = size_t(lhs.type.dims[lhs.type.rank() - 2]);
  s.k = size_t(lhs.type.dims[lhs.type.rank() - 1]);
  s.n = size_t(rhs.type.dims[rhs.type.rank() - 1]);
  s.lhs_batch_strides = broadcast_strides(
      std::vector<int64_t>(lhs.type.dims.begin(), lhs.type.dims.end() - 2), batch);
  s.rhs_batch_strides = broadcast_strides(
      std::vector<int64_t>(rhs.type.dims.begin(), rhs.type.dims.end() - 2), batch);
  return s;
}

// Calls fn(batch_index, lhs_matrix_index, rhs_matrix_index) for every batch entry.
template <typename Fn>
void for_each_batch(const MatmulShape& s, Fn fn) {
  size_t total = 1;
  for (int64_t d : s.batch) total *= size_t(d);
  std::vector<int64_t> idx(s.batch.size(), 0);
  for (size_t b = 0; b < total; ++b) {
    size_t il = 0, ir = 0;
    for (size_t d = 0; d < s.batch.size(); ++d) {
      il += size_t(idx[d]) * s.lhs_batch_strides[d];
      ir += size_t(idx[d]) * s.rhs_batch_strides[d];
    }
    fn(b, il, ir);
    for (size_t d = s.batch.size(); d-- > 0;) {
      if (++idx[d] < s.batch[d]) break;
      idx[d] = 0;
    }
  }
}

// Float and hybrid matmul: the rhs is read through `rhs_value(index)`, which dequantizes
// quantized weights with the dcast formula. Accumulation is in k order, no FMA.
template <typename T, typename RhsFn>
void float_matmul(const MatmulShape& s, const Tensor& lhs, RhsFn rhs_value, const Tensor* bias,
                  Tensor& y) {
  // Operands are read once into compute-precision arrays; the rhs through `rhs_value`.
  std::vector<T> a(size_t(lhs.num_elements())), w;
  for (size_t i = 0; i < a.size(); ++i) a[i] = T(lhs.float_at(i));
  size_t rhs_count = 0;
  for_each_batch(s, [&](size_t, size_t, size_t ir) { rhs_count = std::max(rhs_count, (ir + 1) * s.k * s.n); });
  w.resize(rhs_count);
  for (size_t i = 0; i < w.size(); ++i) w[i] = T(rhs_value(i));
  for_each_batch(s, [&](size_t b, size_t il, size_t ir) {
    for (size_t i = 0; i < s.m; ++i) {
      for (size_t j = 0; j < s.n; ++j) {
        T acc = 0;
        for (size_t kk = 0; kk < s.k; ++kk) {
          const T prod = a[(il * s.m + i) * s.k + kk] * w[(ir * s.k + kk) * s.n + j];
          acc = acc + prod;
        }
        if (bias) acc = acc + T(bias->float_at(j));
        y.set_float((b * s.m + i) * s.n + j, double(acc));
      }
    }
  });
}

// A hybrid matmul with activations = "dynamic_i8" (docs/numerics.md): each row's blocks (the
// weights' blocks along K) quantized to i8 per call, exact integer sums per block, and the
// block terms f32(t) · f32(d · s_w) added in block order to acc = +0, then the bias.
void dynamic_i8_matmul(const MatmulShape& s, const Tensor& lhs, const Tensor& rhs, const Tensor* bias, Tensor& y) {
  const ElementType& er = rhs.type.element;
  const QuantView rv(er, rhs.type.dims);
  const size_t block = size_t(numerics::dynamic_i8_block(er, int64_t(s.k)));
  const size_t blocks = block == 0 ? 0 : (s.k + block - 1) / block;
  std::vector<float> x(s.k), d(blocks);
  std::vector<int8_t> q(s.k);
  std::vector<int32_t> sums(blocks);
  for_each_batch(s, [&](size_t b, size_t il, size_t ir) {
    for (size_t i = 0; i < s.m; ++i) {
      for (size_t kk = 0; kk < s.k; ++kk) x[kk] = float(lhs.float_at((il * s.m + i) * s.k + kk));
      for (size_t bb = 0; bb < blocks; ++bb) {
        const size_t k0 = bb * block;
        d[bb] = numerics::quantize_block_i8(x.data() + k0, int64_t(std::min(block, s.k - k0)), q.data() + k0, &sums[bb]);
      }
      for (size_t j = 0; j < s.n; ++j) {
        float acc = 0.0f;
        for (size_t bb = 0; bb < blocks; ++bb) {
          const size_t k0 = bb * block, k1 = std::min(s.k, k0 + block);
          int32_t t = 0;  // |t| < 2^31: the verifier bounds the block (kMaxDynamicBlock)
          for (size_t kk = k0; kk < k1; ++kk) {
            const size_t ri = (ir * s.k + kk) * s.n + j;
            t += int32_t(q[kk]) * int32_t(rhs.int_at(ri) - rv.zp(ri));
          }
          const size_t pi = (ir * s.k + k0) * s.n + j;
          acc = acc + numerics::dynamic_i8_block_term(t, d[bb], numerics::compute_scale_f32(rv.scale(pi), er.float_kind));
        }
        if (bias) acc = acc + float(bias->float_at(j));
        y.set_float((b * s.m + i) * s.n + j, double(acc));
      }
    }
  });
}

Status eval_quant_matmul(const Op& op, const MatmulShape& s, const Tensor& lhs, const Tensor& rhs,
                         const Tensor* bias, Tensor& y, NumericsProfile profile) {
  const ElementType &el = lhs.type.element, &er = rhs.type.element, &eo = y.type.element;
  const int64_t za = el.zero_points[0];
  const QuantView rv(er, rhs.type.dims), ov(eo, y.type.dims);
  // The accumulator type (i32 storage, zero point 0, scale s_a·s_w) stores acc unchanged.
  bool accumulator_out = eo.storage.width == 32 && eo.storage.is_signed;
  for (size_t j = 0; j < s.n; ++j) {
    const double acc_scale = accumulator_scale(el, er, j);
    accumulator_out = accumulator_out && ov.zp(j) == 0 && scales_match(acc_scale, ov.scale(j));
  }
  const AccumulatorRequant requant(profile, el, er, eo, s.n, bias ? &bias->type.element : nullptr);
  const AccumulatorWidth width(profile, el, er, bias, accumulator_out);
  // The operands read once as centred integers; each row's sums run along k over whole rows of
  // the right-hand side (exact in int64, so the order is free).
  std::vector<int64_t> a(size_t(lhs.num_elements())), r(size_t(rhs.num_elements())), sums(s.n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = lhs.int_at(i) - za;
  for (size_t i = 0; i < r.size(); ++i) r[i] = rhs.int_at(i) - rv.zp(i);
  Status status;
  for_each_batch(s, [&](size_t b, size_t il, size_t ir) {
    for (size_t i = 0; i < s.m && status.is_ok(); ++i) {
      std::fill(sums.begin(), sums.end(), 0);
      for (size_t kk = 0; kk < s.k; ++kk) {
        const int64_t av = a[(il * s.m + i) * s.k + kk];
        const int64_t* row = r.data() + (ir * s.k + kk) * s.n;
        for (size_t j = 0; j < s.n; ++j) sums[j] += av * row[j];
      }
      for (size_t j = 0; j < s.n; ++j) {
        int64_t acc = sums[j];
        if (!width.add_bias_and_check(acc, bias ? bias->int_at(j) : 0)) {
          status = op_error(op, std::string(width.name()) + " accumulator overflow at output row " + std::to_string(i) +
                                    ", column " + std::to_string(j) + " (value " +
                                    std::to_string(acc) + ")");
          return;
        }
        const size_t oi = (b * s.m + i) * s.n + j;
        y.set_int(oi, accumulator_out ? acc : requant.apply(j, acc, ov.zp(oi), eo.storage.min, eo.storage.max));
      }
    }
  });
  return status;
}

Result<Tensor> eval_matmul(const Op& op, const std::vector<const Tensor*>& in, const Type& rt, NumericsProfile profile) {
  const Tensor &lhs = *in[0], &rhs = *in[1];
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  const int64_t k1 = lhs.type.dims[lhs.type.rank() - 1], k2 = rhs.type.dims[rhs.type.rank() - 2];
  if (k1 != k2) {
    return op_error(op, "contracting dimensions differ at run time: " + std::to_string(k1) +
                            " vs " + std::to_string(k2));
  }
  auto batch = broadcast_shapes(std::vector<int64_t>(lhs.type.dims.begin(), lhs.type.dims.end() - 2),
                                std::vector<int64_t>(rhs.type.dims.begin(), rhs.type.dims.end() - 2));
  if (!batch.is_ok()) return op_error(op, batch.status().message());
  const MatmulShape s = matmul_shape(lhs, rhs, *batch);
  if (bias && size_t(bias->num_elements()) != s.n) {
    return op_error(op, "bias has " + std::to_string(bias->num_elements()) + " elements, N is " +
                            std::to_string(s.n));
  }
  std::vector<int64_t> dims = *batch;
  dims.push_back(int64_t(s.m));
  dims.push_back(int64_t(s.n));
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  const ElementType& er = rhs.type.element;
  if (rt.element.is_uniform()) {
    QRT_RETURN_IF_ERROR(eval_quant_matmul(op, s, lhs, rhs, bias, y, profile));
    return y;
  }
  const bool f64 = is_f64(rt.element);
  if (er.is_float()) {
    auto w = [&](size_t i) { return rhs.float_at(i); };
    f64 ? float_matmul<double>(s, lhs, w, bias, y) : float_matmul<float>(s, lhs, w, bias, y);
    return y;
  }
  if (const Attribute* a = op.attr("activations"); a && a->s == "dynamic_i8") {
    dynamic_i8_matmul(s, lhs, rhs, bias, y);
    return y;
  }
  // Hybrid: weights dequantized with the dcast formula, then the float matmul.
  const QuantView rv(er, rhs.type.dims);
  if (f64) {
    float_matmul<double>(s, lhs, [&](size_t i) {
      return numerics::dequantize_f64(rhs.int_at(i), rv.zp(i), rv.scale(i));
    }, bias, y);
  } else {
    float_matmul<float>(s, lhs, [&](size_t i) {
      const float v = numerics::dequantize_f32(rhs.int_at(i), rv.zp(i),
                                               numerics::compute_scale_f32(rv.scale(i), er.float_kind));
      return double(round_to_float_kind(v, er.float_kind));
    }, bias, y);
  }
  return y;
}

Tensor eval_clamp(const Op& op, const Tensor& x, double lo, double hi) {
  Tensor y = x.clone();  // x may be a view of memory another op still reads
  const ElementType& e = x.type.element;
  if (e.is_float()) {
    const double l = round_to_float_kind(lo, e.float_kind), h = round_to_float_kind(hi, e.float_kind);
    for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
      const double v = x.float_at(i);
      y.set_float(i, v < l ? l : v > h ? h : v);  // NaN passes through
    }
    return y;
  }
  const QuantView view(e, x.type.dims);
  const bool relu = op.kind == OpKind::kRelu;
  // The stored bounds of each channel, computed once.
  std::vector<std::pair<int64_t, int64_t>> bounds(e.num_channels());
  for (size_t c = 0; c < bounds.size(); ++c) {
    bounds[c] = relu ? std::pair<int64_t, int64_t>(e.zero_points[c], e.storage.max) : clamp_stored_bounds(e, c, lo, hi);
  }
  const size_t count = size_t(x.num_elements());
  for (size_t i = 0; i < count; ++i) {
    const auto [ql, qh] = bounds[bounds.size() == 1 ? 0 : view.channel(i)];
    y.set_int(i, numerics::clamp_i64(x.int_at(i), ql, qh));
  }
  return y;
}

Tensor eval_relu_float(const Tensor& x) {
  Tensor y = x.clone();  // x may be a view of memory another op still reads
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
    const double v = x.float_at(i);
    if (v < 0) y.set_float(i, 0.0);  // -0.0 and NaN pass through unchanged
  }
  return y;
}

Tensor eval_requantize(const Tensor& x, const Type& rt, NumericsProfile profile) {
  Tensor y = make_result(rt, x.type.dims);
  const ElementType &ei = x.type.element, &eo = rt.element;
  const QuantView iv(ei, x.type.dims), ov(eo, y.type.dims);
  if (is_tflite(profile)) {
    // requantize.h: (q - z_in) times the Q31 form of f32(s_in) / f32(s_out), plus z_out.
    const bool single = profile == NumericsProfile::kTfliteSingleRounding;
    for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
      const numerics::QuantizedMultiplier m =
          numerics::quantize_multiplier(double(float(iv.scale(i))) / double(float(ov.scale(i))), single);
      y.set_int(i, numerics::requantize_tflite(x.int_at(i) - iv.zp(i), m, ov.zp(i), eo.storage.min, eo.storage.max, single));
    }
    return y;
  }
  for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
    const float m = numerics::multiplier(iv.scale(i), ov.scale(i));
    y.set_int(i, numerics::requantize(x.int_at(i) - iv.zp(i), m, ov.zp(i), eo.storage.min,
                                      eo.storage.max));
  }
  return y;
}

// The op without its fused clamp.
Result<Tensor> evaluate_unfused(const Graph& graph, const Op& op, const std::vector<const Tensor*>& in) {
  const Type& rt = graph.values[size_t(op.results[0])].type;
  const NumericsProfile profile = graph.numerics;
  const bool profiled = !profile_formula(graph, op).empty();
  if (profiled && profile == NumericsProfile::kStableHlo && op.kind != OpKind::kQCast && op.kind != OpKind::kDCast) {
    return dequantize_op_quantize(op, in, rt);
  }
  switch (op.kind) {
    case OpKind::kConstant:
      return eval_constant(op, rt);
    case OpKind::kMatmul:
      return eval_matmul(op, in, rt, profile);
    case OpKind::kAdd:
    case OpKind::kMul: {
      if (rt.element.is_integer()) return eval_math(op, in, rt);
      auto dims = broadcast_shapes(in[0]->type.dims, in[1]->type.dims);
      if (!dims.is_ok()) return op_error(op, dims.status().message());
      QRT_RETURN_IF_ERROR(check_result_shape(op, rt, *dims));
      if (rt.element.is_float()) return eval_float_binary(op.kind, *in[0], *in[1], rt, *dims);
      std::optional<TfliteBinary> tflite;
      if (profiled) {
        tflite.emplace(op.kind, in[0]->type.element, in[1]->type.element, rt.element,
                       profile == NumericsProfile::kTfliteSingleRounding);
      }
      return eval_quant_binary(op.kind, *in[0], *in[1], rt, *dims, tflite ? &*tflite : nullptr);
    }
    case OpKind::kConv2d:
    case OpKind::kConvTranspose2d:
      return eval_conv2d(op, in, rt, profile);
    case OpKind::kConcat:
      return eval_concat(op, in, rt);
    case OpKind::kMaxPool2d:
    case OpKind::kAvgPool2d:
      return eval_pool2d(op, *in[0], rt, profiled ? profile : NumericsProfile::kDefault);
    case OpKind::kTranspose:
      return eval_transpose(op, *in[0], rt);
    case OpKind::kPad:
      return eval_pad(op, *in[0], rt);
    case OpKind::kSoftmax:
    case OpKind::kLogistic:
      if (profiled) return eval_softmax_logistic_tflite(op, *in[0], rt, profile == NumericsProfile::kTfliteSingleRounding);
      return eval_softmax_logistic(op, *in[0], rt);
    case OpKind::kMean:
      return eval_mean(op, *in[0], rt, profiled ? profile : NumericsProfile::kDefault);
    case OpKind::kReshape: {
      auto dims = reshape_dims(rt, in[0]->num_elements());
      if (!dims.is_ok()) return op_error(op, dims.status().message());
      Tensor y = *in[0];
      y.type = rt;
      y.type.dims = std::move(dims).value();
      return y;
    }
    default:
      if (op.kind >= OpKind::kSub) return eval_math(op, in, rt);
      break;
  }
  // The remaining ops keep the operand's shape.
  const Tensor& x = *in[0];
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, x.type.dims));
  switch (op.kind) {
    case OpKind::kQCast:
    case OpKind::kDCast: {
      const Type& q = op.kind == OpKind::kQCast ? rt : x.type;
      if (!q.element.is_any_uniform()) {
        return op_error(op, "cannot run on " + q.element.to_string() +
                                ": calibrated and any types are placeholders; resolve them with the 'propagate' pass");
      }
      return op.kind == OpKind::kQCast ? eval_qcast(x, rt, profile) : eval_dcast(x, rt, profile);
    }
    case OpKind::kStats: {
      Tensor y = x.clone();
      y.type = rt;
      y.type.dims = x.type.dims;
      return y;
    }
    case OpKind::kFakeQuant: {
      // Exactly qcast then dcast to the nudged type (what the fake-quant pass rewrites it to).
      Type qt = rt;
      qt.dims = x.type.dims;
      auto element = fake_quant_element_type(op, rt.element.float_kind);
      if (!element.is_ok()) return op_error(op, element.status().message());
      qt.element = *element;
      return eval_dcast(eval_qcast(x, qt, NumericsProfile::kDefault), rt, NumericsProfile::kDefault);
    }
    case OpKind::kSCast: return eval_scast(x, rt);
    case OpKind::kRelu:
      return x.type.element.is_float() ? eval_relu_float(x) : eval_clamp(op, x, 0, 0);
    case OpKind::kClamp: return eval_clamp(op, x, op.attr("min")->f, op.attr("max")->f);
    case OpKind::kRequantize: return eval_requantize(x, rt, profile);
    default: break;
  }
  return op_error(op, "has no reference implementation");
}

}  // namespace

Result<Tensor> evaluate_op_reference(const Graph& graph, const Op& op, const std::vector<const Tensor*>& in) {
  // Sub-channel blocks must tile the run-time shape (dimensions may have been dynamic).
  for (const Tensor* t : in) {
    if (!t->type.element.is_sub_channel()) continue;
    Status s = t->type.verify_sub_channel_container();
    if (!s.is_ok()) return op_error(op, "operand " + t->type.to_string() + ": " + s.message());
  }
  QRT_ASSIGN_OR_RETURN(Tensor y, evaluate_unfused(graph, op, in));
  // A fused clamp is exactly a qrt.clamp on the result.
  if (const std::optional<FusedClamp> c = fused_clamp(op)) return eval_clamp(op, y, c->min, c->max);
  return y;
}

Result<std::vector<Tensor>> evaluate_op_results(const Graph& graph, const Op& op,
                                                const std::vector<const Tensor*>& operands) {
  if (op.kind == OpKind::kDynamicQuantize) return eval_dynamic_quantize(graph, op, *operands[0]);
  QRT_ASSIGN_OR_RETURN(Tensor t, evaluate_op_reference(graph, op, operands));
  std::vector<Tensor> results;
  results.push_back(std::move(t));
  return results;
}

Result<std::vector<Tensor>> run_reference(const Graph& graph, std::vector<Tensor> inputs) {
  return run_graph(graph, std::move(inputs), nullptr);
}

Status check_op_result_shape(const Op& op, const Type& declared, const std::vector<int64_t>& dims) {
  return check_result_shape(op, declared, dims);
}

Result<std::vector<Tensor>> run_graph(const Graph& graph, std::vector<Tensor> inputs, const OpOverride& override_op) {
  if (inputs.size() != graph.inputs.size()) {
    return Status::error("graph @" + graph.name + " takes " + std::to_string(graph.inputs.size()) +
                         " inputs, got " + std::to_string(inputs.size()));
  }
  std::vector<Tensor> values(graph.values.size());
  std::vector<int> last_use(graph.values.size(), -1);
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    for (int v : graph.ops[o].operands) last_use[size_t(v)] = int(o);
  }
  for (int v : graph.outputs) last_use[size_t(v)] = int(graph.ops.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& arg = graph.values[size_t(graph.inputs[i])];
    auto who = [&] { return "input " + std::to_string(i) + " ('%" + arg.name + "')"; };  // for errors only
    const Tensor& t = inputs[i];
    if (!(t.type.element == arg.type.element)) {
      return Status::error(who() + " has element type " + t.type.element.to_string() + ", expected " +
                           arg.type.element.to_string());
    }
    bool shape_ok = t.type.dims.size() == arg.type.dims.size() && t.type.has_static_shape();
    for (size_t d = 0; shape_ok && d < t.type.dims.size(); ++d) {
      shape_ok = arg.type.dims[d] < 0 || arg.type.dims[d] == t.type.dims[d];
    }
    if (!shape_ok) {
      return Status::error(who() + " has shape [" + dims_to_string(t.type.dims) + "], expected " +
                           arg.type.to_string());
    }
    Status s = Type::tensor(t.type.dims, t.type.element).verify();
    if (arg.type.is_tensor && !s.is_ok()) return Status::error(who() + ": " + s.message());
    if (t.byte_size() != size_t(t.num_elements()) * t.element_size()) {
      return Status::error(who() + " holds " + std::to_string(t.byte_size()) + " bytes, expected " +
                           std::to_string(size_t(t.num_elements()) * t.element_size()));
    }
    values[size_t(graph.inputs[i])] = std::move(inputs[i]);
    values[size_t(graph.inputs[i])].type.is_tensor = arg.type.is_tensor;
  }
  std::vector<const Tensor*> operands;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const Op& op = graph.ops[o];
    operands.clear();
    for (int v : op.operands) operands.push_back(&values[size_t(v)]);
    std::optional<Result<Tensor>> by_backend;
    if (override_op) by_backend = override_op(o, operands);
    if (by_backend) {
      if (!by_backend->is_ok()) return by_backend->status();
      values[size_t(op.results[0])] = std::move(*by_backend).value();
    } else if (op.kind == OpKind::kDynamicQuantize) {
      std::vector<Tensor> results = eval_dynamic_quantize(graph, op, *operands[0]);
      for (size_t r = 0; r < results.size(); ++r) values[size_t(op.results[r])] = std::move(results[r]);
    } else {
      QRT_ASSIGN_OR_RETURN(Tensor result, evaluate_op_reference(graph, op, operands));
      values[size_t(op.results[0])] = std::move(result);
    }
    for (int v : op.operands) {
      if (last_use[size_t(v)] == int(o)) values[size_t(v)] = Tensor();  // free early
    }
  }
  std::vector<Tensor> outputs;
  for (int v : graph.outputs) outputs.push_back(values[size_t(v)]);
  return outputs;
}

}  // namespace qrt
