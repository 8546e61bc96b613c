// Tests: quantization-parameter propagation, text in -> text out and the report: same-scale
// chains, fixed-scale outputs, weights and the bias at the accumulator scale, a conflict that
// forces a rescale, immutable (QAT) parameters, per-axis types through transpose and reshape,
// unresolvable placeholders, and the same result whatever order regions are visited in.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "tests/passes/pass_test_util.h"
#include "passes/constraint_table.h"
#include "passes/pipeline.h"
#include "passes/propagate.h"
#include "passes/quant_regions.h"

namespace {

using pass_test::has_line;
using pass_test::parse;

std::string run(const std::string& text, std::vector<std::string>& report, const std::string& pipeline = "propagate") {
  auto out = qrt::passes::run_pipeline(parse(text), pipeline, &report);
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  return qrt::print_graph(*out);
}


// One quantization point: v -> qcast(T) -> dcast named NAME.
std::string point(const std::string& v, const std::string& name, const std::string& shape, const std::string& qtype) {
  return "  %" + name + "_q = \"quant.qcast\"(%" + v + ") : (tensor<" + shape + "xf32>) -> tensor<" + shape + "x" + qtype +
         ">\n  %" + name + " = \"quant.dcast\"(%" + name + "_q) : (tensor<" + shape + "x" + qtype + ">) -> tensor<" + shape +
         "xf32>\n";
}

}  // namespace

TEST_CASE("same-scale chain: max pool and reshape share one type from the union of their ranges") {
  const std::string g = "func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x4xf32> {\n" +
                        point("x", "a", "1x1x4x4", "!quant.calibrated<f32<-1.0:2.0>>") +
                        "  %p = \"qrt.max_pool2d\"(%a) {kernel = [2, 2], layout = \"NCHW\", pads = [0, 0, 0, 0], strides = [2, 2]}"
                        " : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>\n" +
                        point("p", "b", "1x1x2x2", "!quant.calibrated<f32<0.0:1.5>>") +
                        "  %r = \"qrt.reshape\"(%b) : (tensor<1x1x2x2xf32>) -> tensor<1x4xf32>\n" +
                        point("r", "c", "1x4", "!quant.calibrated<f32<0.0:3.0>>") + "  return %c : tensor<1x4xf32>\n}\n";
  std::vector<std::string> report;
  const std::string out = run(g, report);
  // [-1, 3] in u8: scale 4/255, zero point rne(255/4) = 64.
  const std::string t = "!quant.uniform<u8:f32, 0.015686274509803921:64>";
  for (const char* v : {"%a_q", "%b_q", "%c_q"}) {
    CAPTURE(v);
    CHECK(has_line(report, std::string("propagate: ") + v + " : " + t + "  <- from_stats [-1, 3], asymmetric u8: union over the same_scale group"));
  }
  CHECK(out.find("calibrated") == std::string::npos);
  // fold-qdq then runs both ops on stored values.
  report.clear();
  const std::string folded = run(g, report, "propagate,fold-qdq");
  CHECK(folded.find("\"qrt.max_pool2d\"(%a_q)") != std::string::npos);
  CHECK(folded.find("\"qrt.reshape\"(%b_q)") != std::string::npos);
}

TEST_CASE("fixed-scale outputs: logistic and softmax results are 1/256 for the chosen storage") {
  const std::string g = "func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {\n" +
                        point("x", "a", "8", "!quant.calibrated<f32<-4.0:4.0>>") +
                        "  %s = \"qrt.logistic\"(%a) : (tensor<8xf32>) -> tensor<8xf32>\n" +
                        point("s", "b", "8", "!quant.calibrated<f32<0.01:0.98>>") + "  return %b : tensor<8xf32>\n}\n";
  std::vector<std::string> report;
  run(g, report);
  CHECK(has_line(report, "%b_q : !quant.uniform<u8:f32, 3.906250e-03>  <- fixed_scale(out0, 0.00390625, 0) of qrt.logistic(*) -> (u8)"));
  report.clear();
  run(g, report, "propagate{activations=i8}");
  CHECK(has_line(report, "%b_q : !quant.uniform<i8:f32, 3.906250e-03:-128>  <- fixed_scale(out0, 0.00390625, -128)"));
  CHECK(has_line(report, "%a_q : !quant.uniform<i8:f32, 0.031372549019607843>  <- from_stats [-4, 4], asymmetric i8"));
}

TEST_CASE("weights: symmetric per-channel i8; bias: i32 at the accumulator scale s_in * s_w") {
  const std::string g = "func.func @main(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {\n" +
                        point("x", "a", "3x2", "!quant.calibrated<f32<0.0:1.0>>") +
                        "  %w = \"qrt.constant\"() {value = dense<[[1.0, -2.0], [0.5, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>\n"
                        "  %b = \"qrt.constant\"() {value = dense<[0.25, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>\n"
                        "  %m = \"qrt.matmul\"(%a, %w, %b) : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>\n" +
                        point("m", "y", "3x2", "!quant.calibrated<f32<-3.0:5.0>>") + "  return %y : tensor<3x2xf32>\n}\n";
  std::vector<std::string> report;
  const std::string out = run(g, report);
  // Column maxima 1 and 4 over 127; the bias scales are (1/255) times those.
  CHECK(has_line(report, "%w : !quant.uniform<i8:f32:1, {0.0078740157480314959,0.031496062992125984}>  <- symmetric_weights(in1, axis -1) of qrt.matmul(u8, i8, i32) -> (u8)"));
  CHECK(has_line(report, "%b : !quant.uniform<i32:f32:0, {3.0878493129535278E-5,1.2351397251814111E-4}>  <- accumulator_scale(in2 = in0 x in1)"));
  CHECK(out.find("dense<[[127, -64], [64, 127]]> : tensor<2x2xi8>") != std::string::npos);
  // 0.25 / 3.0878e-5 = 8096.25 -> 8096; -1 / 1.2351e-4 = -8096.25 -> -8096.
  CHECK(out.find("dense<[8096, -8096]> : tensor<2xi32>") != std::string::npos);
  report.clear();
  const std::string folded = run(g, report, "propagate,fold-qdq");
  CHECK(folded.find("\"qrt.matmul\"(%a_q, %w_q, %b_q)") != std::string::npos);
  report.clear();
  run(g, report, "propagate{weights=per-tensor}");
  CHECK(has_line(report, "%w : !quant.uniform<i8:f32, 0.031496062992125984>  <- symmetric_weights(in1, per tensor)"));
}

TEST_CASE("immutable parameters are kept; a same-scale conflict between two of them inserts a rescale") {
  // Two inputs quantized in training with different scales meet in a concat whose output is
  // calibrated: the output takes the first pin, the second operand is rescaled.
  const std::string g = "func.func @main(%x: tensor<2xf32>, %z: tensor<2xf32>) -> tensor<4xf32> {\n" +
                        point("x", "a", "2", "!quant.uniform<u8:f32, 0.5:3>") + point("z", "b", "2", "!quant.uniform<u8:f32, 0.25>") +
                        "  %c = \"qrt.concat\"(%a, %b) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>\n" +
                        point("c", "d", "4", "!quant.calibrated<f32<0.0:50.0>>") + "  return %d : tensor<4xf32>\n}\n";
  std::vector<std::string> report;
  const std::string out = run(g, report);
  CHECK(has_line(report, "%a_q : !quant.uniform<u8:f32, 5.000000e-01:3>  <- immutable: given in the graph"));
  CHECK(has_line(report, "%b_q : !quant.uniform<u8:f32, 2.500000e-01>  <- immutable: given in the graph"));
  CHECK(has_line(report, "%d_q : !quant.uniform<u8:f32, 5.000000e-01:3>  <- same_scale(in*, out0) of qrt.concat: the same type as %a_q"));
  CHECK(has_line(report, "propagate: rescale %b_q (!quant.uniform<u8:f32, 2.500000e-01>) -> !quant.uniform<u8:f32, 5.000000e-01:3> "
                         "before qrt.concat %c operand 1: same_scale(in*, out0) of qrt.concat conflicts"));
  CHECK(out.find("%b_rescaled = \"quant.qcast\"(%b)") != std::string::npos);
  // fold-qdq turns the rescale into one requantize.
  report.clear();
  const std::string folded = run(g, report, "propagate,fold-qdq");
  CHECK(folded.find("\"qrt.requantize\"(%b_q)") != std::string::npos);
}

TEST_CASE("an immutable output that contradicts a fixed scale keeps its type behind a rescale") {
  const std::string g = "func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {\n" +
                        point("x", "a", "8", "!quant.uniform<i8:f32, 0.0625>") +
                        "  %s = \"qrt.logistic\"(%a) : (tensor<8xf32>) -> tensor<8xf32>\n" +
                        point("s", "b", "8", "!quant.uniform<i8:f32, 0.01>") + "  return %b : tensor<8xf32>\n}\n";
  std::vector<std::string> report;
  const std::string out = run(g, report);
  CHECK(has_line(report, "%b_q : !quant.uniform<i8:f32, 1.000000e-02>  <- immutable"));
  CHECK(has_line(report, "rescale %b_q from !quant.uniform<i8:f32, 3.906250e-03:-128> after its producer: fixed_scale(out0, 0.00390625, -128)"));
  CHECK(out.find("%b_q_fixed = \"quant.qcast\"(%s)") != std::string::npos);
  CHECK(out.find("-> tensor<8x!quant.uniform<i8:f32, 1.000000e-02>>") != std::string::npos);
}

TEST_CASE("per-axis types follow transposes and reshapes that keep the axis, and are rescaled where one merges it") {
  const std::string pa = "!quant.uniform<i8:f32:1, {0.5,0.25,0.125}>";
  const std::string g = "func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<2x4x3xf32>, tensor<2x3x2x2xf32>, tensor<2x12xf32>) {\n" +
                        point("x", "a", "2x3x4", pa) +
                        "  %t = \"qrt.transpose\"(%a) {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>\n" +
                        point("t", "b", "2x4x3", "!quant.calibrated<f32<-1.0:1.0>>") +
                        "  %r = \"qrt.reshape\"(%a) : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>\n" +
                        point("r", "c", "2x3x2x2", "!quant.calibrated<f32<-1.0:1.0>>") +
                        "  %m = \"qrt.reshape\"(%a) : (tensor<2x3x4xf32>) -> tensor<2x12xf32>\n" +
                        point("m", "d", "2x12", "!quant.calibrated<f32<-1.0:1.0>>") +
                        "  return %b, %c, %d : tensor<2x4x3xf32>, tensor<2x3x2x2xf32>, tensor<2x12xf32>\n}\n";
  std::vector<std::string> report;
  const std::string out = run(g, report);
  CHECK(has_line(report, "%b_q : !quant.uniform<i8:f32:2, {5.000000e-01,2.500000e-01,1.250000e-01}>  <- same_scale(in0, out0) of qrt.transpose"));
  CHECK(has_line(report, "%c_q : !quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01,1.250000e-01}>  <- same_scale(in0, out0) of qrt.reshape"));
  // [2, 3, 4] -> [2, 12] merges the channel axis: the result takes its own statistics and the
  // operand is rescaled to them.
  CHECK(has_line(report, "%d_q : !quant.uniform<i8:f32, 0.0078431372549019607>  <- from_stats [-1, 1], asymmetric i8 (the per-axis type of its same_scale group cannot reach it)"));
  CHECK(has_line(report, "rescale %a_q (!quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01,1.250000e-01}>) -> !quant.uniform<i8:f32, 0.0078431372549019607> before qrt.reshape %m operand 0"));
  CHECK(out.find("%a_rescaled") != std::string::npos);
}

TEST_CASE("a placeholder nothing can resolve is an error naming it") {
  const std::string g = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n" + point("x", "a", "4", "!quant.any<i8:f32>") +
                        "  return %a : tensor<4xf32>\n}\n";
  auto out = qrt::passes::run_pipeline(parse(g), "propagate");
  REQUIRE_FALSE(out.is_ok());
  CHECK(out.status().message().find("cannot choose quantization parameters for %a_q: !quant.any<i8:f32> has no calibration "
                                    "statistics and no constraint fixes it") != std::string::npos);
  auto bad = qrt::passes::run_pipeline(parse(g), "propagate{activations=u4}");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "pass 'propagate': option activations=u4 must be one of u8, i8");
}

TEST_CASE("propagation gives the same graph whatever order regions are visited in") {
  // Same-scale groups, a conflict and a fixed scale in one graph.
  const std::string g = "func.func @main(%x: tensor<2xf32>, %z: tensor<2xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n" +
                        point("x", "a", "2", "!quant.uniform<u8:f32, 0.5:3>") +
                        point("z", "b", "2", "!quant.uniform<u8:f32, 0.25>") +
                        "  %rz = \"qrt.relu\"(%b) : (tensor<2xf32>) -> tensor<2xf32>\n" +
                        point("rz", "e", "2", "!quant.calibrated<f32<0.0:7.0>>") +
                        "  %c = \"qrt.concat\"(%a, %e) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>\n" +
                        point("c", "d", "4", "!quant.calibrated<f32<0.0:50.0>>") +
                        "  %s = \"qrt.logistic\"(%d) : (tensor<4xf32>) -> tensor<4xf32>\n" +
                        point("s", "f", "4", "!quant.calibrated<f32<0.0:1.0>>") +
                        "  return %d, %f : tensor<4xf32>, tensor<4xf32>\n}\n";
  const qrt::Graph graph = parse(g);
  const size_t regions = qrt::passes::find_quant_regions(graph).regions.size();
  REQUIRE(regions == 3);
  const qrt::passes::ConstraintTable table = qrt::passes::default_constraint_table({});
  std::string first;
  std::vector<size_t> order(regions);
  for (size_t i = 0; i < regions; ++i) order[i] = i;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    qrt::passes::PropagateOptions options;
    options.visit_order = order;
    auto out = qrt::passes::propagate_quant_params(graph, table, options, nullptr);
    REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
    const std::string text = qrt::print_graph(*out);
    if (trial == 0) first = text;
    CHECK(text == first);
    std::shuffle(order.begin(), order.end(), rng);
  }
  CHECK(first.find("%e_rescaled") != std::string::npos);  // the conflict's rescale, every time
}

TEST_CASE("a calibrated range too narrow for any scale is an error naming the value and the range") {
  // [0, 4.9e-324] / 255 underflows to 0; 0 / 0 became the zero point (an audit finding).
  const std::string g = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n" +
                        point("x", "a", "4", "!quant.calibrated<f32<0.0:4.9e-324>>") + "  return %a : tensor<4xf32>\n}\n";
  auto out = qrt::passes::run_pipeline(parse(g), "propagate");
  REQUIRE_FALSE(out.is_ok());
  CHECK(out.status().message() ==
        "pass 'propagate': cannot choose quantization parameters for %a_q: the range [0.000000e+00, 4.940660e-324] "
        "gives the scale 0.000000e+00, which is not a positive finite f32");
}
