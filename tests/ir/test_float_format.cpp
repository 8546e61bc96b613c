// Tests: MLIR float formatting and the f16/bf16 conversions.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "ir/float_format.h"
#include "ir/text_format.h"

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

TEST_CASE("MLIR 19's f8 types and tf32: names, extremes, rounding, NaN and the formats without -0") {
  using qrt::float_kind_bits;
  using qrt::float_kind_from_bits;
  FloatKind k;
  for (const char* name : {"f8E5M2", "f8E4M3FN", "f8E5M2FNUZ", "f8E4M3FNUZ", "f8E4M3B11FNUZ", "f8E4M3", "tf32"}) {
    REQUIRE(qrt::float_kind_from_name(name, &k));
    CHECK(std::string(qrt::float_kind_name(k)) == name);
    CHECK_FALSE(qrt::float_kind_runs(k));
  }
  CHECK_FALSE(qrt::float_kind_from_name("f8E3M4", &k));  // not in MLIR 19
  CHECK(qrt::float_kind_runs(FloatKind::kBF16));
  // The largest finite values (APFloat's), and what lies beyond them.
  CHECK(float_kind_from_bits(0x7E, FloatKind::kF8E4M3FN) == 448.0);
  CHECK(float_kind_bits(464.0, FloatKind::kF8E4M3FN) == 0x7E);  // tie to even: 448
  CHECK(std::isnan(float_kind_from_bits(float_kind_bits(480.0, FloatKind::kF8E4M3FN), FloatKind::kF8E4M3FN)));
  CHECK(float_kind_bits(1e9, FloatKind::kF8E4M3FN) == 0x7F);  // overflow: NaN, no inf
  CHECK(float_kind_from_bits(0x7B, FloatKind::kF8E5M2) == 57344.0);
  CHECK(float_kind_bits(61440.0, FloatKind::kF8E5M2) == 0x7C);  // tie to even rounds up: inf
  CHECK(float_kind_from_bits(0x7F, FloatKind::kF8E4M3FNUZ) == 240.0);
  CHECK(float_kind_from_bits(0x7F, FloatKind::kF8E4M3B11FNUZ) == 30.0);
  CHECK(float_kind_from_bits(0x7F, FloatKind::kF8E5M2FNUZ) == 57344.0);
  CHECK(float_kind_from_bits(0x77, FloatKind::kF8E4M3) == 240.0);
  CHECK(float_kind_bits(INFINITY, FloatKind::kF8E4M3) == 0x78);
  // FNUZ: 0x80 is the only NaN, and -0 becomes +0.
  CHECK(float_kind_bits(NAN, FloatKind::kF8E4M3FNUZ) == 0x80);
  CHECK(float_kind_bits(-0.0, FloatKind::kF8E5M2FNUZ) == 0x00);
  CHECK(float_kind_bits(-0.0, FloatKind::kF8E4M3FN) == 0x80);
  // Subnormals: the smallest of each.
  CHECK(float_kind_from_bits(0x01, FloatKind::kF8E4M3FN) == std::ldexp(1.0, -9));
  CHECK(float_kind_from_bits(0x01, FloatKind::kF8E5M2) == std::ldexp(1.0, -16));
  CHECK(float_kind_from_bits(0x01, FloatKind::kF8E4M3B11FNUZ) == std::ldexp(1.0, -13));
  CHECK(float_kind_from_bits(0x1, FloatKind::kTF32) == std::ldexp(1.0, -136));
  CHECK(float_kind_bits(0.1, FloatKind::kTF32) == 0x1EE66);  // f32 0x3DCCCCCD keeps its top 19 bits
  // Every bit pattern of each f8 kind decodes and re-encodes to itself (NaN to its NaN).
  for (FloatKind f8 : {FloatKind::kF8E5M2, FloatKind::kF8E4M3FN, FloatKind::kF8E5M2FNUZ, FloatKind::kF8E4M3FNUZ,
                       FloatKind::kF8E4M3B11FNUZ, FloatKind::kF8E4M3}) {
    CAPTURE(std::string(qrt::float_kind_name(f8)));
    CHECK(qrt::float_kind_bytes(f8) == 1);
    for (uint32_t bits = 0; bits < 256; ++bits) {
      const double v = float_kind_from_bits(bits, f8);
      if (std::isnan(v)) {
        CHECK(std::isnan(float_kind_from_bits(float_kind_bits(v, f8), f8)));
      } else {
        CHECK(float_kind_bits(v, f8) == bits);
      }
    }
  }
  CHECK(qrt::format_mlir_float(qrt::round_to_float_kind(0.3, FloatKind::kF8E4M3FN), FloatKind::kF8E4M3FN) ==
        "3.125000e-01");
}

TEST_CASE("tf32 keeps 19 of its 32 stored bits; the loaders refuse the other 13 (a libFuzzer finding)") {
  // fuzz_load_binary (seed 34) found five tf32 elements that differed only in the unused high
  // bits: they printed alike, reloaded as equal elements and printed as a splat, so printing
  // was not a fixed point. Every loader now refuses such bits, naming the element.
  CHECK(qrt::float_kind_width(FloatKind::kTF32) == 19);
  CHECK(qrt::float_kind_width(FloatKind::kF8E5M2) == 8);
  CHECK(qrt::float_kind_width(FloatKind::kBF16) == 16);
  CHECK(qrt::float_kind_width(FloatKind::kF64) == 64);
  const std::string head = "func.func @main() -> tensor<2xtf32> {\n  %0 = \"qrt.constant\"() {value = dense<";
  const std::string tail = "> : tensor<2xtf32>} : () -> tensor<2xtf32>\n  return %0 : tensor<2xtf32>\n}\n";
  auto ok = qrt::parse_graph(head + "[0x3F800, 0x7FFFF]" + tail);
  REQUIRE_MESSAGE(ok.is_ok(), ok.status().to_string());
  auto element = qrt::parse_graph(head + "[0x3F800, 0x80000]" + tail);
  REQUIRE_FALSE(element.is_ok());
  CHECK(element.status().message() == "hexadecimal element 0x80000 sets bits above the low 19 that tf32 stores");
  // The hex blob: element 1 is 0x00080000 (little-endian).
  auto blob = qrt::parse_graph(head + "\"0x0000000000000800\"" + tail);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(blob.status().message() == "hex dense literal: element 1 sets bits above the low 19 that tf32 stores");
}
