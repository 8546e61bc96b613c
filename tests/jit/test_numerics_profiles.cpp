// Tests: the numerics profiles (docs/numerics.md, "Profiles") — hand-computed cases per
// formula, an independent implementation of TFLite's fixed-point arithmetic compared on
// random inputs, and the reference's ops under each profile.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <random>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "jit/ref/reference_profiles.h"
#include "tests/jit/op_kernel_check.h"
#include "tests/jit/tensor_util.h"

using namespace qrt::numerics;
using qrt::FloatKind;
using qrt::NumericsProfile;
using qrt_test::run1;

namespace {

// TFLite's double-rounding multiply written from the definitions, not from gemmlowp's code:
// the high multiply is ab / 2^31 rounded half up (floor(v + 1/2)), the shift divides by
// 2^e rounding half away from zero. Exact in 128-bit integers.
int32_t mbqm_independent(int32_t x, int32_t m, int shift, bool single) {
  using i128 = __int128;
  auto floor_div = [](i128 a, i128 d) { return a >= 0 ? a / d : -((-a + d - 1) / d); };
  if (single) {
    const int total = 31 - shift;
    return int32_t(floor_div(i128(x) * m + (i128(1) << (total - 1)), i128(1) << total));
  }
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const i128 a = i128(x) << left;  // callers keep it inside int32
  i128 high = floor_div(2 * a * m + (i128(1) << 31), i128(1) << 32);
  if (high > std::numeric_limits<int32_t>::max()) high = std::numeric_limits<int32_t>::max();
  if (right == 0) return int32_t(high);
  const i128 mag = high < 0 ? -high : high;
  const i128 q = (mag + (i128(1) << (right - 1))) >> right;
  return int32_t(high < 0 ? -q : q);
}

}  // namespace

TEST_CASE("stablehlo quantize adds the zero point before rounding, in the expressed type") {
  // The StableHLO example of the issue: scale 1, zero point -1.
  const double xs[] = {0.5, 1.5, 2.5, -0.5};
  const int64_t stablehlo[] = {0, 0, 2, -2}, qrt_default[] = {-1, 1, 1, -1}, tflite[] = {0, 1, 2, -2};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(quantize_stablehlo(xs[i], 1.0, -1, -128, 127, FloatKind::kF32) == stablehlo[i]);
    CHECK(quantize_f32(float(xs[i]), 1.0f, -1, -128, 127) == qrt_default[i]);
    CHECK(quantize_tflite(float(xs[i]), 1.0f, -1, -128, 127) == tflite[i]);  // half away from zero
  }
  // Saturation, infinities, NaN, negative and extreme zero points.
  CHECK(quantize_stablehlo(1000.0, 0.5, 3, -128, 127, FloatKind::kF32) == 127);
  CHECK(quantize_stablehlo(-INFINITY, 0.5, 3, -128, 127, FloatKind::kF32) == -128);
  CHECK(quantize_stablehlo(NAN, 0.5, -7, -128, 127, FloatKind::kF32) == -7);
  CHECK(quantize_stablehlo(-1.0, 1.0, 255, 0, 255, FloatKind::kF32) == 254);
  CHECK(quantize_stablehlo(0.25, 0.5, -128, -127, 127, FloatKind::kF32) == -127);  // narrow bound
  // f16: x / scale = 2050 is exact, + 1 = 2051 rounds to 2052 in f16 (f32 would keep 2051).
  CHECK(quantize_stablehlo(1025.0, 0.5, 1, -32768, 32767, FloatKind::kF16) == 2052);
  CHECK(quantize_f32(1025.0f, 0.5f, 1, -32768, 32767) == 2051);
  // f16 overflow: 60000 / 0.5 is inf in f16 and saturates, also where the bound itself is inf.
  CHECK(quantize_stablehlo(60000.0, 0.5, 0, -128, 127, FloatKind::kF16) == 127);
  CHECK(quantize_stablehlo(-60000.0, 0.5, 0, INT32_MIN, INT32_MAX, FloatKind::kF16) == INT32_MIN);
  CHECK(quantize_stablehlo(60000.0, 0.5, 0, INT32_MIN, INT32_MAX, FloatKind::kF16) == INT32_MAX);
  // f64 works in double: 0.1 / 0.1 + 0 = 1.
  CHECK(quantize_stablehlo(0.1, 0.1, 0, -128, 127, FloatKind::kF64) == 1);
}

TEST_CASE("stablehlo dequantize rounds q - zp to the expressed type, then multiplies in it") {
  CHECK(dequantize_stablehlo(-128, 127, 0.5, FloatKind::kF32) == -127.5);
  // i16 storage, f16: f16(2051) = 2052, 2052 * 0.75 = 1539; the default rounds once: 1538.25 -> 1538.
  CHECK(dequantize_stablehlo(2051, 0, 0.75, FloatKind::kF16) == 1539.0);
  CHECK(qrt::round_to_float_kind(double(dequantize_f32(2051, 0, 0.75f)), FloatKind::kF16) == 1538.0);
  // Overflow to inf in f16.
  CHECK(std::isinf(dequantize_stablehlo(30000, -30000, 2.0, FloatKind::kF16)));
}

TEST_CASE("tflite QuantizeMultiplier: Q31 significand, carry, flush and the single-rounding cap") {
  auto qm = [](double r, bool single = false) { return quantize_multiplier(r, single); };
  CHECK(qm(0.5).multiplier == (1 << 30));
  CHECK(qm(0.5).shift == 0);
  CHECK(qm(1.0).multiplier == (1 << 30));
  CHECK(qm(1.0).shift == 1);
  CHECK(qm(0.75).multiplier == 1610612736);
  CHECK(qm(0.1).multiplier == 1717986918);  // 0.8 · 2^31 = 1717986918.4
  CHECK(qm(0.1).shift == -3);
  CHECK(qm(1.0 - 0x1p-33).multiplier == (1 << 30));  // rounds to 2^31: carries into the shift
  CHECK(qm(1.0 - 0x1p-33).shift == 1);
  CHECK(qm(1e-12).multiplier == 0);  // shift below -31: flushed
  CHECK(qm(1e-12).shift == 0);
  CHECK(qm(0x1p35).shift == 36);
  CHECK(qm(0x1p35, true).shift == 30);
  CHECK(qm(0x1p35, true).multiplier == INT32_MAX);
  CHECK(qm(0.0).multiplier == 0);
}

TEST_CASE("tflite fixed-point primitives on hand-computed ties and saturation") {
  CHECK(saturating_rounding_doubling_high_mul(1, 1 << 30) == 1);       // 0.5 -> 1
  CHECK(saturating_rounding_doubling_high_mul(-1, 1 << 30) == 0);      // -0.5 -> 0 (ties up)
  CHECK(saturating_rounding_doubling_high_mul(-3, 1 << 30) == -1);     // -1.5 -> -1
  CHECK(saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MIN) == INT32_MAX);
  CHECK(saturating_rounding_doubling_high_mul(INT32_MAX, INT32_MAX) == INT32_MAX - 1);
  CHECK(rounding_divide_by_pot(5, 1) == 3);    // 2.5 -> 3
  CHECK(rounding_divide_by_pot(-5, 1) == -3);  // -2.5 -> -3 (away from zero)
  CHECK(rounding_divide_by_pot(-6, 2) == -2);  // -1.5 -> -2
  CHECK(rounding_divide_by_pot(4, 1) == 2);
  CHECK(rounding_divide_by_pot(7, 0) == 7);
  // 101 · 0.25 = 25.25: double rounding first makes 50.5 -> 51, then 25.5 -> 26; one
  // rounding gives 25.
  const QuantizedMultiplier quarter = quantize_multiplier(0.25, false);
  CHECK(multiply_by_quantized_multiplier(101, quarter, false) == 26);
  CHECK(multiply_by_quantized_multiplier(101, quarter, true) == 25);
  CHECK(requantize_tflite(-5, quantize_multiplier(0.5, false), 0, -128, 127, false) == -2);  // -2.5 -> -2
  CHECK(requantize_tflite(5, quantize_multiplier(0.5, false), 0, -128, 127, false) == 3);
  CHECK(requantize_tflite(1000, quantize_multiplier(0.5, false), 10, -128, 127, false) == 127);
  CHECK(requantize_tflite(int64_t(1) << 40, quantize_multiplier(0.5, false), 0, INT32_MIN, INT32_MAX, false) ==
        (int64_t(1) << 30));  // accumulators saturate to int32 first
  CHECK(average_tflite(10, 4) == 3);   // 2.5 -> 3
  CHECK(average_tflite(-10, 4) == -3);
  CHECK(average_tflite(9, 4) == 2);
  CHECK(average_tflite(0, 0) == 0);  // an empty reduction, e.g. a mean over a zero-sized dimension
}

TEST_CASE("tflite multiply-by-quantized-multiplier matches an independent implementation on random inputs") {
  std::mt19937_64 rng(18);
  for (const bool single : {false, true}) {
    for (int i = 0; i < 200000; ++i) {
      const int32_t m = int32_t((int64_t(1) << 30) + int64_t(rng() % (uint64_t(1) << 30)));
      const int shift = -int(rng() % 32);  // the multipliers below 1 that requantization uses
      const int32_t x = i % 4 == 0 ? int32_t(rng()) : int32_t(int64_t(rng() % 200001) - 100000);
      REQUIRE(multiply_by_quantized_multiplier(x, QuantizedMultiplier{m, shift}, single) ==
              mbqm_independent(x, m, shift, single));
    }
    // Multipliers of 1 or more shift left first.
    for (int i = 0; i < 20000; ++i) {
      const int32_t m = int32_t((int64_t(1) << 30) + int64_t(rng() % (uint64_t(1) << 30)));
      const int shift = 1 + int(rng() % 8);
      const int32_t x = int32_t(int64_t(rng() % 20001) - 10000);
      REQUIRE(multiply_by_quantized_multiplier(x, QuantizedMultiplier{m, shift}, single) ==
              mbqm_independent(x, m, shift, single));
    }
  }
}

TEST_CASE("the reference under tflite: conv2d, add, mul, requantize, average pool, mean") {
  // The conv of test_reference_nn.cpp: accumulators ch0 [1, 3, 4, 10] (M = 1), ch1 [1, 2, 3, 5]
  // (M = 0.5). TFLite rounds the ties of ch1 up (0.5 -> 1, 1.5 -> 2, 2.5 -> 3); the default
  // rounds them to even.
  const std::string xt = "tensor<1x2x2x1x!quant.uniform<i8:f32, 1.0:2>>";
  const std::string wt = "tensor<2x2x2x1x!quant.uniform<i8:f32:0, {0.5, 0.25}>>";
  const std::string yt = "tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:-1>>";
  const std::vector<std::pair<std::string, std::vector<double>>> conv_in = {{xt, {3, 4, 5, 6}},
                                                                             {wt, {1, 1, 1, 1, 1, 0, 0, 1}}};
  CHECK(run1("qrt.conv2d", "{pads = [1, 1, 0, 0]}", conv_in, yt, NumericsProfile::kTflite) ==
        std::vector<double>{0, 0, 2, 0, 3, 1, 9, 2});
  CHECK(run1("qrt.conv2d", "{pads = [1, 1, 0, 0]}", conv_in, yt) == std::vector<double>{0, -1, 2, 0, 3, 1, 9, 1});
  // add: 0.5-scaled inputs into a 1.0-scaled output: 0.5 -> 1, 1.5 -> 2, -0.5 -> -1 (left shift
  // 20, Q31 multipliers, the last shift rounding half away from zero).
  const std::string h = "tensor<3x!quant.uniform<i8:f32, 0.5>>", one = "tensor<3x!quant.uniform<i8:f32, 1.0>>";
  CHECK(run1("qrt.add", "", {{h, {1, 3, -1}}, {h, {0, 0, 0}}}, one, NumericsProfile::kTflite) ==
        std::vector<double>{1, 2, -1});
  CHECK(run1("qrt.add", "", {{h, {1, 3, -1}}, {h, {0, 0, 0}}}, one) == std::vector<double>{0, 2, 0});
  // mul: 0.25 / 0.5 = 0.5 times the product: 1 -> 0.5 -> 1; 3 -> 1.5 -> 2; -1 -> -0.5 -> 0.
  CHECK(run1("qrt.mul", "", {{h, {1, 3, -1}}, {h, {1, 1, 1}}}, h, NumericsProfile::kTflite) ==
        std::vector<double>{1, 2, 0});
  CHECK(run1("qrt.mul", "", {{h, {1, 3, -1}}, {h, {1, 1, 1}}}, h) == std::vector<double>{0, 2, -0.0});
  // requantize 1.0 -> 2.0: 5 -> 3, -5 -> -2, 7 -> 4; single rounding of 101 / 4 gives 25, double 26.
  const std::string s1 = "tensor<3x!quant.uniform<i8:f32, 1.0>>", s2 = "tensor<3x!quant.uniform<i8:f32, 2.0>>";
  CHECK(run1("qrt.requantize", "", {{s1, {5, -5, 7}}}, s2, NumericsProfile::kTflite) == std::vector<double>{3, -2, 4});
  const std::string s4 = "tensor<3x!quant.uniform<i8:f32, 4.0>>";
  CHECK(run1("qrt.requantize", "", {{s1, {101, 0, 0}}}, s4, NumericsProfile::kTflite) == std::vector<double>{26, 0, 0});
  CHECK(run1("qrt.requantize", "", {{s1, {101, 0, 0}}}, s4, NumericsProfile::kTfliteSingleRounding) ==
        std::vector<double>{25, 0, 0});
  // average pool with equal parameters: the stored sum 10 / 4 = 2.5 -> 3 (the default: 2).
  const std::string p = "tensor<1x2x2x1x!quant.uniform<i8:f32, 1.0>>", p1 = "tensor<1x1x1x1x!quant.uniform<i8:f32, 1.0>>";
  CHECK(run1("qrt.avg_pool2d", "{kernel = [2, 2]}", {{p, {1, 2, 3, 4}}}, p1, NumericsProfile::kTflite) ==
        std::vector<double>{3});
  CHECK(run1("qrt.avg_pool2d", "{kernel = [2, 2]}", {{p, {1, 2, 3, 4}}}, p1) == std::vector<double>{2});
  // mean over 4 values: (q - zp) sum 10, times 1.0, / 4 -> 3 (the default: 2).
  CHECK(run1("qrt.mean", "{axes = [1, 2]}", {{p, {1, 2, 3, 4}}}, "tensor<1x1x!quant.uniform<i8:f32, 1.0>>",
             NumericsProfile::kTflite) == std::vector<double>{3});
  // A mean over a zero-sized dimension is the zero point, as in the default profile.
  CHECK(run1("qrt.mean", "{axes = [1]}", {{"tensor<1x0x2x!quant.uniform<i8:f32, 1.0:3>>", {}}},
             "tensor<1x2x!quant.uniform<i8:f32, 1.0:3>>", NumericsProfile::kTflite) == std::vector<double>{3, 3});
  // quantize rounds half away from zero.
  CHECK(run1("quant.qcast", "", {{"tensor<3xf32>", {0.5, -0.5, 1.5}}}, "tensor<3x!quant.uniform<i8:f32, 1.0>>",
             NumericsProfile::kTflite) == std::vector<double>{1, -1, 2});
}

TEST_CASE("the reference under stablehlo: dequantize, float op, quantize") {
  // add: 0.5 + 0 = 0.5 in f32, quantized to scale 1, zero point -1: rne(0.5 - 1) = rne(-0.5) = 0
  // (the default: rne(0.5) - 1 = -1).
  const std::string h = "tensor<2x!quant.uniform<i8:f32, 0.5>>", o = "tensor<2x!quant.uniform<i8:f32, 1.0:-1>>";
  CHECK(run1("qrt.add", "", {{h, {1, 5}}, {h, {0, 0}}}, o, NumericsProfile::kStableHlo) == std::vector<double>{0, 2});
  CHECK(run1("qrt.add", "", {{h, {1, 5}}, {h, {0, 0}}}, o) == std::vector<double>{-1, 1});
  // matmul: [1, 2] · [[1], [1]] at scales 0.5 · 1 = 1.5 -> + zp -1 = 0.5 -> 0 (default: 2 - 1 = 1).
  CHECK(run1("qrt.matmul", "", {{"tensor<1x2x!quant.uniform<i8:f32, 0.5>>", {1, 2}},
                                 {"tensor<2x1x!quant.uniform<i8:f32, 1.0>>", {1, 1}}},
             "tensor<1x1x!quant.uniform<i8:f32, 1.0:-1>>", NumericsProfile::kStableHlo) == std::vector<double>{0});
  // The i32 accumulator result is quantize(float product): exact here.
  CHECK(run1("qrt.matmul", "", {{"tensor<1x2x!quant.uniform<i8:f32, 0.5>>", {1, 2}},
                                 {"tensor<2x1x!quant.uniform<i8:f32, 1.0>>", {3, 1}}},
             "tensor<1x1x!quant.uniform<i32:f32, 0.5>>", NumericsProfile::kStableHlo) == std::vector<double>{5});
  // qcast / dcast.
  CHECK(run1("quant.qcast", "", {{"tensor<4xf32>", {0.5, 1.5, 2.5, -0.5}}}, "tensor<4x!quant.uniform<i8:f32, 1.0:-1>>",
             NumericsProfile::kStableHlo) == std::vector<double>{0, 0, 2, -2});
  CHECK(run1("quant.dcast", "", {{"tensor<1x!quant.uniform<i16:f16, 0.75>>", {2051}}}, "tensor<1xf16>",
             NumericsProfile::kStableHlo) == std::vector<double>{1539});
  // requantize is quantize(dequantize(x)) (no float op between; it once crashed the reference):
  // reals [1, 2, 3, -1] to scale 2, zero point -1: rne([0.5, 1, 1.5, -0.5] - 1) = [0, 0, 0, -2]
  // (the default: rne([0.5, 1, 1.5, -0.5]) - 1 = [-1, 0, 1, -1]).
  const std::string r_in = "tensor<4x!quant.uniform<i8:f32, 1.0:-1>>", r_out = "tensor<4x!quant.uniform<i8:f32, 2.0:-1>>";
  CHECK(run1("qrt.requantize", "", {{r_in, {0, 1, 2, -2}}}, r_out, NumericsProfile::kStableHlo) ==
        std::vector<double>{0, 0, 0, -2});
  CHECK(run1("qrt.requantize", "", {{r_in, {0, 1, 2, -2}}}, r_out) == std::vector<double>{-1, 0, 1, -1});
}

TEST_CASE("the reference under onnx: QLinearMatMul's f32 multiplier applied in f64") {
  std::mt19937 rng(7);
  const double sa = 0.0137, sw = 0.0291, sy = 0.173;
  const float m = (float(sa) * float(sw)) / float(sy);  // numpy float32 arithmetic
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> a(8), w(8);
    for (auto& v : a) v = double(int(rng() % 256) - 128);
    for (auto& v : w) v = double(int(rng() % 256) - 128);
    int64_t acc = 0;
    for (size_t k = 0; k < 8; ++k) acc += int64_t(a[k] - 3) * int64_t(w[k]);
    double expect = std::nearbyint(double(acc) * double(m)) + 5;
    expect = expect < -128 ? -128 : expect > 127 ? 127 : expect;
    CHECK(run1("qrt.matmul", "", {{"tensor<1x8x!quant.uniform<i8:f32, 0.0137:3>>", a},
                                   {"tensor<8x1x!quant.uniform<i8:f32, 0.0291>>", w}},
               "tensor<1x1x!quant.uniform<i8:f32, 0.173:5>>", NumericsProfile::kOnnx) == std::vector<double>{expect});
  }
}

TEST_CASE("tflite add and mul kernels (input tables, the kRequantQ31 kernel) are bit-exact with the reference") {
  std::mt19937 rng(41);
  std::uniform_real_distribution<double> decade(-3.0, 1.0);
  int cases = 0;
  for (const char* profile : {"tflite", "tflite-single-rounding"}) {
    for (const char* op : {"qrt.add", "qrt.mul"}) {
      for (int rep = 0; rep < 12; ++rep) {
        auto spec = [&](bool is_signed) {
          qrt_test::QuantSpec q;
          q.is_signed = is_signed;
          q.lo = is_signed ? -128 : 0;
          q.hi = is_signed ? 127 : 255;
          q.scales = {std::pow(10.0, decade(rng))};
          q.zps = {int(rng() % 2 ? q.lo : q.hi) / (rep % 3 + 1)};  // bounds, halves, thirds
          return q;
        };
        const qrt_test::QuantSpec a = spec(rng() % 2), b = spec(rng() % 2), y = spec(rng() % 2);
        const std::string clamp = rep % 4 == 3 ? qrt_test::random_clamp_attrs(rng, y) : "";
        // 819 elements: a whole 512-element chunk and a tail; every 6th case 40 960 (3 tasks).
        // Every third case broadcasts an operand (numpy's rules: a row of channels, a column,
        // a lower rank).
        const std::string dims = rep % 6 == 5 ? "1x40x32x32x" : "1x7x9x13x";
        static const char* kBroadcast[2][4] = {{"13x", "1x1x1x13x", "7x1x1x", "1x7x1x13x"},
                                               {"32x", "1x1x1x32x", "40x1x1x", "1x40x1x32x"}};
        const std::string small = kBroadcast[rep % 6 == 5][rep / 3 % 4];  // reps 1, 4, 7, 10: each form
        const bool broadcast = rep % 3 == 1, first = rep % 2 == 1;
        const std::string at = "tensor<" + (broadcast && first ? small : dims) + a.type() + ">",
                          bt = "tensor<" + (broadcast && !first ? small : dims) + b.type() + ">",
                          yt = "tensor<" + dims + y.type() + ">";
        std::string text = "func.func @main(%a: " + at + ", %b: " + bt + ") -> " + yt + " {\n  %y = \"" + op +
                           "\"(%a, %b)" + (clamp.empty() ? "" : " {" + clamp.substr(2) + "}") + " : (" + at + ", " +
                           bt + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
        CAPTURE(text);
        auto make = [&](const std::string& type, const qrt_test::QuantSpec& q) {
          auto t = qrt::parse_type(type);
          REQUIRE(t.is_ok());
          qrt::Tensor x = qrt::Tensor::zeros(*t);
          const auto v = qrt_test::random_values(rng, size_t(x.num_elements()), q.lo, q.hi);
          for (size_t i = 0; i < v.size(); ++i) x.set_int(i, v[i]);
          return x;
        };
        const std::string how =
            qrt_test::check_last_op(qrt_test::with_profile(text, profile), {make(at, a), make(bt, b)});
        CHECK(how.find("fixed-point formula (") != std::string::npos);
        CHECK(how.find("_q31requant") != std::string::npos);  // bytes: the requantization kernel
        ++cases;
      }
    }
  }
  MESSAGE(cases << " add/mul cases");
}

TEST_CASE("the tflite mean kernel (portable C++) is bit-exact with the reference") {
  std::mt19937 rng(43);
  std::uniform_real_distribution<double> decade(-3.0, 1.0);
  int cases = 0;
  struct Axes {
    const char* attr;
    bool contiguous;
  };
  for (const char* profile : {"tflite", "tflite-single-rounding"}) {
    for (const Axes& axes : {Axes{"[1, 2]", true}, Axes{"[2, 1]", true}, Axes{"[1]", true}, Axes{"[3]", true},
                             Axes{"[0, 1, 2, 3]", true}, Axes{"[1, 3]", false}}) {
      for (int rep = 0; rep < 6; ++rep) {
        // A per-tensor type of `bits` storage: zero point at a bound or anywhere, scale over decades.
        struct Spec {
          int lo, hi;
          std::string type;
        };
        auto spec = [&](unsigned bits, bool is_signed) {
          const int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
          const int zp = rng() % 3 == 0 ? lo : rng() % 2 ? hi : lo + int(rng() % uint32_t(hi - lo + 1));
          char buf[96];
          std::snprintf(buf, sizeof buf, "!quant.uniform<%s%u:f32, %.17g:%d>", is_signed ? "i" : "u", bits,
                        std::pow(10.0, decade(rng)), zp);
          return Spec{lo, hi, buf};
        };
        const unsigned bits = rep % 3 == 2 ? 16 : 8;
        const Spec x = spec(bits, bits == 16 || rng() % 2), y = spec(bits, bits == 16 || rng() % 2);
        const std::vector<int64_t> dims = {1 + int64_t(rng() % 2), 1 + int64_t(rng() % 9), 1 + int64_t(rng() % 9),
                                           1 + int64_t(rng() % 600)};
        std::vector<int64_t> out_dims;
        for (size_t d = 0; d < 4; ++d) {
          if (std::string(axes.attr).find(char('0' + d)) == std::string::npos) out_dims.push_back(dims[d]);
        }
        const std::string xt = "tensor<" + qrt_test::shape(dims) + x.type + ">";
        const std::string yt = "tensor<" + qrt_test::shape(out_dims) + y.type + ">";
        const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %y = \"qrt.mean\"(%x) {axes = " +
                                 axes.attr + "} : (" + xt + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
        CAPTURE(text);
        auto t = qrt::parse_type(xt);
        REQUIRE(t.is_ok());
        qrt::Tensor in = qrt::Tensor::zeros(*t);
        const auto v = qrt_test::random_values(rng, size_t(in.num_elements()), x.lo, x.hi);
        for (size_t i = 0; i < v.size(); ++i) in.set_int(i, v[i]);
        const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, profile), in, axes.contiguous);
        if (axes.contiguous) CHECK(how.find("mean with ") == 0);
        else CHECK(how.empty());  // other axis sets stay with the reference
        ++cases;
      }
    }
  }
  MESSAGE(cases << " mean cases");
}

TEST_CASE("the tflite average pool kernel (portable C++) is bit-exact with the reference") {
  std::mt19937 rng(47);
  std::uniform_real_distribution<double> decade(-3.0, 1.0);
  int cases = 0, on_kernel = 0;
  auto list = [](std::initializer_list<int64_t> v) {
    std::string s = "[";
    for (int64_t x : v) s += (s.size() > 1 ? ", " : "") + std::to_string(x);
    return s + "]";
  };
  for (const char* profile : {"tflite", "tflite-single-rounding"}) {
    for (int rep = 0; rep < 24; ++rep) {
      const unsigned bits = rep % 4 == 3 ? 16 : 8;
      const bool is_signed = bits == 16 || rng() % 2;
      const int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
      const int zp = rng() % 3 == 0 ? lo : rng() % 2 ? hi : lo + int(rng() % uint32_t(hi - lo + 1));
      char type[96];
      std::snprintf(type, sizeof type, "!quant.uniform<%s%u:f32, %.17g:%d>", is_signed ? "i" : "u", bits,
                    std::pow(10.0, decade(rng)), zp);
      // TFLite's formula needs equal input and output parameters: every 8th case differs (the
      // reference's default formula, no profile kernel).
      const bool equal = rep % 8 != 7;
      std::string out_type = type;
      if (!equal) out_type.replace(out_type.find(':', out_type.find(':') + 1), std::string::npos, ":0>");
      const int64_t n = 1 + int64_t(rng() % 2), h = 1 + int64_t(rng() % 12), w = 1 + int64_t(rng() % 12),
                    c = 1 + int64_t(rng() % 70);
      const int64_t kh = 1 + int64_t(rng() % std::min<int64_t>(h, 4)), kw = 1 + int64_t(rng() % std::min<int64_t>(w, 4));
      const int64_t sh = 1 + int64_t(rng() % 3), sw = 1 + int64_t(rng() % 3);
      const int64_t pt = int64_t(rng() % uint64_t(kh)), pb = int64_t(rng() % uint64_t(kh)), pl = int64_t(rng() % uint64_t(kw)),
                    pr = int64_t(rng() % uint64_t(kw));
      const int64_t oh = (h + pt + pb - kh) / sh + 1, ow = (w + pl + pr - kw) / sw + 1;
      const bool include_pad = rng() % 2;
      const std::string xt = "tensor<" + qrt_test::shape({n, h, w, c}) + type + ">";
      const std::string yt = "tensor<" + qrt_test::shape({n, oh, ow, c}) + out_type + ">";
      const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %y = \"qrt.avg_pool2d\"(%x) {" +
                               (include_pad ? "count_include_pad = 1 : i64, " : "") + "kernel = " + list({kh, kw}) +
                               ", layout = \"NHWC\", pads = " + list({pt, pl, pb, pr}) + ", strides = " + list({sh, sw}) +
                               "} : (" + xt + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
      CAPTURE(text);
      auto t = qrt::parse_type(xt);
      REQUIRE(t.is_ok());
      qrt::Tensor in = qrt::Tensor::zeros(*t);
      const auto v = qrt_test::random_values(rng, size_t(in.num_elements()), lo, hi);
      for (size_t i = 0; i < v.size(); ++i) in.set_int(i, v[i]);
      // Unequal parameters keep the default formula: the 8-bit pool kernels, or for 16 bits the
      // portable C++ pool with the default formula.
      const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, profile), in);
      if (equal) {
        CHECK(how.find("average pool with tflite") == 0);
        ++on_kernel;
      } else {
        CHECK_MESSAGE((bits == 8 ? how.find("_avgpool_") != std::string::npos
                                 : how.find("average pool with the default formula") == 0), how);
      }
      ++cases;
    }
  }
  MESSAGE(cases << " average pool cases, " << on_kernel << " on the profile kernel");
  CHECK(on_kernel > 30);
}

TEST_CASE("tflite quantize and requantize kernels (byte tables, portable C++) are bit-exact with the reference") {
  std::mt19937 rng(53);
  std::uniform_real_distribution<double> decade(-3.0, 1.0);
  int tables = 0, portable = 0, per_axis = 0;
  // A per-tensor (or, with `axis`, per-axis over 3 channels) type of `bits` storage: zero point
  // at a bound or anywhere, scales over decades.
  // 32-bit storage is an accumulator's: signed, zero point 0.
  auto spec = [&](unsigned bits, bool is_signed, bool axis, int* lo, int* hi) {
    *lo = int(is_signed ? -(int64_t(1) << (bits - 1)) : 0);
    *hi = int(is_signed ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1);
    auto zp = [&] {
      if (bits == 32) return 0;
      return rng() % 3 == 0 ? *lo : rng() % 2 ? *hi : *lo + int(rng() % uint32_t(*hi - *lo + 1));
    };
    char buf[200];
    if (axis) {
      std::snprintf(buf, sizeof buf, "!quant.uniform<%s%u:f32:3, {%.9g:%d, %.9g:%d, %.9g:%d}>", is_signed ? "i" : "u", bits,
                    std::pow(10.0, decade(rng)), zp(), std::pow(10.0, decade(rng)), zp(), std::pow(10.0, decade(rng)), zp());
    } else {
      std::snprintf(buf, sizeof buf, "!quant.uniform<%s%u:f32, %.17g:%d>", is_signed ? "i" : "u", bits,
                    std::pow(10.0, decade(rng)), zp());
    }
    return std::string(buf);
  };
  for (const char* profile : {"tflite", "tflite-single-rounding"}) {
    for (int rep = 0; rep < 30; ++rep) {
      const bool quantize = rep % 2 == 0, axis = rep % 8 == 7;
      // 16-bit storage: some quantize results (rep % 6 == 4), requantize inputs (rep % 12 == 3)
      // and results (rep % 12 == 5).
      // 32-bit requantize inputs (accumulators) where rep % 12 == 9.
      const unsigned in_bits = rep % 12 == 3 ? 16 : rep % 12 == 9 ? 32 : 8, out_bits = rep % 6 == 4 || rep % 12 == 5 ? 16 : 8;
      int lo = 0, hi = 0, in_lo = 0, in_hi = 0;
      const std::string out = spec(out_bits, out_bits == 16 || rng() % 2, axis, &lo, &hi);
      const std::string in = quantize ? "f32" : spec(in_bits, in_bits >= 16 || rng() % 2, false, &in_lo, &in_hi);
      const std::string dims = "2x9x" + std::to_string(1 + rng() % 40) + "x3x";
      const std::string xt = "tensor<" + dims + in + ">", yt = "tensor<" + dims + out + ">";
      const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %y = \"" +
                               (quantize ? "quant.qcast" : "qrt.requantize") + "\"(%x) : (" + xt + ") -> " + yt +
                               "\n  return %y : " + yt + "\n}\n";
      CAPTURE(text);
      auto t = qrt::parse_type(xt);
      REQUIRE(t.is_ok());
      qrt::Tensor x = qrt::Tensor::zeros(*t);
      if (quantize) {
        // Values around the grid of the output scale (ties included), out of range, and non-finite.
        std::uniform_int_distribution<int> steps(-70000, 70000);
        for (int64_t i = 0; i < x.num_elements(); ++i) {
          const double s = std::pow(10.0, decade(rng));
          double v = (steps(rng) + (rng() % 4 == 0 ? 0.5 : std::uniform_real_distribution<double>(-1, 1)(rng))) * s;
          if (i % 97 == 5) v = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY;
          x.set_float(size_t(i), v);
        }
      } else {
        const auto v = qrt_test::random_values(rng, size_t(x.num_elements()), in_lo, in_hi);
        for (size_t i = 0; i < v.size(); ++i) x.set_int(i, v[i]);
      }
      const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, profile), x);
      if (axis) {
        // Per-axis results: the portable per-axis conversion with TFLite's formula.
        CHECK_MESSAGE(how.find(quantize ? "per-axis quantize (TFLite's rounding)" : "per-axis requantize (TFLite's Q31") == 0,
                      how);
        ++per_axis;
      } else if (!quantize && in_bits == 8 && out_bits == 8) {
        CHECK_MESSAGE((how.find("_lut8_") != std::string::npos || how.find("_clamp_") != std::string::npos), how);
        CHECK(how.find(std::string(profile) + " requantize") != std::string::npos);
        ++tables;
      } else {
        CHECK(how.find(quantize ? "quantize with " : "requantize with ") == 0);
        ++portable;
      }
    }
  }
  MESSAGE(tables << " byte-table requantizations, " << portable << " portable kernels, " << per_axis << " per-axis ones");
  CHECK(tables >= 10);
  CHECK(portable >= 20);
  CHECK(per_axis >= 5);
}

TEST_CASE("tflite 16-bit add and mul, broadcasting included, are bit-exact with the reference (portable C++)") {
  std::mt19937 rng(59);
  std::uniform_real_distribution<double> decade(-4.0, 0.0);
  int cases = 0;
  for (const char* op : {"qrt.add", "qrt.mul"}) {
    for (const char* a_dims : {"3x5x17x", "17x", "3x1x17x", "3x5x1x"}) {
      auto type = [&] {
        char buf[96];
        std::snprintf(buf, sizeof buf, "!quant.uniform<i16:f32, %.17g:%d>", std::pow(10.0, decade(rng)),
                      rng() % 2 ? 0 : int(rng() % 2001) - 1000);
        return std::string(buf);
      };
      const std::string at = std::string("tensor<") + a_dims + type() + ">", bt = "tensor<3x5x17x" + type() + ">",
                        yt = "tensor<3x5x17x" + type() + ">";
      const std::string text = "func.func @main(%a: " + at + ", %b: " + bt + ") -> " + yt + " {\n  %y = \"" + op +
                               "\"(%a, %b) : (" + at + ", " + bt + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
      CAPTURE(text);
      auto make = [&](const std::string& t) {
        auto parsed = qrt::parse_type(t);
        REQUIRE(parsed.is_ok());
        qrt::Tensor x = qrt::Tensor::zeros(*parsed);
        const auto v = qrt_test::random_values(rng, size_t(x.num_elements()), -32768, 32767);
        for (size_t i = 0; i < v.size(); ++i) x.set_int(i, v[i]);
        return x;
      };
      const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, "tflite"), {make(at), make(bt)});
      CHECK(how.find("fixed-point formula (portable C++)") != std::string::npos);
      ++cases;
    }
  }
  MESSAGE(cases << " 16-bit add/mul cases");
}
