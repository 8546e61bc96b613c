// qrt — the reference under numerics profiles (see reference_profiles.h).
#include "jit/ref/reference_profiles.h"

#include <cmath>

#include "ir/float_format.h"
#include "ir/numerics_tflite_activations.h"
#include "ir/ops.h"
#include "jit/ref/reference.h"
#include "jit/ref/reference_util.h"

namespace qrt {

namespace {

using namespace ref_detail;

constexpr const char* kStableHloDoq =
    "stablehlo: dequantize, the float op in the expressed type, quantize with the zero point added before rounding";
constexpr const char* kTfliteRequant = "tflite: Q31 fixed-point multiplier and rounding shift";
constexpr const char* kTfliteSingleRequant = "tflite-single-rounding: Q31 fixed-point multiplier, one rounding";

std::string stablehlo_formula(const Graph& g, const Op& op, const ElementType& out, bool q_in0) {
  const bool q_out = out.is_any_uniform();
  switch (op.kind) {
    case OpKind::kQCast:
      return q_out ? "stablehlo: quantize adds the zero point before rounding, in the expressed type" : "";
    case OpKind::kDCast: {
      const ElementType& in = g.values[size_t(op.operands[0])].type.element;
      const bool narrow = in.float_kind == FloatKind::kF16 || in.float_kind == FloatKind::kBF16;
      return q_in0 && narrow ? "stablehlo: dequantize rounds q - zp to the expressed type first" : "";
    }
    case OpKind::kRequantize:
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kAvgPool2d:
    case OpKind::kMean:
    case OpKind::kSoftmax:
    case OpKind::kLogistic:
      return q_out ? kStableHloDoq : "";
    case OpKind::kMatmul:
    case OpKind::kConv2d:
    case OpKind::kConvTranspose2d:
      return q_out && q_in0 ? kStableHloDoq : "";
    case OpKind::kConcat:
      for (int v : op.operands) {
        if (q_out && !(g.values[size_t(v)].type.element == out)) return kStableHloDoq;
      }
      return "";
    default:
      return "";
  }
}

// A result type TFLite's softmax produces: 8- or 16-bit, zero point = its storage minimum,
// scale 2^-width (TFLite's preparation refuses others).
bool tflite_probability_type(const ElementType& out) {
  const unsigned w = out.storage.width;
  return out.kind == ElementKind::kUniform && (w == 8 || w == 16) && out.storage.has_default_bounds() &&
         out.zero_points[0] == out.storage.min && float(out.scales[0]) == std::ldexp(1.0f, -int(w));
}

std::string tflite_formula(const Graph& g, const Op& op, const ElementType& out, bool q_in0) {
  const bool single = g.numerics == NumericsProfile::kTfliteSingleRounding;
  const bool q_out = out.is_any_uniform();
  switch (op.kind) {
    case OpKind::kQCast:
      return q_out ? "tflite: quantize rounds half away from zero" : "";
    case OpKind::kRequantize:
      return q_out && q_in0 ? (single ? kTfliteSingleRequant : kTfliteRequant) : "";
    case OpKind::kMatmul:
    case OpKind::kConv2d:
    case OpKind::kConvTranspose2d:
      // Results of 32-bit storage are accumulators, identical in every profile.
      return q_out && q_in0 && out.storage.width < 32 ? (single ? kTfliteSingleRequant : kTfliteRequant) : "";
    case OpKind::kAdd:
    case OpKind::kMul: {
      // TFLite's add and mul are per tensor on every side; per-axis ones keep qrt's formula.
      const bool per_tensor = q_out && out.kind == ElementKind::kUniform && (out.storage.width == 8 || out.storage.width == 16) &&
                              g.values[size_t(op.operands[0])].type.element.kind == ElementKind::kUniform &&
                              g.values[size_t(op.operands[1])].type.element.kind == ElementKind::kUniform;
      if (!per_tensor) return "";
      return op.kind == OpKind::kAdd ? "tflite: add of left-shifted inputs rescaled by Q31 multipliers"
                                     : "tflite: product rescaled by a Q31 multiplier";
    }
    case OpKind::kMean:
      return q_out && q_in0 && out.kind == ElementKind::kUniform
                 ? "tflite: centred sum times a Q31 multiplier, divided rounding half away from zero"
                 : "";
    case OpKind::kSoftmax:
    case OpKind::kLogistic: {
      if (!q_out || !q_in0) return "";
      const ElementType& in = g.values[size_t(op.operands[0])].type.element;
      std::string why;
      if (op.kind == OpKind::kSoftmax) {
        return tflite_softmax_params(op, in, out, single, &why) ? "tflite: fixed-point softmax (gemmlowp exp, 1/(1+x))"
                                                                : "";
      }
      return tflite_logistic_params(in, out, single, &why) ? "tflite: fixed-point logistic (gemmlowp)" : "";
    }
    case OpKind::kAvgPool2d:
      // TFLite's int8 average pool needs equal input and output parameters.
      return q_out && q_in0 && g.values[size_t(op.operands[0])].type.element == out
                 ? "tflite: integer average rounded half away from zero"
                 : "";
    default:
      return "";
  }
}

}  // namespace

std::optional<numerics::TfliteSoftmaxParams> tflite_softmax_params(const Op& op, const ElementType& in,
                                                                   const ElementType& out, bool single,
                                                                   std::string* why) {
  if (in.kind != ElementKind::kUniform || in.storage.width != 8 || !tflite_probability_type(out)) {
    *why = "not TFLite's softmax types (an 8-bit input; a result of zero point = storage minimum, scale 2^-width)";
    return std::nullopt;
  }
  const float beta = op.attr("beta") ? float(op.attr("beta")->f) : 1.0f;
  return numerics::prepare_softmax_tflite(beta, float(in.scales[0]), int(out.storage.width), out.storage.min,
                                          out.storage.max, single, why);
}

std::optional<numerics::TfliteLogisticParams> tflite_logistic_params(const ElementType& in, const ElementType& out,
                                                                     bool single, std::string* why) {
  const bool i8_in = in.kind == ElementKind::kUniform && in.storage.width == 8 && in.storage.is_signed;
  const bool i8_out = out.kind == ElementKind::kUniform && out.storage.width == 8 && out.storage.is_signed &&
                      out.storage.has_default_bounds() && out.zero_points[0] == -128;
  if (!i8_in || !i8_out) {
    *why = "not TFLite's int8 logistic types (an i8 input; an i8 result of zero point -128)";
    return std::nullopt;
  }
  return numerics::prepare_logistic_tflite(float(in.scales[0]), int32_t(in.zero_points[0]), single, why);
}

std::string profile_formula(const Graph& graph, const Op& op) {
  if (graph.numerics == NumericsProfile::kDefault || op.results.empty()) return "";
  const ElementType& out = graph.values[size_t(op.results[0])].type.element;
  const bool q_in0 = !op.operands.empty() && graph.values[size_t(op.operands[0])].type.element.is_any_uniform();
  if (graph.numerics == NumericsProfile::kStableHlo) return stablehlo_formula(graph, op, out, q_in0);
  if (is_tflite(graph.numerics)) {
    // Every reason names the graph's profile, the single-rounding one included.
    std::string formula = tflite_formula(graph, op, out, q_in0);
    const std::string tflite = "tflite: ";
    if (graph.numerics == NumericsProfile::kTfliteSingleRounding && formula.rfind(tflite, 0) == 0) {
      formula = "tflite-single-rounding: " + formula.substr(tflite.size());
    }
    return formula;
  }
  // onnx: QLinearMatMul / QLinearConv's requantization (ConvTranspose's too: the reference
  // requantizes every quantized contraction with the profile's formula).
  const bool contraction = op.kind == OpKind::kMatmul || op.kind == OpKind::kConv2d || op.kind == OpKind::kConvTranspose2d;
  return contraction && q_in0 && out.is_any_uniform() && out.storage.width < 32
             ? "onnx: f32 multiplier f32(f32(s_x·s_w) / s_y) applied in f64"
             : "";
}

Tensor dequantize_stablehlo_tensor(const Tensor& t) {
  const ElementType& e = t.type.element;
  Type ft = t.type;
  ft.element = ElementType::make_float(e.float_kind);
  Tensor f = Tensor::zeros(ft);
  const QuantView view(e, t.type.dims);
  for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
    f.set_float(i, numerics::dequantize_stablehlo(t.int_at(i), view.zp(i), view.scale(i), e.float_kind));
  }
  return f;
}

Result<Tensor> dequantize_op_quantize(const Op& op, const std::vector<const Tensor*>& in, const Type& result) {
  Graph fg;  // the default profile: plain float evaluation
  std::vector<Tensor> floats;
  floats.reserve(in.size());
  for (const Tensor* t : in) {
    const ElementType& e = t->type.element;
    if (!e.is_any_uniform()) {
      floats.push_back(*t);
      continue;
    }
    floats.push_back(dequantize_stablehlo_tensor(*t));
  }
  std::vector<int> args;
  std::vector<const Tensor*> ptrs;
  for (const Tensor& f : floats) {
    args.push_back(fg.add_input(f.type));
    ptrs.push_back(&f);
  }
  Type float_result = result;
  if (result.element.is_any_uniform()) float_result.element = ElementType::make_float(result.element.float_kind);
  std::vector<std::pair<std::string, Attribute>> attrs;
  for (const auto& a : op.attrs) {
    if (a.first != "clamp_min" && a.first != "clamp_max") attrs.push_back(a);  // the caller clamps the result
  }
  // qrt.requantize is quantize(dequantize(x)): on floats, the identity (it has no float form).
  Tensor r;
  if (op.kind == OpKind::kRequantize) {
    r = std::move(floats[0]);
  } else {
    const int o = fg.add_op(op.kind, args, {float_result}, std::move(attrs), op.loc);
    QRT_ASSIGN_OR_RETURN(r, evaluate_op_reference(fg, fg.ops[size_t(o)], ptrs));
  }
  if (!result.element.is_any_uniform()) return r;
  Type qt = result;
  qt.dims = r.type.dims;
  Tensor y = Tensor::zeros(qt);
  const ElementType& q = result.element;
  const QuantView view(q, qt.dims);
  for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
    y.set_int(i, numerics::quantize_stablehlo(r.float_at(i), view.scale(i), view.zp(i), q.storage.min, q.storage.max,
                                              q.float_kind));
  }
  return y;
}

bool tflite_int64_accumulator(const ElementType& x, const ElementType& w, const ElementType* bias) {
  return accumulates_in_i64(x, w) && (!bias || bias->is_integer());
}

AccumulatorRequant::AccumulatorRequant(NumericsProfile profile, const ElementType& x, const ElementType& w,
                                       const ElementType& out, size_t channels, const ElementType* bias)
    : profile_(profile), tflite_i64_(is_tflite(profile) && tflite_int64_accumulator(x, w, bias)) {
  for (size_t c = 0; c < channels; ++c) {
    const double sx = x.scales[0];
    const double sw = w.scales[w.num_channels() == 1 ? 0 : c];
    const double so = out.scales[out.num_channels() == 1 ? 0 : c];
    if (is_tflite(profile)) {
      // TFLite holds scales as f32 and forms the multiplier in double (kernel_util.cc).
      const double real = double(float(sx)) * double(float(sw)) / double(float(so));
      q31_.push_back(numerics::quantize_multiplier(real, profile == NumericsProfile::kTfliteSingleRounding));
    } else if (profile == NumericsProfile::kOnnx) {
      m_.push_back(numerics::onnx_multiplier(sx, sw, so));
    } else {
      m_.push_back(numerics::multiplier(accumulator_scale(x, w, c), so));
    }
  }
}

TfliteBinary::TfliteBinary(OpKind kind, const ElementType& a, const ElementType& b, const ElementType& out,
                           bool single_rounding)
    : add_(kind == OpKind::kAdd),
      single_rounding_(single_rounding),
      za_(a.zero_points[0]),
      zb_(b.zero_points[0]),
      zo_(out.zero_points[0]),
      lo_(out.storage.min),
      hi_(out.storage.max) {
  const double sa = double(float(a.scales[0])), sb = double(float(b.scales[0])), so = double(float(out.scales[0]));
  if (add_) {
    // add.cc: both inputs scaled to twice the larger input scale after a left shift of 20 bits
    // (15 for 16-bit outputs), the sum rescaled to the output.
    left_shift_ = out.storage.width == 16 ? 15 : 20;
    const double twice_max = 2.0 * double(std::max(float(a.scales[0]), float(b.scales[0])));
    ma_ = numerics::quantize_multiplier(sa / twice_max, single_rounding);
    mb_ = numerics::quantize_multiplier(sb / twice_max, single_rounding);
    mo_ = numerics::quantize_multiplier(twice_max / (double(int64_t(1) << left_shift_) * so), single_rounding);
  } else {
    mo_ = numerics::quantize_multiplier(sa * sb / so, single_rounding);
  }
}

Result<Tensor> eval_softmax_logistic_tflite(const Op& op, const Tensor& x, const Type& rt, bool single_rounding) {
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, x.type.dims));
  Tensor y = make_result(rt, x.type.dims);
  const size_t n = size_t(x.num_elements());
  std::string why;
  if (op.kind == OpKind::kLogistic) {
    const auto p = tflite_logistic_params(x.type.element, rt.element, single_rounding, &why);
    if (!p) return op_error(op, "tflite logistic: " + why);
    for (size_t i = 0; i < n; ++i) y.set_int(i, numerics::logistic_tflite(x.int_at(i), *p));
    return y;
  }
  const auto p = tflite_softmax_params(op, x.type.element, rt.element, single_rounding, &why);
  if (!p) return op_error(op, "tflite softmax: " + why);
  int64_t axis = op.attr("axis") ? op.attr("axis")->i : -1;
  if (axis < 0) axis += int64_t(x.type.rank());
  const size_t len = size_t(x.type.dims[size_t(axis)]);
  size_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < x.type.rank(); ++d) inner *= size_t(x.type.dims[d]);
  if (n == 0) return y;  // an empty row or an empty dimension around it
  std::vector<int32_t> row(len);
  std::vector<int64_t> out(len);
  for (size_t outer = 0; outer < n / (len * inner); ++outer) {
    for (size_t in = 0; in < inner; ++in) {
      const size_t base = outer * len * inner + in;
      for (size_t k = 0; k < len; ++k) row[k] = int32_t(x.int_at(base + k * inner));
      if (!numerics::softmax_tflite_row(row.data(), int64_t(len), *p, out.data())) {
        return op_error(op, "tflite softmax: the slice at element " + std::to_string(base) +
                                " sums to 2^9 or more in exp (TFLite's kernel stops there: its rounding shift "
                                "would exceed 31)");
      }
      for (size_t k = 0; k < len; ++k) y.set_int(base + k * inner, out[k]);
    }
  }
  return y;
}

}  // namespace qrt
