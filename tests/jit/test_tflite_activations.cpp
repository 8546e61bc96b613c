// Tests: TFLite's integer softmax and logistic under the tflite profiles
// (ir/numerics_tflite_activations.h). Three oracles: gemmlowp's own fixedpoint.h (Debian's
// libgemmlowp-dev) for the fixed-point functions; TFLite's reference kernels re-built in this
// file from gemmlowp's types, as TFLite writes them, for whole rows; and TFLite Micro's
// published goldens (softmax_test.cc, logistic_test.cc, within their tolerance of one step).
// Then the reference backend on graphs under each TFLite profile.
#include <doctest/doctest.h>

#include <fixedpoint/fixedpoint.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ir/numerics_tflite_activations.h"
#include "ir/text_format.h"
#include "jit/ref/reference_profiles.h"
#include "tests/jit/op_kernel_check.h"
#include "tests/jit/tensor_util.h"

using namespace qrt::numerics;
using qrt::NumericsProfile;

namespace {

// ---- TFLite's kernels over gemmlowp (tflite::reference_ops::Softmax, reference_integer_ops::Logistic) ----

// tflite::QuantizeMultiplier written from its definition.
void quantize_multiplier_oracle(double real, int32_t* m, int* shift, bool single) {
  const double q = std::frexp(real, shift);
  int64_t fixed = int64_t(std::round(q * double(int64_t(1) << 31)));
  if (fixed == (int64_t(1) << 31)) {
    fixed /= 2;
    ++*shift;
  }
  if (single && *shift > 30) {
    *shift = 30;
    fixed = (int64_t(1) << 31) - 1;
  }
  *m = int32_t(fixed);
}

// tflite::MultiplyByQuantizedMultiplier for the shifts these kernels use (left shifts only,
// or the single-rounding form).
int32_t mbqm_oracle(int32_t x, int32_t m, int shift, bool single) {
  if (single) {
    const int total = 31 - shift;
    return int32_t((int64_t(x) * m + (int64_t(1) << (total - 1))) >> total);
  }
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return gemmlowp::RoundingDivideByPOT(gemmlowp::SaturatingRoundingDoublingHighMul(x * (1 << left), m), right);
}

// Softmax of one row; false where TFLite's TFLITE_CHECK(0 <= exponent <= 31) would stop.
bool softmax_oracle(const std::vector<int32_t>& q, float beta, float scale, int out_bits, int64_t out_min,
                    int64_t out_max, bool single, std::vector<int64_t>& out) {
  using FixedPointScaledDiff = gemmlowp::FixedPoint<int32_t, 5>;
  using FixedPointAccum = gemmlowp::FixedPoint<int32_t, 12>;
  using FixedPoint0 = gemmlowp::FixedPoint<int32_t, 0>;
  const double max_real = single ? double((1LL << 30) - 1) : double((1LL << 31) - 1);
  const double real = std::min<double>(double(beta) * double(scale) * (1 << 26), max_real);
  int32_t multiplier;
  int left_shift;
  quantize_multiplier_oracle(real, &multiplier, &left_shift, single);
  const int diff_min = -int(std::floor(1.0 * 31 * (1LL << 26) / (1LL << left_shift)));
  const int32_t max_in_row = *std::max_element(q.begin(), q.end());
  FixedPointAccum sum_of_exps = FixedPointAccum::Zero();
  for (int32_t v : q) {
    const int32_t diff = v - max_in_row;
    if (diff >= diff_min) {
      const auto scaled = FixedPointScaledDiff::FromRaw(mbqm_oracle(diff, multiplier, left_shift, single));
      sum_of_exps = sum_of_exps + gemmlowp::Rescale<12>(gemmlowp::exp_on_negative_values(scaled));
    }
  }
  if (sum_of_exps.raw() <= 0) return false;
  const int headroom_plus_one = __builtin_clz(uint32_t(sum_of_exps.raw()));
  const int num_bits_over_unit = 12 - headroom_plus_one;
  const int32_t shifted_sum_minus_one =
      int32_t((uint32_t(sum_of_exps.raw()) << headroom_plus_one) - (uint32_t(1) << 31));
  const FixedPoint0 shifted_scale = gemmlowp::one_over_one_plus_x_for_x_in_0_1(FixedPoint0::FromRaw(shifted_sum_minus_one));
  const int exponent = num_bits_over_unit + 31 - out_bits;
  if (exponent < 0 || exponent > 31) return false;
  out.assign(q.size(), out_min);
  for (size_t c = 0; c < q.size(); ++c) {
    const int32_t diff = q[c] - max_in_row;
    if (diff < diff_min) continue;
    const auto scaled = FixedPointScaledDiff::FromRaw(mbqm_oracle(diff, multiplier, left_shift, single));
    const FixedPoint0 e = gemmlowp::exp_on_negative_values(scaled);
    const int32_t unsat = gemmlowp::RoundingDivideByPOT((shifted_scale * e).raw(), exponent);
    out[c] = std::clamp<int64_t>(int64_t(unsat) + out_min, out_min, out_max);
  }
  return true;
}

// Logistic of one int8 value (TFLite Micro's preparation and the reference kernel).
int64_t logistic_oracle(int32_t q, float scale, int32_t zp, bool single) {
  const double real = double(scale) * double(1 << 27);
  int left_shift;
  const double significand = std::frexp(real, &left_shift);
  const int32_t multiplier = int32_t(std::round(significand * double(1LL << 31)));
  const int32_t radius = int32_t(std::floor(1.0 * 15 * (1LL << 27) / (1LL << left_shift)));
  const int32_t input = q - zp;
  if (input <= -radius) return -128;
  if (input >= radius) return 127;
  using FixedPoint4 = gemmlowp::FixedPoint<int32_t, 4>;
  const int32_t in_q4 = mbqm_oracle(input, multiplier, left_shift, single);
  const int32_t out_q0 = gemmlowp::logistic(FixedPoint4::FromRaw(in_q4)).raw();
  return std::clamp<int64_t>(gemmlowp::RoundingDivideByPOT(out_q0, 23) - 128, -128, 127);
}

// tflite::Quantize of a float (the goldens' form).
int64_t quantize_golden(float x, float scale, int zp) {
  return std::clamp<int64_t>(int64_t(std::round(x / scale)) + zp, -128, 127);
}

// A partner for v in the high-mul check: a power of two (ties), INT32_MIN, or a scrambled value.
int32_t i32_pair(int32_t v) {
  const uint32_t u = uint32_t(v) * 2654435761u;
  switch (u % 4) {
    case 0: return int32_t(1) << (u % 31);
    case 1: return std::numeric_limits<int32_t>::min();
    default: return int32_t(u);
  }
}

template <int IntegerBits>
int32_t gemmlowp_exp(int32_t a) {
  return gemmlowp::exp_on_negative_values(gemmlowp::FixedPoint<int32_t, IntegerBits>::FromRaw(a)).raw();
}
template <int IntegerBits>
int32_t gemmlowp_logistic(int32_t a) {
  return gemmlowp::logistic(gemmlowp::FixedPoint<int32_t, IntegerBits>::FromRaw(a)).raw();
}

}  // namespace

TEST_CASE("gemmlowp fixed point: exp, 1/(1+x) and logistic equal gemmlowp's fixedpoint.h") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> any(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  std::vector<int32_t> values = {0, -1, 1, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                 -(1 << 24), -(1 << 26), -(1 << 27), -(1 << 30)};
  for (int i = 0; i < 200000; ++i) values.push_back(i % 4 == 0 ? any(rng) >> (rng() % 31) : any(rng));
  size_t checked = 0;
  for (int32_t v : values) {
    const int32_t neg = v > 0 ? -v : v;  // exp_on_negative_values takes a <= 0
    REQUIRE(exp_on_negative_values(neg, 5) == gemmlowp_exp<5>(neg));
    REQUIRE(exp_on_negative_values(neg, 4) == gemmlowp_exp<4>(neg));
    REQUIRE(exp_on_negative_values(neg, 6) == gemmlowp_exp<6>(neg));
    const int32_t unit = v < 0 ? (v == std::numeric_limits<int32_t>::min() ? 0 : -v) : v;  // [0, 1) in Q0.31
    REQUIRE(one_over_one_plus_x_for_x_in_0_1(unit) ==
            gemmlowp::one_over_one_plus_x_for_x_in_0_1(gemmlowp::FixedPoint<int32_t, 0>::FromRaw(unit)).raw());
    if (v != std::numeric_limits<int32_t>::min()) {  // gemmlowp negates its input
      REQUIRE(logistic_fixed_point(v, 4) == gemmlowp_logistic<4>(v));
      REQUIRE(logistic_fixed_point(v, 3) == gemmlowp_logistic<3>(v));
    }
    // The doubling high-mul (branch-free in numerics.h) and the rounding shift, against pairs
    // that include both signs, INT32_MIN and ties.
    const int32_t other = i32_pair(v);
    REQUIRE(saturating_rounding_doubling_high_mul(v, other) == gemmlowp::SaturatingRoundingDoublingHighMul(v, other));
    REQUIRE(saturating_rounding_doubling_high_mul(v, v) == gemmlowp::SaturatingRoundingDoublingHighMul(v, v));
    for (int e : {-12, -3, -1, 1, 2, 5}) {
      const int32_t want = e > 0 ? (e == 1   ? gemmlowp::SaturatingRoundingMultiplyByPOT<1>(v)
                                    : e == 2 ? gemmlowp::SaturatingRoundingMultiplyByPOT<2>(v)
                                             : gemmlowp::SaturatingRoundingMultiplyByPOT<5>(v))
                                 : gemmlowp::RoundingDivideByPOT(v, -e);
      REQUIRE(saturating_rounding_multiply_by_pot(v, e) == want);
    }
    ++checked;
  }
  MESSAGE(checked << " values of each function");
}

TEST_CASE("tflite softmax rows equal TFLite's reference kernel over gemmlowp (i8, u8; 8- and 16-bit results)") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> decade(-3.0, 0.5);
  int rows = 0, stopped = 0;
  for (int rep = 0; rep < 3000; ++rep) {
    const bool single = rep % 2;
    const bool u8_in = rep % 5 == 1;
    const int out_bits = rep % 7 == 3 ? 16 : 8;
    const int64_t out_min = out_bits == 16 ? -32768 : (rep % 3 == 0 ? 0 : -128);
    const int64_t out_max = out_bits == 16 ? 32767 : out_min + 255;
    const float scale = float(std::pow(10.0, decade(rng)));
    const float beta = rep % 4 == 0 ? 1.0f : float(std::pow(10.0, decade(rng) / 2));
    // Lengths 1..600: past 512 equal-ish terms the 8-bit check stops TFLite's kernel.
    const int64_t n = rep % 50 == 0 ? 520 + int64_t(rng() % 80) : 1 + int64_t(rng() % 300);
    const int lo = u8_in ? 0 : -128, hi = u8_in ? 255 : 127;
    const int spread = 1 + int(rng() % 256);
    std::vector<int32_t> q(static_cast<size_t>(n));
    const int base = lo + int(rng() % size_t(hi - lo + 1));
    for (int32_t& v : q) v = std::clamp(base - int(rng() % size_t(spread)), lo, hi);
    CAPTURE(rep);
    CAPTURE(scale);
    CAPTURE(beta);
    std::string why;
    const auto p = prepare_softmax_tflite(beta, scale, out_bits, out_min, out_max, single, &why);
    REQUIRE_MESSAGE(p.has_value(), why);
    std::vector<int64_t> want, got(q.size());
    const bool ok = softmax_oracle(q, beta, scale, out_bits, out_min, out_max, single, want);
    REQUIRE(softmax_tflite_row(q.data(), n, *p, got.data()) == ok);
    if (ok) {
      CHECK(got == want);
    } else {
      ++stopped;
    }
    ++rows;
  }
  MESSAGE(rows << " rows, " << stopped << " where TFLite's kernel stops (both agree)");
  CHECK(stopped > 0);
  // TFLite's preparation refuses a multiplier of 1 or less.
  std::string why;
  CHECK_FALSE(prepare_softmax_tflite(1.0f, 1e-9f, 8, -128, 127, false, &why).has_value());
  CHECK(why.find("not above 1") != std::string::npos);
}

TEST_CASE("tflite int8 logistic equals TFLite's reference kernel over gemmlowp for every input") {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> decade(-4.0, 1.3);
  int cases = 0;
  for (int rep = 0; rep < 400; ++rep) {
    const bool single = rep % 2;
    const float scale = rep == 0 ? 0.1f : rep == 1 ? 1.0f : float(std::pow(10.0, decade(rng)));
    const int32_t zp = rep < 2 ? 0 : int32_t(rng() % 256) - 128;
    std::string why;
    const auto p = prepare_logistic_tflite(scale, zp, single, &why);
    REQUIRE_MESSAGE(p.has_value(), why);
    for (int32_t q = -128; q <= 127; ++q) {
      CAPTURE(scale);
      CAPTURE(zp);
      CAPTURE(q);
      REQUIRE(logistic_tflite(q, *p) == logistic_oracle(q, scale, zp, single));
      ++cases;
    }
  }
  MESSAGE(cases << " inputs");
  std::string why;
  CHECK_FALSE(prepare_logistic_tflite(1e-12f, 0, false, &why).has_value());
  CHECK(why.find("input shift") != std::string::npos);
}

TEST_CASE("TFLite Micro's published goldens: softmax and logistic within one step") {
  // softmax_test.cc: input scale 0.1, zero point 0; result 1/256, -128; tolerance 1.
  const std::vector<float> in = {1, 2, 3, 4, 5, -1, -2, -3, -4, -5};
  const std::vector<float> softmax_golden = {0.011656231f, 0.031684921f, 0.086128544f, 0.234121657f, 0.636408647f,
                                             0.636408647f, 0.234121657f, 0.086128544f, 0.031684921f, 0.011656231f};
  std::string why;
  const auto sp = prepare_softmax_tflite(1.0f, 0.1f, 8, -128, 127, false, &why);
  REQUIRE(sp.has_value());
  for (size_t row = 0; row < 2; ++row) {
    std::vector<int32_t> q(5);
    for (size_t i = 0; i < 5; ++i) q[i] = int32_t(quantize_golden(in[row * 5 + i], 0.1f, 0));
    std::vector<int64_t> out(5);
    REQUIRE(softmax_tflite_row(q.data(), 5, *sp, out.data()));
    for (size_t i = 0; i < 5; ++i) {
      CHECK(std::abs(out[i] - quantize_golden(softmax_golden[row * 5 + i], 1.0f / 256, -128)) <= 1);
    }
  }
  // logistic_test.cc: input scales 0.1 (basic) and 1.0 (wide range, +-93), zero point 0; the
  // goldens quantized with 1/255 and -128 as the test does; tolerance 1.
  const std::vector<float> basic = {0.73105858f, 0.88079708f, 0.95257413f, 0.98201379f, 0.99330715f,
                                    0.26894142f, 0.11920292f, 0.04742587f, 0.01798621f, 0.00669285f};
  const std::vector<float> wide_in = {1, 2, 3, 4, 93, -1, -2, -3, -4, -93};
  const std::vector<float> wide = {0.73105858f, 0.88079708f, 0.95257413f, 0.98201379f, 1.0f,
                                   0.26894142f, 0.11920292f, 0.04742587f, 0.01798621f, 0.0f};
  for (const auto& [scale, inputs, golden] : {std::tuple{0.1f, in, basic}, std::tuple{1.0f, wide_in, wide}}) {
    const auto lp = prepare_logistic_tflite(scale, 0, false, &why);
    REQUIRE(lp.has_value());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int64_t got = logistic_tflite(quantize_golden(inputs[i], scale, 0), *lp);
      CHECK(std::abs(got - quantize_golden(golden[i], 1.0f / 255, -128)) <= 1);
    }
  }
}

TEST_CASE("the reference under tflite: softmax and logistic use TFLite's integers; other types keep the default") {
  // Two rows at scale 0.1 (TFLite Micro's test inputs), compared with the oracle above.
  const std::string xt = "tensor<2x5x!quant.uniform<i8:f32, 0.1>>";
  const std::string yt = "tensor<2x5x!quant.uniform<i8:f32, 0.00390625:-128>>";
  const std::vector<double> x = {10, 20, 30, 40, 50, -10, -20, -30, -40, -50};
  for (NumericsProfile profile : {NumericsProfile::kTflite, NumericsProfile::kTfliteSingleRounding}) {
    const bool single = profile == NumericsProfile::kTfliteSingleRounding;
    const std::vector<double> got = qrt_test::run1("qrt.softmax", "{axis = 1 : i64}", {{xt, x}}, yt, profile);
    std::vector<double> want;
    for (size_t row = 0; row < 2; ++row) {
      std::vector<int32_t> q(x.begin() + long(row * 5), x.begin() + long(row * 5 + 5));
      std::vector<int64_t> o;
      REQUIRE(softmax_oracle(q, 1.0f, 0.1f, 8, -128, 127, single, o));
      want.insert(want.end(), o.begin(), o.end());
    }
    CHECK(got == want);
  }
  // Logistic: every int8 input at several scales and zero points.
  const std::string lo = "tensor<256x!quant.uniform<i8:f32, 0.00390625:-128>>";
  std::vector<double> all;
  for (int q = -128; q <= 127; ++q) all.push_back(q);
  size_t differ = 0;
  for (const auto& [scale, zp] : {std::pair{0.0625f, 3}, std::pair{0.1f, 0}, std::pair{0.02f, -20}, std::pair{0.5f, 10},
                                  std::pair{0.0123f, 100}}) {
    const std::string lt = "tensor<256x!quant.uniform<i8:f32, " + std::to_string(scale) + ":" + std::to_string(zp) + ">>";
    const std::vector<double> tfl = qrt_test::run1("qrt.logistic", "", {{lt, all}}, lo, NumericsProfile::kTflite);
    const std::vector<double> def = qrt_test::run1("qrt.logistic", "", {{lt, all}}, lo);
    for (size_t i = 0; i < all.size(); ++i) {
      CHECK(tfl[i] == double(logistic_oracle(int32_t(all[i]), scale, zp, false)));
      differ += tfl[i] != def[i];
    }
  }
  MESSAGE(differ << " of 1280 logistic results differ from the default formula");
  // Softmax rows of 100 random values (32 rows wide-spread, 32 within 12 steps) at several
  // scales: how often TFLite's integers differ.
  std::mt19937 rng(3);
  std::vector<double> rows(64 * 100);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = double(int(rng() % (i < 3200 ? 256 : 12)) - 20);  // wide, narrow
  size_t softmax_differ = 0;
  for (const char* scale : {"0.1", "0.05", "0.02", "0.25"}) {
    const std::string rt = std::string("tensor<64x100x!quant.uniform<i8:f32, ") + scale + ":-5>>";
    const std::string ot = "tensor<64x100x!quant.uniform<i8:f32, 0.00390625:-128>>";
    const auto tfl = qrt_test::run1("qrt.softmax", "", {{rt, rows}}, ot, NumericsProfile::kTflite);
    const auto def = qrt_test::run1("qrt.softmax", "", {{rt, rows}}, ot);
    for (size_t i = 0; i < tfl.size(); ++i) softmax_differ += tfl[i] != def[i];
  }
  MESSAGE(softmax_differ << " of 25600 softmax results differ from the default formula");
  // Both ops run TFLite's formula under the tflite profiles (the mechanism the comparisons
  // above rely on): the plan names it.
  const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %y = \"qrt.softmax\"(%x) : (" + xt +
                           ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
  auto g = qrt::parse_graph(qrt_test::with_profile(text, "tflite"));
  REQUIRE(g.is_ok());
  CHECK(qrt::profile_formula(*g, g->ops.back()).find("tflite: fixed-point softmax") != std::string::npos);
  // Under the single-rounding profile the formula (and so a plan's reason) names that profile.
  auto single = qrt::parse_graph(qrt_test::with_profile(text, "tflite-single-rounding"));
  REQUIRE(single.is_ok());
  CHECK(qrt::profile_formula(*single, single->ops.back()).rfind("tflite-single-rounding: fixed-point softmax", 0) == 0);
  // A result type TFLite's softmax does not produce (zero point 0) keeps the default formula.
  const std::string other = "tensor<2x5x!quant.uniform<i8:f32, 0.00390625>>";
  CHECK(qrt_test::run1("qrt.softmax", "{axis = 1 : i64}", {{xt, x}}, other, NumericsProfile::kTflite) ==
        qrt_test::run1("qrt.softmax", "{axis = 1 : i64}", {{xt, x}}, other));
}

TEST_CASE("tflite softmax and logistic kernels (portable C++) are bit-exact with the reference") {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> decade(-3.0, 0.3);
  int cases = 0;
  for (const char* profile : {"tflite", "tflite-single-rounding"}) {
    for (int rep = 0; rep < 16; ++rep) {
      const bool softmax = rep % 2 == 0;
      const bool u8 = softmax && rep % 6 == 2;
      const int64_t rows = 1 + int64_t(rng() % 40), len = 1 + int64_t(rng() % (rep % 4 == 0 ? 1000 : 70));
      const std::string dims = std::to_string(rows) + "x" + std::to_string(len) + "x";
      char scale[32];
      std::snprintf(scale, sizeof scale, "%.6g", std::pow(10.0, decade(rng)));
      const int zp = u8 ? int(rng() % 256) : int(rng() % 256) - 128;
      const std::string xt = "tensor<" + dims + "!quant.uniform<" + (u8 ? "u8" : "i8") + ":f32, " + scale + ":" +
                             std::to_string(zp) + ">>";
      const std::string out_q = softmax && rep % 8 == 6 ? "i16:f32, 1.52587890625e-05:-32768"
                                : u8                    ? "u8:f32, 0.00390625"
                                                        : "i8:f32, 0.00390625:-128";
      const std::string yt = "tensor<" + dims + "!quant.uniform<" + out_q + ">>";
      const std::string op = softmax ? "qrt.softmax" : "qrt.logistic";
      // Softmax along the first axis now and then: slices `len` elements apart.
      const std::string attrs = softmax && rep % 4 == 2 ? " {axis = 0 : i64}" : "";
      const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %y = \"" + op + "\"(%x)" + attrs + " : (" +
                               xt + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
      CAPTURE(text);
      auto t = qrt::parse_type(xt);
      REQUIRE(t.is_ok());
      qrt::Tensor x = qrt::Tensor::zeros(*t);
      const auto v = qrt_test::random_values(rng, size_t(x.num_elements()), u8 ? 0 : -128, u8 ? 255 : 127);
      for (size_t i = 0; i < v.size(); ++i) x.set_int(i, v[i]);
      const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, profile), {x});
      CHECK(how.find("fixed-point formula (portable C++)") != std::string::npos);
      ++cases;
    }
  }
  MESSAGE(cases << " softmax/logistic cases");
}
