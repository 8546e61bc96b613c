// qrt — reference kernels of the neural-network ops: conv2d, pooling, transpose, concat,
// pad. Formulas in docs/numerics.md; clarity over speed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ir/nn_params.h"
#include "ir/numerics.h"
#include "jit/ref/reference_profiles.h"
#include "jit/ref/reference_util.h"

namespace qrt::ref_detail {

namespace {

// Row-major offset of a 4-D activation element given logical (n, c, h, w).
struct Act4 {
  std::vector<int64_t> dims;
  bool nchw;
  size_t at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    if (nchw) return size_t(((n * dims[1] + c) * dims[2] + h) * dims[3] + w);
    return size_t(((n * dims[1] + h) * dims[2] + w) * dims[3] + c);
  }
};

float weight_f32(const Tensor& w, size_t i, const QuantView& view) {
  const ElementType& e = w.type.element;
  if (e.is_float()) return float(w.float_at(i));
  const float v = numerics::dequantize_f32(w.int_at(i), view.zp(i),
                                           numerics::compute_scale_f32(view.scale(i), e.float_kind));
  return float(round_to_float_kind(v, e.float_kind));
}

}  // namespace

Result<Tensor> eval_conv2d(const Op& op, const std::vector<const Tensor*>& in, const Type& rt, NumericsProfile profile) {
  const Tensor &x = *in[0], &f = *in[1];
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  // qrt.conv_transpose2d shares everything but the map from output to input positions.
  const bool transposed = op.kind == OpKind::kConvTranspose2d;
  QRT_ASSIGN_OR_RETURN(Window2d w, transposed ? conv_transpose2d_window(op, f.type.dims) : conv2d_window(op, f.type.dims));
  const int64_t out_c = f.type.dims[0];
  const int64_t ig = w.nchw ? f.type.dims[1] : f.type.dims[3];
  if (x.type.dims[w.channel_dim()] != ig * w.groups) {
    return op_error(op, "input has " + std::to_string(x.type.dims[w.channel_dim()]) +
                            " channels at run time, the filter expects " + std::to_string(ig * w.groups));
  }
  // A bias whose length the verifier left dynamic is read once per output channel.
  if (bias && bias->num_elements() != out_c) {
    return op_error(op, "bias has " + std::to_string(bias->num_elements()) + " elements at run time, the filter has " +
                            std::to_string(out_c) + " output channels");
  }
  const std::vector<int64_t> dims =
      transposed ? transposed_output_dims(x.type.dims, w, out_c) : window_output_dims(x.type.dims, w, out_c);
  // The input position that kernel tap k reaches from output position o along one dimension
  // (-1: none). conv2d: o·s - pad + k·d. conv_transpose2d: the i with i·s - pad + k·d = o.
  auto input_at = [transposed](int64_t o, int64_t k, int64_t s, int64_t pad, int64_t d, int64_t extent) -> int64_t {
    int64_t i = o * s - pad + k * d;
    if (transposed) {
      const int64_t t = o + pad - k * d;
      if (t < 0 || t % s != 0) return -1;
      i = t / s;
    }
    return i >= 0 && i < extent ? i : -1;
  };
  if (dims[w.height_dim()] <= 0 || dims[w.width_dim()] <= 0) {
    return op_error(op, "the window is larger than the padded input at run time");
  }
  if (x.type.dims[0] % w.batch_groups != 0 || out_c % w.batch_groups != 0) {
    return op_error(op, "batch " + std::to_string(x.type.dims[0]) + " or output channels " + std::to_string(out_c) +
                            " at run time are not divisible by batch_groups " + std::to_string(w.batch_groups));
  }
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  const Act4 ya{dims, w.nchw};
  const int64_t oc_per_group = out_c / w.groups;
  const int64_t oc_per_batch_group = out_c / w.batch_groups;
  const bool quant = rt.element.is_uniform();
  const bool f64 = !quant && is_f64(rt.element);
  const QuantView fv(f.type.element, f.type.dims);
  const ElementType& oe = rt.element;
  const QuantView ov(oe, dims);
  // Quantized: per-output-channel multiplier, or the accumulator type kept as is.
  bool accumulator_out = quant && oe.storage.width == 32 && oe.storage.is_signed;
  std::optional<AccumulatorRequant> requant;
  if (quant) {
    const ElementType& xe = x.type.element;
    for (int64_t o = 0; o < out_c; ++o) {
      const double acc_scale = accumulator_scale(xe, f.type.element, size_t(o));
      const size_t oc = oe.num_channels() == 1 ? 0 : size_t(o);
      accumulator_out = accumulator_out && oe.zero_points[oc] == 0 && scales_match(acc_scale, oe.scales[oc]);
    }
    requant.emplace(profile, xe, f.type.element, oe, size_t(out_c), bias ? &bias->type.element : nullptr);
  }
  const AccumulatorWidth width(profile, x.type.element, f.type.element, bias, accumulator_out);
  // Operands read once into plain arrays (centred integers, or the compute-precision floats
  // each formula uses) so the loops below stay simple.
  const int64_t zx = quant ? x.type.element.zero_points[0] : 0;
  std::vector<int64_t> xq, fq;
  std::vector<float> xs, fs;
  std::vector<double> xd, fd;
  const size_t x_count = size_t(x.num_elements()), f_count = size_t(f.num_elements());
  for (size_t i = 0; i < x_count; ++i) {
    if (quant) {
      xq.push_back(x.int_at(i) - zx);
    } else if (f64) {
      xd.push_back(x.float_at(i));
    } else {
      xs.push_back(float(x.float_at(i)));
    }
  }
  for (size_t i = 0; i < f_count; ++i) {
    if (quant) {
      fq.push_back(f.int_at(i) - fv.zp(i));
    } else if (f64) {
      fd.push_back(f.float_at(i));
    } else {
      fs.push_back(weight_f32(f, i, fv));
    }
  }
  // Element strides of the input (n, c, h, w) and the filter (o, i, kh, kw) in their layouts.
  const int64_t xh = x.type.dims[w.height_dim()], xw = x.type.dims[w.width_dim()];
  const int64_t xc = x.type.dims[w.channel_dim()];
  const int64_t x_n = xc * xh * xw, x_c = w.nchw ? xh * xw : 1, x_h = w.nchw ? xw : xw * xc, x_w = w.nchw ? 1 : xc;
  const int64_t f_o = ig * w.kh * w.kw, f_i = w.nchw ? w.kh * w.kw : 1, f_y = w.nchw ? w.kw : w.kw * ig,
                f_x = w.nchw ? 1 : ig;
  // The taps of one output position that reach the input, in accumulation order (kernel row,
  // then kernel column), as offsets into the input and the filter.
  struct Tap {
    int64_t x, f;
  };
  std::vector<Tap> taps;
  // Σ over input channel, then taps, of x·f in the type of `acc`: one f32/f64 rounding per
  // product and per sum, in this order.
  auto dot = [&](const auto* xv, const auto* fv, int64_t x0, int64_t f0, auto acc) {
    // Indices, not row pointers: an empty input has no data to offset (a transposed
    // convolution's output of an empty input is its bias, and its taps none).
    for (int64_t ci = 0; ci < ig; ++ci) {
      const int64_t xc_row = x0 + ci * x_c, fc_row = f0 + ci * f_i;
      for (const Tap& t : taps) {
        const auto prod = xv[xc_row + t.x] * fv[fc_row + t.f];
        acc = acc + prod;
      }
    }
    return acc;
  };
  // The same sum of exact integers, in any order: taps, then contiguous channels where the
  // layout (NHWC) makes them so.
  auto int_dot = [&](int64_t x0, int64_t f0) {
    int64_t acc = 0;
    for (const Tap& t : taps) {
      const int64_t* xp = xq.data() + x0 + t.x;
      const int64_t* fp = fq.data() + f0 + t.f;
      if (x_c == 1 && f_i == 1) {
        for (int64_t ci = 0; ci < ig; ++ci) acc += xp[ci] * fp[ci];
      } else {
        for (int64_t ci = 0; ci < ig; ++ci) acc += xp[ci * x_c] * fp[ci * f_i];
      }
    }
    return acc;
  };
  for (int64_t n = 0; n < dims[0]; ++n) {
    for (int64_t oh = 0; oh < dims[w.height_dim()]; ++oh) {
      for (int64_t ow = 0; ow < dims[w.width_dim()]; ++ow) {
        // Positions in the padding (or that no input reaches) are skipped.
        taps.clear();
        for (int64_t ky = 0; ky < w.kh; ++ky) {
          const int64_t ih = input_at(oh, ky, w.sh, w.pad_top, w.dh, xh);
          if (ih < 0) continue;
          for (int64_t kx = 0; kx < w.kw; ++kx) {
            const int64_t iw = input_at(ow, kx, w.sw, w.pad_left, w.dw, xw);
            if (iw >= 0) taps.push_back({ih * x_h + iw * x_w, ky * f_y + kx * f_x});
          }
        }
        for (int64_t o = 0; o < out_c; ++o) {
          const int64_t g = o / oc_per_group;
          // The input sample: batch group o / (O / B) holds samples [bg·N/B, (bg+1)·N/B).
          const int64_t xn = o / oc_per_batch_group * dims[0] + n;
          const int64_t x0 = xn * x_n + g * ig * x_c, f0 = o * f_o;
          const size_t yi = ya.at(n, o, oh, ow);
          // Accumulation order: input channel, then kernel row, then kernel column.
          if (!quant) {
            if (f64) {
              const double dacc = dot(xd.data(), fd.data(), x0, f0, 0.0);
              y.set_float(yi, bias ? dacc + bias->float_at(size_t(o)) : dacc);
            } else {
              const float facc = dot(xs.data(), fs.data(), x0, f0, 0.0f);
              y.set_float(yi, double(bias ? facc + float(bias->float_at(size_t(o))) : facc));
            }
            continue;
          }
          int64_t iacc = int_dot(x0, f0);
          if (!width.add_bias_and_check(iacc, bias ? bias->int_at(size_t(o)) : 0)) {
            return op_error(op, std::string(width.name()) + " accumulator overflow at output channel " + std::to_string(o) +
                                    " (value " + std::to_string(iacc) + ")");
          }
          y.set_int(yi, accumulator_out ? iacc
                                        : requant->apply(size_t(o), iacc, ov.zp(yi), oe.storage.min, oe.storage.max));
        }
      }
    }
  }
  return y;
}

Result<Tensor> eval_pool2d(const Op& op, const Tensor& x, const Type& rt, NumericsProfile profile) {
  QRT_ASSIGN_OR_RETURN(Window2d w, pool2d_window(op));
  const std::vector<int64_t> dims = window_output_dims(x.type.dims, w, x.type.dims[w.channel_dim()]);
  if (dims[w.height_dim()] <= 0 || dims[w.width_dim()] <= 0) {
    return op_error(op, "the pooling window is larger than the padded input at run time");
  }
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  const Act4 xa{x.type.dims, w.nchw}, ya{dims, w.nchw};
  const bool is_max = op.kind == OpKind::kMaxPool2d;
  const bool quant = rt.element.is_uniform();
  const bool f64 = !quant && is_f64(rt.element);
  const ElementType &ie = x.type.element, &oe = rt.element;
  for (int64_t n = 0; n < dims[0]; ++n) {
    for (int64_t c = 0; c < dims[w.channel_dim()]; ++c) {
      for (int64_t oh = 0; oh < dims[w.height_dim()]; ++oh) {
        for (int64_t ow = 0; ow < dims[w.width_dim()]; ++ow) {
          int64_t imax = std::numeric_limits<int64_t>::min(), isum = 0, count = 0;
          double fmax = -INFINITY, dsum = 0.0;
          float fsum = 0.0f;
          // Window order: rows, then columns; positions in the padding are skipped.
          for (int64_t ky = 0; ky < w.kh; ++ky) {
            const int64_t ih = oh * w.sh - w.pad_top + ky;
            if (ih < 0 || ih >= x.type.dims[w.height_dim()]) continue;
            for (int64_t kx = 0; kx < w.kw; ++kx) {
              const int64_t iw = ow * w.sw - w.pad_left + kx;
              if (iw < 0 || iw >= x.type.dims[w.width_dim()]) continue;
              const size_t xi = xa.at(n, c, ih, iw);
              ++count;
              if (quant) {
                const int64_t q = x.int_at(xi);
                imax = std::max(imax, q);
                isum += q - ie.zero_points[0];
              } else {
                const double v = x.float_at(xi);
                if (v > fmax || std::isnan(v)) fmax = std::isnan(fmax) ? fmax : v;  // NaN propagates
                if (f64) {
                  dsum = dsum + v;
                } else {
                  fsum = fsum + float(v);
                }
              }
            }
          }
          const size_t yi = ya.at(n, c, oh, ow);
          const int64_t divisor = w.count_include_pad ? w.kh * w.kw : count;
          if (is_max) {
            if (quant) {
              y.set_int(yi, imax);
            } else {
              y.set_float(yi, fmax);
            }
          } else if (quant && is_tflite(profile)) {
            // TFLite (equal input and output parameters): the stored values' sum divided
            // with rounding half away from zero.
            const int64_t average = numerics::average_tflite(isum + divisor * ie.zero_points[0], divisor);
            y.set_int(yi, numerics::clamp_i64(average, oe.storage.min, oe.storage.max));
          } else if (quant) {
            const float m = numerics::multiplier(ie.scales[0], oe.scales[0] * double(divisor));
            y.set_int(yi, numerics::requantize(isum, m, oe.zero_points[0], oe.storage.min, oe.storage.max));
          } else if (f64) {
            y.set_float(yi, dsum / double(divisor));
          } else {
            y.set_float(yi, double(fsum / float(divisor)));
          }
        }
      }
    }
  }
  return y;
}

Result<Tensor> eval_transpose(const Op& op, const Tensor& x, const Type& rt) {
  std::vector<int64_t> perm;
  for (const Attribute& a : op.attr("perm")->array) perm.push_back(a.i);
  const size_t rank = perm.size();
  std::vector<int64_t> dims(rank);
  for (size_t i = 0; i < rank; ++i) dims[i] = x.type.dims[size_t(perm[i])];
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  std::vector<size_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * size_t(x.type.dims[d]);
  const unsigned es = x.element_size();
  std::vector<int64_t> idx(rank, 0);
  for (size_t o = 0; o < size_t(y.num_elements()); ++o) {
    size_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += size_t(idx[d]) * in_strides[size_t(perm[d])];
    std::memcpy(y.bytes() + o * es, x.bytes() + src * es, es);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

Result<Tensor> eval_concat(const Op& op, const std::vector<const Tensor*>& in, const Type& rt) {
  const size_t axis = size_t(op.attr("axis")->i);
  std::vector<int64_t> dims = in[0]->type.dims;
  dims[axis] = 0;
  for (const Tensor* t : in) {
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d != axis && t->type.dims[d] != in[0]->type.dims[d]) {
        return op_error(op, "operands differ outside the concatenation axis at run time");
      }
    }
    dims[axis] += t->type.dims[axis];
  }
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  size_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= size_t(dims[d]);
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= size_t(dims[d]);
  const ElementType& oe = rt.element;
  size_t offset = 0;  // position along the axis
  for (const Tensor* t : in) {
    const size_t len = size_t(t->type.dims[axis]);
    const ElementType& ie = t->type.element;
    const bool same = !oe.is_uniform() || ie == oe;
    const float m = oe.is_uniform() ? numerics::multiplier(ie.scales[0], oe.scales[0]) : 1.0f;
    for (size_t o = 0; o < outer; ++o) {
      for (size_t k = 0; k < len * inner; ++k) {
        const size_t src = o * len * inner + k;
        const size_t dst = (o * size_t(dims[axis]) + offset) * inner + k;
        if (same) {
          std::memcpy(y.bytes() + dst * y.element_size(), t->bytes() + src * t->element_size(),
                      y.element_size());
        } else {
          y.set_int(dst, numerics::requantize(t->int_at(src) - ie.zero_points[0], m, oe.zero_points[0],
                                              oe.storage.min, oe.storage.max));
        }
      }
    }
    offset += len;
  }
  return y;
}

Result<Tensor> eval_pad(const Op& op, const Tensor& x, const Type& rt) {
  std::vector<int64_t> pads;
  for (const Attribute& a : op.attr("pads")->array) pads.push_back(a.i);
  const double value = op.attr("value") ? op.attr("value")->f : 0.0;
  const size_t rank = x.type.rank();
  std::vector<int64_t> dims(rank);
  for (size_t d = 0; d < rank; ++d) dims[d] = x.type.dims[d] + pads[d] + pads[d + rank];
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  const ElementType& e = rt.element;
  const QuantView view(e, dims);
  for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
    if (e.is_float()) {
      y.set_float(i, value);
    } else if (is_f64(e)) {
      y.set_int(i, numerics::quantize_f64(value, view.scale(i), view.zp(i), e.storage.min, e.storage.max));
    } else {
      y.set_int(i, numerics::quantize_f32(float(value), numerics::compute_scale_f32(view.scale(i), e.float_kind),
                                          view.zp(i), e.storage.min, e.storage.max));
    }
  }
  std::vector<int64_t> idx(rank, 0);
  const unsigned es = x.element_size();
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
    size_t dst = 0;
    for (size_t d = 0; d < rank; ++d) dst = dst * size_t(dims[d]) + size_t(idx[d] + pads[d]);
    std::memcpy(y.bytes() + dst * es, x.bytes() + i * es, es);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < x.type.dims[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

namespace {

// Element i of a float or per-tensor quantized tensor as the f32 value the formulas use.
float value_f32(const Tensor& x, size_t i) {
  const ElementType& e = x.type.element;
  if (e.is_float()) return float(x.float_at(i));
  return numerics::dequantize_f32(x.int_at(i), e.zero_points[0], numerics::compute_scale_f32(e.scales[0], e.float_kind));
}

void store_f32(Tensor& y, size_t i, float v) {
  const ElementType& e = y.type.element;
  if (e.is_float()) {
    y.set_float(i, v);
  } else {
    y.set_int(i, numerics::quantize_f32(v, numerics::compute_scale_f32(e.scales[0], e.float_kind), e.zero_points[0],
                                        e.storage.min, e.storage.max));
  }
}

}  // namespace

Result<Tensor> eval_softmax_logistic(const Op& op, const Tensor& x, const Type& rt) {
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, x.type.dims));
  Tensor y = make_result(rt, x.type.dims);
  const size_t n = size_t(x.num_elements());
  if (op.kind == OpKind::kLogistic) {
    for (size_t i = 0; i < n; ++i) store_f32(y, i, numerics::logistic_f32(value_f32(x, i)));
    return y;
  }
  int64_t axis = op.attr("axis") ? op.attr("axis")->i : -1;
  if (axis < 0) axis += int64_t(x.type.rank());
  const float beta = op.attr("beta") ? float(op.attr("beta")->f) : 1.0f;
  const size_t len = size_t(x.type.dims[size_t(axis)]);
  size_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < x.type.rank(); ++d) inner *= size_t(x.type.dims[d]);
  if (n == 0) return y;  // an empty row or an empty dimension around it
  std::vector<float> e(len);
  for (size_t outer = 0; outer < n / (len * inner); ++outer) {
    for (size_t in = 0; in < inner; ++in) {
      const size_t base = outer * len * inner + in;
      float m = -INFINITY;
      for (size_t k = 0; k < len; ++k) m = std::max(m, value_f32(x, base + k * inner));
      float sum = 0.0f;
      for (size_t k = 0; k < len; ++k) {
        const float z = (value_f32(x, base + k * inner) - m) * beta;
        e[k] = numerics::exp_f32(z);
        sum = sum + e[k];
      }
      for (size_t k = 0; k < len; ++k) store_f32(y, base + k * inner, e[k] / sum);
    }
  }
  return y;
}

Result<Tensor> eval_mean(const Op& op, const Tensor& x, const Type& rt, NumericsProfile profile) {
  const size_t rank = x.type.rank();
  std::vector<bool> reduced(rank, false);
  for (const Attribute& a : op.attr("axes")->array) reduced[size_t(a.i)] = true;
  const bool keepdims = op.attr("keepdims") && op.attr("keepdims")->i != 0;
  std::vector<int64_t> dims, kept_dims(rank);
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    kept_dims[d] = reduced[d] ? 1 : x.type.dims[d];
    if (reduced[d]) count *= x.type.dims[d];
    if (!reduced[d] || keepdims) dims.push_back(kept_dims[d]);
  }
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  const size_t out_n = size_t(y.num_elements());
  const bool quant = rt.element.is_uniform();
  const bool f64 = !quant && is_f64(rt.element);
  std::vector<int64_t> isum(out_n, 0);
  std::vector<float> fsum(out_n, 0.0f);
  std::vector<double> dsum(out_n, 0.0);
  // Elements are added in row-major order of the input; each lands in its output slot.
  std::vector<int64_t> idx(rank, 0);
  const int64_t zi = quant ? x.type.element.zero_points[0] : 0;
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
    size_t o = 0;
    for (size_t d = 0; d < rank; ++d) o = o * size_t(kept_dims[d]) + size_t(reduced[d] ? 0 : idx[d]);
    if (quant) {
      isum[o] += x.int_at(i) - zi;
    } else if (f64) {
      dsum[o] = dsum[o] + x.float_at(i);
    } else {
      fsum[o] = fsum[o] + float(x.float_at(i));
    }
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < x.type.dims[d]) break;
      idx[d] = 0;
    }
  }
  const ElementType& oe = rt.element;
  const bool tflite = quant && is_tflite(profile);
  const bool single = profile == NumericsProfile::kTfliteSingleRounding;
  // TFLite (reference_integer_ops/mean.h): the centred sum times the Q31 form of
  // f32(s_in) / f32(s_out), divided by the count rounding half away from zero.
  const numerics::QuantizedMultiplier q31 =
      tflite ? tflite_mean_multiplier(x.type.element, oe, single) : numerics::QuantizedMultiplier{};
  for (size_t o = 0; o < out_n; ++o) {
    if (tflite) {
      y.set_int(o, tflite_mean(isum[o], int64_t(count), q31, single, oe));
    } else if (quant) {
      const float m = numerics::multiplier(x.type.element.scales[0], oe.scales[0] * double(count));
      y.set_int(o, numerics::requantize(isum[o], m, oe.zero_points[0], oe.storage.min, oe.storage.max));
    } else if (f64) {
      y.set_float(o, dsum[o] / double(count));
    } else {
      y.set_float(o, double(fsum[o] / float(count)));
    }
  }
  return y;
}

std::vector<Tensor> eval_dynamic_quantize(const Graph& g, const Op& op, const Tensor& x) {
  // ONNX DynamicQuantizeLinear for u8: the range always includes 0.
  const size_t n = size_t(x.num_elements());
  float lo = 0.0f, hi = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float v = float(x.float_at(i));
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const float scale = (hi - lo) / 255.0f;
  int64_t zp = 0;
  if (scale > 0.0f) {
    const float intermediate = 0.0f - lo / scale;
    zp = numerics::add_zero_point_and_clamp(numerics::round_half_even(intermediate), 0, 0, 255);
  }
  Tensor y = make_result(g.values[size_t(op.results[0])].type, x.type.dims);
  for (size_t i = 0; i < n; ++i) {
    y.set_int(i, scale > 0.0f ? numerics::quantize_f32(float(x.float_at(i)), scale, zp, 0, 255) : 0);
  }
  Tensor s = Tensor::zeros(Type::tensor({}, ElementType::make_float(FloatKind::kF32)));
  s.set_float(0, scale);
  Tensor z = Tensor::zeros(Type::tensor({}, ElementType::make_int(8, Signedness::kUnsigned)));
  z.set_int(0, zp);
  return {std::move(y), std::move(s), std::move(z)};
}

}  // namespace qrt::ref_detail
