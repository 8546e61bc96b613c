// qrt — the reference under numerics profiles other than the default: which ops a profile
// changes, and the formulas it changes them to (docs/numerics.md, "Profiles").
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/numerics.h"
#include "ir/numerics_tflite_activations.h"
#include "jit/core/tensor.h"

namespace qrt {

/// What `op` computes under `graph.numerics` where that differs from the default formula,
/// e.g. "tflite: Q31 fixed-point requantization"; "" where the default formula applies (always
/// under the default profile). Kernels implement the default formulas, so a plan leaves ops
/// with a non-empty answer to the reference.
std::string profile_formula(const Graph& graph, const Op& op);

/// StableHLO's dequantize_op_quantize: every quantized operand dequantized in its expressed
/// type, `op` evaluated on the floats (without its fused clamp), the result quantized with the
/// StableHLO formula. For ops where profile_formula names the stablehlo profile.
Result<Tensor> dequantize_op_quantize(const Op& op, const std::vector<const Tensor*>& in, const Type& result);

/// StableHLO's dequantize of every element of `t` (quantized, any granularity) into a tensor of
/// its expressed type: dequantize_op_quantize's operands, as kernels fold constants.
Tensor dequantize_stablehlo_tensor(const Tensor& t);

/// The prepared parameters of TFLite's integer softmax for `op` with input and result elements
/// `in`, `out` (an 8-bit input; an 8- or 16-bit result of zero point = its storage minimum and
/// scale 2^-width), or nullopt with `*why` (the tflite profiles then keep the default formula).
std::optional<numerics::TfliteSoftmaxParams> tflite_softmax_params(const Op& op, const ElementType& in,
                                                                   const ElementType& out, bool single_rounding,
                                                                   std::string* why);
/// The same for TFLite's int8 logistic (an i8 input; an i8 result of zero point -128, whose
/// integers are in units of 1/256 whatever scale it declares, as in TFLite Micro).
std::optional<numerics::TfliteLogisticParams> tflite_logistic_params(const ElementType& in, const ElementType& out,
                                                                     bool single_rounding, std::string* why);

/// TFLite's int8/int16 mean (reference_integer_ops/mean.h) of `count` stored values of
/// element `in` whose centred sum (Σ (q - z_in)) is `sum`, stored as element `out`: the sum
/// times the Q31 form `m` (tflite_mean_multiplier) of f32(s_in) / f32(s_out), divided by the
/// count rounding half away from zero, + z_out, clamped to the storage.
inline int64_t tflite_mean(int64_t sum, int64_t count, numerics::QuantizedMultiplier m, bool single_rounding,
                           const ElementType& out) {
  const int64_t scaled = numerics::multiply_by_quantized_multiplier(sum, m, single_rounding);
  return numerics::clamp_i64(numerics::average_tflite(scaled, count) + out.zero_points[0], out.storage.min,
                             out.storage.max);
}
/// The Q31 multiplier of tflite_mean for elements `in` and `out`.
inline numerics::QuantizedMultiplier tflite_mean_multiplier(const ElementType& in, const ElementType& out,
                                                            bool single_rounding) {
  return numerics::quantize_multiplier(double(float(in.scales[0])) / double(float(out.scales[0])), single_rounding);
}

/// TFLite's integer softmax (tflite::reference_ops::Softmax, per slice along `axis`) or int8
/// logistic (reference_integer_ops::Logistic) of `x`, under the tflite profiles where
/// profile_formula names them; an error names the op where TFLite's kernel would stop.
Result<Tensor> eval_softmax_logistic_tflite(const Op& op, const Tensor& x, const Type& rt, bool single_rounding);

/// Whether TFLite accumulates a contraction of `x` by `w` with bias element type `bias` (null:
/// none) in int64: its 16x8 kernels (an operand wider than 8 bits) with an int64 bias or none;
/// with an int32 bias they keep int32 accumulators (AccumScalar), as the 8-bit kernels do.
bool tflite_int64_accumulator(const ElementType& x, const ElementType& w, const ElementType* bias);

/// How the accumulator of a quantized matmul or convolution becomes a stored value, per output
/// channel, under a profile: default f32 multiplier; tflite Q31 multiplier and shift; onnx's
/// f32 multiplier applied in f64.
class AccumulatorRequant {
 public:
  /// For activations `x`, weights `w` (per tensor or per output channel) and result `out`
  /// (per tensor or per output channel), `channels` output channels; `bias` is the bias's
  /// element type, or null without one (it picks TFLite's accumulator width:
  /// tflite_int64_accumulator).
  AccumulatorRequant(NumericsProfile profile, const ElementType& x, const ElementType& w, const ElementType& out,
                     size_t channels, const ElementType* bias = nullptr);
  /// The stored value of accumulator `acc` of output channel `channel` (inline: the profile
  /// kernels apply it per element).
  int64_t apply(size_t channel, int64_t acc, int64_t zo, int64_t lo, int64_t hi) const {
    if (tflite_i64_) {
      return numerics::clamp_i64(int64_t(numerics::multiply_by_quantized_multiplier_i64(acc, q31_[channel])) + zo, lo, hi);
    }
    if (is_tflite(profile_)) {
      return numerics::requantize_tflite(acc, q31_[channel], zo, lo, hi,
                                         profile_ == NumericsProfile::kTfliteSingleRounding);
    }
    if (profile_ == NumericsProfile::kOnnx) return numerics::requantize_onnx(acc, m_[channel], zo, lo, hi);
    return numerics::requantize(acc, m_[channel], zo, lo, hi);
  }
  /// Whether the tflite profile's int64 formula applies (tflite_int64_accumulator).
  bool tflite_int64() const { return tflite_i64_; }
  /// The per-channel Q31 multipliers and shifts (tflite profiles; empty for the others).
  const std::vector<numerics::QuantizedMultiplier>& q31() const { return q31_; }
  /// The per-channel f32 multipliers (default and onnx; empty for the tflite profiles).
  const std::vector<float>& multipliers() const { return m_; }

 private:
  NumericsProfile profile_;
  bool tflite_i64_ = false;
  std::vector<float> m_;                              // default and onnx
  std::vector<numerics::QuantizedMultiplier> q31_;  // tflite
};

/// TFLite's quantized add (8-bit: left shift 20, 16-bit: 15) or multiply of two stored values
/// with per-tensor types `a`, `b`, `out`, precomputed once per op.
class TfliteBinary {
 public:
  TfliteBinary(OpKind kind, const ElementType& a, const ElementType& b, const ElementType& out, bool single_rounding);
  /// The stored result for stored operands `qa`, `qb` (inline: the profile kernels apply it
  /// per element).
  int64_t apply(int64_t qa, int64_t qb) const {
    const int32_t raw = numerics::multiply_by_quantized_multiplier(wide(qa, qb), mo_, single_rounding_);
    return numerics::clamp_i64(int64_t(raw) + zo_, lo_, hi_);
  }
  /// The integer the output multiplier scales: add: the sum of the two rescaled inputs (each a
  /// function of its own operand: input_term); multiply: (qa - za)·(qb - zb).
  int64_t wide(int64_t qa, int64_t qb) const {
    return add_ ? int64_t(input_term(0, qa)) + int64_t(input_term(1, qb)) : (qa - za_) * (qb - zb_);
  }
  /// add: operand `which` (0: a, 1: b) rescaled, MultiplyByQuantizedMultiplier((q - z) << left
  /// shift, m_in). Only for add.
  int32_t input_term(int which, int64_t q) const {
    const int64_t v = q - (which == 0 ? za_ : zb_);
    return numerics::multiply_by_quantized_multiplier(v * (int64_t(1) << left_shift_), which == 0 ? ma_ : mb_,
                                                      single_rounding_);
  }
  bool is_add() const { return add_; }
  bool single_rounding() const { return single_rounding_; }
  /// The output's multiplier and zero point (apply's last step).
  numerics::QuantizedMultiplier output_multiplier() const { return mo_; }
  int64_t output_zero_point() const { return zo_; }

 private:
  bool add_;
  bool single_rounding_;
  int left_shift_ = 0;
  int64_t za_, zb_, zo_, lo_, hi_;
  numerics::QuantizedMultiplier ma_, mb_, mo_;
};

}  // namespace qrt
