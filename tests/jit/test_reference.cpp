// Tests: the reference interpreter on whole graphs with hand-computed results.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "jit/ref/reference.h"
#include "tests/jit/tensor_util.h"

namespace {

using qrt_test::make_tensor;
using qrt_test::values_of;

// Runs a one-function graph on inputs and returns output 0's values.
std::vector<double> run(const std::string& text, std::vector<qrt::Tensor> inputs) {
  auto g = qrt::parse_graph(text, "r.mlir");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  auto out = qrt::run_reference(*g, std::move(inputs));
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  return values_of(out->at(0));
}

std::string run_error(const std::string& text, std::vector<qrt::Tensor> inputs) {
  auto g = qrt::parse_graph(text, "r.mlir");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  auto out = qrt::run_reference(*g, std::move(inputs));
  REQUIRE_FALSE(out.is_ok());
  return out.status().to_string();
}

const char* kPerAxisQcast = R"(
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2x!quant.uniform<i8:f32:1, {1.0, 0.5:10}>> {
  %q = "quant.qcast"(%x) : (tensor<2x2xf32>) -> tensor<2x2x!quant.uniform<i8:f32:1, {1.0, 0.5:10}>>
  return %q : tensor<2x2x!quant.uniform<i8:f32:1, {1.0, 0.5:10}>>
})";

const char* kQuantMatmul = R"(
func.func @main(%a: tensor<1x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<1x2x!quant.uniform<i8:f32, 0.2>> {
  %w = "qrt.constant"() {value = dense<[[1, 4], [5, 6], [-3, 2]]> : tensor<3x2xi8>} : () -> tensor<3x2x!quant.uniform<i8:f32:1, {0.25, 1.0:2}>>
  %b = "qrt.constant"() {value = dense<[3, -1]> : tensor<2xi32>} : () -> tensor<2x!quant.uniform<i32:f32:0, {0.125, 0.5}>>
  %y = "qrt.matmul"(%a, %w, %b) : (tensor<1x3x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x2x!quant.uniform<i8:f32:1, {0.25, 1.0:2}>>, tensor<2x!quant.uniform<i32:f32:0, {0.125, 0.5}>>) -> tensor<1x2x!quant.uniform<i8:f32, 0.2>>
  return %y : tensor<1x2x!quant.uniform<i8:f32, 0.2>>
})";

}  // namespace

TEST_CASE("per-axis qcast uses each channel's scale and zero point") {
  const auto y = run(kPerAxisQcast, {make_tensor("tensor<2x2xf32>", {1.0, 1.0, 2.5, -1.0})});
  CHECK(y == std::vector<double>{1, 12, 2, 8});
}

TEST_CASE("quantized matmul: (a - za)(w - zw) in int32, + bias, per-channel requantize") {
  // (a - za) = [2, 0, -2]; (w - zw) columns [1, 5, -3] and [2, 4, 0]: acc = [8, 4];
  // + bias [3, -1] = [11, 3]; M = [0.125/0.2, 0.5/0.2] = [0.625, 2.5]: [6.875, 7.5] -> [7, 8].
  const auto y = run(kQuantMatmul, {make_tensor("tensor<1x3x!quant.uniform<i8:f32, 0.5:1>>", {3, 1, -1})});
  CHECK(y == std::vector<double>{7, 8});
}

TEST_CASE("quantized matmul into the accumulator type keeps the int32 sums") {
  std::string text = kQuantMatmul;
  const std::string from = "tensor<1x2x!quant.uniform<i8:f32, 0.2>>";
  const std::string to = "tensor<1x2x!quant.uniform<i32:f32:1, {0.125, 0.5}>>";
  for (size_t p; (p = text.find(from)) != std::string::npos;) text.replace(p, from.size(), to);
  const auto y = run(text, {make_tensor("tensor<1x3x!quant.uniform<i8:f32, 0.5:1>>", {3, 1, -1})});
  CHECK(y == std::vector<double>{11, 3});
}

TEST_CASE("an int32 accumulator overflow is refused, not wrapped") {
  std::string text = kQuantMatmul;
  text.replace(text.find("[3, -1]"), 7, "[2147483647, -1]");
  CHECK(run_error(text, {make_tensor("tensor<1x3x!quant.uniform<i8:f32, 0.5:1>>", {3, 1, -1})}) ==
        "r.mlir:5:8: error: 'qrt.matmul' op int32 accumulator overflow at output row 0, column 0 "
        "(value 2147483655)");
}

TEST_CASE("hybrid matmul dequantizes the weights, then multiplies in f32, with batch dims") {
  const char* text = R"(
func.func @main(%x: tensor<2x1x2xf32>) -> tensor<2x1x1xf32> {
  %w = "qrt.constant"() {value = dense<[[4], [3]]> : tensor<2x1xi8>} : () -> tensor<2x1x!quant.uniform<i8:f32, 0.5>>
  %y = "qrt.matmul"(%x, %w) : (tensor<2x1x2xf32>, tensor<2x1x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x1x1xf32>
  return %y : tensor<2x1x1xf32>
})";
  const auto y = run(text, {make_tensor("tensor<2x1x2xf32>", {1.5, 2.0, -1.0, 0.25})});
  CHECK(y == std::vector<double>{1.5 * 2 + 2.0 * 1.5, -1.0 * 2 + 0.25 * 1.5});
}

TEST_CASE("quantized add and mul rescale each operand in f32") {
  const char* add = R"(
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>, %b: tensor<2x!quant.uniform<i8:f32, 0.25:4>>) -> tensor<2x!quant.uniform<i8:f32, 1.0>> {
  %y = "qrt.add"(%a, %b) : (tensor<2x!quant.uniform<i8:f32, 0.5>>, tensor<2x!quant.uniform<i8:f32, 0.25:4>>) -> tensor<2x!quant.uniform<i8:f32, 1.0>>
  return %y : tensor<2x!quant.uniform<i8:f32, 1.0>>
})";
  // 1.5 + 1.5 = 3; 0.5 + 0 = 0.5 -> 0 (tie to even)
  CHECK(run(add, {make_tensor("tensor<2x!quant.uniform<i8:f32, 0.5>>", {3, 1}),
                  make_tensor("tensor<2x!quant.uniform<i8:f32, 0.25:4>>", {10, 4})}) ==
        std::vector<double>{3, 0});
  const char* mul = R"(
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>, %b: tensor<1x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x!quant.uniform<i8:f32, 1.0:-100>> {
  %y = "qrt.mul"(%a, %b) : (tensor<2x!quant.uniform<i8:f32, 0.5>>, tensor<1x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x!quant.uniform<i8:f32, 1.0:-100>>
  return %y : tensor<2x!quant.uniform<i8:f32, 1.0:-100>>
})";
  // 3 * 6 = 18, M = 0.25 -> 4.5 -> 4, + zp -100 = -96; -128 * 6 * 0.25 = -192 -> -292 -> -128
  CHECK(run(mul, {make_tensor("tensor<2x!quant.uniform<i8:f32, 0.5>>", {3, -128}),
                  make_tensor("tensor<1x!quant.uniform<i8:f32, 0.5>>", {6})}) ==
        std::vector<double>{-96, -128});
}

TEST_CASE("per-axis add and mul: each element with its channel's scale and zero point (StableHLO)") {
  using qrt_test::run1;
  const std::pair<std::string, std::vector<double>> a{"tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:-2, 2.0:0}>>",
                                                      {3, 2, 1, -1, 6, 4}};  // reals 1 1 2 / -1 2 8
  const std::pair<std::string, std::vector<double>> b{"tensor<3x!quant.uniform<i8:f32, 0.5>>", {2, 4, -2}};  // 1 2 -1
  // Sums 2 3 1 / 0 4 7; the result is per-axis on rows: scale 1 (zp 0), then 0.5 (zp 3).
  CHECK(run1("qrt.add", "", {a, b}, "tensor<2x3x!quant.uniform<i8:f32:0, {1.0, 0.5:3}>>") ==
        std::vector<double>{2, 3, 1, 3, 11, 17});
  CHECK(run1("qrt.add", "", {a, b}, "tensor<2x3x!quant.uniform<i8:f32:0, {1.0, 0.5:3}>>", qrt::NumericsProfile::kStableHlo) ==
        std::vector<double>{2, 3, 1, 3, 11, 17});  // dequantize, add, quantize: exact here too
  // Products 1 2 -2 / -1 4 -8 at scale 0.25; -8 / 0.25 = -32.
  CHECK(run1("qrt.mul", "", {a, b}, "tensor<2x3x!quant.uniform<i8:f32, 0.25>>") ==
        std::vector<double>{4, 8, -8, -4, 16, -32});
  // Per-axis on both operands and the result, same axis: the channels meet one to one.
  CHECK(run1("qrt.add", "", {a, a}, "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:-2, 2.0:0}>>") ==
        std::vector<double>{5, 6, 2, -3, 14, 8});
  // Sub-channel operands stay refused: their meaning is defined for weights only.
  auto bad = qrt_test::run_one_op("qrt.add", "",
                                  {{"tensor<2x2x!quant.uniform<i8:f32:{0:1, 1:1}, {{0.5, 0.5}, {0.5, 0.5}}>>", {1, 2, 3, 4}},
                                   {"tensor<2x!quant.uniform<i8:f32, 0.5>>", {2, 4}}},
                                  "tensor<2x2x!quant.uniform<i8:f32, 0.5>>");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("sub-channel quantized type") != std::string::npos);
}

TEST_CASE("float add broadcasts like numpy; relu and clamp") {
  const char* text = R"(
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %s = "qrt.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = "qrt.relu"(%s) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = "qrt.clamp"(%r) {min = 0.0, max = 2.5} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %c : tensor<2x3xf32>
})";
  CHECK(run(text, {make_tensor("tensor<2x3xf32>", {1, 2, 3, -4, 5, -6}),
                   make_tensor("tensor<3xf32>", {0.5, -1, 0})}) ==
        std::vector<double>{1.5, 1, 2.5, 0, 2.5, 0});
}

TEST_CASE("quantized relu and clamp work on stored values") {
  const char* text = R"(
func.func @main(%a: tensor<4x!quant.uniform<u8:f32, 0.5:100>>) -> tensor<4x!quant.uniform<u8:f32, 0.5:100>> {
  %r = "qrt.relu"(%a) : (tensor<4x!quant.uniform<u8:f32, 0.5:100>>) -> tensor<4x!quant.uniform<u8:f32, 0.5:100>>
  %c = "qrt.clamp"(%r) {min = 0.0, max = 6.0} : (tensor<4x!quant.uniform<u8:f32, 0.5:100>>) -> tensor<4x!quant.uniform<u8:f32, 0.5:100>>
  return %c : tensor<4x!quant.uniform<u8:f32, 0.5:100>>
})";
  // relu: max(q, 100); clamp to [qcast(0), qcast(6)] = [100, 112]
  CHECK(run(text, {make_tensor("tensor<4x!quant.uniform<u8:f32, 0.5:100>>", {0, 99, 105, 255})}) ==
        std::vector<double>{100, 100, 105, 112});
}

TEST_CASE("requantize, scast and reshape") {
  const char* text = R"(
func.func @main(%a: tensor<2x2x!quant.uniform<i8:f32:0, {0.5, 1.0:-2}>>) -> tensor<4xi8> {
  %r = "qrt.requantize"(%a) : (tensor<2x2x!quant.uniform<i8:f32:0, {0.5, 1.0:-2}>>) -> tensor<2x2x!quant.uniform<i8:f32, 0.25:1>>
  %s = "quant.scast"(%r) : (tensor<2x2x!quant.uniform<i8:f32, 0.25:1>>) -> tensor<2x2xi8>
  %f = "qrt.reshape"(%s) : (tensor<2x2xi8>) -> tensor<4xi8>
  return %f : tensor<4xi8>
})";
  // row 0: M = 2, zp 0: [3, -100] -> [7, -128 (saturated from -199)]
  // row 1: M = 4, zp -2: [-2, 0] -> [0*4+1, 2*4+1] = [1, 9]
  CHECK(run(text, {make_tensor("tensor<2x2x!quant.uniform<i8:f32:0, {0.5, 1.0:-2}>>", {3, -100, -2, 0})}) ==
        std::vector<double>{7, -128, 1, 9});
}

TEST_CASE("f16 expressed types: dcast rounds the f32 product to f16") {
  const char* text = R"(
func.func @main(%a: tensor<1x!quant.uniform<i8:f16, 0.1>>) -> tensor<1xf16> {
  %d = "quant.dcast"(%a) : (tensor<1x!quant.uniform<i8:f16, 0.1>>) -> tensor<1xf16>
  return %d : tensor<1xf16>
})";
  // 100 * f16(0.1) = 9.99755859375 in f32, nearest f16 is 10.0
  CHECK(run(text, {make_tensor("tensor<1x!quant.uniform<i8:f16, 0.1>>", {100})}) == std::vector<double>{10.0});
}

TEST_CASE("dynamic dimensions take the input's sizes; bad inputs are named") {
  const char* text = R"(
func.func @main(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %y = "qrt.add"(%x, %x) : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
})";
  CHECK(run(text, {make_tensor("tensor<3x2xf32>", {1, 2, 3, 4, 5, 6})}) ==
        std::vector<double>{2, 4, 6, 8, 10, 12});
  CHECK(run_error(text, {make_tensor("tensor<3x3xf32>", {1, 2, 3, 4, 5, 6, 7, 8, 9})}) ==
        "error: input 0 ('%x') has shape [3x3], expected tensor<?x2xf32>");
  CHECK(run_error(text, {make_tensor("tensor<3x2xf64>", {1, 2, 3, 4, 5, 6})}) ==
        "error: input 0 ('%x') has element type f64, expected f32");
  CHECK(run_error(text, {}) == "error: graph @main takes 1 inputs, got 0");
}
