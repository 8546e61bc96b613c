// qrt — the formulas of the numerics profiles other than the default (numerics.h,
// numerics_profile.h, docs/numerics.md "Profiles").
#include <cmath>
#include <limits>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "ir/numerics_profile.h"

namespace qrt {

namespace {

struct ProfileName {
  NumericsProfile profile;
  const char* name;
};

constexpr ProfileName kProfileNames[] = {
    {NumericsProfile::kDefault, "default"},
    {NumericsProfile::kStableHlo, "stablehlo"},
    {NumericsProfile::kTflite, "tflite"},
    {NumericsProfile::kTfliteSingleRounding, "tflite-single-rounding"},
    {NumericsProfile::kOnnx, "onnx"},
};

}  // namespace

const char* numerics_profile_name(NumericsProfile profile) {
  for (const ProfileName& p : kProfileNames) {
    if (p.profile == profile) return p.name;
  }
  return "unknown";
}

std::optional<NumericsProfile> parse_numerics_profile(std::string_view name) {
  for (const ProfileName& p : kProfileNames) {
    if (name == p.name) return p.profile;
  }
  return std::nullopt;
}

const char* numerics_profile_names() { return "default, stablehlo, tflite, tflite-single-rounding, onnx"; }

namespace numerics {

namespace {

// One arithmetic result rounded to the expressed type (f64: already exact in double).
double in_expressed(double v, FloatKind expressed) {
  return expressed == FloatKind::kF64 ? v : round_to_float_kind(v, expressed);
}

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

int32_t saturate_i32(int64_t v) { return int32_t(clamp_i64(v, kInt32Min, kInt32Max)); }

}  // namespace

int64_t quantize_stablehlo(double x, double scale, int64_t zp, int64_t qmin, int64_t qmax, FloatKind expressed) {
  // f32 arithmetic for f32/f16/bf16 (f16 and bf16 results rounded once more: a correctly
  // rounded f32 result rounded to f16/bf16 is the correctly rounded f16/bf16 result for
  // division and addition, whose exact results need far fewer than 24 bits of margin).
  const double s = in_expressed(scale, expressed);
  double scaled, shifted;
  if (expressed == FloatKind::kF64) {
    scaled = x / s;
    shifted = scaled + double(zp);
  } else {
    scaled = in_expressed(double(float(x) / float(s)), expressed);
    shifted = in_expressed(double(float(scaled) + float(in_expressed(double(zp), expressed))), expressed);
  }
  if (std::isnan(shifted)) return clamp_i64(zp, qmin, qmax);
  // clamp(min, v, max) in the expressed type, then round: the bounds are integers, so
  // clamping before or after rounding gives the same integer.
  const double lo = in_expressed(double(qmin), expressed), hi = in_expressed(double(qmax), expressed);
  const double clamped = shifted < lo ? lo : shifted > hi ? hi : shifted;
  // A bound the expressed type cannot hold (2^31 - 1 in f16 is inf) leaves infinities
  // unclamped: they saturate like every other out-of-range value.
  if (!(clamped > -0x1p40)) return qmin;
  if (!(clamped < 0x1p40)) return qmax;
  return clamp_i64(int64_t(round_half_even(clamped)), qmin, qmax);
}

double dequantize_stablehlo(int64_t q, int64_t zp, double scale, FloatKind expressed) {
  const double s = in_expressed(scale, expressed);
  if (expressed == FloatKind::kF64) return double(q - zp) * s;
  const double diff = in_expressed(double(float(q - zp)), expressed);
  return in_expressed(double(float(diff) * float(s)), expressed);
}

QuantizedMultiplier quantize_multiplier(double real, bool single_rounding) {
  QuantizedMultiplier m;
  if (!(real > 0.0) || !std::isfinite(real)) return m;
  int exponent = 0;
  const double significand = std::frexp(real, &exponent);  // in [0.5, 1)
  int64_t fixed = int64_t(std::round(significand * double(int64_t(1) << 31)));
  if (fixed == (int64_t(1) << 31)) {
    fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) {
    exponent = 0;
    fixed = 0;
  }
  if (single_rounding && exponent > 30) {
    exponent = 30;
    fixed = kInt32Max;
  }
  m.multiplier = int32_t(fixed);
  m.shift = exponent;
  return m;
}

int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  const int64_t ab = int64_t(a) * int64_t(b);
  const int64_t nudge = ab >= 0 ? (int64_t(1) << 30) : (1 - (int64_t(1) << 30));
  return int32_t((ab + nudge) / (int64_t(1) << 31));  // C++ division truncates, as gemmlowp's does
}

int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = int32_t((int64_t(1) << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t multiply_by_quantized_multiplier(int64_t wide, QuantizedMultiplier m, bool single_rounding) {
  const int32_t x = saturate_i32(wide);
  if (single_rounding) {
    // TFLITE_SINGLE_ROUNDING: (x · M + 2^(30 - shift)) >> (31 - shift) in 64 bits; with
    // |x| <= 2^31, M < 2^31 and shift in [-31, 30] nothing overflows.
    const int total_shift = 31 - m.shift;
    const int64_t product = int64_t(x) * m.multiplier + (int64_t(1) << (total_shift - 1));
    return saturate_i32(product >> total_shift);
  }
  const int left_shift = m.shift > 0 ? m.shift : 0;
  const int right_shift = m.shift > 0 ? 0 : -m.shift;
  // x · 2^left_shift in 32-bit two's complement, as TFLite computes it (it wraps on the
  // machines TFLite runs on; only multipliers of 1 or more shift left).
  const int32_t shifted = left_shift >= 32 ? 0 : int32_t(uint32_t(x) << left_shift);
  return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, m.multiplier), right_shift);
}

int64_t requantize_tflite(int64_t v, QuantizedMultiplier m, int64_t zo, int64_t lo, int64_t hi, bool single_rounding) {
  const int32_t scaled = multiply_by_quantized_multiplier(saturate_i32(v), m, single_rounding);
  return clamp_i64(int64_t(scaled) + zo, lo, hi);
}

int64_t quantize_tflite(float x, float scale, int64_t zp, int64_t qmin, int64_t qmax) {
  const float t = x / scale;  // one f32 division
  if (std::isnan(t)) return clamp_i64(zp, qmin, qmax);
  const double r = std::round(double(t));  // half away from zero, like TfLiteRound
  const double limited = r < -0x1p40 ? -0x1p40 : r > 0x1p40 ? 0x1p40 : r;
  return clamp_i64(int64_t(limited) + zp, qmin, qmax);
}

int64_t average_tflite(int64_t sum, int64_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

float onnx_multiplier(double s_a, double s_w, double s_y) {
  return (float(s_a) * float(s_w)) / float(s_y);
}

int64_t requantize_onnx(int64_t acc, float m, int64_t zo, int64_t lo, int64_t hi) {
  return add_zero_point_and_clamp(round_half_even(double(acc) * double(m)), zo, lo, hi);
}

}  // namespace numerics

}  // namespace qrt
