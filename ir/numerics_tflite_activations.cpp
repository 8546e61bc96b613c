// qrt — TFLite's integer softmax and logistic (see numerics_tflite_activations.h). Every step
// is the integer operation gemmlowp's FixedPoint or TFLite's reference kernel performs, in the
// same order; additions that could wrap in int32 are done modulo 2^32 as they are there.
#include "ir/numerics_tflite_activations.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace qrt::numerics {

namespace {

constexpr int32_t kQ31Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kQ31Min = std::numeric_limits<int32_t>::min();

// FixedPoint's + and - on raw values: plain int32 arithmetic (modulo 2^32 here, where
// gemmlowp's would be undefined; the algorithms keep every sum in range).
int32_t add(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }
int32_t sub(int32_t a, int32_t b) { return int32_t(uint32_t(a) - uint32_t(b)); }
// FixedPoint's *: the integer bits add up, the raw values meet in the doubling high-mul.
int32_t mul(int32_t a, int32_t b) { return saturating_rounding_doubling_high_mul(a, b); }

// gemmlowp's RoundingHalfSum: (a + b) / 2 rounded to nearest, ties away from zero.
int32_t rounding_half_sum(int32_t a, int32_t b) {
  const int64_t sum = int64_t(a) + int64_t(b);
  return int32_t((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// exp(a) for a Q0.31 in [-1/4, 0): the Taylor expansion around -1/8 to the fourth order.
int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a) {
  constexpr int32_t kExpMinusOneEighth = 1895147668;  // exp(-1/8) in Q0.31
  constexpr int32_t kOneThird = 715827883;            // 1/3 in Q0.31
  const int32_t x = add(a, int32_t(1) << 28);          // a + 1/8
  const int32_t x2 = mul(x, x);
  const int32_t x3 = mul(x2, x);
  const int32_t x4 = mul(x2, x2);
  const int32_t x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2);
  const int32_t poly = saturating_rounding_multiply_by_pot(add(mul(add(x4_over_4, x3), kOneThird), x2), -1);
  return add(kExpMinusOneEighth, mul(kExpMinusOneEighth, add(x, poly)));
}

}  // namespace

int32_t saturating_rounding_multiply_by_pot(int32_t x, int exponent) {
  if (exponent == 0) return x;
  if (exponent < 0) return rounding_divide_by_pot(x, -exponent);
  const int32_t threshold = int32_t((int64_t(1) << (31 - exponent)) - 1);
  if (x > threshold) return kQ31Max;
  if (x < -threshold) return kQ31Min;
  return int32_t(uint32_t(x) << exponent);
}

int32_t exp_on_negative_values(int32_t a, int integer_bits) {
  const int fractional_bits = 31 - integer_bits;
  const int32_t one_quarter = int32_t(1) << (fractional_bits - 2);
  // a = (a mod 1/4) - 1/4 - remainder: the first part by the polynomial, the remainder's
  // bits (each a power of two) by the constants exp(-2^k).
  const int32_t a_mod_quarter_minus_one_quarter = sub(a & (one_quarter - 1), one_quarter);
  int32_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
      saturating_rounding_multiply_by_pot(a_mod_quarter_minus_one_quarter, integer_bits));
  const int32_t remainder = sub(a_mod_quarter_minus_one_quarter, a);
  struct Step {
    int exponent;
    int32_t multiplier;  // exp(-2^exponent) in Q0.31
  };
  constexpr Step kSteps[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                             {2, 39332535},    {3, 720401},       {4, 242}};
  for (const Step& s : kSteps) {
    if (integer_bits > s.exponent && (remainder & (int32_t(1) << (fractional_bits + s.exponent))) != 0) {
      result = mul(result, s.multiplier);
    }
  }
  if (integer_bits > 5) {
    // Below -32 the result is 0 (exp(-32) is beyond Q0.31).
    const int32_t clamp = -(int32_t(1) << (36 - integer_bits));
    if (a < clamp) result = 0;
  }
  return a == 0 ? kQ31Max : result;
}

int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a) {
  // Newton-Raphson on d = (1 + a) / 2 in [1/2, 1), in Q2.29: x0 = 48/17 - 32/17 · d, then
  // x += x · (1 - d · x) three times; 1 / (1 + a) = x / 2.
  const int32_t half_denominator = rounding_half_sum(a, kQ31Max);
  constexpr int32_t k48Over17 = 1515870810;     // Q2.29
  constexpr int32_t kNeg32Over17 = -1010580540;  // Q2.29
  constexpr int32_t kOneQ2 = int32_t(1) << 29;
  int32_t x = add(k48Over17, mul(half_denominator, kNeg32Over17));
  for (int i = 0; i < 3; ++i) {
    const int32_t one_minus_dx = sub(kOneQ2, mul(half_denominator, x));
    // x · (1 - d·x) is Q4.27; back to Q2.29 by a saturating shift of 2.
    x = add(x, saturating_rounding_multiply_by_pot(mul(x, one_minus_dx), 2));
  }
  // x / 2 exactly as Q1.30, then Q0.31 by a saturating shift of 1.
  return saturating_rounding_multiply_by_pot(x, 1);
}

int32_t logistic_fixed_point(int32_t a, int integer_bits) {
  if (a == 0) return int32_t(1) << 30;  // 1/2
  // For a > 0: 1 / (1 + exp(-a)); for a < 0: 1 minus that of |a|.
  const int32_t magnitude = a > 0 ? a : sub(0, a);
  const int32_t positive = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(sub(0, magnitude), integer_bits));
  return a > 0 ? positive : sub(kQ31Max, positive);
}

int32_t get_reciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit) {
  const int headroom_plus_one = std::countl_zero(uint32_t(x));
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  // x normalized to [1, 2), minus 1, as Q0.31.
  const int32_t shifted_minus_one = int32_t((uint32_t(x) << headroom_plus_one) - (uint32_t(1) << 31));
  return one_over_one_plus_x_for_x_in_0_1(shifted_minus_one);
}

std::optional<TfliteSoftmaxParams> prepare_softmax_tflite(float beta, float input_scale, int output_bits,
                                                           int64_t output_min, int64_t output_max,
                                                           bool single_rounding, std::string* why) {
  constexpr int kScaledDiffIntegerBits = 5;
  const double max_real = single_rounding ? double((int64_t(1) << 30) - 1) : double((int64_t(1) << 31) - 1);
  const double real = std::min(double(beta) * double(input_scale) * double(int64_t(1) << (31 - kScaledDiffIntegerBits)), max_real);
  if (!(real > 1.0)) {
    *why = "beta · input scale · 2^26 = " + std::to_string(real) + " is not above 1 (TFLite's preparation refuses it)";
    return std::nullopt;
  }
  TfliteSoftmaxParams p;
  p.input_beta = quantize_multiplier(real, single_rounding);
  p.output_bits = output_bits;
  p.output_min = output_min;
  p.output_max = output_max;
  p.single_rounding = single_rounding;
  // CalculateInputRadius(5, left_shift, 31): floor((2^5 - 1) · 2^26 / 2^left_shift).
  const double radius = std::floor(double((int64_t(1) << kScaledDiffIntegerBits) - 1) *
                                   double(int64_t(1) << (31 - kScaledDiffIntegerBits)) /
                                   double(int64_t(1) << p.input_beta.shift));
  p.diff_min = -int32_t(radius);
  return p;
}

bool softmax_tflite_row(const int32_t* q, int64_t n, const TfliteSoftmaxParams& p, int64_t* out) {
  constexpr int kScaledDiffIntegerBits = 5;
  constexpr int kAccumulationIntegerBits = 12;
  int32_t max_in_row = std::numeric_limits<int32_t>::min();
  for (int64_t c = 0; c < n; ++c) max_in_row = std::max(max_in_row, q[c]);
  // exp of each scaled difference (Q0.31), and their sum in Q12.19 (wrapping as TFLite's).
  auto exp_of = [&](int32_t diff) {
    const int32_t rescaled = multiply_by_quantized_multiplier(diff, p.input_beta, p.single_rounding);
    return exp_on_negative_values(rescaled, kScaledDiffIntegerBits);
  };
  int32_t sum_of_exps = 0;
  for (int64_t c = 0; c < n; ++c) {
    const int32_t diff = q[c] - max_in_row;
    if (diff >= p.diff_min) {
      sum_of_exps = add(sum_of_exps, saturating_rounding_multiply_by_pot(exp_of(diff), -kAccumulationIntegerBits));
    }
  }
  // A sum that wrapped (4096 or more terms near 1) is beyond the check below, and beyond
  // GetReciprocal's normalization where it reached 0.
  if (sum_of_exps <= 0) return false;
  int num_bits_over_unit = 0;
  const int32_t shifted_scale = get_reciprocal(sum_of_exps, kAccumulationIntegerBits, &num_bits_over_unit);
  const int exponent = num_bits_over_unit + 31 - p.output_bits;
  if (exponent < 0 || exponent > 31) return false;
  for (int64_t c = 0; c < n; ++c) {
    const int32_t diff = q[c] - max_in_row;
    if (diff >= p.diff_min) {
      const int32_t unsat = rounding_divide_by_pot(mul(shifted_scale, exp_of(diff)), exponent);
      out[c] = clamp_i64(int64_t(unsat) + p.output_min, p.output_min, p.output_max);
    } else {
      out[c] = p.output_min;
    }
  }
  return true;
}

std::optional<TfliteLogisticParams> prepare_logistic_tflite(float input_scale, int32_t zero_point, bool single_rounding,
                                                             std::string* why) {
  constexpr int kInputIntegerBits = 4;
  const double real = double(input_scale) * double(int64_t(1) << (31 - kInputIntegerBits));
  int left_shift = 0;
  const double significand = std::frexp(real, &left_shift);
  if (!(real > 0.0) || left_shift < 0 || left_shift > 62) {
    *why = "input scale " + std::to_string(input_scale) + " puts TFLite's input shift outside [0, 62]";
    return std::nullopt;
  }
  TfliteLogisticParams p;
  p.input_zero_point = zero_point;
  // TfLiteRound of the significand in Q31 (a float's significand never rounds up to 2^31).
  p.input.multiplier = int32_t(std::round(significand * double(int64_t(1) << 31)));
  p.input.shift = left_shift;
  p.single_rounding = single_rounding;
  // CalculateInputRadius(4, left_shift, 31): floor((2^4 - 1) · 2^27 / 2^left_shift).
  p.input_range_radius = int32_t(std::floor(double((int64_t(1) << kInputIntegerBits) - 1) *
                                            double(int64_t(1) << (31 - kInputIntegerBits)) /
                                            double(int64_t(1) << left_shift)));
  return p;
}

int64_t logistic_tflite(int64_t q, const TfliteLogisticParams& p) {
  constexpr int kInputIntegerBits = 4;
  constexpr int kOutputIntegerBits = 8;
  const int32_t input = int32_t(q) - p.input_zero_point;
  if (input <= -p.input_range_radius) return -128;
  if (input >= p.input_range_radius) return 127;
  const int32_t input_in_q4 = multiply_by_quantized_multiplier(input, p.input, p.single_rounding);
  const int32_t output_in_q0 = logistic_fixed_point(input_in_q4, kInputIntegerBits);
  const int32_t output = rounding_divide_by_pot(output_in_q0, 31 - kOutputIntegerBits);
  return clamp_i64(int64_t(output) - 128, -128, 127);
}

}  // namespace qrt::numerics
