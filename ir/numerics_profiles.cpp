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

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

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

int64_t quantize_tflite(float x, float scale, int64_t zp, int64_t qmin, int64_t qmax) {
  const float t = x / scale;  // one f32 division
  if (std::isnan(t)) return clamp_i64(zp, qmin, qmax);
  const double r = std::round(double(t));  // half away from zero, like TfLiteRound
  const double limited = r < -0x1p40 ? -0x1p40 : r > 0x1p40 ? 0x1p40 : r;
  return clamp_i64(int64_t(limited) + zp, qmin, qmax);
}

int64_t average_tflite(int64_t sum, int64_t count) {
  if (count <= 0) return 0;  // an empty reduction (a zero-sized dimension) averages to 0
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

float onnx_multiplier(double s_a, double s_w, double s_y) {
  return (float(s_a) * float(s_w)) / float(s_y);
}

}  // namespace numerics

}  // namespace qrt
