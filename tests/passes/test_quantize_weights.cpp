// Tests: the quantize-weights pass (qopt --weight-only) — float matmul weights become per-column
// or block-wise (sub-channel) 8- or 4-bit constants, conv filters per-output-channel ones; every
// weight dequantizes to within half a step of the float weight; the quantized graph prints and
// parses back unchanged; bad options are refused by name.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "ir/text_format.h"
#include "jit/ref/reference.h"
#include "passes/pipeline.h"
#include "tests/passes/pass_test_util.h"

namespace {

using pass_test::has_line;
using pass_test::parse;

// Hex of f32 values for a dense attribute.
std::string f32_hex(const std::vector<float>& v) {
  static const char* digits = "0123456789ABCDEF";
  std::string s = "dense<\"0x";
  for (float f : v) {
    uint8_t b[4];
    std::memcpy(b, &f, 4);
    for (uint8_t x : b) {
      s += digits[x >> 4];
      s += digits[x & 15];
    }
  }
  return s + "\">";
}

std::vector<float> random_weights(std::mt19937& rng, size_t n, float outlier_every = 0) {
  std::normal_distribution<float> d(0.0f, 0.05f);
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = d(rng);
  if (outlier_every > 0) {
    for (size_t i = 0; i < n; i += size_t(outlier_every)) w[i] = 0.6f;
  }
  return w;
}

// A matmul x[M, K] · W with W a constant [K, N] (or [N, K] behind a transpose when `transposed`).
std::string matmul_graph(int64_t m, int64_t k, int64_t n, const std::vector<float>& w, bool transposed) {
  const std::string xt = "tensor<" + std::to_string(m) + "x" + std::to_string(k) + "xf32>";
  const std::string yt = "tensor<" + std::to_string(m) + "x" + std::to_string(n) + "xf32>";
  const std::string kn = "tensor<" + std::to_string(k) + "x" + std::to_string(n) + "xf32>";
  const std::string nk = "tensor<" + std::to_string(n) + "x" + std::to_string(k) + "xf32>";
  std::string s = "func.func @main(%x: " + xt + ") -> " + yt + " {\n";
  if (transposed) {
    s += "  %wt = \"qrt.constant\"() {value = " + f32_hex(w) + " : " + nk + "} : () -> " + nk + "\n";
    s += "  %w = \"qrt.transpose\"(%wt) {perm = [1, 0]} : (" + nk + ") -> " + kn + "\n";
  } else {
    s += "  %w = \"qrt.constant\"() {value = " + f32_hex(w) + " : " + kn + "} : () -> " + kn + "\n";
  }
  s += "  %y = \"qrt.matmul\"(%x, %w) : (" + xt + ", " + kn + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
  return s;
}

using pass_test::run_pipeline;

// The matmul's weight constant (operand 1) in the quantized graph: its stored integers and its
// quantized type.
struct Weights {
  const qrt::DenseElements* stored = nullptr;
  qrt::Type type;
};

Weights weight_constant(const qrt::Graph& g) {
  for (const qrt::Op& op : g.ops) {
    if (op.kind != qrt::OpKind::kMatmul) continue;
    for (const qrt::Op& p : g.ops) {
      if (p.kind == qrt::OpKind::kConstant && p.results[0] == op.operands[1]) {
        return {&p.attr("value")->dense, g.values[size_t(op.operands[1])].type};
      }
    }
  }
  FAIL("no constant weights");
  return {};
}

// The largest |w - dequantized w| / (scale / 2) over W [K, N] (1.0 = half a step; rounding
// to nearest keeps every in-range weight at or below it).
double worst_half_steps(const Weights& q, const std::vector<float>& w, int64_t k, int64_t n, bool transposed) {
  const qrt::ElementType& e = q.type.element;
  const qrt::DenseElements& d = *q.stored;
  double worst = 0;
  for (int64_t r = 0; r < k; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      size_t p = size_t(c);  // the (scale, zero point) of this weight
      if (e.is_sub_channel()) p = size_t(r / e.block_sizes[0] * n + c);
      const float scale = float(e.scales[p]);
      const float deq = qrt::numerics::dequantize_f32(d.int_at(size_t(r * n + c)), e.zero_points[p], scale);
      const float want = w[size_t(transposed ? c * k + r : r * n + c)];
      worst = std::max(worst, std::fabs(double(want) - double(deq)) / (double(scale) / 2));
    }
  }
  return worst;
}

double logged_mse(const std::vector<std::string>& report) {
  for (const std::string& l : report) {
    const size_t at = l.find("mean squared error ");
    if (at != std::string::npos) return std::strtod(l.c_str() + at + 19, nullptr);
  }
  FAIL("no mean squared error in the report");
  return 0;
}

}  // namespace

TEST_CASE("quantize-weights: per-column and block-wise matmul weights stay within half a step, both layouts") {
  std::mt19937 rng(5);
  const int64_t m = 3, k = 64, n = 9;
  for (bool transposed : {false, true}) {
    const std::vector<float> w = random_weights(rng, size_t(k * n));
    const qrt::Graph g = parse(matmul_graph(m, k, n, w, transposed));
    struct Case {
      const char* spec;
      const char* storage;
      int64_t block;
    };
    for (const Case& c : {Case{"quantize-weights", "i8", 0}, Case{"quantize-weights{bits=u8}", "u8", 0},
                          Case{"quantize-weights{bits=i4 block=16}", "i4", 16},
                          Case{"quantize-weights{bits=u4 block=32}", "u4", 32},
                          Case{"quantize-weights{bits=i4 block=64}", "i4", 0}}) {
      CAPTURE(c.spec);
      CAPTURE(transposed);
      std::vector<std::string> report;
      const qrt::Graph out = run_pipeline(g, c.spec, report);
      const Weights d = weight_constant(out);
      REQUIRE(d.type.dims == std::vector<int64_t>{k, n});
      const std::string type = qrt::print_graph(out);
      CHECK(type.find(std::string("!quant.uniform<") + c.storage + ":f32:") != std::string::npos);
      if (c.block > 0) {
        CHECK(d.type.element.is_sub_channel());
        CHECK(type.find("{0:" + std::to_string(c.block) + ", 1:1}") != std::string::npos);
        CHECK(d.type.element.scales.size() == size_t(k / c.block * n));
        CHECK(has_line(report, "blocks of " + std::to_string(c.block) + " along K"));
      } else {
        CHECK(d.type.element.kind == qrt::ElementKind::kUniformPerAxis);
        CHECK(d.type.element.axis == 1);
        CHECK(has_line(report, "per column"));
      }
      CHECK(worst_half_steps(d, w, k, n, transposed) <= 1.0001);
      CHECK(out.ops.size() == 2);  // the quantized constant and the matmul: the float constant and any transpose are gone
      // The quantized graph (4-bit values packed) prints and parses back to the same text.
      const qrt::Graph again = parse(type);
      CHECK(qrt::print_graph(again) == type);
    }
  }
}

TEST_CASE("quantize-weights: the hybrid result is close to the float one and the error shrinks with the block") {
  std::mt19937 rng(6);
  const int64_t m = 2, k = 128, n = 16;
  const std::vector<float> w = random_weights(rng, size_t(k * n), 37);  // outliers widen the columns' ranges
  const qrt::Graph g = parse(matmul_graph(m, k, n, w, false));
  std::vector<float> xv(size_t(m * k));
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : xv) v = u(rng);
  qrt::Tensor x = qrt::Tensor::zeros(g.values[size_t(g.inputs[0])].type);
  std::memcpy(x.bytes(), xv.data(), xv.size() * 4);
  auto float_out = qrt::run_reference(g, {x});
  REQUIRE(float_out.is_ok());
  const float* yf = reinterpret_cast<const float*>((*float_out)[0].bytes());
  double previous_mse = 1e30;
  for (const char* spec : {"quantize-weights{bits=i4}", "quantize-weights{bits=i4 block=64}", "quantize-weights{bits=i4 block=32}",
                           "quantize-weights{bits=i4 block=32 search=mse}", "quantize-weights{bits=i8}"}) {
    CAPTURE(spec);
    std::vector<std::string> report;
    const qrt::Graph out = run_pipeline(g, spec, report);
    const double mse = logged_mse(report);
    CHECK(mse < previous_mse);  // each spec is finer than the one before
    previous_mse = mse;
    auto q = qrt::run_reference(out, {x});
    REQUIRE_MESSAGE(q.is_ok(), q.status().to_string());
    const float* yq = reinterpret_cast<const float*>((*q)[0].bytes());
    // |y - yq| <= sum_k |x_k| * |w - wq| <= sqrt(K * sum x^2) * sqrt(K * mse) roughly; check a
    // bound a wrong layout or scale would break by orders of magnitude.
    for (int64_t i = 0; i < m * n; ++i) CHECK(std::fabs(yf[i] - yq[i]) <= double(k) * std::sqrt(mse) * 3 + 1e-6);
  }
}

TEST_CASE("quantize-weights: symmetric zero points, blocks that do not divide K, convolution filters") {
  std::mt19937 rng(7);
  const std::vector<float> w = random_weights(rng, size_t(24 * 5));
  const qrt::Graph g = parse(matmul_graph(1, 24, 5, w, false));
  std::vector<std::string> report;
  qrt::Graph out = run_pipeline(g, "quantize-weights{bits=i4 symmetric=true block=8}", report);
  for (int64_t zp : weight_constant(out).type.element.zero_points) CHECK(zp == 0);
  out = run_pipeline(g, "quantize-weights{bits=u4 symmetric=true}", report);
  for (int64_t zp : weight_constant(out).type.element.zero_points) CHECK(zp == 8);
  CHECK(worst_half_steps(weight_constant(out), w, 24, 5, false) <= 1.0001);
  report.clear();
  out = run_pipeline(g, "quantize-weights{bits=i8 block=7}", report);
  CHECK(weight_constant(out).type.element.kind == qrt::ElementKind::kUniformPerAxis);
  CHECK(has_line(report, "block 7 does not divide K = 24: per column"));

  // A conv2d filter [O, I, KH, KW]: per output channel, axis 0.
  const std::vector<float> f = random_weights(rng, size_t(4 * 2 * 3 * 3));
  const std::string text =
      "func.func @main(%x: tensor<1x2x6x6xf32>) -> tensor<1x4x4x4xf32> {\n"
      "  %f = \"qrt.constant\"() {value = " + f32_hex(f) + " : tensor<4x2x3x3xf32>} : () -> tensor<4x2x3x3xf32>\n"
      "  %y = \"qrt.conv2d\"(%x, %f) {layout = \"NCHW\"} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>\n"
      "  return %y : tensor<1x4x4x4xf32>\n}\n";
  report.clear();
  out = run_pipeline(parse(text), "quantize-weights{bits=i4}", report);
  CHECK(has_line(report, "filter 4x2x3x3 -> i4, per output channel"));
  CHECK(qrt::print_graph(out).find("tensor<4x2x3x3x!quant.uniform<i4:f32:0, {") != std::string::npos);
}

TEST_CASE("quantize-weights: scales=f16 stores every scale as a normal f16 value, zero points following it") {
  // qopt --f16-scales: llama.cpp's Q4_0 form, which the dynamic-i8 kernel packs with 16-bit
  // scales. The scales round to f16 (to nearest; below 2^-14 raised to it), the weights are
  // quantized with the rounded scale, so they stay within half a step (plus the rounding).
  std::mt19937 rng(8);
  const int64_t k = 64, n = 6;
  std::vector<float> w = random_weights(rng, size_t(k * n));
  for (int64_t c = 0; c < n; ++c) w[size_t(5 * n + c)] = 3e-7f * float(c);  // column blocks are not all tiny
  for (int64_t r = 32; r < k; ++r) w[size_t(r * n + 1)] = 1e-6f * float(r % 3);  // one tiny block: scale 2^-14
  const qrt::Graph g = parse(matmul_graph(2, k, n, w, false));
  for (const char* spec : {"quantize-weights{bits=i4 block=32 symmetric=true scales=f16}", "quantize-weights{bits=u4 block=32 scales=f16}",
                           "quantize-weights{bits=i8 scales=f16 search=mse}"}) {
    const std::string name = spec;
    CAPTURE(name);
    std::vector<std::string> report;
    const qrt::Graph out = run_pipeline(g, spec, report);
    const Weights d = weight_constant(out);
    bool saw_least = false;
    for (double s : d.type.element.scales) {
      CHECK(s >= std::ldexp(1.0, -14));
      CHECK(double(qrt::f16_bits_to_float(qrt::f16_bits_from_double(s))) == s);
      saw_least = saw_least || s == std::ldexp(1.0, -14);
    }
    if (name.find("block=32 symmetric") != std::string::npos) CHECK(saw_least);
    // (The clipping search saturates outliers on purpose: no bound per weight there.)
    if (name.find("mse") == std::string::npos) CHECK(worst_half_steps(d, w, k, n, false) <= 1.02);
    // The text form keeps them.
    CHECK(qrt::print_graph(parse(qrt::print_graph(out))) == qrt::print_graph(out));
  }
  // Without the option the same weights keep f32 scales that f16 cannot hold.
  std::vector<std::string> report;
  const Weights d = weight_constant(run_pipeline(g, "quantize-weights{bits=i4 block=32 symmetric=true}", report));
  int not_f16 = 0;
  for (double s : d.type.element.scales) not_f16 += double(qrt::f16_bits_to_float(qrt::f16_bits_from_double(s))) != s;
  CHECK(not_f16 > 0);
}

TEST_CASE("quantize-weights: bf16 and f16 matmul weights and conv filters keep their type as the expressed type") {
  for (const char* kind : {"bf16", "f16"}) {
    CAPTURE(std::string(kind));
    const std::string k = kind;
    const std::string text =
        "func.func @main(%x: tensor<2x4x" + k + ">) -> tensor<2x3x" + k + "> {\n"
        "  %w = \"qrt.constant\"() {value = dense<[[0.5, -1.0, 0.1], [0.25, 0.75, -0.3], [-0.5, 1.0, 0.2], [0.05, -0.6, 0.9]]> : "
        "tensor<4x3x" + k + ">} : () -> tensor<4x3x" + k + ">\n"
        "  %y = \"qrt.matmul\"(%x, %w) : (tensor<2x4x" + k + ">, tensor<4x3x" + k + ">) -> tensor<2x3x" + k + ">\n"
        "  return %y : tensor<2x3x" + k + ">\n}\n";
    std::vector<std::string> report;
    const qrt::Graph out = run_pipeline(parse(text), "quantize-weights{bits=i8}", report);
    CHECK(has_line(report, "qrt.matmul %y: weights 4x3 -> i8, per column"));
    const qrt::Op& mm = out.ops.back();
    const qrt::ElementType& e = out.values[size_t(mm.operands[1])].type.element;
    REQUIRE(e.is_any_uniform());
    CHECK(qrt::float_kind_name(e.float_kind) == k);
    // Every scale is a value of the expressed type (as the kernels read it), and every weight
    // dequantizes, rounded to that type, within half a step (and the type's rounding) of its own.
    const float w[12] = {0.5f, -1.0f, 0.1f, 0.25f, 0.75f, -0.3f, -0.5f, 1.0f, 0.2f, 0.05f, -0.6f, 0.9f};
    auto weights = qrt::evaluate_op_reference(out, out.ops[size_t(out.values[size_t(mm.operands[1])].producer)], {});
    REQUIRE(weights.is_ok());
    for (size_t i = 0; i < 12; ++i) {
      const size_t j = i % 3;
      const double scale = e.scales[j];
      CHECK(qrt::round_to_float_kind(scale, e.float_kind) == scale);
      const double q = double(weights->int_at(i) - e.zero_points[j]);
      const double d = qrt::round_to_float_kind(double(float(q) * float(scale)), e.float_kind);
      const double bound = scale / 2 + std::fabs(double(w[i])) * (k == "bf16" ? 1.0 / 128 : 1.0 / 1024);
      CHECK(std::fabs(d - double(w[i])) <= bound);
    }
  }
  const std::string conv =
      "func.func @main(%x: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x2xbf16> {\n"
      "  %f = \"qrt.constant\"() {value = dense<0.5> : tensor<2x1x1x2xbf16>} : () -> tensor<2x1x1x2xbf16>\n"
      "  %y = \"qrt.conv2d\"(%x, %f) {layout = \"NHWC\"} : (tensor<1x4x4x2xbf16>, tensor<2x1x1x2xbf16>) -> tensor<1x4x4x2xbf16>\n"
      "  return %y : tensor<1x4x4x2xbf16>\n}\n";
  std::vector<std::string> report;
  const qrt::Graph out = run_pipeline(parse(conv), "quantize-weights", report);
  CHECK(has_line(report, "qrt.conv2d %y: filter 2x1x1x2 -> i8, per output channel"));
  const qrt::ElementType& fe = out.values[size_t(out.ops.back().operands[1])].type.element;
  REQUIRE(fe.kind == qrt::ElementKind::kUniformPerAxis);
  CHECK(fe.float_kind == qrt::FloatKind::kBF16);
  CHECK(fe.axis == 0);
  // A filter computed at run time is kept, with the reason.
  const std::string argument =
      "func.func @main(%x: tensor<1x4x4x2xf16>, %f: tensor<2x1x1x2xf16>) -> tensor<1x4x4x2xf16> {\n"
      "  %y = \"qrt.conv2d\"(%x, %f) {layout = \"NHWC\"} : (tensor<1x4x4x2xf16>, tensor<2x1x1x2xf16>) -> tensor<1x4x4x2xf16>\n"
      "  return %y : tensor<1x4x4x2xf16>\n}\n";
  report.clear();
  run_pipeline(parse(argument), "quantize-weights", report);
  CHECK(has_line(report, "qrt.conv2d %y: kept float: its filter is not an f16 constant"));
}

TEST_CASE("quantize-weights: weights that are not float constants are kept, bad options are refused") {
  const std::string text =
      "func.func @main(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {\n"
      "  %y = \"qrt.matmul\"(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>\n"
      "  return %y : tensor<2x3xf32>\n}\n";
  const qrt::Graph g = parse(text);
  std::vector<std::string> report;
  const qrt::Graph out = run_pipeline(g, "quantize-weights", report);
  CHECK(has_line(report, "qrt.matmul %y: kept float: its weights are not an f32 constant"));
  CHECK(qrt::print_graph(out) == qrt::print_graph(g));
  auto bad = qrt::passes::run_pipeline(g, "quantize-weights{bits=i3}", &report);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("bits") != std::string::npos);
  CHECK(bad.status().message().find("i3") != std::string::npos);
  bad = qrt::passes::run_pipeline(g, "quantize-weights{block=-4}", &report);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "pass 'quantize-weights': option block=-4 must be a block size >= 0 (0: per column)");
  bad = qrt::passes::run_pipeline(g, "quantize-weights{scales=f8}", &report);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("scales") != std::string::npos);
  CHECK(bad.status().message().find("f8") != std::string::npos);
  bad = qrt::passes::run_pipeline(g, "quantize-weights{group=32}", &report);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "pass 'quantize-weights' has no option 'group'");
}
