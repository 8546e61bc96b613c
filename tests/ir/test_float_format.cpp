// Tests: MLIR float formatting and the f16/bf16 conversions.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "ir/float_format.h"

using qrt::FloatKind;
using qrt::format_mlir_float;

TEST_CASE("floats print as mlir-opt-19 prints them") {
  // Expected strings were taken from mlir-opt-19 output for the same values.
  CHECK(format_mlir_float(0.5, FloatKind::kF64) == "5.000000e-01");
  CHECK(format_mlir_float(1.0e10, FloatKind::kF64) == "1.000000e+10");
  CHECK(format_mlir_float(-2.5, FloatKind::kF64) == "-2.500000e+00");
  CHECK(format_mlir_float(0.0, FloatKind::kF64) == "0.000000e+00");
  CHECK(format_mlir_float(0.0039215689, FloatKind::kF64) == "0.0039215689000000001");
  CHECK(format_mlir_float(0.0009765625, FloatKind::kF64) == "9.765625E-4");
  CHECK(format_mlir_float(123456789.123, FloatKind::kF64) == "123456789.123");
  CHECK(format_mlir_float(1.0e39, FloatKind::kF64) == "9.9999999999999994E+38");
  CHECK(format_mlir_float(1234567.0, FloatKind::kF64) == "0x4132D68700000000");
  CHECK(format_mlir_float(1.0e-300, FloatKind::kF64) == "1.000000e-300");
  // Element semantics matter: the same decimal in f16 and f32 (mlir-opt-19 dense output).
  CHECK(format_mlir_float(qrt::round_to_float_kind(0.1, FloatKind::kF16), FloatKind::kF16) ==
        "9.997550e-02");
  CHECK(format_mlir_float(qrt::round_to_float_kind(0.1, FloatKind::kBF16), FloatKind::kBF16) ==
        "1.000980e-01");
  CHECK(format_mlir_float(double(0.1f), FloatKind::kF32) == "1.000000e-01");
  CHECK(format_mlir_float(double(1.0f / 3.0f), FloatKind::kF32) == "0.333333343");
  CHECK(format_mlir_float(INFINITY, FloatKind::kF32) == "0x7F800000");
  CHECK(format_mlir_float(-INFINITY, FloatKind::kF64) == "0xFFF0000000000000");
}

TEST_CASE("f16 conversion rounds half to even, saturates to inf, keeps subnormals") {
  CHECK(qrt::f16_bits_from_double(1.0) == 0x3C00);
  CHECK(qrt::f16_bits_from_double(65504.0) == 0x7BFF);
  CHECK(qrt::f16_bits_from_double(65519.0) == 0x7BFF);  // below the halfway point
  CHECK(qrt::f16_bits_from_double(65520.0) == 0x7C00);  // tie to even -> inf
  CHECK(qrt::f16_bits_from_double(-0.0) == 0x8000);
  CHECK(qrt::f16_bits_from_double(std::ldexp(1.0, -24)) == 0x0001);  // smallest subnormal
  CHECK(qrt::f16_bits_from_double(std::ldexp(1.0, -25)) == 0x0000);  // tie to even -> 0
  CHECK(qrt::f16_bits_from_double(std::ldexp(3.0, -25)) == 0x0002);  // 1.5 ulp -> 2 (even)
  CHECK(qrt::f16_bits_from_double(1.0 + std::ldexp(1.0, -11)) == 0x3C00);  // tie -> even
  CHECK(qrt::f16_bits_from_double(1.0 + std::ldexp(3.0, -11)) == 0x3C02);  // tie -> even (up)
  CHECK((qrt::f16_bits_from_double(NAN) & 0x7C00) == 0x7C00);
  for (uint32_t bits = 0; bits < 0x7C00; ++bits) {
    const float v = qrt::f16_bits_to_float(uint16_t(bits));
    REQUIRE(qrt::f16_bits_from_double(v) == bits);  // every finite f16 round-trips
  }
}

TEST_CASE("bf16 conversion") {
  CHECK(qrt::bf16_bits_from_double(1.0) == 0x3F80);
  CHECK(qrt::bf16_bits_from_double(1.0 + std::ldexp(1.0, -8)) == 0x3F80);  // tie -> even
  CHECK(qrt::bf16_bits_from_double(1.0 + std::ldexp(3.0, -8)) == 0x3F82);
  CHECK(qrt::bf16_bits_to_float(0x3FC0) == 1.5f);
  CHECK(qrt::bf16_bits_from_double(3.5e38) == 0x7F80);  // beyond the largest finite -> inf
}
