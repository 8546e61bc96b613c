// Tests: the MLIR text form — round trips, attributes, dense literals, parse diagnostics.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "ir/binary_format.h"
#include "ir/qrt_format_generated.h"
#include "ir/text_format.h"

namespace {

std::string roundtrip(const std::string& text) {
  auto g = qrt::parse_graph(text, "t.mlir");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  return qrt::print_graph(*g);
}

std::string parse_error(const std::string& text) {
  auto g = qrt::parse_graph(text, "t.mlir");
  REQUIRE_FALSE(g.is_ok());
  return g.status().to_string();
}

const char* kQuantGraph = R"(// leading comment
module {
  func.func @main(%x: tensor<2x4xf32>, %w: tensor<4x3x!quant.uniform<i8:f32:1, {0.5, 0.25, 0.125}>>) -> (tensor<2x3xf32>, tensor<2x4x!quant.uniform<u8:f32, 0.0039215689>>) {
    %q = quant.qcast %x : tensor<2x4xf32> to tensor<2x4x!quant.uniform<i8:f32, 1.0e-2:-3>>
    %acc = "qrt.matmul"(%q, %w) : (tensor<2x4x!quant.uniform<i8:f32, 1.0e-2:-3>>, tensor<4x3x!quant.uniform<i8:f32:1, {0.5, 0.25, 0.125}>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.1>>
    %r = "qrt.clamp"(%acc) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<2x3x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.1>>
    %f = "quant.dcast"(%r) : (tensor<2x3x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x3xf32>
    %u = "qrt.requantize"(%q) : (tensor<2x4x!quant.uniform<i8:f32, 1.0e-2:-3>>) -> tensor<2x4x!quant.uniform<u8:f32, 0.0039215689>>
    "func.return"(%f, %u) : (tensor<2x3xf32>, tensor<2x4x!quant.uniform<u8:f32, 0.0039215689>>) -> ()
  }
}
)";

}  // namespace

TEST_CASE("canonical printing of a quantized graph is exact and stable") {
  const std::string printed = roundtrip(kQuantGraph);
  CHECK(printed ==
        "func.func @main(%x: tensor<2x4xf32>, %w: tensor<4x3x!quant.uniform<i8:f32:1, "
        "{5.000000e-01,2.500000e-01,1.250000e-01}>>) -> (tensor<2x3xf32>, "
        "tensor<2x4x!quant.uniform<u8:f32, 0.0039215689000000001>>) {\n"
        "  %q = \"quant.qcast\"(%x) : (tensor<2x4xf32>) -> tensor<2x4x!quant.uniform<i8:f32, "
        "1.000000e-02:-3>>\n"
        "  %acc = \"qrt.matmul\"(%q, %w) : (tensor<2x4x!quant.uniform<i8:f32, 1.000000e-02:-3>>, "
        "tensor<4x3x!quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01,1.250000e-01}>>) -> "
        "tensor<2x3x!quant.uniform<i8:f32, 1.000000e-01>>\n"
        "  %r = \"qrt.clamp\"(%acc) {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : "
        "(tensor<2x3x!quant.uniform<i8:f32, 1.000000e-01>>) -> tensor<2x3x!quant.uniform<i8:f32, "
        "1.000000e-01>>\n"
        "  %f = \"quant.dcast\"(%r) : (tensor<2x3x!quant.uniform<i8:f32, 1.000000e-01>>) -> "
        "tensor<2x3xf32>\n"
        "  %u = \"qrt.requantize\"(%q) : (tensor<2x4x!quant.uniform<i8:f32, 1.000000e-02:-3>>) -> "
        "tensor<2x4x!quant.uniform<u8:f32, 0.0039215689000000001>>\n"
        "  return %f, %u : tensor<2x3xf32>, tensor<2x4x!quant.uniform<u8:f32, "
        "0.0039215689000000001>>\n"
        "}\n");
  CHECK(roundtrip(printed) == printed);  // print(parse(x)) is a fixed point
}

TEST_CASE("dense literals: nested, splat, hex, bool, unsigned, empty") {
  const std::string text = R"(func.func @main() -> tensor<2x2xi8> {
  %a = "qrt.constant"() {value = dense<[[1, -2], [3, 4]]> : tensor<2x2xi8>} : () -> tensor<2x2xi8>
  %b = "qrt.constant"() {value = dense<1.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %c = "qrt.constant"() {value = dense<"0x0000803F00000040"> : tensor<2xf32>} : () -> tensor<2xf32>
  %d = "qrt.constant"() {value = dense<[255, 0]> : tensor<2xui8>} : () -> tensor<2x!quant.uniform<u8:f32, 1.0>>
  %e = "qrt.constant"() {value = dense<"0x7F"> : tensor<4xi8>} : () -> tensor<4xi8>
  %f = "qrt.constant"() {value = dense<[0.1, 2]> : tensor<2xf16>} : () -> tensor<2xf16>
  %g = "qrt.constant"() {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
  return %a : tensor<2x2xi8>
})";
  const std::string printed = roundtrip(text);
  CHECK(printed.find("dense<[[1, -2], [3, 4]]> : tensor<2x2xi8>") != std::string::npos);
  CHECK(printed.find("dense<1.500000e+00> : tensor<3xf32>") != std::string::npos);
  CHECK(printed.find("dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>") != std::string::npos);
  CHECK(printed.find("dense<[255, 0]> : tensor<2xui8>") != std::string::npos);
  CHECK(printed.find("dense<127> : tensor<4xi8>") != std::string::npos);
  CHECK(printed.find("dense<[9.997550e-02, 2.000000e+00]> : tensor<2xf16>") != std::string::npos);
  CHECK(printed.find("dense<> : tensor<0xf32>") != std::string::npos);
  CHECK(roundtrip(printed) == printed);
}

TEST_CASE("large constants print as hex and read back identically") {
  std::string values;
  for (int i = 0; i < 100; ++i) values += (i ? ", " : "") + std::to_string(i % 7 - 3);
  const std::string text = "func.func @main() -> tensor<100xi16> {\n  %w = \"qrt.constant\"() {value = dense<[" +
                           values + "]> : tensor<100xi16>} : () -> tensor<100xi16>\n  return %w : tensor<100xi16>\n}\n";
  const std::string printed = roundtrip(text);
  CHECK(printed.find("dense<\"0xFDFFFEFFFFFF00000100020003") != std::string::npos);
  CHECK(roundtrip(printed) == printed);
}

TEST_CASE("unnamed values are numbered like MLIR and names are kept") {
  const std::string printed = roundtrip(
      "func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = \"qrt.add\"(%arg0, %arg0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  %sum = \"qrt.mul\"(%0, %arg0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %sum : tensor<2xf32>\n}\n");
  CHECK(printed.find("%0 = \"qrt.add\"(%arg0, %arg0)") != std::string::npos);
  CHECK(printed.find("%sum = \"qrt.mul\"(%0, %arg0)") != std::string::npos);
}

TEST_CASE("multi-result ops print and parse as a result list") {
  const std::string text =
      "func.func @main(%x: tensor<4xf32>) -> (tensor<4xui8>, tensor<f32>, tensor<ui8>) {\n"
      "  %q, %scale, %zp = \"qrt.dynamic_quantize\"(%x) : (tensor<4xf32>) -> (tensor<4xui8>, tensor<f32>, tensor<ui8>)\n"
      "  return %q, %scale, %zp : tensor<4xui8>, tensor<f32>, tensor<ui8>\n"
      "}\n";
  CHECK(roundtrip(text) == text);
  CHECK(parse_error("func.func @main(%x: tensor<4xf32>) -> tensor<4xui8> {\n"
                    "  %q = \"qrt.dynamic_quantize\"(%x) : (tensor<4xf32>) -> tensor<4xui8>\n"
                    "  return %q : tensor<4xui8>\n}\n") ==
        "t.mlir:2:8: error: 'qrt.dynamic_quantize' op expects 3 results, got 1");
}

TEST_CASE("parse errors read file:line:col: error: message") {
  CHECK(parse_error("") == "t.mlir:1:1: error: empty input: expected 'func.func' or 'module'");
  CHECK(parse_error("func.func @main() {\n  %0 = \"qrt.bogus\"() : () -> f32\n  return\n}") ==
        "t.mlir:2:8: error: unknown op 'qrt.bogus' (see docs/ops.md for the ops qrt supports)");
  CHECK(parse_error("func.func @main(%a: f32) -> f32 {\n  return %b : f32\n}") ==
        "t.mlir:2:10: error: use of undeclared SSA value name '%b'");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %a = \"qrt.relu\"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n  return %a : tensor<2xf32>\n}") ==
        "t.mlir:2:3: error: redefinition of SSA value '%a'");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %b = \"qrt.relu\"(%a) : (tensor<3xf32>) -> tensor<2xf32>\n  return %b : tensor<2xf32>\n}") ==
        "t.mlir:2:19: error: use of value '%a' expects different type than prior uses: "
        "'tensor<3xf32>' vs 'tensor<2xf32>'");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n") ==
        "t.mlir:3:1: error: unexpected end of input inside the function body");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %b = \"qrt.relu\"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n}") ==
        "t.mlir:3:1: error: function @main has no 'return' before its closing '}'");
  CHECK(parse_error("func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.0>>) -> f32 {\n}") ==
        "t.mlir:1:30: error: illegal scale: 0.000000e+00 (scale must be finite and > 0)");
  CHECK(parse_error("func.func @main(%a: f32) -> f32 {\n  return %a : f32\n}\nfunc.func @other() {\n}") ==
        "t.mlir:4:10: error: a qrt graph holds exactly one function; found a second 'func.func'");
  CHECK(parse_error("func.func @main(%a: f32) -> f32 {\n  return %a : f64\n}") ==
        "t.mlir:2:10: error: use of value '%a' expects different type than prior uses: 'f64' vs 'f32'");
  CHECK(parse_error("func.func @main(%a: f32) -> f64 {\n  return %a : f32\n}") ==
        "t.mlir:2:3: error: type of return operand 0 (f32) doesn't match function result type (f64) in function @main");
  CHECK(parse_error("func.func @main() -> tensor<2xi8> {\n  %c = \"qrt.constant\"() {value = dense<[1, 300]> : tensor<2xi8>} : () -> tensor<2xi8>\n  return %c : tensor<2xi8>\n}") ==
        "t.mlir:2:44: error: integer element 300 does not fit in i8");
  CHECK(parse_error("func.func @main() -> tensor<2xi8> {\n  %c = \"qrt.constant\"() {value = dense<[1, 2, 3]> : tensor<2xi8>} : () -> tensor<2xi8>\n  return %c : tensor<2xi8>\n}") ==
        "t.mlir:2:34: error: dense literal shape [3] does not match type tensor<2xi8>");
  CHECK(parse_error("func.func @main() -> tensor<2xi8> {\n  %c = \"qrt.constant\"() {value = dense<\"0x010203\"> : tensor<2xi8>} : () -> tensor<2xi8>\n  return %c : tensor<2xi8>\n}") ==
        "t.mlir:2:34: error: hex dense literal has 3 bytes, but tensor<2xi8> needs 2 (or 1 for a splat)");
  CHECK(parse_error("func.func @main() -> tensor<2xui8> {\n  %c = \"qrt.constant\"() {value = dense<[1, -2]> : tensor<2xui8>} : () -> tensor<2xui8>\n  return %c : tensor<2xui8>\n}") ==
        "t.mlir:2:44: error: expected unsigned integer elements, but parsed negative value -2");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %b = \"qrt.relu\"(%a) {x = 1, x = 2} : (tensor<2xf32>) -> tensor<2xf32>\n  return %b : tensor<2xf32>\n}") ==
        "t.mlir:2:31: error: duplicate attribute 'x'");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %b = qrt.relu %a : tensor<2xf32> to tensor<2xf32>\n  return %b : tensor<2xf32>\n}") ==
        "t.mlir:2:8: error: op 'qrt.relu' must be written in generic form (\"qrt.relu\"(...) : (...) -> ...)");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %b = \"qrt.relu\"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n  return %b : tensor<2xf32>\n  %c = \"qrt.relu\"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n}") ==
        "t.mlir:4:3: error: operation after 'func.return': the return must be last");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %b = \"qrt.relu\"(%a) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)\n  return %b : tensor<2xf32>\n}") ==
        "t.mlir:2:3: error: operation defines 2 results but was provided 1 to bind");
  CHECK(parse_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %b = \"qrt.clamp\"(%a) {min = 1, max = \"x} : (tensor<2xf32>) -> tensor<2xf32>\n}") ==
        "t.mlir:2:40: error: unterminated string literal");
}

TEST_CASE("the numerics profile is the module attribute qrt.numerics, printed only when not the default") {
  const std::string func =
      "func.func @main(%x: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 5.000000e-01:-1>> {\n"
      "  %0 = \"quant.qcast\"(%x) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 5.000000e-01:-1>>\n"
      "  return %0 : tensor<2x!quant.uniform<i8:f32, 5.000000e-01:-1>>\n"
      "}\n";
  std::string indented;
  for (size_t at = 0; at < func.size();) {
    const size_t end = func.find('\n', at);
    indented += "  " + func.substr(at, end - at + 1);
    at = end + 1;
  }
  const std::string wrapped = "module attributes {qrt.numerics = \"tflite\"} {\n" + indented + "}\n";
  auto g = qrt::parse_graph(wrapped, "t.mlir");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  CHECK(g->numerics == qrt::NumericsProfile::kTflite);
  CHECK(qrt::print_graph(*g) == wrapped);  // printed back the same, module included
  // The text reaches the binary form and back.
  auto bytes = qrt::write_binary_graph(*g, "qrt test");
  REQUIRE(bytes.is_ok());
  auto owner = std::make_shared<std::string>(*bytes);
  auto back = qrt::read_binary_graph(owner, reinterpret_cast<const uint8_t*>(owner->data()), owner->size(), "t.qrt");
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  CHECK(back->numerics == qrt::NumericsProfile::kTflite);
  CHECK(qrt::print_graph(*back) == wrapped);
  // The default profile prints no module and writes a version-2 file older readers accept.
  g->numerics = qrt::NumericsProfile::kDefault;
  CHECK(qrt::print_graph(*g) == func);
  auto v2 = qrt::write_binary_graph(*g, "qrt test");
  REQUIRE(v2.is_ok());
  CHECK(qrt::fb::GetGraph(v2->data())->format_version() == 2);
  // Every profile name round-trips; other names and attributes are refused by name.
  for (const char* name : {"default", "stablehlo", "tflite", "tflite-single-rounding", "onnx"}) {
    auto p = qrt::parse_numerics_profile(name);
    REQUIRE(p.has_value());
    CHECK(std::string(qrt::numerics_profile_name(*p)) == name);
  }
  CHECK(parse_error("module attributes {qrt.numerics = \"gemmlowp\"} {\n" + func + "}\n") ==
        "t.mlir:1:19: error: module attribute qrt.numerics = \"gemmlowp\" names no numerics profile (profiles: "
        "default, stablehlo, tflite, tflite-single-rounding, onnx)");
  CHECK(parse_error("module attributes {foo.bar = 1 : i64} {\n" + func + "}\n") ==
        "t.mlir:1:19: error: module attribute 'foo.bar' is not supported (qrt reads 'qrt.numerics' only)");
  CHECK(parse_error("module attributes {qrt.numerics = 3 : i64} {\n" + func + "}\n").find("names no numerics profile") !=
        std::string::npos);
}
