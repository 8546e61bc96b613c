// qrt — scalar numerics (see numerics.h and docs/numerics.md).
#include "ir/numerics.h"

#include <cmath>

namespace qrt::numerics {

double round_half_even(double x) {
  // nearbyint() honours the current rounding mode, which qrt never changes from the
  // default round-to-nearest-even.
  return std::nearbyint(x);
}

float sign_f32(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }

float rsqrt_f32(float x) { return float(1.0 / std::sqrt(double(x))); }

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

float exp_f32(float x) {
  if (std::isnan(x)) return x;
  if (x > 88.72283935546875f) return INFINITY;  // above ln(FLT_MAX)
  if (x < -103.972084045410156f) return 0.0f;  // below ln(smallest subnormal / 2)
  const float n = float(round_half_even(double(x * 1.44269502162933349609375f)));  // x / ln 2
  // ln 2 split so that n * kLn2Hi is exact for |n| < 2^8.
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;  // |r| <= ~0.35
  float p = 1.98412698e-4f;                         // 1/7!
  p = p * r + 1.38888889e-3f;                       // 1/6!
  p = p * r + 8.33333377e-3f;                       // 1/5!
  p = p * r + 4.16666679e-2f;                       // 1/4!
  p = p * r + 1.66666672e-1f;                       // 1/3!
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return std::ldexp(p, int(n));
}

float logistic_f32(float x) {
  const float e = exp_f32(-x);
  const float d = 1.0f + e;
  return 1.0f / d;
}

float pow_f32(float a, float b) {
  if (b == 1.0f) return a;
  if (b == 2.0f) return a * a;
  if (b == 3.0f) return a * a * a;
  if (b == 0.5f) return std::sqrt(a);
  return std::pow(a, b);
}

double pow_f64(double a, double b) {
  if (b == 1.0) return a;
  if (b == 2.0) return a * a;
  if (b == 3.0) return a * a * a;
  if (b == 0.5) return std::sqrt(a);
  return std::pow(a, b);
}

float tanh_f32(float x) {
  if (std::isnan(x)) return x;
  const float a = std::fabs(x);
  float t;
  if (a >= 9.0f) {
    t = 1.0f;  // 1 - tanh(9) < 2^-25
  } else if (a >= 0.625f) {
    t = 1.0f - 2.0f / (exp_f32(2.0f * a) + 1.0f);
  } else {
    // expm1(y) = y·(1 + y/2·(1 + y/3·(1 + ...))) for y = 2a < 1.25, to y^12/12!.
    const float y = 2.0f * a;
    float p = 1.0f;
    for (int k = 12; k >= 2; --k) p = 1.0f + p * (y / float(k));
    const float e = y * p;
    t = e / (e + 2.0f);
  }
  return std::copysign(t, x);
}

float erf_f32(float x) {
  if (std::isnan(x)) return x;
  const float a = std::fabs(x);
  float r;
  if (a < 0.5f) {
    // 2/sqrt(pi) · (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320 + x^13/9360)
    const float t = a * a;
    float p = 1.0f / 9360.0f;
    p = p * -t + 1.0f / 1320.0f;
    p = p * -t + 1.0f / 216.0f;
    p = p * -t + 1.0f / 42.0f;
    p = p * -t + 1.0f / 10.0f;
    p = p * -t + 1.0f / 3.0f;
    p = p * -t + 1.0f;
    r = 1.12837916709551257f * (a * p);
  } else if (a >= 4.0f) {
    r = 1.0f;  // erfc(4) < 2^-26
  } else {
    const float t = 1.0f / (1.0f + 0.5f * a);
    float p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    r = 1.0f - t * exp_f32(p - a * a);
  }
  return std::copysign(r, x);
}

float gelu_f32(float x, bool tanh_form) {
  if (tanh_form) {
    const float inner = 0.797884560802865f * (x + 0.044715f * (x * x * x));
    return 0.5f * x * (1.0f + tanh_f32(inner));
  }
  return 0.5f * x * (1.0f + erf_f32(x * 0.707106781186548f));
}

}  // namespace qrt::numerics
