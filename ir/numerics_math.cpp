// qrt — the logarithms, expm1, sine, cosine, cube root and the inverse trigonometric and
// hyperbolic functions of docs/numerics.md: fixed algorithms whose every step is one IEEE
// rounding (no FMA: meson.build turns contraction off), so the reference, the scalar twin and
// generated code compute the same bits.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/numerics.h"

namespace qrt::numerics {

namespace {

constexpr double kLn2 = 0.6931471805599453;  // ln 2 rounded to double

// log(1 + f) = 2·atanh(s), s = f / (2 + f), from the atanh series to s^21 in Horner form,
// in double. For |s| <= 0.1716 (f in [sqrt(1/2) - 1, sqrt(2) - 1]) the truncation is below
// 1e-18 relative: the double result is far more precise than the f32 it is rounded to.
double log1p_series(double f) {
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = 1.0 / 21.0;
  for (int k = 19; k >= 3; k -= 2) p = p * z + 1.0 / k;
  return 2.0 * (s + s * (z * p));
}

// log of a finite double u > 0 in double: u = m·2^e with m in [sqrt(1/2), sqrt(2)) (from the
// exponent bits; m - 1 is exact), then e·ln 2 + log1p_series(m - 1).
double log_positive(double u) {
  const int64_t bits = std::bit_cast<int64_t>(u);
  // Subtracting sqrt(1/2)'s bits moves the exponent boundary from 1 to sqrt(1/2).
  const int64_t k = (bits - 0x3fe6a09e667f3bcdLL) >> 52;
  const double m = std::bit_cast<double>(bits - (k << 52));
  return double(k) * kLn2 + log1p_series(m - 1.0);
}

using u128 = unsigned __int128;

// The bits of 2/pi after the binary point, most significant first (b_1 … b_256).
constexpr uint32_t kTwoOverPi[8] = {0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0,
                                    0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561};

// Reduces a finite |x| >= pi/4 exactly (Payne-Hanek): x·2/pi = q + t with q an integer and
// t in [-1/2, 1/2]; returns t·pi/2 in double and q mod 4 in `quadrant`.
double reduce_pi_over_2(float ax, int& quadrant) {
  const uint32_t bits = std::bit_cast<uint32_t>(ax);
  const int biased = int(bits >> 23);
  const uint64_t m = (bits & 0x7fffff) | (biased ? 0x800000u : 0u);
  const int e = (biased ? biased : 1) - 150;  // ax = m·2^e, e in [-24, 104] here
  // Bits b_k with k < e - 1 add multiples of 4 to x·2/pi: start at k0 = max(1, e - 1) and
  // take 96 bits, W = b_k0 … b_(k0+95) as an integer; x·2/pi ≡ m·W·2^-(k0+95-e) (mod 4).
  const int k0 = e - 1 > 1 ? e - 1 : 1;
  const int start = k0 - 1, word = start / 32, offset = start % 32;
  u128 chunk = 0;
  for (int i = 0; i < 4; ++i) chunk = (chunk << 32) | kTwoOverPi[word + i];
  const u128 w = (chunk << offset) >> 32;  // 96 bits
  const u128 product = w * m;               // < 2^120
  const int shift = k0 + 95 - e;                         // in [94, 120]
  const u128 one = u128(1) << shift;
  u128 fraction = product & (one - 1);
  int q = int((product >> shift) & 3);
  double t;
  if (fraction >= (one >> 1)) {  // round to the nearest quadrant: t in [-1/2, 0)
    q = (q + 1) & 3;
    t = -double(one - fraction);
  } else {
    t = double(fraction);
  }
  quadrant = q;
  return std::ldexp(t, -shift) * 1.5707963267948966;
}

// sin and cos of |r| <= pi/4 from their Taylor series to r^13 / r^14 (truncation below
// 2e-14 relative), in double.
double sin_poly(double r) {
  const double z = r * r;
  double p = 1.0 / 6227020800.0;
  p = p * z - 1.0 / 39916800.0;
  p = p * z + 1.0 / 362880.0;
  p = p * z - 1.0 / 5040.0;
  p = p * z + 1.0 / 120.0;
  p = p * z - 1.0 / 6.0;
  return r + r * (z * p);
}

double cos_poly(double r) {
  const double z = r * r;
  double p = 1.0 / 87178291200.0;
  p = p * z - 1.0 / 479001600.0;
  p = p * z + 1.0 / 3628800.0;
  p = p * z - 1.0 / 40320.0;
  p = p * z + 1.0 / 720.0;
  p = p * z - 1.0 / 24.0;
  p = p * z + 0.5;
  return 1.0 - z * p;
}

// sin (want_cos false) or cos of x: quadrant q of the reduced argument picks the polynomial
// and the sign; the double result is rounded once to f32.
float sin_cos(float x, bool want_cos) {
  if (!std::isfinite(x)) return std::isnan(x) ? x : std::numeric_limits<float>::quiet_NaN();
  const float ax = std::fabs(x);
  int q = 0;
  const double r = ax < 0.785398185f ? double(ax) : reduce_pi_over_2(ax, q);
  if (want_cos) {
    const double v = (q & 1) ? sin_poly(r) : cos_poly(r);
    return float((q == 1 || q == 2) ? -v : v);
  }
  const double v = (q & 1) ? cos_poly(r) : sin_poly(r);
  const double s = q >= 2 ? -v : v;
  return float(std::signbit(x) ? -s : s);
}

constexpr double kHalfPi = 1.5707963267948966;  // pi/2 rounded to double

// atan of a double t >= 0 (inf included): four angle halvings, t -> t / (1 + sqrt(1 + t²))
// (atan(t) is twice atan of that), bring t to at most tan(pi/32) < 0.0985; then the atan
// series t - t³/3 + ... to t^23 (the next term is below 2e-26 of t) and 16 times that.
double atan_nonneg(double t) {
  if (t == INFINITY) return kHalfPi;
  for (int i = 0; i < 4; ++i) t = t / (1.0 + std::sqrt(1.0 + t * t));
  const double z = t * t;
  double p = -1.0 / 23.0;  // the coefficient of t^(2j+1) is (-1)^j / (2j + 1)
  for (int k = 21; k >= 3; k -= 2) p = p * z + (((k - 1) / 2) % 2 == 0 ? 1.0 : -1.0) / k;
  return 16.0 * (t + t * (z * p));
}

// log(1 + y) of a double y >= 0 (inf included): the series for y < sqrt(2) - 1, else
// log(u) of u = 1 + y plus the rounding error of that sum, (y - (u - 1)) / u.
double log1p_nonneg(double y) {
  if (y == INFINITY) return y;
  if (y < 0.41421356237309503) return log1p_series(y);
  const double u = 1.0 + y;
  return log_positive(u) + (y - (u - 1.0)) / u;
}

// `r` with the sign of x, rounded to f32.
float with_sign_of(float x, double r) { return float(std::signbit(x) ? -r : r); }

}  // namespace

float atan_f32(float x) {
  if (std::isnan(x) || x == 0.0f) return x;  // keeps -0
  return with_sign_of(x, atan_nonneg(std::fabs(double(x))));
}

float asin_f32(float x) {
  if (std::isnan(x) || x == 0.0f) return x;
  const double a = std::fabs(double(x));
  if (a > 1.0) return std::numeric_limits<float>::quiet_NaN();
  // 1 - a and 1 + a are exact in double for an f32 a; their product rounds once.
  return with_sign_of(x, a == 1.0 ? kHalfPi : atan_nonneg(a / std::sqrt((1.0 - a) * (1.0 + a))));
}

float acos_f32(float x) {
  if (std::isnan(x)) return x;
  const double d = double(x);
  if (std::fabs(d) > 1.0) return std::numeric_limits<float>::quiet_NaN();
  if (d == -1.0) return float(2.0 * kHalfPi);
  // Half the angle from its tangent: no cancellation near 1, where acos is small.
  return float(2.0 * atan_nonneg(std::sqrt((1.0 - d) / (1.0 + d))));
}

float asinh_f32(float x) {
  if (std::isnan(x) || x == 0.0f || std::isinf(x)) return x;
  const double a = std::fabs(double(x));
  // sqrt(1 + a²) - 1 written as a² / (1 + sqrt(1 + a²)): no cancellation for small a.
  return with_sign_of(x, log1p_nonneg(a + a * a / (1.0 + std::sqrt(1.0 + a * a))));
}

float acosh_f32(float x) {
  if (std::isnan(x) || x == INFINITY) return x;
  if (x < 1.0f) return std::numeric_limits<float>::quiet_NaN();
  const double t = double(x) - 1.0;  // exact
  return float(log1p_nonneg(t + std::sqrt(t * (double(x) + 1.0))));
}

float atanh_f32(float x) {
  if (std::isnan(x) || x == 0.0f) return x;
  const double a = std::fabs(double(x));
  if (a > 1.0) return std::numeric_limits<float>::quiet_NaN();
  if (a == 1.0) return std::signbit(x) ? -INFINITY : INFINITY;
  return with_sign_of(x, 0.5 * log1p_nonneg(2.0 * a / (1.0 - a)));
}

float log_f32(float x) {
  if (std::isnan(x)) return x;
  if (x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
  if (x == 0.0f) return -INFINITY;
  if (x == INFINITY) return x;
  return float(log_positive(double(x)));  // f32 subnormals are normal doubles
}

float log1p_f32(float x) {
  if (std::isnan(x) || x == 0.0f) return x;  // keeps -0
  if (x < -1.0f) return std::numeric_limits<float>::quiet_NaN();
  if (x == -1.0f) return -INFINITY;
  if (x == INFINITY) return x;
  // Near 0 the series takes x itself, so tiny x keeps its precision; elsewhere 1 + x is
  // exact in double (|x| > 0.29 has at most 24 significant bits from 2^-2 down).
  if (x >= -0.292893219f && x < 0.414213538f) return float(log1p_series(double(x)));
  return float(log_positive(1.0 + double(x)));
}

float expm1_f32(float x) {
  if (std::isnan(x) || x == 0.0f) return x;  // keeps -0
  if (x > 88.72283935546875f) return INFINITY;
  if (x < -17.3286800f) return -1.0f;  // below -25·ln 2: e^x < 2^-25, -1 after rounding
  // In double: x = n·ln 2 + r with |r| <= 0.347, expm1(r) from its Taylor series to r^13
  // (truncation below 1e-16 relative), then e^x - 1 = 2^n·expm1(r) + (2^n - 1).
  const double d = double(x);
  const double n = round_half_even(d * 1.4426950408889634);
  const double r = d - n * kLn2;
  // q = 1/2! + r/3! + ... + r^11/13! (Horner), 1/k! rounded to double.
  double q = 1.0 / 6227020800.0;
  double factorial = 6227020800.0;  // 13!
  for (int k = 13; k > 2; --k) {
    factorial /= k;  // (k - 1)!, exact: every factorial up to 13! is a double integer
    q = q * r + 1.0 / factorial;
  }
  const double em1 = r + (r * r) * q;
  // 2^n·em1 + (2^n - 1): 2^n is exact for |n| <= 128 in double; one rounding to f32.
  const double t = std::ldexp(1.0, int(n));
  return float(t * em1 + (t - 1.0));
}

float sin_f32(float x) { return sin_cos(x, false); }

float cos_f32(float x) { return sin_cos(x, true); }

float cbrt_f32(float x) {
  if (!std::isfinite(x) || x == 0.0f) return x;
  float ax = std::fabs(x);
  // A first guess from the exponent bits divided by 3 (about 5 correct bits), subnormals
  // scaled by 2^24 first; then three Halley steps in double (cubic convergence, well past
  // f32's 24 bits) and one rounding to f32.
  double scale = 1.0;
  if (ax < 0x1p-126f) {
    ax *= 0x1p24f;
    scale = 0x1p-8;
  }
  const uint32_t bits = std::bit_cast<uint32_t>(ax);
  const double a = ax;
  double y = std::bit_cast<float>(bits / 3 + 709958130u);
  for (int i = 0; i < 3; ++i) {
    const double y3 = y * y * y;
    y = y * (y3 + 2.0 * a) / (2.0 * y3 + a);
  }
  const float r = float(y * scale);
  return std::signbit(x) ? -r : r;
}

}  // namespace qrt::numerics
