// Tests: qrt.conv_transpose2d on the reference: a hand-computed case, randomized float and
// quantized cases against an independent scatter formulation (every input element adds its
// products into the outputs it reaches) and the verifier's errors; the quantized op on the
// generated kernels (sub-pixel phases) bit-exact with the reference at the test's ISA level
// under every profile, and the f32 op in the reference's summation order. Plans running it: tests/runtime/test_runtime.cpp.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "tests/jit/op_kernel_check.h"
#include "tests/jit/tensor_util.h"
#include "tests/slow_host.h"

namespace {

using qrt_test::run1;
using qrt_test::run_one_op;

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t v : d) s += std::to_string(v) + "x";
  return s;
}

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

struct Case {
  int64_t n, h, w, c, o, kh, kw, groups;
  int64_t sh, sw, dh, dw, pt, pl, pb, pr, oph, opw;
  int64_t oh() const { return (h - 1) * sh - pt - pb + dh * (kh - 1) + 1 + oph; }
  int64_t ow() const { return (w - 1) * sw - pl - pr + dw * (kw - 1) + 1 + opw; }
  std::string attrs() const {
    return "{dilations = " + ints_text({dh, dw}) + ", groups = " + std::to_string(groups) +
           " : i64, output_padding = " + ints_text({oph, opw}) + ", pads = " + ints_text({pt, pl, pb, pr}) +
           ", strides = " + ints_text({sh, sw}) + "}";
  }
};

// The scatter formulation (TFLite's reference loop order) in exact integers: y[oh][ow][o] +=
// x[ih][iw][g·cg + ci] · w[o][ky][kx][ci] at oh = ih·sh - pt + ky·dh, ow = iw·sw - pl + kx·dw.
std::vector<int64_t> scatter(const Case& k, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  const int64_t cg = k.c / k.groups, og = k.o / k.groups, oh = k.oh(), ow = k.ow();
  std::vector<int64_t> y(size_t(k.n * oh * ow * k.o), 0);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t ih = 0; ih < k.h; ++ih)
      for (int64_t iw = 0; iw < k.w; ++iw)
        for (int64_t o = 0; o < k.o; ++o)
          for (int64_t ky = 0; ky < k.kh; ++ky)
            for (int64_t kx = 0; kx < k.kw; ++kx) {
              const int64_t y0 = ih * k.sh - k.pt + ky * k.dh, x0 = iw * k.sw - k.pl + kx * k.dw;
              if (y0 < 0 || y0 >= oh || x0 < 0 || x0 >= ow) continue;
              const int64_t g = o / og;
              for (int64_t ci = 0; ci < cg; ++ci) {
                y[size_t(((n * oh + y0) * ow + x0) * k.o + o)] +=
                    x[size_t(((n * k.h + ih) * k.w + iw) * k.c + g * cg + ci)] *
                    w[size_t(((o * k.kh + ky) * k.kw + kx) * cg + ci)];
              }
            }
  return y;
}

Case random_case(std::mt19937& rng) {
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Case k{};
  k.groups = r(1, 3);
  k.n = r(1, 2), k.h = r(1, 5), k.w = r(1, 5), k.c = k.groups * r(1, 3), k.o = k.groups * r(1, 3);
  k.kh = r(1, 4), k.kw = r(1, 4), k.sh = r(1, 3), k.sw = r(1, 3), k.dh = r(1, 2), k.dw = r(1, 2);
  k.oph = r(0, std::max(k.sh, k.dh) - 1), k.opw = r(0, std::max(k.sw, k.dw) - 1);
  // Pads that leave at least one output row and column.
  const int64_t full_h = (k.h - 1) * k.sh + k.dh * (k.kh - 1) + 1, full_w = (k.w - 1) * k.sw + k.dw * (k.kw - 1) + 1;
  k.pt = r(0, (full_h - 1) / 2), k.pb = r(0, (full_h - 1) / 2), k.pl = r(0, (full_w - 1) / 2), k.pr = r(0, (full_w - 1) / 2);
  return k;
}

}  // namespace

TEST_CASE("conv_transpose2d: stride 2 with a 2x2 filter of ones copies each input into a 2x2 block") {
  const auto y = run1("qrt.conv_transpose2d", "{strides = [2, 2]}",
                      {{"tensor<1x2x2x1xf32>", {1, 2, 3, 4}}, {"tensor<1x2x2x1xf32>", {1, 1, 1, 1}}}, "tensor<1x4x4x1xf32>");
  CHECK(y == std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // Pads crop the full 4x4 output to its middle 2x2; output_padding extends the result by a
  // row and a column at the end, computed like the others (here the full output's last ones).
  const auto z = run1("qrt.conv_transpose2d", "{output_padding = [1, 1], pads = [1, 1, 1, 1], strides = [2, 2]}",
                      {{"tensor<1x2x2x1xf32>", {1, 2, 3, 4}}, {"tensor<1x2x2x1xf32>", {1, 1, 1, 1}}, {"tensor<1xf32>", {10}}},
                      "tensor<1x3x3x1xf32>");
  CHECK(z == std::vector<double>{11, 12, 12, 13, 14, 14, 13, 14, 14});
}

TEST_CASE("conv_transpose2d matches the scatter formulation: float (exact small integers) and quantized") {
  std::mt19937 rng(7);
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int iter = 0; iter < 60; ++iter) {
    const Case k = random_case(rng);
    CAPTURE(k.attrs());
    const int64_t cg = k.c / k.groups;
    std::vector<int64_t> xi(size_t(k.n * k.h * k.w * k.c)), wi(size_t(k.o * k.kh * k.kw * cg));
    for (auto& v : xi) v = r(-128, 127);
    for (auto& v : wi) v = r(-127, 127);
    const std::string xt = "tensor<" + dims_text({k.n, k.h, k.w, k.c});
    const std::string wt = "tensor<" + dims_text({k.o, k.kh, k.kw, cg});
    const std::string yt = "tensor<" + dims_text({k.n, k.oh(), k.ow(), k.o});
    // Float: products and sums of these integers are exact in f32, in any order.
    std::vector<double> xf(xi.begin(), xi.end()), wf(wi.begin(), wi.end());
    const std::vector<int64_t> want = scatter(k, xi, wi);
    const auto yf = run1("qrt.conv_transpose2d", k.attrs(), {{xt + "f32>", xf}, {wt + "f32>", wf}}, yt + "f32>");
    CHECK(yf == std::vector<double>(want.begin(), want.end()));
    // Quantized: x zero point 3, per-channel filter scales and zero points 0, requantized
    // with M = f32(s_x·s_w[o] / s_y) (docs/numerics.md), result zero point -5.
    std::string scales;
    std::vector<double> sw;
    for (int64_t o = 0; o < k.o; ++o) {
      sw.push_back(0.01 * double(o + 1));
      scales += (o ? ", " : "") + std::to_string(sw.back());
    }
    const std::string xq = xt + "!quant.uniform<i8:f32, 0.5:3>>";
    const std::string wq = wt + "!quant.uniform<i8:f32:0, {" + scales + "}>>";
    const std::string yq = yt + "!quant.uniform<i8:f32, 0.25:-5>>";
    std::vector<int64_t> xc = xi;
    for (auto& v : xc) v -= 3;  // centred input
    const std::vector<int64_t> acc = scatter(k, xc, wi);
    const auto yqv = run1("qrt.conv_transpose2d", k.attrs(), {{xq, xf}, {wq, wf}}, yq);
    REQUIRE(yqv.size() == acc.size());
    bool all = true;
    for (size_t i = 0; i < acc.size(); ++i) {
      const int64_t o = int64_t(i) % k.o;
      const float m = qrt::numerics::multiplier(0.5 * sw[size_t(o)], 0.25);
      all = all && int64_t(yqv[i]) == qrt::numerics::requantize(acc[i], m, -5, -128, 127);
    }
    CHECK(all);
  }
}

TEST_CASE("conv_transpose2d verifier: channels, output_padding, pads, per-axis axis, result shape") {
  const std::pair<std::string, std::vector<double>> x{"tensor<1x2x2x2xf32>", std::vector<double>(8, 1.0)};
  auto err = [&](const std::string& attrs, const std::string& wt, const std::string& yt) {
    auto y = run_one_op("qrt.conv_transpose2d", attrs, {x, {wt, std::vector<double>(size_t(4 * 2), 1.0)}}, yt);
    return y.is_ok() ? std::string() : y.status().message();
  };
  CHECK(err("{strides = [2, 2]}", "tensor<1x2x2x2xf32>", "tensor<1x4x4x1xf32>").empty());
  CHECK(err("{strides = [2, 2]}", "tensor<1x2x2x2xf32>", "tensor<1x5x4x1xf32>").find("result") != std::string::npos);
  CHECK(err("{output_padding = [2, 0], strides = [2, 2]}", "tensor<1x2x2x2xf32>", "tensor<1x6x4x1xf32>")
            .find("output_padding [2, 0] must be smaller than the stride or the dilation") != std::string::npos);
  CHECK(err("{pads = [2, 0, 2, 0], strides = [1, 1]}", "tensor<1x2x2x2xf32>", "tensor<1x0x3x1xf32>")
            .find("the pads remove the whole height") != std::string::npos);
  CHECK(err("{groups = 2 : i64}", "tensor<1x2x2x2xf32>", "tensor<1x3x3x1xf32>").find("channels") != std::string::npos);
}

namespace {

// Appends case `k`'s qrt.conv_transpose2d of `operands` (of `types`, with the attributes
// `extra` too) into a result of `yt`, and the return, to `text`; returns a zero input of `xt`.
qrt::Tensor finish_text(std::string& text, const Case& k, const std::string& operands, const std::string& types,
                        const std::string& extra, const std::string& xt, const std::string& yt) {
  std::string attrs = k.attrs();
  attrs.insert(attrs.size() - 1, extra);
  text += "  %y = \"qrt.conv_transpose2d\"(" + operands + ") " + attrs + " : (" + types + ") -> " + yt + "\n";
  text += "  return %y : " + yt + "\n}\n";
  auto t = qrt::parse_type(xt);
  REQUIRE(t.is_ok());
  return qrt::Tensor::zeros(*t);
}

// Runs random quantization of `k` (NHWC) through check_last_op under `profile`; returns the
// kernel's description.
std::string check_quantized(const Case& k, std::mt19937& rng, const std::string& profile) {
  const int64_t cg = k.c / k.groups;
  qrt_test::QuantCase q = qrt_test::random_quant_case(rng, cg * k.kh * k.kw, k.o, 0, 3);
  const std::string xt = "tensor<" + dims_text({k.n, k.h, k.w, k.c}) + q.x.type() + ">";
  const std::string ft = "tensor<" + dims_text({k.o, k.kh, k.kw, cg}) + q.w.type() + ">";
  std::string acc_scales;
  for (int64_t o = 0; o < k.o; ++o) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%.17g", o ? ", " : "", q.x.scales[0] * q.w.scales[q.w.scales.size() == 1 ? 0 : size_t(o)]);
    acc_scales += buf;
  }
  const std::string acc_type = "!quant.uniform<i32:f32:3, {" + acc_scales + "}>";
  const std::string yt = "tensor<" + dims_text({k.n, k.oh(), k.ow(), k.o}) + (q.accumulator_out ? acc_type : q.out.type()) + ">";
  const std::vector<int> f = qrt_test::random_values(rng, size_t(k.o * k.kh * k.kw * cg), q.w.lo, q.w.hi);
  std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n";
  text += "  %f = \"qrt.constant\"() {value = " + qrt_test::hex_dense(qrt_test::bytes_of(f)) + " : tensor<" +
          dims_text({k.o, k.kh, k.kw, cg}) + (q.w.is_signed ? "i8" : "ui8") + ">} : () -> " + ft + "\n";
  std::string operands = "%x, %f", types = xt + ", " + ft;
  if (q.bias) {
    std::vector<uint8_t> bytes(size_t(k.o) * 4);
    for (int64_t o = 0; o < k.o; ++o) {
      const int32_t b = std::uniform_int_distribution<int32_t>(-50000, 50000)(rng);
      std::memcpy(bytes.data() + o * 4, &b, 4);
    }
    const std::string bt = "tensor<" + std::to_string(k.o) + "x!quant.uniform<i32:f32:0, {" + acc_scales + "}>>";
    text += "  %b = \"qrt.constant\"() {value = " + qrt_test::hex_dense(bytes) + " : tensor<" + std::to_string(k.o) +
            "xi32>} : () -> " + bt + "\n";
    operands += ", %b";
    types += ", " + bt;
  }
  // A fused clamp (random_quant_case's, on 8-bit results) reaches every phase.
  qrt::Tensor x = finish_text(text, k, operands, types, q.accumulator_out ? "" : q.clamp_attrs, xt, yt);
  CAPTURE(text);
  const auto v = qrt_test::random_values(rng, size_t(x.num_elements()), q.x.lo, q.x.hi);
  for (size_t i = 0; i < v.size(); ++i) x.set_int(i, v[i]);
  // Every case has a kernel: grouped phases run as GEMMs per run of groups.
  return qrt_test::check_last_op(qrt_test::with_profile(text, profile), x, true);
}

}  // namespace

TEST_CASE("quantized conv_transpose2d on the kernels is bit-exact with the reference under every integer profile") {
  std::mt19937 rng(29);
  int on_kernels = 0, ones = 0, total = 0;
  // A slow host (qemu, sanitizers) runs 16 cases a profile: the reference's sums cost this
  // test 40 s under qemu at 40.
  const int iters = qrt_test::slow_host() ? 16 : 40;
  for (const char* profile : {"default", "tflite", "tflite-single-rounding", "onnx"}) {
    CAPTURE(profile);
    for (int iter = 0; iter < iters; ++iter) {
      Case k = random_case(rng);
      // Wider channels than the reference tests' now and then: whole k quads and AMX steps.
      if (iter % 4 == 0) k.c = k.groups * 24, k.o = k.groups * 20, k.h = 6, k.w = 7;
      if (iter % 4 == 0) {
        const int64_t full_h = (k.h - 1) * k.sh + k.dh * (k.kh - 1) + 1, full_w = (k.w - 1) * k.sw + k.dw * (k.kw - 1) + 1;
        k.pt = std::min(k.pt, (full_h - 1) / 2), k.pb = std::min(k.pb, (full_h - 1) / 2);
        k.pl = std::min(k.pl, (full_w - 1) / 2), k.pr = std::min(k.pr, (full_w - 1) / 2);
      }
      CAPTURE(k.attrs());
      const std::string kernel = check_quantized(k, rng, profile);
      if (kernel.find("reversed") != std::string::npos) ++on_kernels;
      ones += k.groups == 1;
      ++total;
    }
  }
  // Every case ran on the kernels, grouped ones too (check_quantized checks each).
  CHECK(on_kernels == total);
  CHECK(ones > total / 8);
  CHECK(total - ones > total / 8);
  // Phases without taps (a 1-wide filter under stride 2, dilation 2 under stride 2: only the
  // bias reaches their outputs), pads beyond the window's reach (the phases crop the input)
  // and output_padding past the last input.
  //        n  h  w  c  o kh kw g sh sw dh dw pt pl pb pr oph opw
  for (const Case& k : {Case{1, 3, 4, 5, 6, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1},
                        Case{1, 4, 3, 8, 4, 3, 2, 1, 2, 2, 2, 2, 1, 0, 0, 1, 1, 0},
                        Case{2, 5, 5, 3, 7, 2, 3, 1, 3, 2, 2, 1, 3, 2, 4, 1, 2, 1},
                        Case{1, 6, 4, 16, 20, 4, 4, 1, 3, 3, 1, 1, 5, 5, 4, 4, 0, 2}}) {
    CAPTURE(k.attrs());
    for (const char* profile : {"default", "tflite"}) {
      CHECK(check_quantized(k, rng, profile).find("sub-pixel phases") != std::string::npos);
    }
  }
}

namespace {

// Runs an f32 case `k` (magnitudes over nine decades, so that any other summation order
// shows; a bias where `bias`; a fused clamp `clamp`, e.g. ", clamp_max = ..., clamp_min = ...")
// through check_last_op; returns the kernel's description.
// `kind` "f32", "bf16" or "f16": the type of every operand and the result (bf16/f16 values are
// the f32 ones rounded to the type; f16's exponents stay within range).
std::string check_f32(const Case& k, std::mt19937& rng, bool bias, const std::string& clamp = "",
                      const std::string& kind = "f32") {
  std::uniform_real_distribution<float> mag(-3.0f, 3.0f);
  auto value = [&] { return double(mag(rng) * std::pow(10.0f, float(int(rng() % 9) - 4))); };
  const int64_t cg = k.c / k.groups, taps = k.o * k.kh * k.kw * cg;
  const std::string xt = "tensor<" + dims_text({k.n, k.h, k.w, k.c}) + kind + ">";
  const std::string ft = "tensor<" + dims_text({k.o, k.kh, k.kw, cg}) + kind + ">";
  const std::string yt = "tensor<" + dims_text({k.n, k.oh(), k.ow(), k.o}) + kind + ">";
  const qrt::FloatKind fk = kind == "bf16" ? qrt::FloatKind::kBF16 : kind == "f16" ? qrt::FloatKind::kF16 : qrt::FloatKind::kF32;
  const size_t elem = fk == qrt::FloatKind::kF32 ? 4 : 2;
  std::vector<uint8_t> filter(size_t(taps) * elem);
  for (int64_t i = 0; i < taps; ++i) {
    const uint64_t bits = qrt::float_kind_bits(value(), fk);
    std::memcpy(filter.data() + i * int64_t(elem), &bits, elem);  // little-endian: the low bytes
  }
  std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n";
  text += "  %f = \"qrt.constant\"() {value = " + qrt_test::hex_dense(filter) + " : " + ft + "} : () -> " + ft + "\n";
  std::string operands = "%x, %f", types = xt + ", " + ft;
  if (bias) {
    const std::string bt = "tensor<" + std::to_string(k.o) + "x" + kind + ">";
    std::string values = "dense<[";
    for (int64_t o = 0; o < k.o; ++o) values += (o ? ", " : "") + std::to_string(double(int(mag(rng) * 100.0f)) / 8.0);
    text += "  %b = \"qrt.constant\"() {value = " + values + "]> : " + bt + "} : () -> " + bt + "\n";
    operands += ", %b";
    types += ", " + bt;
  }
  qrt::Tensor x = finish_text(text, k, operands, types, clamp, xt, yt);
  CAPTURE(text);
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) x.set_float(i, value());
  return qrt_test::check_last_op(text, x, k.groups == 1);
}

}  // namespace

TEST_CASE("f32 conv_transpose2d on the kernels keeps the reference's order: the same bytes") {
  std::mt19937 rng(31);
  int on_kernels = 0, ones = 0;
  for (int iter = 0; iter < 60; ++iter) {
    const Case k = random_case(rng);
    CAPTURE(k.attrs());
    const std::string clamp = iter % 3 == 0   ? ", clamp_max = 2.5 : f64, clamp_min = -0.75 : f64"
                              : iter % 3 == 1 ? ", clamp_max = 1.0e+300 : f64, clamp_min = 0.0 : f64"
                                              : "";
    on_kernels += check_f32(k, rng, iter % 2 == 0, clamp).find("over the input reversed") != std::string::npos;
    ones += k.groups == 1;
  }
  CHECK(on_kernels >= ones);
  CHECK(ones > 10);
  // Phases without taps (their outputs hold +0 + bias), crops, output_padding.
  //        n  h  w  c  o kh kw g sh sw dh dw pt pl pb pr oph opw
  for (const Case& k : {Case{1, 3, 4, 5, 6, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1},
                        Case{1, 4, 3, 8, 4, 3, 2, 1, 2, 2, 2, 2, 1, 0, 0, 1, 1, 0},
                        Case{1, 6, 4, 16, 20, 4, 4, 1, 3, 3, 1, 1, 5, 5, 4, 4, 0, 2}}) {
    CAPTURE(k.attrs());
    for (bool bias : {false, true}) CHECK(check_f32(k, rng, bias).find("sub-pixel phases") != std::string::npos);
    // A clamp that cuts the bias-only outputs of the tapless phases too.
    CHECK(check_f32(k, rng, true, ", clamp_max = 3.0 : f64, clamp_min = -2.0 : f64").find("sub-pixel phases") != std::string::npos);
  }
}

TEST_CASE("bf16 and f16 conv_transpose2d: the phases on the float kernels (widened operands), the reference's bytes") {
  std::mt19937 rng(37);
  int on_kernels = 0, ones = 0;
  const int iterations = qrt_test::slow_host() ? 8 : 16;
  for (const char* kind : {"bf16", "f16"}) {
    for (int iter = 0; iter < iterations; ++iter) {
      const Case k = random_case(rng);
      CAPTURE(k.attrs());
      const std::string clamp = iter % 3 == 0 ? ", clamp_max = 2.5 : f64, clamp_min = -0.75 : f64" : "";
      const std::string how = check_f32(k, rng, iter % 2 == 0, clamp, kind);
      on_kernels += how.find("over the input reversed") != std::string::npos;
      ones += k.groups == 1;
    }
    // Phases without taps (their outputs hold +0 + bias, clamped, in the type).
    const Case k{1, 3, 4, 5, 6, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1};
    CHECK(check_f32(k, rng, true, ", clamp_max = 3.1 : f64, clamp_min = -2.05 : f64", kind).find("sub-pixel phases") !=
          std::string::npos);
  }
  CHECK(on_kernels >= ones);
  MESSAGE(on_kernels << " bf16/f16 cases on the phase kernels");
}

TEST_CASE("conv_transpose2d says why it stays on the reference (f64 operands); StableHLO's formula wraps the f32 kernel") {
  auto g = qrt::parse_graph(R"(func.func @main(%x: tensor<1x2x2x1xf64>) -> tensor<1x4x4x1xf64> {
  %w = "qrt.constant"() {value = dense<1.0> : tensor<1x2x2x1xf64>} : () -> tensor<1x2x2x1xf64>
  %y = "qrt.conv_transpose2d"(%x, %w) {strides = [2, 2]} : (tensor<1x2x2x1xf64>, tensor<1x2x2x1xf64>) -> tensor<1x4x4x1xf64>
  return %y : tensor<1x4x4x1xf64>
})");
  REQUIRE(g.is_ok());
  auto choice = qrt::jit::select_kernel(*g, g->ops.back());
  REQUIRE(choice.is_ok());
  CHECK(!choice->kernel);
  CHECK(choice->why_not.find("only quantized, f32, bf16 and f16 transposed convolutions have kernels") != std::string::npos);
  const std::string quantized = R"(func.func @main(%x: tensor<1x2x2x1x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<1x4x4x1x!quant.uniform<i8:f32, 0.25:-3>> {
  %w = "qrt.constant"() {value = dense<[[[[1], [2]], [[3], [4]]]]> : tensor<1x2x2x1xi8>} : () -> tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>
  %y = "qrt.conv_transpose2d"(%x, %w) {strides = [2, 2]} : (tensor<1x2x2x1x!quant.uniform<i8:f32, 0.5:1>>, tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x4x1x!quant.uniform<i8:f32, 0.25:-3>>
  return %y : tensor<1x4x4x1x!quant.uniform<i8:f32, 0.25:-3>>
})";
  // Under stablehlo: the dequantized operands on the f32 transposed convolution, then StableHLO's
  // quantize, bit-exact with the reference.
  std::mt19937 rng(41);
  qrt::Tensor x = qrt_test::random_stored_tensor(rng, "tensor<1x2x2x1x!quant.uniform<i8:f32, 0.5:1>>", -128, 127);
  const std::string how = qrt_test::check_last_op(qrt_test::with_profile(quantized, "stablehlo"), x);
  CHECK_MESSAGE(how.find("stablehlo dequantize-op-quantize: dequantize (1 byte table)") == 0, how);
  // f16 expressed: the f16 transposed convolution (phases on widened operands) wrapped the same way.
  std::string f16 = quantized;
  for (size_t at; (at = f16.find(":f32,")) != std::string::npos;) f16.replace(at, 5, ":f16,");
  qrt::Tensor xh = qrt_test::random_stored_tensor(rng, "tensor<1x2x2x1x!quant.uniform<i8:f16, 0.5:1>>", -128, 127);
  const std::string how16 = qrt_test::check_last_op(qrt_test::with_profile(f16, "stablehlo"), xh);
  CHECK_MESSAGE(how16.find("stablehlo dequantize-op-quantize: dequantize (1 byte table)") == 0, how16);
  CHECK_MESSAGE(how16.find("f16 operands widened to f32") != std::string::npos, how16);
  // The default profile runs it on the kernels.
  auto d = qrt::parse_graph(quantized);
  REQUIRE(d.is_ok());
  auto on_kernels = qrt::jit::select_kernel(*d, d->ops.back());
  REQUIRE(on_kernels.is_ok());
  CHECK(on_kernels->kernel != nullptr);
}
