// Tests: the scalar numerics contract (docs/numerics.md) on hand-computed cases.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/numerics.h"

using namespace qrt::numerics;

TEST_CASE("qcast rounds half to even after an f32 division, then adds the zero point") {
  // ties: 0.25/0.5 = 0.5 -> 0; 0.75/0.5 = 1.5 -> 2; 1.25/0.5 = 2.5 -> 2; -0.75/0.5 -> -2
  CHECK(quantize_f32(0.25f, 0.5f, 0, -128, 127) == 0);
  CHECK(quantize_f32(0.75f, 0.5f, 0, -128, 127) == 2);
  CHECK(quantize_f32(1.25f, 0.5f, 0, -128, 127) == 2);
  CHECK(quantize_f32(-0.25f, 0.5f, 0, -128, 127) == 0);
  CHECK(quantize_f32(-0.75f, 0.5f, 0, -128, 127) == -2);
  // The zero point is added after rounding: rne(0.5) + (-3) = -3, whereas rounding after
  // adding it (StableHLO's order) would give rne(-2.5) = -2.
  CHECK(quantize_f32(0.25f, 0.5f, -3, -128, 127) == -3);
  // A true f32 division: 7.5 / 3 = 2.5 -> 2, but 7.5 * f32(1/3) = 2.5000002 -> 3.
  CHECK(quantize_f32(7.5f, 3.0f, 0, -128, 127) == 2);
}

TEST_CASE("qcast saturates at both bounds, inf saturates, NaN maps to the zero point") {
  CHECK(quantize_f32(1000.0f, 1.0f, 0, -128, 127) == 127);
  CHECK(quantize_f32(-1000.0f, 1.0f, 0, -128, 127) == -128);
  CHECK(quantize_f32(-1000.0f, 1.0f, 0, -127, 127) == -127);  // narrow range
  CHECK(quantize_f32(INFINITY, 0.1f, 5, -128, 127) == 127);
  CHECK(quantize_f32(-INFINITY, 0.1f, 5, -128, 127) == -128);
  CHECK(quantize_f32(NAN, 0.1f, 5, -128, 127) == 5);
  CHECK(quantize_f32(3.0e38f, 1.0e-30f, 0, -128, 127) == 127);  // x/s overflows to inf
  // Extreme zero points.
  CHECK(quantize_f32(-1.0f, 1.0f, 255, 0, 255) == 254);
  CHECK(quantize_f32(1.0f, 1.0f, 255, 0, 255) == 255);
  CHECK(quantize_f32(-1.0f, 1.0f, -128, -128, 127) == -128);
  CHECK(quantize_f32(0.4f, 1.0f, 127, -128, 127) == 127);
  // 32-bit storage extremes.
  CHECK(quantize_f32(1.0e12f, 1.0f, 0, INT32_MIN, INT32_MAX) == INT32_MAX);
  CHECK(quantize_f32(-1.0e12f, 1.0f, 0, 0, 4294967295LL) == 0);
  CHECK(quantize_f32(4294967040.0f, 1.0f, 0, 0, 4294967295LL) == 4294967040LL);
  // f64 expressed types compute in f64: 0.1 / 0.1 is exactly 1 there.
  CHECK(quantize_f64(0.1, 0.1, 0, -128, 127) == 1);
  CHECK(quantize_f64(2.5, 1.0, 0, -128, 127) == 2);
}

TEST_CASE("dcast is one f32 multiply of (q - zp)") {
  CHECK(dequantize_f32(-128, 127, 0.5f) == -127.5f);
  CHECK(dequantize_f32(255, 0, 1.0f / 255.0f) == 255.0f * (1.0f / 255.0f));
  CHECK(dequantize_f32(3, 3, 0.1f) == 0.0f);
  CHECK(dequantize_f64(-3, 2, 0.25) == -1.25);
}

TEST_CASE("requantize: f32(acc) * M, round half to even, add zero point, clamp") {
  CHECK(requantize(5, 0.5f, 0, -128, 127) == 2);    // 2.5 -> 2
  CHECK(requantize(7, 0.5f, 0, -128, 127) == 4);    // 3.5 -> 4
  CHECK(requantize(-5, 0.5f, 0, -128, 127) == -2);  // -2.5 -> -2
  CHECK(requantize(-5, 0.5f, 10, -128, 127) == 8);
  CHECK(requantize(1000, 0.5f, 0, -128, 127) == 127);
  CHECK(requantize(-1000, 0.5f, 0, -128, 127) == -128);
  CHECK(requantize(1000, 0.5f, 0, 0, 6) == 6);  // a fused relu6 bound
  // f32(acc) rounds: 2^24 + 1 is not an f32, it becomes 2^24.
  CHECK(requantize(16777217, 1.0f, 0, INT32_MIN, INT32_MAX) == 16777216);
  // The multiplier is f32(s_in / s_out) computed in double.
  CHECK(multiplier(0.5 * 0.25, 0.2) == float(0.125 / 0.2));
  CHECK(multiplier(1.0, 3.0) == 0.333333343f);
}

TEST_CASE("compute scale is the scale rounded to its expressed type") {
  CHECK(compute_scale_f32(0.1, qrt::FloatKind::kF32) == 0.1f);
  CHECK(compute_scale_f32(0.1, qrt::FloatKind::kF16) == 0.0999755859375f);
  CHECK(compute_scale_f32(0.1, qrt::FloatKind::kBF16) == 0.10009765625f);
}

TEST_CASE("exp_f32 is within 2 ulp of exp and handles the edges") {
  CHECK(exp_f32(0.0f) == 1.0f);
  CHECK(exp_f32(-INFINITY) == 0.0f);
  CHECK(exp_f32(INFINITY) == INFINITY);
  CHECK(std::isnan(exp_f32(NAN)));
  CHECK(exp_f32(89.0f) == INFINITY);
  CHECK(exp_f32(-104.0f) == 0.0f);
  int worst = 0;
  for (float x = -103.0f; x < 88.7f; x += 0.0137f) {
    const float want = float(std::exp(double(x)));
    const float got = exp_f32(x);
    if (want < 1.2e-38f) continue;  // subnormal results: relative ulp is not meaningful
    int32_t a, b;
    std::memcpy(&a, &want, 4);
    std::memcpy(&b, &got, 4);
    worst = std::max(worst, std::abs(a - b));
  }
  CHECK(worst <= 2);
  CHECK(logistic_f32(0.0f) == 0.5f);
  CHECK(logistic_f32(100.0f) == 1.0f);
  CHECK(logistic_f32(-100.0f) < 1e-40f);
}
