// qrt — TFLite's integer softmax and logistic (the `tflite` numerics profiles; docs/numerics.md,
// "Profiles"): the reference kernels' fixed-point arithmetic (gemmlowp's FixedPoint exp,
// 1/(1+x) and logistic; TFLite's parameter preparation), which TFLite Micro runs for int8.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/numerics.h"

namespace qrt::numerics {

// ---- gemmlowp fixed point on raw int32 values (FixedPoint<int32_t, integer_bits>) ----

/// gemmlowp's SaturatingRoundingMultiplyByPOT<exponent>: a saturating left shift for
/// exponent > 0, rounding_divide_by_pot for exponent < 0.
int32_t saturating_rounding_multiply_by_pot(int32_t x, int exponent);
/// gemmlowp's exp_on_negative_values: exp(a) for a <= 0 given with `integer_bits` integer bits
/// (Q(integer_bits).(31 - integer_bits)), as Q0.31 (exp(0) is INT32_MAX).
int32_t exp_on_negative_values(int32_t a, int integer_bits);
/// gemmlowp's one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a) for a Q0.31 in [0, 1), as Q0.31
/// (three Newton-Raphson steps from 48/17 - 32/17 · d).
int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a);
/// gemmlowp's logistic: 1 / (1 + exp(-a)) for a with `integer_bits` integer bits, as Q0.31.
int32_t logistic_fixed_point(int32_t a, int integer_bits);
/// tflite::GetReciprocal: 1 / x for a positive x with `x_integer_digits` integer bits, as a
/// Q0.31 scale and the number of bits x has above 1 (`*num_bits_over_unit`).
int32_t get_reciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit);

// ---- Softmax (tflite::reference_ops::Softmax for 8-bit inputs) ----

/// The prepared parameters of one quantized softmax (tflite::PreprocessSoftmaxScaling and
/// CalculateInputRadius, 5 integer bits for the scaled differences).
struct TfliteSoftmaxParams {
  QuantizedMultiplier input_beta;  ///< beta · s_in · 2^26, capped, shift >= 0
  int32_t diff_min = 0;            ///< differences below it contribute exp = 0
  int output_bits = 8;             ///< 8 or 16: the stored result's width
  int64_t output_min = -128;       ///< the stored result's lowest value (= its zero point)
  int64_t output_max = 127;
  bool single_rounding = false;
};

/// The parameters for `beta` and input scale `input_scale` (both as TFLite stores them, f32),
/// or nullopt with `*why` when TFLite's preparation would refuse them (its multiplier must
/// exceed 1). The result type is given by its storage width and bounds.
std::optional<TfliteSoftmaxParams> prepare_softmax_tflite(float beta, float input_scale, int output_bits,
                                                           int64_t output_min, int64_t output_max,
                                                           bool single_rounding, std::string* why);

/// One row of `n` stored inputs `q` (8-bit values, any zero point: only differences matter)
/// to stored outputs `out`. Returns false, leaving `out` unspecified, where TFLite's kernel
/// would stop at its TFLITE_CHECK: the row's sum of exponentials needs a rounding shift
/// beyond 31 (8-bit results of rows whose sum of exp reaches 512).
bool softmax_tflite_row(const int32_t* q, int64_t n, const TfliteSoftmaxParams& p, int64_t* out);

// ---- Logistic (tflite::reference_integer_ops::Logistic, int8) ----

/// The prepared parameters of one int8 logistic (TFLite Micro's CalculateArithmeticParams:
/// 4 integer bits for the rescaled input).
struct TfliteLogisticParams {
  int32_t input_zero_point = 0;
  int32_t input_range_radius = 0;  ///< |q - z| at or beyond it saturates
  QuantizedMultiplier input;       ///< s_in · 2^27 (frexp, Q31 significand)
  bool single_rounding = false;
};

/// The parameters for an int8 input of scale `input_scale` (f32, as TFLite stores it) and zero
/// point `zero_point`, or nullopt with `*why` where TFLite's shifts would leave their range
/// (an input scale below 2^-28 or of 2^35 and above).
std::optional<TfliteLogisticParams> prepare_logistic_tflite(float input_scale, int32_t zero_point, bool single_rounding,
                                                             std::string* why);

/// The stored int8 result (zero point -128, scale 1/256) of stored int8 input `q`.
int64_t logistic_tflite(int64_t q, const TfliteLogisticParams& p);

}  // namespace qrt::numerics
