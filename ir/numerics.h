// qrt — the scalar numerics contract of docs/numerics.md, one function per formula.
// The reference interpreter is built from these; every other backend must match them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ir/numerics_profile.h"
#include "ir/types.h"

namespace qrt::numerics {

/// Round half to even of a finite or infinite float, as a double (no integer conversion).
double round_half_even(double x);

/// qrt.sign: 1 for x > 0, -1 for x < 0, x itself for +-0 and NaN (StableHLO's sign).
float sign_f32(float x);
/// qrt.rsqrt: 1 / sqrt(x) in double, rounded once to f32.
float rsqrt_f32(float x);

/// Clamps `v` to [lo, hi].
inline int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/// Adds the zero point to an already rounded value `r` and clamps to [qmin, qmax];
/// infinities saturate, NaN yields the zero point (clamped).
int64_t add_zero_point_and_clamp(double r, int64_t zp, int64_t qmin, int64_t qmax);

/// qcast, single precision: clamp(rne(f32(x) / f32(scale)) + zp, qmin, qmax).
int64_t quantize_f32(float x, float scale, int64_t zp, int64_t qmin, int64_t qmax);
/// qcast, double precision (f64 expressed types): clamp(rne(x / scale) + zp, qmin, qmax).
int64_t quantize_f64(double x, double scale, int64_t zp, int64_t qmin, int64_t qmax);

/// dcast, single precision: f32(q - zp) * scale, one f32 rounding of the product.
float dequantize_f32(int64_t q, int64_t zp, float scale);
/// dcast, double precision: f64(q - zp) * scale.
double dequantize_f64(int64_t q, int64_t zp, double scale);

/// The f32 requantization multiplier M = f32(numerator / denominator), computed in double.
float multiplier(double numerator, double denominator);

/// Requantize an exact integer value: clamp(rne(f32(v) * M) + zo, lo, hi).
int64_t requantize(int64_t v, float m, int64_t zo, int64_t lo, int64_t hi);

/// The scale a kernel computes with: the type's scale rounded to its expressed type, then
/// widened to f32 (f16/bf16/f32 expressed types).
float compute_scale_f32(double scale, FloatKind expressed);

/// qrt's exponential in f32: a fixed algorithm (Cody-Waite reduction by ln 2, a degree-7
/// polynomial in Horner form, scaling by 2^n), every step one f32 rounding, so every backend
/// can reproduce it bit for bit. Within 2 ulp of exp over the finite range.
float exp_f32(float x);

/// Logistic 1 / (1 + exp_f32(-x)) in f32.
float logistic_f32(float x);

/// a^b as qrt.pow computes it: b = 1, 2, 3 as products (a·a, a·a·a), b = 0.5 as sqrt, else
/// the C library's powf / pow.
float pow_f32(float a, float b);
double pow_f64(double a, double b);

/// qrt's tanh in f32, a fixed algorithm like exp_f32's: |x| >= 9 gives ±1; |x| >= 0.625 uses
/// 1 - 2 / (exp_f32(2|x|) + 1); below, e / (e + 2) with e = expm1(2|x|) from its degree-12
/// Taylor polynomial in Horner form (no cancellation near 0). Odd; NaN passes through.
float tanh_f32(float x);

/// qrt's error function in f32: |x| < 0.5 from its Taylor series to x^13 (Horner in x²);
/// above, 1 - erfc(|x|) with erfc from the Chebyshev-fitted form t·exp_f32(-x² + P(t)),
/// t = 1 / (1 + |x|/2) (fractional error of erfc < 1.2e-7); |x| >= 4 gives ±1. Odd.
float erf_f32(float x);

/// GELU in f32: 0.5·x·(1 + erf_f32(x / sqrt 2)), or with `tanh_form`
/// 0.5·x·(1 + tanh_f32(sqrt(2/pi)·(x + 0.044715·x³))), each step one f32 rounding.
float gelu_f32(float x, bool tanh_form);

// ---- Logarithms, expm1, sine, cosine, cube root (numerics_math.cpp) ----
// Fixed algorithms, every step one IEEE rounding (f32, or double where stated), so the
// reference, the scalar twin and generated code compute the same bits. Accuracy against the
// correctly rounded result, measured over every f32 (docs/numerics.md), is stated per function.

/// Natural logarithm: x = m·2^e with m in [sqrt(1/2), sqrt(2)), then
/// log(m) = 2·atanh(s), s = (m - 1) / (m + 1), from the atanh series to s^9, e·ln 2 added in
/// two parts. log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf.
float log_f32(float x);
/// log(1 + x) with the precision of tiny x kept: x itself is the reduced argument for
/// x in [sqrt(1/2) - 1, sqrt(2) - 1), else 1 + x is split as in log_f32 and the rounding error
/// of 1 + x added back. ±0 pass through; log1p(-1) = -inf; x < -1 gives NaN.
float log1p_f32(float x);
/// e^x - 1: Cody-Waite reduction x = n·ln 2 + r, expm1(r) from its Taylor series to r^8, and
/// 2^n·expm1(r) + (2^n - 1). ±0 pass through; x < -25·ln 2 gives -1; overflow gives inf.
float expm1_f32(float x);
/// Sine: exact Payne-Hanek reduction by pi/2 (256 bits of 2/pi), Taylor polynomials of sin and
/// cos in double on |r| <= pi/4, one rounding to f32. ±0 pass through; ±inf and NaN give NaN.
float sin_f32(float x);
/// Cosine, as sin_f32. cos(±0) = 1.
float cos_f32(float x);
/// Cube root: a guess from the exponent bits, three Halley steps in double, one rounding to
/// f32. Odd; ±0, ±inf and NaN pass through.
float cbrt_f32(float x);

// Inverse trigonometric and hyperbolic functions (numerics_math.cpp): in double from one
// arctangent and the logarithm above, rounded once to f32.
/// Arctangent: |x| halved four times in angle, t -> t / (1 + sqrt(1 + t²)) (so atan(x) =
/// 16·atan(t4), t4 <= 0.0985), then the atan series to t^23. Odd; ±inf gives ±pi/2.
float atan_f32(float x);
/// Arcsine: atan(x / sqrt((1 - x)(1 + x))) (both factors exact in double). Odd; ±1 gives
/// ±pi/2; |x| > 1 gives NaN.
float asin_f32(float x);
/// Arccosine: 2·atan(sqrt((1 - x) / (1 + x))); 1 gives +0, -1 gives pi; |x| > 1 gives NaN.
float acos_f32(float x);
/// Inverse hyperbolic sine: log1p(|x| + x² / (1 + sqrt(1 + x²))) in double, the sign of x.
/// ±0, ±inf and NaN pass through.
float asinh_f32(float x);
/// Inverse hyperbolic cosine: log1p(t + sqrt(t·(x + 1))) with t = x - 1 (exact). 1 gives +0,
/// inf gives inf, x < 1 gives NaN.
float acosh_f32(float x);
/// Inverse hyperbolic tangent: log1p(2|x| / (1 - |x|)) / 2, the sign of x. ±1 give ±inf,
/// |x| > 1 gives NaN; ±0 pass through.
float atanh_f32(float x);


// ---- Profiles other than the default (docs/numerics.md, "Profiles"; numerics_profiles.cpp) ----

/// StableHLO's quantize in expressed type `expressed` (every step rounded to it; f64 in
/// double): clamp(f(f(x / scale) + zp), qmin, qmax) rounded half to even, the zero point added
/// before rounding. Infinities saturate; NaN yields the zero point (clamped), as the default does.
int64_t quantize_stablehlo(double x, double scale, int64_t zp, int64_t qmin, int64_t qmax, FloatKind expressed);
/// StableHLO's dequantize in expressed type `expressed`: f(f(q - zp) * scale), each step rounded
/// to it (f64: in double).
double dequantize_stablehlo(int64_t q, int64_t zp, double scale, FloatKind expressed);

/// A TFLite quantized multiplier: real ≈ multiplier · 2^(shift - 31), multiplier in [2^30, 2^31).
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int shift = 0;
};
/// tflite::QuantizeMultiplier: frexp, the significand rounded half away from zero to Q31 (2^31
/// carries into the exponent), shifts below -31 flush to 0. With `single_rounding` the shift is
/// capped at 30 as TFLITE_SINGLE_ROUNDING builds do. `real` must be finite and >= 0.
QuantizedMultiplier quantize_multiplier(double real, bool single_rounding);
/// `v` saturated to int32.
inline int32_t saturate_i32(int64_t v) {
  return int32_t(clamp_i64(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
}
// The fixed-point functions below are inline: the profile kernels apply them per element.
/// gemmlowp's SaturatingRoundingDoublingHighMul: ab / 2^31 with gemmlowp's nudge (positive
/// ties round up, negative ties toward zero); INT32_MIN · INT32_MIN saturates to INT32_MAX.
/// Without branches on the product's sign: kernels apply it to accumulators of either sign,
/// where a branch mispredicts half the time.
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  constexpr int64_t kLow31 = (int64_t(1) << 31) - 1;
  const int64_t ab = int64_t(a) * int64_t(b);
  // The nudge: 2^30, or 1 - 2^30 for a negative product.
  const int64_t t = ab + ((int64_t(1) << 30) - ((ab >> 63) & kLow31));
  // t / 2^31 truncated toward zero, as gemmlowp's division does.
  return int32_t((t + ((t >> 63) & kLow31)) >> 31);
}
/// gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded half away from zero (0 <= exponent <= 31).
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = int32_t((int64_t(1) << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}
/// tflite::MultiplyByQuantizedMultiplier of `wide` saturated to int32: double rounding (a
/// left shift first, wrapping like the 32-bit arithmetic it copies; the high-mul; the
/// rounding shift) or, with `single_rounding`, one rounding of the 64-bit product.
inline int32_t multiply_by_quantized_multiplier(int64_t wide, QuantizedMultiplier m, bool single_rounding) {
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
/// tflite::MultiplyByQuantizedMultiplier's int64 overload (the 16x8 kernels' int64
/// accumulators): the Q31 multiplier reduced to Q15 (rounded, 0x7FFF at the top), then
/// (x · m15 + 2^(14 - shift)) >> (15 - shift), the same in double- and single-rounding builds.
/// TFLite asserts |x| < 2^47, shift in [-31, 7] and an int32 result; qrt computes the product
/// in 128 bits, shifts left for shifts above 14, and saturates the result to int32.
inline int32_t multiply_by_quantized_multiplier_i64(int64_t x, QuantizedMultiplier m) {
  const int64_t reduced = m.multiplier < 0x7FFF0000 ? (int64_t(m.multiplier) + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - m.shift;
  __int128 r = __int128(x) * reduced;
  if (total_shift > 0) {
    r = total_shift >= 126 ? (r < 0 ? -1 : 0) : (r + (__int128(1) << (total_shift - 1))) >> total_shift;
  } else {
    const __int128 limit = __int128(1) << 40;  // saturates below whatever the shift makes
    r = r > limit ? limit : r < -limit ? -limit : r;
    r = r * (__int128(1) << std::min(-total_shift, 60));
  }
  const __int128 lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  return int32_t(r < lo ? lo : r > hi ? hi : r);
}
/// TFLite's requantization of an integer (an accumulator or q - z_in) to a stored value:
/// clamp(multiply_by_quantized_multiplier(v, m) + zo, lo, hi).
inline int64_t requantize_tflite(int64_t v, QuantizedMultiplier m, int64_t zo, int64_t lo, int64_t hi,
                                 bool single_rounding) {
  return clamp_i64(int64_t(multiply_by_quantized_multiplier(v, m, single_rounding)) + zo, lo, hi);
}
/// TFLite's reference quantize (AffineQuantize): clamp(round(f32(x) / f32(scale)) + zp), the
/// division in f32 and std::round's half away from zero. NaN yields the zero point (clamped).
int64_t quantize_tflite(float x, float scale, int64_t zp, int64_t qmin, int64_t qmax);
/// TFLite's reference average: sum / count rounded half away from zero (integer arithmetic);
/// 0 for an empty reduction (count 0).
int64_t average_tflite(int64_t sum, int64_t count);

/// ONNX's QLinearMatMul / QLinearConv requantization (the reference evaluator's numpy
/// arithmetic): M = f32(f32(s_a · s_w) / s_y) from f32 scales, then
/// clamp(rne(f64(acc) · f64(M)) + zo, lo, hi).
float onnx_multiplier(double s_a, double s_w, double s_y);
inline int64_t requantize_onnx(int64_t acc, float m, int64_t zo, int64_t lo, int64_t hi) {
  return add_zero_point_and_clamp(round_half_even(double(acc) * double(m)), zo, lo, hi);
}

}  // namespace qrt::numerics
