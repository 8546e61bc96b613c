// qrt — scalar numerics (see numerics.h and docs/numerics.md).
#include "jit/ref/numerics.h"

#include <cmath>

namespace qrt::numerics {

double round_half_even(double x) {
  // nearbyint() honours the current rounding mode, which qrt never changes from the
  // default round-to-nearest-even.
  return std::nearbyint(x);
}

int64_t add_zero_point_and_clamp(double r, int64_t zp, int64_t qmin, int64_t qmax) {
  if (std::isnan(r)) return clamp_i64(zp, qmin, qmax);
  // Every storage range lies inside ±2^33, so clamping the rounded value to ±2^40 first
  // keeps the integer conversion defined without changing the clamped result.
  const double limited = r < -0x1p40 ? -0x1p40 : r > 0x1p40 ? 0x1p40 : r;
  return clamp_i64(int64_t(limited) + zp, qmin, qmax);
}

int64_t quantize_f32(float x, float scale, int64_t zp, int64_t qmin, int64_t qmax) {
  const float t = x / scale;  // one f32 division
  return add_zero_point_and_clamp(round_half_even(double(t)), zp, qmin, qmax);
}

int64_t quantize_f64(double x, double scale, int64_t zp, int64_t qmin, int64_t qmax) {
  return add_zero_point_and_clamp(round_half_even(x / scale), zp, qmin, qmax);
}

float dequantize_f32(int64_t q, int64_t zp, float scale) { return float(q - zp) * scale; }

double dequantize_f64(int64_t q, int64_t zp, double scale) { return double(q - zp) * scale; }

float multiplier(double numerator, double denominator) { return float(numerator / denominator); }

int64_t requantize(int64_t v, float m, int64_t zo, int64_t lo, int64_t hi) {
  const float product = float(v) * m;  // f32(v) rounds once for |v| > 2^24; one f32 multiply
  return add_zero_point_and_clamp(round_half_even(double(product)), zo, lo, hi);
}

float compute_scale_f32(double scale, FloatKind expressed) {
  return float(round_to_float_kind(scale, expressed));
}

}  // namespace qrt::numerics
