// Tests: QDQ folding, text in -> text out: a dcast -> matmul(+bias) -> relu -> qcast region
// becomes an integer matmul and relu; a reshape runs on stored values; regions it cannot prove
// (a bias whose scale is not s_x * s_w, a requantizing max pool) stay in float and say why.
#include <doctest/doctest.h>

#include <string>

#include <random>

#include "ir/text_format.h"
#include "jit/ref/reference.h"
#include "passes/pipeline.h"

namespace {

const char* kRegion = R"(func.func @main(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %xq = "quant.qcast"(%x) : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<u8:f32, 0.5:10>>
  %xd = "quant.dcast"(%xq) : (tensor<2x3x!quant.uniform<u8:f32, 0.5:10>>) -> tensor<2x3xf32>
  %wq = "qrt.constant"() {value = dense<[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]> : tensor<3x4xi8>} : () -> tensor<3x4x!quant.uniform<i8:f32, 0.25>>
  %wd = "quant.dcast"(%wq) : (tensor<3x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<3x4xf32>
  %bq = "qrt.constant"() {value = dense<[1, 2, 3, 4]> : tensor<4xi32>} : () -> tensor<4x!quant.uniform<i32:f32, BIAS_SCALE>>
  %bd = "quant.dcast"(%bq) : (tensor<4x!quant.uniform<i32:f32, BIAS_SCALE>>) -> tensor<4xf32>
  %m = "qrt.matmul"(%xd, %wd) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %a = "qrt.add"(%m, %bd) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = "qrt.relu"(%a) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %yq = "quant.qcast"(%r) : (tensor<2x4xf32>) -> tensor<2x4x!quant.uniform<u8:f32, 0.125>>
  %y = "quant.dcast"(%yq) : (tensor<2x4x!quant.uniform<u8:f32, 0.125>>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
})";

std::string with_bias_scale(const std::string& scale) {
  std::string s = kRegion;
  for (size_t at; (at = s.find("BIAS_SCALE")) != std::string::npos;) s.replace(at, 10, scale);
  return s;
}

std::string run(const std::string& text, std::vector<std::string>* report = nullptr) {
  auto g = qrt::parse_graph(text);
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  auto out = qrt::passes::run_pipeline(*g, "fold-qdq", report);
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  return qrt::print_graph(*out);
}

}  // namespace

TEST_CASE("matmul + bias add + relu between dcast and qcast becomes integer ops") {
  std::vector<std::string> report;
  const std::string out = run(with_bias_scale("1.250000e-01"), &report);  // 0.5 * 0.25
  CHECK(out.find("\"qrt.matmul\"(%xq, %wq, %bq)") != std::string::npos);
  CHECK(out.find("-> tensor<2x4x!quant.uniform<u8:f32, 1.250000e-01>>") != std::string::npos);
  // The output's zero point is its storage minimum: the relu is implied by the bounds.
  CHECK(out.find("qrt.relu") == std::string::npos);
  CHECK(out.find("qrt.add") == std::string::npos);
  CHECK(out.find("%xd") == std::string::npos);  // the float region is gone
  REQUIRE(report.size() >= 2);
  CHECK(report[0] == "fold-qdq: 1 region(s) folded");
  CHECK(report[1].find("qrt.matmul + qrt.relu -> %yq: integer accumulation") != std::string::npos);
  CHECK(report[1].find("qrt.relu folded into the output bounds") != std::string::npos);
}

TEST_CASE("a relu the output bounds do not imply stays as a quantized relu") {
  std::string text = with_bias_scale("1.250000e-01");
  for (size_t at; (at = text.find("0.125>>")) != std::string::npos;) text.replace(at, 7, "0.125:10>>");
  std::vector<std::string> report;
  const std::string out = run(text, &report);
  CHECK(out.find("\"qrt.relu\"(%yq_int)") != std::string::npos);
  REQUIRE(report.size() >= 2);
  CHECK(report[1].find("folded into the output bounds") == std::string::npos);
}

TEST_CASE("a bias whose scale is not s_x * s_w keeps the region in float, with the reason") {
  std::vector<std::string> report;
  const std::string out = run(with_bias_scale("1.000000e-01"), &report);
  CHECK(out.find("qrt.add") != std::string::npos);
  bool said = false;
  for (const auto& line : report) said = said || line.find("the bias scale is not s_x * s_w") != std::string::npos;
  CHECK(said);
}

TEST_CASE("shape ops run on stored values only when the types agree") {
  const std::string same = R"(func.func @main(%x: tensor<2x3x!quant.uniform<i8:f32, 0.5>>) -> tensor<6x!quant.uniform<i8:f32, 0.5>> {
  %d = "quant.dcast"(%x) : (tensor<2x3x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x3xf32>
  %r = "qrt.reshape"(%d) : (tensor<2x3xf32>) -> tensor<6xf32>
  %q = "quant.qcast"(%r) : (tensor<6xf32>) -> tensor<6x!quant.uniform<i8:f32, 0.5>>
  return %q : tensor<6x!quant.uniform<i8:f32, 0.5>>
})";
  CHECK(run(same) == "func.func @main(%x: tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01>>) -> "
                     "tensor<6x!quant.uniform<i8:f32, 5.000000e-01>> {\n"
                     "  %q = \"qrt.reshape\"(%x) : (tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01>>) -> "
                     "tensor<6x!quant.uniform<i8:f32, 5.000000e-01>>\n"
                     "  return %q : tensor<6x!quant.uniform<i8:f32, 5.000000e-01>>\n}\n");
  const std::string rescaled = R"(func.func @main(%x: tensor<2x3x!quant.uniform<i8:f32, 0.5>>) -> tensor<6x!quant.uniform<i8:f32, 0.25>> {
  %d = "quant.dcast"(%x) : (tensor<2x3x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x3xf32>
  %r = "qrt.reshape"(%d) : (tensor<2x3xf32>) -> tensor<6xf32>
  %q = "quant.qcast"(%r) : (tensor<6xf32>) -> tensor<6x!quant.uniform<i8:f32, 0.25>>
  return %q : tensor<6x!quant.uniform<i8:f32, 0.25>>
})";
  CHECK(run(rescaled).find("quant.dcast") != std::string::npos);  // a rescale stays explicit
}

TEST_CASE("unknown pass names are refused with the list of passes") {
  auto g = qrt::parse_graph(with_bias_scale("1.250000e-01"));
  REQUIRE(g.is_ok());
  auto out = qrt::passes::run_pipeline(*g, "fold-pad,fold-everything");
  REQUIRE_FALSE(out.is_ok());
  CHECK(out.status().message() == "unknown pass 'fold-everything' (passes: calibrate, fake-quant, propagate, lower-hybrid, quantize-weights, lower-reduce, fold-pad, fold-qdq, expand-batch-groups, to-nhwc, fuse-clamp, activation-storage, check-integer)");
}

TEST_CASE("add and mul of two dequantized values (and a relu after them) become quantized element-wise ops") {
  const char* text = R"(func.func @main(%x: tensor<2x3xf32>, %z: tensor<3xf32>) -> tensor<2x3xf32> {
  %xq = "quant.qcast"(%x) : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32, 0.5:1>>
  %xd = "quant.dcast"(%xq) : (tensor<2x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2x3xf32>
  %zq = "quant.qcast"(%z) : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.25>>
  %zd = "quant.dcast"(%zq) : (tensor<3x!quant.uniform<i8:f32, 0.25>>) -> tensor<3xf32>
  %s = "qrt.add"(%xd, %zd) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = "qrt.relu"(%s) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %rq = "quant.qcast"(%r) : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32, 0.75:-5>>
  %rd = "quant.dcast"(%rq) : (tensor<2x3x!quant.uniform<i8:f32, 0.75:-5>>) -> tensor<2x3xf32>
  %p = "qrt.mul"(%rd, %zd) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %pq = "quant.qcast"(%p) : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32, 0.125>>
  %y = "quant.dcast"(%pq) : (tensor<2x3x!quant.uniform<i8:f32, 0.125>>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
})";
  std::vector<std::string> report;
  const std::string out = run(text, &report);
  CHECK(out.find("%rq_int = \"qrt.add\"(%xq, %zq)") != std::string::npos);
  CHECK(out.find("%rq = \"qrt.relu\"(%rq_int)") != std::string::npos);  // zero point -5 > -128: kept
  CHECK(out.find("%pq = \"qrt.mul\"(%rq, %zq)") != std::string::npos);
  CHECK(out.find("%xd") == std::string::npos);
  REQUIRE(report.size() >= 3);
  CHECK(report[0] == "fold-qdq: 2 region(s) folded");
  CHECK(report[1].find("qrt.add + qrt.relu -> %rq: quantized element-wise op") != std::string::npos);
}

TEST_CASE("a concatenation of dequantized values of the qcast's type runs on stored values") {
  auto text = [](const std::string& b_scale) {
    const std::string bt = "tensor<2x1x!quant.uniform<u8:f32, " + b_scale + ":4>>";
    return "func.func @main(%a: tensor<2x3x!quant.uniform<u8:f32, 0.5:4>>, %b: " + bt +
           ") -> tensor<2x4x!quant.uniform<u8:f32, 0.5:4>> {\n"
           "  %da = \"quant.dcast\"(%a) : (tensor<2x3x!quant.uniform<u8:f32, 0.5:4>>) -> tensor<2x3xf32>\n"
           "  %db = \"quant.dcast\"(%b) : (" + bt + ") -> tensor<2x1xf32>\n"
           "  %c = \"qrt.concat\"(%da, %db) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>\n"
           "  %q = \"quant.qcast\"(%c) : (tensor<2x4xf32>) -> tensor<2x4x!quant.uniform<u8:f32, 0.5:4>>\n"
           "  return %q : tensor<2x4x!quant.uniform<u8:f32, 0.5:4>>\n}\n";
  };
  const std::string folded = run(text("0.5"));
  CHECK(folded.find("\"qrt.concat\"(%a, %b)") != std::string::npos);
  CHECK(folded.find("quant.dcast") == std::string::npos);
  // Another scale on one side: a requantization, not identical; the float form stays.
  CHECK(run(text("0.25")).find("quant.dcast") != std::string::npos);
}

TEST_CASE("a nearest resize between QDQ pairs of one type runs on stored values") {
  const std::string text = R"(func.func @main(%x: tensor<1x2x3x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<1x2x6x6x!quant.uniform<i8:f32, 0.5:1>> {
  %d = "quant.dcast"(%x) : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<1x2x3x3xf32>
  %r = "qrt.resize"(%d) {nearest_mode = "floor"} : (tensor<1x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  %q = "quant.qcast"(%r) : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6x!quant.uniform<i8:f32, 0.5:1>>
  return %q : tensor<1x2x6x6x!quant.uniform<i8:f32, 0.5:1>>
})";
  const std::string folded = run(text);
  CHECK(folded.find("\"qrt.resize\"(%x)") != std::string::npos);
  CHECK(folded.find("quant.dcast") == std::string::npos);
}

TEST_CASE("slices, gathers, broadcasts and zero pads between QDQ pairs of one type run on stored values, identically") {
  // Each op between dcast and qcast of one type: folded ones leave no dcast, and the reference
  // gives the same bytes before and after the pass on random stored values.
  const std::string q = "!quant.uniform<i8:f32, 0.5:-3>";
  struct Case {
    std::string op, attrs, out_dims;
    bool folds;
  };
  const Case cases[] = {
      {"qrt.slice", "{ends = [2, 5], starts = [0, 1], steps = [1, 2]}", "2x2", true},
      {"qrt.broadcast_to", "", "3x2x6", true},
      {"qrt.pad", "{pads = [1, 0, 0, 2]}", "3x8", true},
      {"qrt.pad", "{pads = [1, 0, 0, 2], value = 0.0 : f64}", "3x8", true},
      {"qrt.pad", "{pads = [1, 0, 0, 2], value = 1.5 : f64}", "3x8", false},  // a non-zero fill stays in float
      {"qrt.resize", "{mode = \"linear\"}", "4x12", false},                   // interpolation stays in float
  };
  std::mt19937 rng(3);
  for (const Case& c : cases) {
    const std::string ft = "tensor<" + c.out_dims + "xf32>", qt = "tensor<" + c.out_dims + "x" + q + ">";
    const std::string text = "func.func @main(%x: tensor<2x6x" + q + ">) -> " + qt + " {\n  %d = \"quant.dcast\"(%x) : (tensor<2x6x" + q +
                             ">) -> tensor<2x6xf32>\n  %r = \"" + c.op + "\"(%d) " + c.attrs + " : (tensor<2x6xf32>) -> " + ft +
                             "\n  %q = \"quant.qcast\"(%r) : (" + ft + ") -> " + qt + "\n  return %q : " + qt + "\n}\n";
    CAPTURE(text);
    const std::string folded = run(text);
    CHECK((folded.find("quant.dcast") == std::string::npos) == c.folds);
    auto before = qrt::parse_graph(text), after = qrt::parse_graph(folded);
    REQUIRE((before.is_ok() && after.is_ok()));
    qrt::Tensor x = qrt::Tensor::zeros(before->values[size_t(before->inputs[0])].type);
    for (size_t i = 0; i < size_t(x.num_elements()); ++i) x.set_int(i, int64_t(rng() % 256) - 128);
    auto a = qrt::run_reference(*before, {x.clone()}), b = qrt::run_reference(*after, {x.clone()});
    REQUIRE((a.is_ok() && b.is_ok()));
    CHECK(std::vector<uint8_t>(a->at(0).bytes(), a->at(0).bytes() + a->at(0).byte_size()) ==
          std::vector<uint8_t>(b->at(0).bytes(), b->at(0).bytes() + b->at(0).byte_size()));
  }
  // A gather (indices a second operand) and gather_elements keep their indices.
  const std::string gather = "func.func @main(%x: tensor<4x3x" + q + ">, %i: tensor<2xi64>) -> tensor<2x3x" + q + "> {\n"
                             "  %d = \"quant.dcast\"(%x) : (tensor<4x3x" + q + ">) -> tensor<4x3xf32>\n"
                             "  %g = \"qrt.gather\"(%d, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>\n"
                             "  %q = \"quant.qcast\"(%g) : (tensor<2x3xf32>) -> tensor<2x3x" + q + ">\n  return %q : tensor<2x3x" + q + ">\n}\n";
  CHECK(run(gather).find("\"qrt.gather\"(%x, %i)") != std::string::npos);
  const std::string elements = "func.func @main(%x: tensor<4x3x" + q + ">, %i: tensor<2x3xi64>) -> tensor<2x3x" + q + "> {\n"
                               "  %d = \"quant.dcast\"(%x) : (tensor<4x3x" + q + ">) -> tensor<4x3xf32>\n"
                               "  %g = \"qrt.gather_elements\"(%d, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>\n"
                               "  %q = \"quant.qcast\"(%g) : (tensor<2x3xf32>) -> tensor<2x3x" + q + ">\n  return %q : tensor<2x3x" + q + ">\n}\n";
  CHECK(run(elements).find("\"qrt.gather_elements\"(%x, %i)") != std::string::npos);
  const std::string nd = "func.func @main(%x: tensor<4x3x" + q + ">, %i: tensor<2x1xi64>) -> tensor<2x3x" + q + "> {\n"
                         "  %d = \"quant.dcast\"(%x) : (tensor<4x3x" + q + ">) -> tensor<4x3xf32>\n"
                         "  %g = \"qrt.gather_nd\"(%d, %i) : (tensor<4x3xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>\n"
                         "  %q = \"quant.qcast\"(%g) : (tensor<2x3xf32>) -> tensor<2x3x" + q + ">\n  return %q : tensor<2x3x" + q + ">\n}\n";
  CHECK(run(nd).find("\"qrt.gather_nd\"(%x, %i)") != std::string::npos);
}

TEST_CASE("a region whose int32 accumulator could overflow stays in float, with the reason (fuzz finding)") {
  // K = 70,000 terms of |a - za| <= 255 times |w - zw| <= 128 exceeds 2^31 - 1: an integer
  // conv would be invalid (the verifier refuses it), so fold-qdq must not produce one.
  const std::string text = R"(func.func @main(%x: tensor<1x1x1x70000xf32>) -> tensor<1x1x1x1xf32> {
  %xq = "quant.qcast"(%x) : (tensor<1x1x1x70000xf32>) -> tensor<1x1x1x70000x!quant.uniform<u8:f32, 0.5:255>>
  %xd = "quant.dcast"(%xq) : (tensor<1x1x1x70000x!quant.uniform<u8:f32, 0.5:255>>) -> tensor<1x1x1x70000xf32>
  %wq = "qrt.constant"() {value = dense<3> : tensor<1x1x1x70000xi8>} : () -> tensor<1x1x1x70000x!quant.uniform<i8:f32, 0.25>>
  %wd = "quant.dcast"(%wq) : (tensor<1x1x1x70000x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x1x1x70000xf32>
  %c = "qrt.conv2d"(%xd, %wd) {dilations = [1, 1], pads = [0, 0, 0, 0], strides = [1, 1]} : (tensor<1x1x1x70000xf32>, tensor<1x1x1x70000xf32>) -> tensor<1x1x1x1xf32>
  %yq = "quant.qcast"(%c) : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1x!quant.uniform<i8:f32, 8.0>>
  %y = "quant.dcast"(%yq) : (tensor<1x1x1x1x!quant.uniform<i8:f32, 8.0>>) -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
})";
  std::vector<std::string> report;
  const std::string out = run(text, &report);
  CHECK(out.find("\"qrt.conv2d\"(%xd, %wd)") != std::string::npos);  // still the float conv
  bool said = false;
  for (const std::string& line : report) said = said || line.find("K = 70000 terms could overflow the int32 accumulator") != std::string::npos;
  CHECK_MESSAGE(said, "report does not say why");
}

TEST_CASE("a transposed convolution (bias, relu) between dcast and qcast becomes an integer conv_transpose2d") {
  const std::string text = R"(func.func @main(%x: tensor<1x2x2x2xf32>) -> tensor<1x4x4x3xf32> {
  %xq = "quant.qcast"(%x) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:-2>>
  %xd = "quant.dcast"(%xq) : (tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:-2>>) -> tensor<1x2x2x2xf32>
  %wq = "qrt.constant"() {value = dense<3> : tensor<3x2x2x2xi8>} : () -> tensor<3x2x2x2x!quant.uniform<i8:f32:0, {0.25, 0.5, 0.125}>>
  %wd = "quant.dcast"(%wq) : (tensor<3x2x2x2x!quant.uniform<i8:f32:0, {0.25, 0.5, 0.125}>>) -> tensor<3x2x2x2xf32>
  %bq = "qrt.constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3x!quant.uniform<i32:f32:0, {0.125, 0.25, 0.0625}>>
  %bd = "quant.dcast"(%bq) : (tensor<3x!quant.uniform<i32:f32:0, {0.125, 0.25, 0.0625}>>) -> tensor<3xf32>
  %c = "qrt.conv_transpose2d"(%xd, %wd, %bd) {strides = [2, 2]} : (tensor<1x2x2x2xf32>, tensor<3x2x2x2xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %r = "qrt.relu"(%c) : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %yq = "quant.qcast"(%r) : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3x!quant.uniform<u8:f32, 0.2>>
  %y = "quant.dcast"(%yq) : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.2>>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
})";
  std::vector<std::string> report;
  const std::string out = run(text, &report);
  CHECK(out.find("\"qrt.conv_transpose2d\"(%xq, %wq, %bq)") != std::string::npos);
  CHECK(out.find("-> tensor<1x4x4x3x!quant.uniform<u8:f32, 2.000000e-01>>") != std::string::npos);
  CHECK(out.find("qrt.relu") == std::string::npos);  // implied by the u8 output's zero point 0
  REQUIRE(report.size() >= 2);
  CHECK(report[1].find("qrt.conv_transpose2d + qrt.relu -> %yq: integer accumulation") != std::string::npos);
}
