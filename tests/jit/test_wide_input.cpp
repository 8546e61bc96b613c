// Tests: quantized contractions with 16-bit activations (docs/numerics.md, "Wide
// accumulation"): the verifier's int64 bound and i64 bias, TFLite's int64 requantization on
// hand-computed cases and against an independent implementation, and the byte-half kernels
// against the reference (matmul and conv2d: GEMM, 1x1, grouped, depthwise, NCHW, padding,
// per-channel scales, extreme zero points, every integer profile).
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>

#include "ir/numerics.h"
#include "ir/text_format.h"
#include "op_kernel_check.h"

namespace {

using qrt::numerics::multiply_by_quantized_multiplier_i64;
using qrt::numerics::QuantizedMultiplier;
using qrt::numerics::quantize_multiplier;

// tflite::MultiplyByQuantizedMultiplier(int64_t, ...) written from its definition with
// 128-bit floor division: the Q31 multiplier rounded to Q15, then one rounding shift.
int64_t mbqm64_independent(int64_t x, int32_t m, int shift) {
  using i128 = __int128;
  const i128 reduced = m < 0x7FFF0000 ? (i128(m) + 32768) / 65536 : 0x7FFF;
  const int total = 15 - shift;
  const i128 num = i128(x) * reduced + (i128(1) << (total - 1)), den = i128(1) << total;
  const i128 q = num >= 0 ? num / den : -((-num + den - 1) / den);
  return int64_t(q);
}

std::string graph_error(const std::string& text) {
  auto g = qrt::parse_graph(text);
  return g.is_ok() ? "" : g.status().message();
}

}  // namespace

TEST_CASE("TFLite's int64 requantization on hand-computed cases") {
  const QuantizedMultiplier quarter = quantize_multiplier(0.25, false);  // Q15 16384, total shift 16
  CHECK(multiply_by_quantized_multiplier_i64(101, quarter) == 25);  // 25.25
  CHECK(multiply_by_quantized_multiplier_i64(2, quarter) == 1);     // 0.5: ties round up
  CHECK(multiply_by_quantized_multiplier_i64(-2, quarter) == 0);    // -0.5 -> 0
  CHECK(multiply_by_quantized_multiplier_i64(-6, quarter) == -1);   // -1.5 -> -1 (the int32 form gives -2)
  CHECK(qrt::numerics::multiply_by_quantized_multiplier(-6, quarter, false) == -2);
  // The multiplier keeps 15 bits: 0.3 (Q31 0.6 · 2^-1) becomes 19661 / 2^16, so 10^6 · 0.3
  // comes out 300003.
  CHECK(multiply_by_quantized_multiplier_i64(1000000, quantize_multiplier(0.3, false)) == 300003);
  // Accumulators beyond int32 (16-bit activations) requantize without saturating first ...
  CHECK(multiply_by_quantized_multiplier_i64(int64_t(1) << 40, quantize_multiplier(1.0 / 1024, false)) ==
        int64_t(1) << 30);
  // ... and results beyond int32 saturate.
  CHECK(multiply_by_quantized_multiplier_i64(int64_t(1) << 46, quantize_multiplier(0.5, false)) == INT32_MAX);
  CHECK(multiply_by_quantized_multiplier_i64(-(int64_t(1) << 46), quantize_multiplier(0.5, false)) == INT32_MIN);
}

TEST_CASE("TFLite's int64 requantization matches an independent implementation") {
  std::mt19937_64 rng(64);
  for (int i = 0; i < 200000; ++i) {
    const int32_t m = int32_t((int64_t(1) << 30) + int64_t(rng() % (uint64_t(1) << 30)));
    const int shift = -31 + int(rng() % 39);  // TFLite's range [-31, 7]
    const int64_t x = int64_t(rng() % (uint64_t(1) << 40)) - (int64_t(1) << 39);
    const int64_t want = mbqm64_independent(x, m, shift);
    // The product of a large x and a left shift leaves int32: TFLite asserts, qrt saturates.
    if (want != int64_t(int32_t(want))) continue;
    REQUIRE(multiply_by_quantized_multiplier_i64(x, QuantizedMultiplier{m, shift}) == want);
  }
  // Q31 multipliers at and above 0x7FFF0000 reduce to 0x7FFF.
  CHECK(multiply_by_quantized_multiplier_i64(1 << 20, QuantizedMultiplier{0x7FFFFFFF, 0}) ==
        mbqm64_independent(1 << 20, 0x7FFFFFFF, 0));
}

TEST_CASE("16-bit activations accumulate in int64: the verifier's bound and bias") {
  const std::string x16 = "tensor<2x4096x!quant.uniform<i16:f32, 0.001:-300>>";
  const std::string w8 = "tensor<4096x8x!quant.uniform<i8:f32, 0.02>>";
  const std::string y = "tensor<2x8x!quant.uniform<i16:f32, 0.01>>";
  auto matmul = [&](const std::string& x, const std::string& bias_type) {
    std::string text = "func.func @main(%x: " + x + ", %w: " + w8;
    if (!bias_type.empty()) text += ", %b: " + bias_type;
    text += ") -> " + y + " {\n  %y = \"qrt.matmul\"(%x, %w" + std::string(bias_type.empty() ? "" : ", %b") + ") : (" +
            x + ", " + w8 + (bias_type.empty() ? "" : ", " + bias_type) + ") -> " + y + "\n  return %y : " + y + "\n}\n";
    return text;
  };
  // K = 4096 of 16-bit x 8-bit products: far beyond int32, well inside int64.
  CHECK(graph_error(matmul(x16, "")) == "");
  CHECK(graph_error(matmul(x16, "tensor<8xi64>")) == "");  // TFLite's 16x8 int64 bias
  CHECK(graph_error(matmul(x16, "tensor<8x!quant.uniform<i32:f32, 2.0e-5>>")) == "");
  // 8-bit activations keep the int32 accumulator: the same K is refused, and no i64 bias.
  const std::string x8 = "tensor<2x200000x!quant.uniform<i8:f32, 0.001>>";
  std::string text8 = matmul(x8, "");
  text8.replace(text8.find("4096x8"), 6, "200000x8");
  text8.replace(text8.find("4096x8"), 6, "200000x8");
  CHECK_MESSAGE(graph_error(text8).find("int32 accumulator could overflow: K = 200000") != std::string::npos,
                graph_error(text8));
  // The same K in 16 bits stays inside int64.
  std::string text16 = matmul("tensor<2x200000x!quant.uniform<u16:f32, 0.001>>", "");
  text16.replace(text16.find("4096x8"), 6, "200000x8");
  text16.replace(text16.find("4096x8"), 6, "200000x8");
  CHECK(graph_error(text16) == "");
  const std::string x8_short = "tensor<2x64x!quant.uniform<i8:f32, 0.001>>";
  const std::string short_text = "func.func @main(%x: " + x8_short +
                                 ", %w: tensor<64x8x!quant.uniform<i8:f32, 0.02>>, %b: tensor<8xi64>) -> " + y +
                                 " {\n  %y = \"qrt.matmul\"(%x, %w, %b) : (" + x8_short +
                                 ", tensor<64x8x!quant.uniform<i8:f32, 0.02>>, tensor<8xi64>) -> " + y +
                                 "\n  return %y : " + y + "\n}\n";
  CHECK(graph_error(short_text).find("bias of a quantized matmul must be !quant.uniform with i32 storage, got") !=
        std::string::npos);
}

namespace {

// One random quantized contraction with 16-bit activations, as text with its input. `form`:
// 0 matmul, 1 conv 3x3 with padding (GEMM), 2 conv 1x1, 3 depthwise, 4 grouped, 5 NCHW conv.
std::string check_wide(std::mt19937& rng, const std::string& profile, int form) {
  using qrt_test::QuantSpec;
  std::uniform_int_distribution<int> coin(0, 1), pick(0, 5);
  std::uniform_real_distribution<double> log_scale(-4.0, 0.0);
  const bool conv = form != 0;
  const int64_t groups = form == 3 ? 12 : form == 4 ? 3 : 1;
  const int64_t c_in = form == 3 ? 12 : form == 4 ? 9 : 2 + pick(rng) * 3;
  const int64_t out_c = form == 3 ? 12 : form == 4 ? 3 * (1 + pick(rng)) : 3 + pick(rng) * 4;
  const int64_t kh = form == 2 ? 1 : 3, h = 5 + coin(rng), w = 6, pad = form == 2 ? 0 : 1;
  const int64_t m = 1 + pick(rng) * 3, k = conv ? c_in / groups * kh * kh : 8 + pick(rng) * 11;
  const bool nchw = form == 5;
  QuantSpec x, wt, out;
  x.bits = 16;
  x.is_signed = coin(rng);
  x.lo = x.is_signed ? -32768 : 0;
  x.hi = x.is_signed ? 32767 : 65535;
  if (pick(rng) == 0) x.lo += 1, x.hi -= 300;  // narrow bounds (e.g. TFLite's symmetric int16)
  x.scales = {std::pow(10.0, log_scale(rng))};
  const int zx_choice = pick(rng);
  x.zps = {zx_choice == 0 ? x.lo : zx_choice == 1 ? x.hi : zx_choice == 2 ? std::clamp(0, x.lo, x.hi)
                                                                          : std::uniform_int_distribution<int>(x.lo, x.hi)(rng)};
  wt.is_signed = pick(rng) != 0;
  wt.lo = wt.is_signed ? -127 : 0;
  wt.hi = wt.is_signed ? 127 : 255;
  const bool per_channel = coin(rng);
  wt.axis = per_channel ? (conv ? 0 : 1) : -1;
  wt.scales.clear(), wt.zps.clear();
  for (int64_t j = 0; j < (per_channel ? out_c : 1); ++j) {
    wt.scales.push_back(std::pow(10.0, log_scale(rng)));
    wt.zps.push_back(wt.is_signed ? (coin(rng) ? 0 : int(rng() % 255) - 127) : int(rng() % 256));
  }
  const int out_axis = conv ? (nchw ? 1 : 3) : 1;
  out.bits = coin(rng) ? 16 : 8;
  out.is_signed = coin(rng);
  out.lo = out.is_signed ? -(1 << (out.bits - 1)) : 0;
  out.hi = out.is_signed ? (1 << (out.bits - 1)) - 1 : (1 << out.bits) - 1;
  const bool out_per_channel = pick(rng) == 0;
  out.axis = out_per_channel ? out_axis : -1;
  out.scales.clear(), out.zps.clear();
  const double typical = x.scales[0] * wt.scales[0] * std::sqrt(double(k)) * 20000.0 * 64.0 / (1 << (out.bits - 8));
  for (int64_t j = 0; j < (out_per_channel ? out_c : 1); ++j) {
    out.scales.push_back(typical * std::pow(10.0, std::uniform_real_distribution<double>(-2.5, 1.0)(rng)));
    out.zps.push_back(std::uniform_int_distribution<int>(out.lo, out.hi)(rng));
  }
  const std::string clamp = qrt_test::random_clamp_attrs(rng, out);
  const int bias_kind = pick(rng) % 3;  // none, i32 !quant.uniform, plain i64
  auto dims_text = [](std::vector<int64_t> d) { return qrt_test::shape(d); };
  const std::vector<int64_t> xd = !conv ? std::vector<int64_t>{m, k}
                                  : nchw ? std::vector<int64_t>{1, c_in, h, w} : std::vector<int64_t>{1, h, w, c_in};
  const std::vector<int64_t> fd = !conv ? std::vector<int64_t>{k, out_c}
                                  : nchw ? std::vector<int64_t>{out_c, c_in / groups, kh, kh}
                                         : std::vector<int64_t>{out_c, kh, kh, c_in / groups};
  const int64_t oh = h + 2 * pad - kh + 1, ow = w + 2 * pad - kh + 1;
  const std::vector<int64_t> yd = !conv ? std::vector<int64_t>{m, out_c}
                                  : nchw ? std::vector<int64_t>{1, out_c, oh, ow} : std::vector<int64_t>{1, oh, ow, out_c};
  const std::string xt = "tensor<" + dims_text(xd) + x.type() + ">", ft = "tensor<" + dims_text(fd) + wt.type() + ">",
                    yt = "tensor<" + dims_text(yd) + out.type() + ">";
  int64_t filter_count = 1;
  for (int64_t d : fd) filter_count *= d;
  const std::vector<int> f = qrt_test::random_values(rng, size_t(filter_count), wt.lo, wt.hi);
  std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n";
  text += "  %f = \"qrt.constant\"() {value = " + qrt_test::hex_dense(qrt_test::bytes_of(f)) + " : tensor<" +
          dims_text(fd) + (wt.is_signed ? "i8" : "ui8") + ">} : () -> " + ft + "\n";
  std::string operands = "%x, %f", types = xt + ", " + ft;
  if (bias_kind != 0) {
    const bool i64 = bias_kind == 2;
    std::vector<uint8_t> bytes;
    for (int64_t j = 0; j < out_c; ++j) {
      const int64_t b = std::uniform_int_distribution<int64_t>(i64 ? -(int64_t(1) << 33) : -50000,
                                                               i64 ? int64_t(1) << 33 : 50000)(rng);
      const size_t at = bytes.size();
      bytes.resize(at + (i64 ? 8 : 4));
      if (i64) {
        std::memcpy(bytes.data() + at, &b, 8);
      } else {
        const int32_t b32 = int32_t(b);
        std::memcpy(bytes.data() + at, &b32, 4);
      }
    }
    std::string bt = "tensor<" + std::to_string(out_c) + "xi64>";
    if (!i64) {
      std::string scales;
      for (int64_t j = 0; j < out_c; ++j) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%s%.17g", j ? ", " : "", x.scales[0] * wt.scales[per_channel ? size_t(j) : 0]);
        scales += buf;
      }
      bt = "tensor<" + std::to_string(out_c) + "x!quant.uniform<i32:f32:0, {" + scales + "}>>";
    }
    text += "  %b = \"qrt.constant\"() {value = " + qrt_test::hex_dense(bytes) + " : tensor<" + std::to_string(out_c) +
            (i64 ? "xi64" : "xi32") + ">} : () -> " + bt + "\n";
    operands += ", %b";
    types += ", " + bt;
  }
  if (conv) {
    const std::string p = std::to_string(pad);
    text += "  %y = \"qrt.conv2d\"(" + operands + ") {groups = " + std::to_string(groups) + " : i64, layout = \"" +
            (nchw ? "NCHW" : "NHWC") + "\", pads = [" + p + ", " + p + ", " + p + ", " + p + "]" + clamp + "} : (" + types +
            ") -> " + yt + "\n";
  } else {
    text += "  %y = \"qrt.matmul\"(" + operands + ")" + (clamp.empty() ? "" : " {" + clamp.substr(2) + "}") + " : (" +
            types + ") -> " + yt + "\n";
  }
  text += "  return %y : " + yt + "\n}\n";
  CAPTURE(text);
  qrt::Tensor input = qrt_test::random_stored_tensor(rng, xt, x.lo, x.hi);
  return qrt_test::check_last_op(qrt_test::with_profile(text, profile), input);
}

}  // namespace

TEST_CASE("16-bit activations on the 8-bit kernels are bit-exact with the reference") {
  std::mt19937 rng(1616);
  int cases = 0;
  for (const char* profile : {"default", "tflite", "tflite-single-rounding", "onnx"}) {
    CAPTURE(std::string(profile));
    for (int round = 0; round < 36; ++round) {
      CAPTURE(round);
      const std::string how = check_wide(rng, profile, round % 6);
      CHECK_MESSAGE(how.find("16-bit activations as two byte halves") != std::string::npos, how);
      CHECK_MESSAGE(how.find(std::string("then the ") + profile + " requantization") != std::string::npos, how);
      ++cases;
    }
  }
  MESSAGE(cases << " contractions with 16-bit activations");
}

TEST_CASE("a transposed convolution of 16-bit activations runs its phases as byte halves") {
  std::mt19937 rng(1617);
  for (const char* profile : {"default", "tflite"}) {
    CAPTURE(std::string(profile));
    const std::vector<int> f = qrt_test::random_values(rng, 8 * 3 * 3 * 4, -128, 127);
    const std::string xt = "tensor<1x5x5x4x!quant.uniform<i16:f32, 0.001:-1000>>";
    const std::string wt = "tensor<8x3x3x4x!quant.uniform<i8:f32:0, {0.02, 0.03, 0.01, 0.02, 0.05, 0.02, 0.04, 0.02}>>";
    const std::string yt = "tensor<1x11x11x8x!quant.uniform<i16:f32, 0.05:7>>";
    const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %w = \"qrt.constant\"() {value = " +
                             qrt_test::hex_dense(qrt_test::bytes_of(f)) + " : tensor<8x3x3x4xi8>} : () -> " + wt +
                             "\n  %y = \"qrt.conv_transpose2d\"(%x, %w) {strides = [2, 2]} : (" + xt + ", " + wt + ") -> " +
                             yt + "\n  return %y : " + yt + "\n}\n";
    qrt::Tensor input = qrt_test::random_stored_tensor(rng, xt, -32768, 32767);
    const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, profile), input);
    CHECK_MESSAGE(how.find("16-bit activations as two byte halves") != std::string::npos, how);
  }
}
