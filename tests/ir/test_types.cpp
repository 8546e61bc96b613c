// Tests: the quant type table — canonical spelling (checked against mlir-opt-19 when the
// table was written; tests/tools/mlir_oracle.sh re-checks it when mlir-opt-19 is installed)
// or the exact diagnostic.
#include <doctest/doctest.h>

#include <string>

#include "ir/numerics.h"
#include "ir/quant_params.h"
#include "ir/types.h"

namespace {

struct TypeCase {
  const char* input;
  const char* canonical;   // expected print(parse(input)), or nullptr when invalid
  const char* diagnostic;  // expected error, or nullptr when valid
};

const TypeCase kCases[] = {
    {"!quant.uniform<i8:f32, 0.5:-3>", "!quant.uniform<i8:f32, 5.000000e-01:-3>", nullptr},
    {"!quant.uniform<i8:f32, 5.000000e-01:-3>", "!quant.uniform<i8:f32, 5.000000e-01:-3>", nullptr},
    {"!quant.uniform<si8:f32, 1.0>", "!quant.uniform<i8:f32, 1.000000e+00>", nullptr},
    {"!quant.uniform<ui8:f32, 1.0:128>", "!quant.uniform<u8:f32, 1.000000e+00:128>", nullptr},
    {"!quant.uniform<u8:f32, 0.0039215689:0>", "!quant.uniform<u8:f32, 0.0039215689000000001>", nullptr},
    {"!quant.uniform<u8<0:255>:f32, 2.0>", "!quant.uniform<u8:f32, 2.000000e+00>", nullptr},
    {"!quant.uniform<i8<-128:127>:f32, 2.0>", "!quant.uniform<i8:f32, 2.000000e+00>", nullptr},
    {"!quant.uniform<i8<-127:127>:f32, 2.0>", "!quant.uniform<i8<-127:127>:f32, 2.000000e+00>", nullptr},
    {"!quant.uniform<u16<0:1023>:f32, 1.23:512>", "!quant.uniform<u16<0:1023>:f32, 1.230000e+00:512>", nullptr},
    {"!quant.uniform<i16:f16, 0.25:-7>", "!quant.uniform<i16:f16, 2.500000e-01:-7>", nullptr},
    {"!quant.uniform<i4:bf16, 0.1>", "!quant.uniform<i4:bf16, 1.000000e-01>", nullptr},
    {"!quant.uniform<i4<-7:7>:bf16, 0.1:0>", "!quant.uniform<i4<-7:7>:bf16, 1.000000e-01>", nullptr},
    {"!quant.uniform<i2:f32, 1.0>", "!quant.uniform<i2:f32, 1.000000e+00>", nullptr},
    {"!quant.uniform<u2:f32, 1.0:3>", "!quant.uniform<u2:f32, 1.000000e+00:3>", nullptr},
    {"!quant.uniform<i32:f32, 1.5625e-4>", "!quant.uniform<i32:f32, 1.562500e-04>", nullptr},
    {"!quant.uniform<u32:f64, 1.0:4294967295>", "!quant.uniform<u32:f64, 1.000000e+00:4294967295>", nullptr},
    {"!quant.uniform<i8:f64, 0.1>", "!quant.uniform<i8:f64, 1.000000e-01>", nullptr},
    {"!quant.uniform<i8:f32, 1.0e-3:-128>", "!quant.uniform<i8:f32, 1.000000e-03:-128>", nullptr},
    {"!quant.uniform<i8:f32, 123456789.123>", "!quant.uniform<i8:f32, 123456789.123>", nullptr},
    {"!quant.uniform<i8:f32, 0.0009765625>", "!quant.uniform<i8:f32, 9.765625E-4>", nullptr},
    {"!quant.uniform<i8:f32, 1.5e300>", nullptr, "<input>:1:1: error: illegal scale: 1.500000e+300 is not finite in expressed type f32"},
    {"!quant.uniform<i8:f64, 1.5e300>", "!quant.uniform<i8:f64, 1.500000e+300>", nullptr},
    {"!quant.uniform<i8:f32, 0x3FE0000000000000>", "!quant.uniform<i8:f32, 5.000000e-01>", nullptr},
    {"!quant.uniform<i8:f32, 3.0e-39>", "!quant.uniform<i8:f32, 3.000000e-39>", nullptr},
    {"!quant.uniform<i8:f32:1, {3.0, 4.0, 5.0}>", nullptr, "<input>:1:1: error: per-axis quantized type !quant.uniform<i8:f32:1, {3.000000e+00,4.000000e+00,5.000000e+00}> must be the element type of a tensor, not a scalar"},
    {"!quant.uniform<u16:f32:0, {2.0:10, 3.0:20}>", nullptr, "<input>:1:1: error: per-axis quantized type !quant.uniform<u16:f32:0, {2.000000e+00:10,3.000000e+00:20}> must be the element type of a tensor, not a scalar"},
    {"!quant.uniform<i8:f32:0, {1.0:2,2.5e-3,0.1,1.0e10}>", nullptr, "<input>:1:1: error: per-axis quantized type !quant.uniform<i8:f32:0, {1.000000e+00:2,2.500000e-03,1.000000e-01,1.000000e+10}> must be the element type of a tensor, not a scalar"},
    {"!quant.uniform<i8<-127:127>:f32:3, {0.5:-1, 0.25:1}>", nullptr, "<input>:1:1: error: per-axis quantized type !quant.uniform<i8<-127:127>:f32:3, {5.000000e-01:-1,2.500000e-01:1}> must be the element type of a tensor, not a scalar"},
    {"!quant.any<i8:f32>", "!quant.any<i8:f32>", nullptr},
    {"!quant.any<i8>", "!quant.any<i8>", nullptr},
    {"!quant.any<u16<0:1023>:f16>", "!quant.any<u16<0:1023>:f16>", nullptr},
    {"!quant.calibrated<f32<-1.0:1.0>>", "!quant.calibrated<f32<-1.000000e+00:1.000000e+00>>", nullptr},
    {"!quant.calibrated<f64<-0.5:2.75>>", "!quant.calibrated<f64<-5.000000e-01:2.750000e+00>>", nullptr},
    {"tensor<2x3x4x!quant.uniform<i8:f32:1, {3.0, 4.0, 5.0}>>", "tensor<2x3x4x!quant.uniform<i8:f32:1, {3.000000e+00,4.000000e+00,5.000000e+00}>>", nullptr},
    {"tensor<?x3x!quant.uniform<i8:f32:1, {2.0, 3.0, 4.0}>>", "tensor<?x3x!quant.uniform<i8:f32:1, {2.000000e+00,3.000000e+00,4.000000e+00}>>", nullptr},
    {"tensor<?x?x!quant.uniform<u16:f32:0, {2.0:10, 3.0:20}>>", "tensor<?x?x!quant.uniform<u16:f32:0, {2.000000e+00:10,3.000000e+00:20}>>", nullptr},
    {"tensor<4x!quant.uniform<i8:f32, 0.5:-3>>", "tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>", nullptr},
    {"tensor<f32>", "tensor<f32>", nullptr},
    {"tensor<1x2x3xbf16>", "tensor<1x2x3xbf16>", nullptr},
    {"tensor<0xi32>", "tensor<0xi32>", nullptr},
    {"f16", "f16", nullptr},
    {"si8", "si8", nullptr},
    {"ui16", "ui16", nullptr},
    {"i1", "i1", nullptr},
    {"!quant.uniform<i8:f32, 0.0>", nullptr, "<input>:1:1: error: illegal scale: 0.000000e+00 (scale must be finite and > 0)"},
    {"!quant.uniform<i8:f32, -1.0>", nullptr, "<input>:1:1: error: illegal scale: -1.000000e+00 (scale must be finite and > 0)"},
    {"!quant.uniform<i8:f32, 0x7FF0000000000000>", nullptr, "<input>:1:1: error: illegal scale: 0x7FF0000000000000 (scale must be finite and > 0)"},
    {"!quant.uniform<i8:f32, 0x7FF8000000000000>", nullptr, "<input>:1:1: error: illegal scale: 0x7FF8000000000000 (scale must be finite and > 0)"},
    {"!quant.uniform<i8:f32, 1.0e39>", nullptr, "<input>:1:1: error: illegal scale: 9.9999999999999994E+38 is not finite in expressed type f32"},
    {"!quant.uniform<i8:f16, 1.0e5>", nullptr, "<input>:1:1: error: illegal scale: 1.000000e+05 is not finite in expressed type f16"},
    {"!quant.uniform<i8:f32, 1.0e-50>", nullptr, "<input>:1:1: error: illegal scale: 1.000000e-50 is zero in expressed type f32"},
    {"!quant.uniform<i8:f32, 1>", nullptr, "<input>:1:24: error: unexpected decimal integer literal for a floating point value (scale 1; add a trailing '.0')"},
    {"!quant.uniform<i8:f32, 1.0:200>", nullptr, "<input>:1:1: error: zero point 200 is outside the storage bounds [-128, 127]"},
    {"!quant.uniform<i8:f32, 1.0:-129>", nullptr, "<input>:1:1: error: zero point -129 is outside the storage bounds [-128, 127]"},
    {"!quant.uniform<i8<-100:100>:f32, 1.0:101>", nullptr, "<input>:1:1: error: zero point 101 is outside the storage bounds [-100, 100]"},
    {"!quant.uniform<u8<10:20>:f32, 1.0>", nullptr, "<input>:1:1: error: zero point 0 is outside the storage bounds [10, 20]"},
    {"!quant.uniform<i8<5:5>:f32, 1.0>", nullptr, "<input>:1:1: error: storage min 5 must be less than storage max 5"},
    {"!quant.uniform<i8<6:5>:f32, 1.0>", nullptr, "<input>:1:1: error: storage min 6 must be less than storage max 5"},
    {"!quant.uniform<i8<-200:0>:f32, 1.0>", nullptr, "<input>:1:1: error: storage min -200 is outside the range of i8 [-128, 127]"},
    {"!quant.uniform<u8<0:256>:f32, 1.0>", nullptr, "<input>:1:1: error: storage max 256 is outside the range of u8 [0, 255]"},
    {"!quant.uniform<i1:f32, 1.0>", nullptr, "<input>:1:16: error: illegal storage type size: 1 (quantized storage must be 2 to 32 bits)"},
    {"!quant.uniform<i33:f32, 1.0>", nullptr, "<input>:1:16: error: illegal storage type size: 33 (quantized storage must be 2 to 32 bits)"},
    {"!quant.uniform<i64:f32, 1.0>", nullptr, "<input>:1:16: error: illegal storage type size: 64 (quantized storage must be 2 to 32 bits)"},
    {"!quant.uniform<i8:f80, 1.0>", nullptr, "<input>:1:19: error: unsupported expressed type 'f80' (qrt supports f16, bf16, f32, f64, tf32 and MLIR 19's f8 types: f8E5M2, f8E4M3FN, f8E5M2FNUZ, f8E4M3FNUZ, f8E4M3B11FNUZ, f8E4M3)"},
    {"!quant.uniform<i8:tf32, 1.0>", "!quant.uniform<i8:tf32, 1.000000e+00>", nullptr},
    {"!quant.uniform<u8:f8E4M3FN, 0.3:128>", "!quant.uniform<u8:f8E4M3FN, 3.000000e-01:128>", nullptr},
    {"!quant.uniform<i8:f8E4M3FN, 1000.0>", nullptr, "<input>:1:1: error: illegal scale: 1.000000e+03 is not finite in expressed type f8E4M3FN"},
    {"!quant.uniform<i8:f8E5M2FNUZ, 1.0e-9>", nullptr, "<input>:1:1: error: illegal scale: 1.000000e-09 is zero in expressed type f8E5M2FNUZ"},
    {"!quant.calibrated<f8E5M2<-1.0:1.0>>", "!quant.calibrated<f8E5M2<-1.000000e+00:1.000000e+00>>", nullptr},
    {"!quant.uniform<i8:i8, 1.0>", nullptr, "<input>:1:19: error: unsupported expressed type 'i8' (qrt supports f16, bf16, f32, f64, tf32 and MLIR 19's f8 types: f8E5M2, f8E4M3FN, f8E5M2FNUZ, f8E4M3FNUZ, f8E4M3B11FNUZ, f8E4M3)"},
    {"!quant.uniform<x8:f32, 1.0>", nullptr, "<input>:1:16: error: expected storage type (i8, u8, si8, ui8, ...), found 'x8'"},
    {"!quant.uniform<i8:f32>", nullptr, "<input>:1:22: error: expected ',' before the scale, found '>'"},
    {"!quant.uniform<i8:f32, 1.0", nullptr, "<input>:1:27: error: expected '>' to close the quantized type, found end of input"},
    {"!quant.uniform<i8:f32:0, {}>", nullptr, "<input>:1:27: error: expected a number, found '}>'"},
    {"!quant.uniform<i8:f32:0, {1.0, -2.0}>", nullptr, "<input>:1:1: error: illegal scale of channel 1: -2.000000e+00 (scale must be finite and > 0)"},
    {"!quant.uniform<i8:f32:0, {1.0:0, 2.0:300}>", nullptr, "<input>:1:1: error: zero point 300 of channel 1 is outside the storage bounds [-128, 127]"},
    {"!quant.uniform<i8:f32:-1, {1.0}>", nullptr, "<input>:1:1: error: illegal channel axis -1 (must be >= 0)"},
    {"!quant.calibrated<f32<1.0:-1.0>>", nullptr, "<input>:1:1: error: illegal calibrated range: min 1.000000e+00 must be less than max -1.000000e+00"},
    {"!quant.calibrated<f32<1.0:1.0>>", nullptr, "<input>:1:1: error: illegal calibrated range: min 1.000000e+00 must be less than max 1.000000e+00"},
    {"!quant.calibrated<i8<-1.0:1.0>>", nullptr, "<input>:1:19: error: unsupported expressed type 'i8' (qrt supports f16, bf16, f32, f64, tf32 and MLIR 19's f8 types: f8E5M2, f8E4M3FN, f8E5M2FNUZ, f8E4M3FNUZ, f8E4M3B11FNUZ, f8E4M3)"},
    {"!quant.any<i1:f32>", nullptr, "<input>:1:12: error: illegal storage type size: 1 (quantized storage must be 2 to 32 bits)"},
    {"!quant.foo<i8:f32>", nullptr, "<input>:1:1: error: unknown quant type '!quant.foo' (expected uniform, any or calibrated)"},
    {"!foo.bar", nullptr, "<input>:1:1: error: unsupported type '!foo.bar'"},
    {"tensor<*xf32>", nullptr, "<input>:1:1: error: unranked tensors are not supported"},
    {"tensor<2x3x4x!quant.uniform<i8:f32:1, {3.0, 4.0, 5.0, 6.0}>>", nullptr, "<input>:1:1: error: channel axis 1 has size 3 but the quantized type has 4 scales"},
    {"tensor<1x2x!quant.uniform<i8:f32:3, {1.0, 2.0}>>", nullptr, "<input>:1:1: error: channel axis 3 is out of range for a tensor of rank 2 (the rank must be greater than the channel axis)"},
    {"!quant.uniform<i8:f32:0, {1.0, 2.0}>", nullptr, "<input>:1:1: error: per-axis quantized type !quant.uniform<i8:f32:0, {1.000000e+00,2.000000e+00}> must be the element type of a tensor, not a scalar"},
    {"tensor<2xf80>", nullptr, "<input>:1:10: error: unsupported element type 'f80' (qrt supports f16, bf16, f32, f64, tf32, the f8 types, integers and !quant types)"},
    {"tensor<2xf8E4M3B11FNUZ>", "tensor<2xf8E4M3B11FNUZ>", nullptr},
    {"tensor<2xindex>", nullptr, "<input>:1:10: error: unsupported element type 'index' (qrt supports f16, bf16, f32, f64, tf32, the f8 types, integers and !quant types)"},
    {"tensor<2x>", nullptr, "<input>:1:10: error: expected a type, found '>'"},
};

}  // namespace

TEST_CASE("type table: canonical form or exact diagnostic") {
  int valid = 0, invalid = 0;
  for (const TypeCase& c : kCases) {
    CAPTURE(c.input);
    auto parsed = qrt::parse_type(c.input);
    if (c.canonical) {
      REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
      CHECK(parsed->to_string() == c.canonical);
      // The canonical form is a fixed point.
      auto again = qrt::parse_type(parsed->to_string());
      REQUIRE(again.is_ok());
      CHECK(again->to_string() == c.canonical);
      CHECK(*again == *parsed);
      ++valid;
    } else {
      REQUIRE_FALSE(parsed.is_ok());
      CHECK(parsed.status().to_string() == c.diagnostic);
      ++invalid;
    }
  }
  CHECK(valid + invalid >= 60);
  CHECK(invalid >= 30);
}

TEST_CASE("builder API shares verify() with the parser") {
  using qrt::ElementType;
  using qrt::FloatKind;
  qrt::QuantStorage s8;  // i8, full range
  auto ok = ElementType::make_uniform(s8, FloatKind::kF32, 0.5, -3);
  CHECK(ok.verify().is_ok());
  CHECK(ok.to_string() == "!quant.uniform<i8:f32, 5.000000e-01:-3>");

  auto bad_zp = ElementType::make_uniform(s8, FloatKind::kF32, 0.5, 128);
  CHECK(bad_zp.verify().message() == "zero point 128 is outside the storage bounds [-128, 127]");
  auto bad_scale = ElementType::make_uniform(s8, FloatKind::kF32, -0.5, 0);
  CHECK(bad_scale.verify().message() ==
        "illegal scale: -5.000000e-01 (scale must be finite and > 0)");

  qrt::QuantStorage narrow{8, true, -127, 127};
  auto per_axis = ElementType::make_per_axis(narrow, FloatKind::kF32, 1, {0.5, 0.25}, {0, 0});
  auto t = qrt::Type::tensor({4, 2}, per_axis);
  CHECK(t.verify().is_ok());
  CHECK(t.to_string() == "tensor<4x2x!quant.uniform<i8<-127:127>:f32:1, {5.000000e-01,2.500000e-01}>>");
  CHECK(qrt::Type::tensor({4, 3}, per_axis).verify().message() ==
        "channel axis 1 has size 3 but the quantized type has 2 scales");
  CHECK(qrt::Type::tensor({4}, per_axis).verify().message() ==
        "channel axis 1 is out of range for a tensor of rank 1 (the rank must be greater than "
        "the channel axis)");
  CHECK(qrt::Type::scalar(per_axis).verify().message().find("must be the element type of a tensor") !=
        std::string::npos);
  // A dynamic axis dimension is checked at run time instead.
  CHECK(qrt::Type::tensor({4, -1}, per_axis).verify().is_ok());

  auto cal = ElementType::make_calibrated(FloatKind::kF32, 2.0, -2.0);
  CHECK(cal.verify().message() ==
        "illegal calibrated range: min 2.000000e+00 must be less than max -2.000000e+00");
  qrt::QuantStorage wide{40, true, 0, 1};
  CHECK(ElementType::make_any(wide, true, FloatKind::kF32).verify().message() ==
        "illegal storage type size: 40 (quantized storage must be 2 to 32 bits)");
}

TEST_CASE("storage ranges by width and signedness") {
  qrt::QuantStorage u4{4, false, 0, 15};
  CHECK(u4.full_min() == 0);
  CHECK(u4.full_max() == 15);
  CHECK(u4.has_default_bounds());
  qrt::QuantStorage i32{32, true, INT32_MIN, INT32_MAX};
  CHECK(i32.full_min() == INT32_MIN);
  CHECK(i32.full_max() == INT32_MAX);
  qrt::QuantStorage u32{32, false, 0, 4294967295LL};
  CHECK(u32.full_max() == 4294967295LL);
  // Widths the verifier refuses still have defined ranges (an importer once asked for 64 bits
  // and negated INT64_MIN): 64 bits saturate int64, 0 bits hold only 0.
  const qrt::QuantStorage i64 = qrt::QuantStorage::full_range(64, true), u64 = qrt::QuantStorage::full_range(64, false);
  CHECK(i64.min == INT64_MIN);
  CHECK(i64.max == INT64_MAX);
  CHECK(u64.min == 0);
  CHECK(u64.max == INT64_MAX);
  CHECK(qrt::QuantStorage::full_range(0, true).max == 0);
  CHECK(!qrt::Type::tensor({2}, qrt::ElementType::make_uniform(i64, qrt::FloatKind::kF32, 1.0, 0)).verify().is_ok());
}

TEST_CASE("every dimension is bounded by 2^48, also after a 0; scalars have no dimensions") {
  const qrt::ElementType f32 = qrt::ElementType::make_float(qrt::FloatKind::kF32);
  CHECK(qrt::Type::tensor({0, int64_t(1) << 48}, f32).verify().is_ok());
  // After a 0 the element count (0) no longer bounded the later dimensions.
  CHECK(qrt::Type::tensor({0, (int64_t(1) << 48) + 1}, f32).verify().message() ==
        "tensor<0x281474976710657xf32>: dimension size 281474976710657 exceeds qrt's limit of 2^48");
  CHECK(qrt::Type::tensor({0, INT64_MAX, INT64_MAX}, f32).verify().message() ==
        "tensor<0x9223372036854775807x9223372036854775807xf32>: dimension size 9223372036854775807 exceeds qrt's "
        "limit of 2^48");
  auto parsed = qrt::parse_type("tensor<0x999999999999999xf32>");
  REQUIRE_FALSE(parsed.is_ok());
  CHECK(parsed.status().message() ==
        "tensor<0x999999999999999xf32>: dimension size 999999999999999 exceeds qrt's limit of 2^48");
  qrt::Type scalar = qrt::Type::scalar(f32);
  CHECK(scalar.verify().is_ok());
  scalar.dims = {100000};
  CHECK(scalar.verify().message() ==
        "the scalar type f32 has 1 dimension(s) [100000]; only tensor types have dimensions");
}

TEST_CASE("symmetric weight scales stay positive for tiny maxima in every expressed type") {
  const qrt::QuantStorage s8 = qrt::QuantStorage::full_range(8, true);
  for (qrt::FloatKind kind : {qrt::FloatKind::kF16, qrt::FloatKind::kBF16, qrt::FloatKind::kF32, qrt::FloatKind::kF64}) {
    CAPTURE(int(kind));
    // 1e-300 / 127 is 0 in f32 (and 1e-40 / 127 in f16): the scale was 0, an invalid type.
    const qrt::ElementType e = qrt::symmetric_from_abs_max(s8, kind, 0, {1e-300, 1e-40, 0.0, 2.54});
    REQUIRE(e.scales.size() == 4);
    for (double scale : e.scales) CHECK(qrt::numerics::compute_scale_f32(scale, kind) > 0.0f);
    CHECK(e.scales[2] == 1.0);   // an all-zero channel
    CHECK(e.scales[3] == 0.02);  // 2.54 / 127, untouched
    CHECK(e.verify().is_ok());
  }
}
