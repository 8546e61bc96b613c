// Tests: the quantization passes around propagation, text in -> text out — fake-quant
// conversion (bit-identical to the op it replaces), statistics to calibrated types, hybrid and
// reduce lowering, rescale folding, the integer-path check — and the pass manager's options,
// IR dumps and timing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "tests/passes/pass_test_util.h"
#include "jit/ref/reference.h"
#include "passes/calibrate.h"
#include "passes/pipeline.h"

namespace {

using pass_test::has_line;
using pass_test::parse;

using pass_test::run_pipeline;


// Runs g on the reference with one f32 input of `values` and returns the output bytes.
std::vector<uint8_t> reference_bytes(const qrt::Graph& g, const std::vector<int64_t>& dims, const std::vector<float>& values) {
  qrt::Tensor x = qrt::Tensor::zeros(qrt::Type::tensor(dims, qrt::ElementType::make_float(qrt::FloatKind::kF32)));
  std::memcpy(x.bytes(), values.data(), values.size() * 4);
  auto out = qrt::run_reference(g, {x});
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  const qrt::Tensor& y = (*out)[0];
  return std::vector<uint8_t>(y.bytes(), y.bytes() + y.byte_size());
}

qrt::ValueStats range(double lo, double hi) {
  qrt::ValueStats s;
  s.min = lo;
  s.max = hi;
  return s;
}

std::vector<float> ramp(size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * float(i) / float(n - 1);
  return v;
}

}  // namespace

TEST_CASE("fake-quant becomes qcast/dcast with the nudged type, bit-identical to the op") {
  const qrt::Graph g = parse(R"(func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = "qrt.fake_quant"(%x) {max = 1.5 : f64, min = -0.5 : f64, narrow_range = false, num_bits = 8 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = "qrt.fake_quant"(%y) {axis = 1 : i64, is_signed = true, max = [1.0, 2.0, 4.0], min = [-1.0, -2.0, -4.0], narrow_range = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %z : tensor<2x3xf32>
})");
  std::vector<std::string> report;
  const qrt::Graph out = run_pipeline(g, "fake-quant", report);
  const std::string text = qrt::print_graph(out);
  // [-0.5, 1.5] in u8: scale 2/255, zero point rne(0.5 / (2/255)) = rne(63.75) = 64.
  CHECK(text.find("-> tensor<2x3x!quant.uniform<u8:f32, 0.0078431372549019607:64>>") != std::string::npos);
  // narrow signed: [-127, 127], symmetric ranges give zero point 0 and scale max/127.
  CHECK(text.find("!quant.uniform<i8<-127:127>:f32:1, {0.0078740157480314959,0.015748031496062992,0.031496062992125984}>") !=
        std::string::npos);
  CHECK(text.find("fake_quant") == std::string::npos);
  CHECK(report[0].rfind("fake-quant: %y: qcast -> dcast through", 0) == 0);
  const std::vector<float> in = ramp(6, -5.0f, 5.0f);
  CHECK(reference_bytes(g, {2, 3}, in) == reference_bytes(out, {2, 3}, in));
}

TEST_CASE("fake_quant with a range that excludes 0 is refused by the verifier") {
  auto g = qrt::parse_graph(R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "qrt.fake_quant"(%x) {max = 2.0 : f64, min = 0.5 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
})");
  REQUIRE_FALSE(g.is_ok());
  CHECK(g.status().message().find("'qrt.fake_quant' op range [0.500000, 2.000000] must be finite and contain 0") != std::string::npos);
}

TEST_CASE("statistics: insert_stats records and widens; calibrate keeps region boundaries only") {
  const qrt::Graph g = parse(R"(func.func @main(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
  %w = "qrt.constant"() {value = dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %m = "qrt.matmul"(%x, %w) : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
  %r = "qrt.relu"(%m) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %r : tensor<1x2xf32>
})");
  std::map<int, qrt::ValueStats> stats;
  stats[g.inputs[0]] = range(-1.0, 1.0);
  stats[g.ops[1].results[0]] = range(-2.0, 3.0);
  stats[g.ops[2].results[0]] = range(0.0, 3.0);
  stats[g.ops[0].results[0]] = range(0.0, 1.0);  // a constant: weights get their own rule, no stats
  qrt::Graph annotated = qrt::passes::insert_stats(g, stats);
  std::string text = qrt::print_graph(annotated);
  CHECK(std::count(text.begin(), text.end(), '\n') == 9);  // 3 stats ops added
  CHECK(text.find("%r = \"quant.stats\"(%r_raw) {layerStats = dense<[0.000000e+00, 3.000000e+00]>") != std::string::npos);
  // A second batch widens the existing statistics instead of adding ops.
  std::map<int, qrt::ValueStats> more;
  more[annotated.inputs[0]] = range(-4.0, 0.5);
  annotated = qrt::passes::insert_stats(annotated, more);
  text = qrt::print_graph(annotated);
  CHECK(text.find("%x_stats = \"quant.stats\"(%x) {layerStats = dense<[-4.000000e+00, 1.000000e+00]>") != std::string::npos);
  std::vector<std::string> report;
  const std::string cal = qrt::print_graph(run_pipeline(annotated, "calibrate", report));
  CHECK(cal.find("%x_q = \"quant.qcast\"(%x) : (tensor<1x4xf32>) -> tensor<1x4x!quant.calibrated<f32<-4.000000e+00:1.000000e+00>>>") !=
        std::string::npos);
  CHECK(cal.find("%r_q = \"quant.qcast\"(%r_raw)") != std::string::npos);
  CHECK(cal.find("quant.stats") == std::string::npos);
  CHECK(has_line(report, "calibrate: %m_raw: inside a quantization region"));
  // The annotated float graph still runs (stats ops are identities).
  const std::vector<float> in = {1, -1, 2, 0.5};
  CHECK(reference_bytes(g, {1, 4}, in) == reference_bytes(annotated, {1, 4}, in));
}

TEST_CASE("lower-hybrid: float x dcast(quantized weights) becomes a hybrid matmul, bit-identical") {
  const qrt::Graph g = parse(R"(func.func @main(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %wq = "qrt.constant"() {value = dense<[[1, -2, 3], [4, 5, -6]]> : tensor<2x3xi8>} : () -> tensor<2x3x!quant.uniform<i8:f32:0, {0.5,0.25}>>
  %wd = "quant.dcast"(%wq) : (tensor<2x3x!quant.uniform<i8:f32:0, {0.5,0.25}>>) -> tensor<2x3xf32>
  %wt = "qrt.transpose"(%wd) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = "qrt.matmul"(%x, %wt) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
})");
  std::vector<std::string> report;
  const qrt::Graph out = run_pipeline(g, "lower-hybrid", report);
  const std::string text = qrt::print_graph(out);
  CHECK(text.find("\"qrt.transpose\"(%wq)") != std::string::npos);
  CHECK(text.find("(tensor<2x3xf32>, tensor<3x2x!quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01}>>) -> tensor<2x2xf32>") !=
        std::string::npos);
  CHECK(text.find("quant.dcast") == std::string::npos);
  CHECK(has_line(report, "lower-hybrid: qrt.matmul %y: hybrid, f32 x"));
  const std::vector<float> in = ramp(6, -3.0f, 2.5f);
  CHECK(reference_bytes(g, {2, 3}, in) == reference_bytes(out, {2, 3}, in));
}

TEST_CASE("lower-hybrid{mode=dynamic-range}: explicit per-call activation quantization, close to the hybrid result") {
  const std::string text = R"(func.func @main(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %wq = "qrt.constant"() {value = dense<[[100, -20, 3], [-127, 5, 60]]> : tensor<2x3xi8>} : () -> tensor<2x3x!quant.uniform<i8:f32:0, {0.01,0.02}>>
  %wd = "quant.dcast"(%wq) : (tensor<2x3x!quant.uniform<i8:f32:0, {0.01,0.02}>>) -> tensor<2x3xf32>
  %wt = "qrt.transpose"(%wd) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = "qrt.constant"() {value = dense<[0.5, -0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "qrt.matmul"(%x, %wt, %b) : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
})";
  const qrt::Graph g = parse(text);
  std::vector<std::string> report;
  const qrt::Graph dyn = run_pipeline(g, "lower-hybrid{mode=dynamic-range}", report);
  const std::string printed = qrt::print_graph(dyn);
  CHECK(printed.find("\"qrt.dynamic_quantize\"(%x)") != std::string::npos);
  CHECK(printed.find("-> tensor<2x2x!quant.uniform<i32:f32, 1.000000e+00>>") != std::string::npos);
  CHECK(has_line(report, "lower-hybrid: qrt.matmul %y: dynamic range, x quantized to u8 per call"));
  // Against the float (dequantize-then-matmul) result: within the activation quantization
  // error, |x| step / 2 per term times Σ|w|.
  const std::vector<float> in = ramp(6, -1.0f, 2.0f);
  const auto a = reference_bytes(g, {2, 3}, in), b = reference_bytes(dyn, {2, 3}, in);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); i += 4) {
    float fa, fb;
    std::memcpy(&fa, &a[i], 4);
    std::memcpy(&fb, &b[i], 4);
    CHECK(std::abs(fa - fb) <= 0.5f * (3.0f / 255.0f) * 3.7f + 1e-5f);
  }
  // Asymmetric weights keep the weight-only form, and the log says why.
  std::string asym = text;
  for (size_t at; (at = asym.find("{0.01,0.02}>")) != std::string::npos;) asym.replace(at, 12, "{0.01:1,0.02}>");
  report.clear();
  const std::string kept = qrt::print_graph(run_pipeline(parse(asym), "lower-hybrid{mode=dynamic-range}", report));
  CHECK(kept.find("dynamic_quantize") == std::string::npos);
  CHECK(has_line(report, "kept weight-only: dynamic range needs symmetric weights (zero point 0)"));
}

TEST_CASE("lower-hybrid{mode=dynamic-range} on matmuls already hybrid (quantize-weights, MatMulNBits): per column yes, blocks no") {
  const std::string text = R"(func.func @main(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %wq = "qrt.constant"() {value = dense<[[100, -20], [3, -127], [5, 60], [7, -9]]> : tensor<4x2xi8>} : () -> tensor<4x2x!quant.uniform<i8:f32:1, {0.01,0.02}>>
  %y = "qrt.matmul"(%x, %wq) : (tensor<2x4xf32>, tensor<4x2x!quant.uniform<i8:f32:1, {0.01,0.02}>>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
})";
  const qrt::Graph g = parse(text);
  std::vector<std::string> report;
  // Weight-only mode leaves a hybrid matmul as it is.
  CHECK(qrt::print_graph(run_pipeline(g, "lower-hybrid", report)) == qrt::print_graph(g));
  report.clear();
  const qrt::Graph dyn = run_pipeline(g, "lower-hybrid{mode=dynamic-range}", report);
  CHECK(qrt::print_graph(dyn).find("\"qrt.dynamic_quantize\"(%x)") != std::string::npos);
  CHECK(has_line(report, "lower-hybrid: qrt.matmul %y: dynamic range, x quantized to u8 per call"));
  const std::vector<float> in = ramp(8, -1.0f, 2.0f);
  const auto a = reference_bytes(g, {2, 4}, in), b = reference_bytes(dyn, {2, 4}, in);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); i += 4) {
    float fa, fb;
    std::memcpy(&fa, &a[i], 4);
    std::memcpy(&fb, &b[i], 4);
    CHECK(std::abs(fa - fb) <= 0.5f * (3.0f / 255.0f) * 4.32f + 1e-5f);  // step / 2 · the largest column Σ|w|
  }
  // Blocks along K have no single scale per column: kept weight-only, with the reason.
  const std::string blocks = R"(func.func @main(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %wq = "qrt.constant"() {value = dense<[[100, -20], [3, -127], [5, 60], [7, -9]]> : tensor<4x2xi8>} : () -> tensor<4x2x!quant.uniform<i8:f32:{0:2, 1:1}, {{0.01, 0.02}, {0.03, 0.04}}>>
  %y = "qrt.matmul"(%x, %wq) : (tensor<2x4xf32>, tensor<4x2x!quant.uniform<i8:f32:{0:2, 1:1}, {{0.01, 0.02}, {0.03, 0.04}}>>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
})";
  report.clear();
  const std::string kept = qrt::print_graph(run_pipeline(parse(blocks), "lower-hybrid{mode=dynamic-range}", report));
  CHECK(kept.find("dynamic_quantize") == std::string::npos);
  CHECK(has_line(report, "kept weight-only: dynamic range needs one scale per column, not blocks along K"));
}

TEST_CASE("lower-hybrid{mode=dynamic-i8}: blocks and zero points welcome, i8 per row and block, close to the hybrid result") {
  const std::string text = R"(func.func @main(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %wq = "qrt.constant"() {value = dense<[[1, -2], [3, -8], [5, 6], [7, -1]]> : tensor<4x2xi4>} : () -> tensor<4x2x!quant.uniform<i4:f32:{0:2, 1:1}, {{0.1:1, 0.2}, {0.3, 0.4:-2}}>>
  %y = "qrt.matmul"(%x, %wq) : (tensor<2x4xf32>, tensor<4x2x!quant.uniform<i4:f32:{0:2, 1:1}, {{0.1:1, 0.2}, {0.3, 0.4:-2}}>>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
})";
  const qrt::Graph g = parse(text);
  std::vector<std::string> report;
  const qrt::Graph dyn = run_pipeline(g, "lower-hybrid{mode=dynamic-i8}", report);
  CHECK(qrt::print_graph(dyn).find("activations = \"dynamic_i8\"") != std::string::npos);
  CHECK(has_line(report, "lower-hybrid: qrt.matmul %y: dynamic i8, x quantized to i8 per row and block of K"));
  // The form survives a second run (no double lowering) and the binary form.
  report.clear();
  CHECK(qrt::print_graph(run_pipeline(dyn, "lower-hybrid{mode=dynamic-range}", report)) == qrt::print_graph(dyn));
  const std::vector<float> in = ramp(8, -1.0f, 2.0f);
  const auto a = reference_bytes(g, {2, 4}, in), b = reference_bytes(dyn, {2, 4}, in);
  REQUIRE(a.size() == b.size());
  CHECK(a != b);  // a different contract: the activations are rounded to 255 steps per block
  for (size_t i = 0; i < a.size(); i += 4) {
    float fa, fb;
    std::memcpy(&fa, &a[i], 4);
    std::memcpy(&fb, &b[i], 4);
    CHECK(std::abs(fa - fb) <= 0.5f * (2.0f / 127.0f) * 5.6f + 1e-5f);  // step / 2 · the largest Σ|w|
  }
  // 16-bit weights cannot (the block sums are bounded for 8-bit storage): kept weight-only, with the reason.
  const std::string wide = R"(func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %wq = "qrt.constant"() {value = dense<[[1, -2], [3, -8]]> : tensor<2x2xi16>} : () -> tensor<2x2x!quant.uniform<i16:f32:1, {0.1, 0.2}>>
  %y = "qrt.matmul"(%x, %wq) : (tensor<2x2xf32>, tensor<2x2x!quant.uniform<i16:f32:1, {0.1, 0.2}>>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
})";
  report.clear();
  const std::string kept = qrt::print_graph(run_pipeline(parse(wide), "lower-hybrid{mode=dynamic-i8}", report));
  CHECK(has_line(report, "kept weight-only: dynamic i8 needs weights of at most 8 bits"));
  // bf16 and f16 activations are quantized as their exact f32 values; f64 ones are kept.
  auto typed = [](const std::string& f) {
    const std::string w = "tensor<2x2x!quant.uniform<i8:" + f + ":1, {0.5, 0.25}>>";
    return "func.func @main(%x: tensor<2x2x" + f + ">) -> tensor<2x2x" + f + "> {\n"
           "  %wq = \"qrt.constant\"() {value = dense<[[1, -2], [3, -8]]> : tensor<2x2xi8>} : () -> " + w + "\n"
           "  %y = \"qrt.matmul\"(%x, %wq) : (tensor<2x2x" + f + ">, " + w + ") -> tensor<2x2x" + f + ">\n"
           "  return %y : tensor<2x2x" + f + ">\n}";
  };
  for (const char* f : {"bf16", "f16"}) {
    report.clear();
    CAPTURE(f);
    CHECK(qrt::print_graph(run_pipeline(parse(typed(f)), "lower-hybrid{mode=dynamic-i8}", report)).find("activations = \"dynamic_i8\"") !=
          std::string::npos);
  }
  report.clear();
  CHECK(qrt::print_graph(run_pipeline(parse(typed("f64")), "lower-hybrid{mode=dynamic-i8}", report)).find("dynamic_i8") ==
        std::string::npos);
  CHECK(has_line(report, "kept weight-only: dynamic i8 needs f32, bf16 or f16 activations"));
}

TEST_CASE("lower-reduce: a QDQ mean accumulates in i32 on stored values, and says so") {
  const qrt::Graph g = parse(R"(func.func @main(%x: tensor<1x4x2xf32>) -> tensor<1x2xf32> {
  %xq = "quant.qcast"(%x) : (tensor<1x4x2xf32>) -> tensor<1x4x2x!quant.uniform<u8:f32, 0.1:5>>
  %xd = "quant.dcast"(%xq) : (tensor<1x4x2x!quant.uniform<u8:f32, 0.1:5>>) -> tensor<1x4x2xf32>
  %m = "qrt.mean"(%xd) {axes = [1]} : (tensor<1x4x2xf32>) -> tensor<1x2xf32>
  %mq = "quant.qcast"(%m) : (tensor<1x2xf32>) -> tensor<1x2x!quant.uniform<u8:f32, 0.05:10>>
  %y = "quant.dcast"(%mq) : (tensor<1x2x!quant.uniform<u8:f32, 0.05:10>>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
})");
  std::vector<std::string> report;
  const qrt::Graph out = run_pipeline(g, "lower-reduce", report);
  const std::string text = qrt::print_graph(out);
  CHECK(text.find("%mq = \"qrt.mean\"(%xq) {accumulator = \"i32\", axes = [1]}") != std::string::npos);
  CHECK(has_line(report, "sums !quant.uniform<u8:f32, 1.000000e-01:5> in i32, narrows once"));
  // Within one step of the float path on every element (one rounding instead of two).
  const std::vector<float> in = ramp(8, 0.0f, 2.0f);
  const auto a = reference_bytes(g, {1, 4, 2}, in), b = reference_bytes(out, {1, 4, 2}, in);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); i += 4) {
    float fa, fb;
    std::memcpy(&fa, &a[i], 4);
    std::memcpy(&fb, &b[i], 4);
    CHECK(std::abs(fa - fb) <= 0.05f + 1e-6f);
  }
  // The verifier enforces the accumulator's contract.
  auto bad = qrt::parse_graph(R"(func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %m = "qrt.mean"(%x) {accumulator = "i32", axes = [0]} : (tensor<4xf32>) -> tensor<f32>
  return %m : tensor<f32>
})");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("attribute 'accumulator' must be \"i32\" on a quantized mean") != std::string::npos);
}

TEST_CASE("rescale folding: dcast -> qcast becomes one requantize, chains collapse, same types vanish") {
  const qrt::Graph g = parse(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "quant.qcast"(%x) : (tensor<4xf32>) -> tensor<4x!quant.uniform<u8:f32, 0.5:3>>
  %ad = "quant.dcast"(%a) : (tensor<4x!quant.uniform<u8:f32, 0.5:3>>) -> tensor<4xf32>
  %b = "quant.qcast"(%ad) : (tensor<4xf32>) -> tensor<4x!quant.uniform<u8:f32, 0.25:1>>
  %bd = "quant.dcast"(%b) : (tensor<4x!quant.uniform<u8:f32, 0.25:1>>) -> tensor<4xf32>
  %c = "quant.qcast"(%bd) : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.125>>
  %cd = "quant.dcast"(%c) : (tensor<4x!quant.uniform<i8:f32, 0.125>>) -> tensor<4xf32>
  %d = "quant.qcast"(%cd) : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.125>>
  %y = "quant.dcast"(%d) : (tensor<4x!quant.uniform<i8:f32, 0.125>>) -> tensor<4xf32>
  return %y : tensor<4xf32>
})");
  std::vector<std::string> report;
  const std::string text = qrt::print_graph(run_pipeline(g, "fold-qdq", report));
  CHECK(text.find("%c = \"qrt.requantize\"(%a)") != std::string::npos);  // a -> b -> c is one rescale
  CHECK(text.find("%y = \"quant.dcast\"(%c)") != std::string::npos);    // d had c's type
  CHECK(has_line(report, "dcast -> qcast %c: one requantize from !quant.uniform<u8:f32, 5.000000e-01:3> (a requantize chain collapsed)"));
  CHECK(has_line(report, "dcast -> qcast %d: the same type, removed"));
}

TEST_CASE("check-integer names every float op left between integer kernels") {
  const qrt::Graph g = parse(R"(func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = "quant.qcast"(%x) : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<u8:f32, 0.5>>
  %r = "qrt.relu"(%a) : (tensor<1x4x!quant.uniform<u8:f32, 0.5>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.5>>
  %rd = "quant.dcast"(%r) : (tensor<1x4x!quant.uniform<u8:f32, 0.5>>) -> tensor<1x4xf32>
  %s = "qrt.softmax"(%rd) {axis = 1 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %sq = "quant.qcast"(%s) : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<u8:f32, 3.90625E-3>>
  %y = "quant.dcast"(%sq) : (tensor<1x4x!quant.uniform<u8:f32, 3.90625E-3>>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
})");
  std::vector<std::string> report;
  run_pipeline(g, "check-integer", report);
  CHECK(has_line(report, "check-integer: %rd -> qrt.softmax %s -> quant.qcast: runs in float between integer kernels"));
  CHECK(has_line(report, "check-integer: 1 integer kernel(s), 2 quantize(s), 1 dequantize(s) of integer results, 1 float path(s)"));
}

TEST_CASE("the pass manager: options, unknown names, the IR after every pass, timing") {
  const qrt::Graph g = parse(R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "qrt.fake_quant"(%x) {max = 1.0 : f64, min = -1.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
})");
  std::vector<std::string> report;
  qrt::passes::PipelineOptions options;
  options.report = &report;
  options.print_ir_after_all = true;
  options.timing = true;
  auto out = qrt::passes::run_pipeline(g, "fake-quant,fold-qdq", options);
  REQUIRE(out.is_ok());
  CHECK(has_line(report, "// -----// IR after fake-quant //----- //"));
  CHECK(has_line(report, "// -----// IR after fold-qdq //----- //"));
  CHECK(has_line(report, "timing: fake-quant"));
  CHECK(has_line(report, "timing: fold-qdq"));
  for (const auto& [spec, message] : std::vector<std::pair<std::string, std::string>>{
           {"fold-qdq{x=1}", "pass 'fold-qdq' has no option 'x'"},
           {"propagate{activations}", "pass 'propagate': option 'activations' must be key=value"},
           {"propagate{activations=u8", "pass 'propagate': options opened with '{' are not closed"},
       }) {
    CAPTURE(spec);
    auto bad = qrt::passes::run_pipeline(g, spec);
    REQUIRE_FALSE(bad.is_ok());
    CHECK(bad.status().message() == message);
  }
}
