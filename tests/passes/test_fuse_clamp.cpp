// Tests: clamp and relu fusion into their producers (passes/fuse_clamp.h): what folds, what
// must stay, names kept, the fused attributes round-tripped through text, the verifier's
// checks of them, and the same bytes as the unfused graph on the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "ir/text_format.h"
#include "tests/passes/pass_test_util.h"
#include "jit/ref/reference.h"
#include "passes/fuse_clamp.h"

namespace {

const std::string kClampX = "tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:-3>>";
const std::string kClampF = "tensor<3x3x3x2x!quant.uniform<i8:f32:0, {0.25, 0.125, 0.5}>>";
const std::string kClampY = "tensor<1x2x2x3x!quant.uniform<i8:f32, 0.75:-20>>";

// x -> conv -> `act` (a line defining %z from %y) -> return `ret`.
std::string graph(const std::string& act, const std::string& ret = "%z : " + kClampY, const std::string& y = kClampY,
                  const std::string& results = "") {
  return "func.func @main(%x: " + kClampX + ", %f: " + kClampF + ") -> " + (results.empty() ? kClampY : results) + " {\n" +
         "  %y = \"qrt.conv2d\"(%x, %f) : (" + kClampX + ", " + kClampF + ") -> " + y + "\n" + act + "  return " + ret + "\n}\n";
}

std::string clamp(const std::string& in, const std::string& out, const std::string& lo, const std::string& hi,
                  const std::string& t = kClampY) {
  return "  " + out + " = \"qrt.clamp\"(" + in + ") {max = " + hi + " : f32, min = " + lo + " : f32} : (" + t + ") -> " +
         t + "\n";
}

using pass_test::parse;

// Fuses; checks the result verifies and computes the same bytes as the source on the
// reference; returns the count and the printed result.
size_t fuse(const std::string& text, std::string* printed = nullptr) {
  const qrt::Graph g = parse(text);
  size_t fused = 0;
  const qrt::Graph out = qrt::passes::fuse_clamp_into_producers(g, &fused);
  REQUIRE_MESSAGE(qrt::verify_graph(out).is_ok(), qrt::verify_graph(out).to_string());
  std::vector<qrt::Tensor> inputs;
  for (int v : g.inputs) {
    qrt::Tensor t = qrt::Tensor::zeros(g.values[size_t(v)].type);
    for (size_t i = 0; i < size_t(t.num_elements()); ++i) t.set_int(i, int64_t((i * 37 + 11) % 255) - 128);
    inputs.push_back(std::move(t));
  }
  auto want = qrt::run_reference(g, inputs);
  auto got = qrt::run_reference(out, inputs);
  REQUIRE(want.is_ok());
  REQUIRE(got.is_ok());
  REQUIRE(want->size() == got->size());
  for (size_t i = 0; i < want->size(); ++i) {
    const qrt::Tensor &a = (*want)[i], &b = (*got)[i];
    REQUIRE(a.byte_size() == b.byte_size());
    CHECK(std::equal(a.bytes(), a.bytes() + a.byte_size(), b.bytes()));
  }
  if (printed) *printed = qrt::print_graph(out);
  return fused;
}

}  // namespace

TEST_CASE("a clamp after a quantized conv folds into it and keeps its name") {
  std::string printed;
  CHECK(fuse(graph(clamp("%y", "%z", "0.0", "6.0")), &printed) == 1);
  CHECK(printed.find("qrt.clamp") == std::string::npos);
  CHECK(printed.find("%z = \"qrt.conv2d\"(%x, %f) {clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32}") !=
        std::string::npos);
  // The fused form parses back to the same graph.
  CHECK(qrt::print_graph(parse(printed)) == printed);
}

TEST_CASE("a quantized relu folds as clamp(0, +inf), and the unbounded max round-trips") {
  std::string printed;
  CHECK(fuse(graph("  %z = \"qrt.relu\"(%y) : (" + kClampY + ") -> " + kClampY + "\n"), &printed) == 1);
  CHECK(printed.find("qrt.relu") == std::string::npos);
  CHECK(printed.find("clamp_min = 0.000000e+00 : f32") != std::string::npos);
  CHECK(qrt::print_graph(parse(printed)) == printed);
}

TEST_CASE("clamps that cannot fold stay") {
  // The conv's result has a second reader (returned too).
  const std::string two = kClampY + ", " + kClampY;
  CHECK(fuse(graph(clamp("%y", "%z", "0.0", "6.0"), "%z, %y : " + two, kClampY, "(" + two + ")")) == 0);
  // A second clamp: the first folds, the producer then has one, and the second stays.
  std::string printed;
  CHECK(fuse(graph(clamp("%y", "%c", "-1.0", "6.0") + clamp("%c", "%z", "0.0", "4.0")), &printed) == 1);
  CHECK(printed.find("qrt.clamp") != std::string::npos);
  // A producer that takes no fused clamp (a max pool).
  const std::string pool = "  %p = \"qrt.max_pool2d\"(%y) {kernel = [1, 1]} : (" + kClampY + ") -> " + kClampY + "\n";
  CHECK(fuse(graph(pool + clamp("%p", "%z", "0.0", "6.0"))) == 0);
}

TEST_CASE("float conv2d and matmul with constant weights take the clamp; a batched float matmul does not") {
  const std::string fx = "tensor<1x4x4x2xf32>", ff = "tensor<3x3x3x2xf32>", fy = "tensor<1x2x2x3xf32>";
  const std::string conv = "func.func @main(%x: " + fx + ", %f: " + ff + ") -> " + fy + " {\n  %y = \"qrt.conv2d\"(%x, %f) : (" +
                           fx + ", " + ff + ") -> " + fy + "\n" + clamp("%y", "%z", "0.0", "6.0", fy) + "  return %z : " +
                           fy + "\n}\n";
  std::string printed;
  CHECK(fuse(conv, &printed) == 1);
  CHECK(printed.find("clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32") != std::string::npos);
  CHECK(printed.find("\"qrt.clamp\"") == std::string::npos);
  // A relu on a float conv folds as clamp(0, +inf).
  const std::string relu = "func.func @main(%x: " + fx + ", %f: " + ff + ") -> " + fy + " {\n  %y = \"qrt.conv2d\"(%x, %f) : (" +
                           fx + ", " + ff + ") -> " + fy + "\n  %z = \"qrt.relu\"(%y) : (" + fy + ") -> " + fy +
                           "\n  return %z : " + fy + "\n}\n";
  CHECK(fuse(relu, &printed) == 1);
  CHECK(printed.find("clamp_min = 0.000000e+00 : f32") != std::string::npos);
  // Matmul: constant weights fold, two activations do not.
  const std::string a = "tensor<2x3xf32>", b = "tensor<3x4xf32>", r = "tensor<2x4xf32>";
  const std::string tail = "  %y = \"qrt.matmul\"(%a, %w) : (" + a + ", " + b + ") -> " + r + "\n" +
                           clamp("%y", "%z", "-1.0", "1.0", r) + "  return %z : " + r + "\n}\n";
  CHECK(fuse("func.func @main(%a: " + a + ") -> " + r + " {\n  %w = \"qrt.constant\"() {value = dense<0.5> : " + b +
             "} : () -> " + b + "\n" + tail) == 1);
  CHECK(fuse("func.func @main(%a: " + a + ", %w: " + b + ") -> " + r + " {\n" + tail) == 0);
}

TEST_CASE("the verifier checks fused clamp attributes") {
  const std::string one = graph("", "%y : " + kClampY);
  auto with = [&](const std::string& attrs) {
    std::string t = one;
    t.replace(t.find(" : (" + kClampX), 0, " {" + attrs + "}");
    auto g = qrt::parse_graph(t);
    return g.is_ok() ? std::string() : g.status().message();
  };
  CHECK(with("clamp_max = 6.0 : f32, clamp_min = 0.0 : f32").empty());
  CHECK(with("clamp_min = 0.0 : f32") == "'qrt.conv2d' op requires float attributes 'clamp_min' and 'clamp_max'");
  CHECK(with("clamp_max = 1.0 : f32, clamp_min = 2.0 : f32") ==
        "'qrt.conv2d' op clamp_min 2.000000e+00 must not exceed clamp_max 1.000000e+00");
  CHECK(with("clamp_max = 1 : i64, clamp_min = 0.0 : f32") ==
        "'qrt.conv2d' op attributes 'clamp_min' and 'clamp_max' must be non-NaN floats, got 1 : i64");
}

TEST_CASE("a clamp after a quantized transposed convolution folds into it (the TFLite fused activation)") {
  const std::string y = "tensor<1x8x8x3x!quant.uniform<i8:f32, 0.75:-20>>";
  const std::string text = "func.func @main(%x: " + kClampX + ", %f: " + kClampF + ") -> " + y + " {\n" +
                           "  %y = \"qrt.conv_transpose2d\"(%x, %f) {output_padding = [1, 1], pads = [1, 1, 1, 1], "
                           "strides = [2, 2]} : (" + kClampX + ", " + kClampF + ") -> " + y + "\n" +
                           clamp("%y", "%z", "0.0", "6.0", y) + "  return %z : " + y + "\n}\n";
  std::string printed;
  CHECK(fuse(text, &printed) == 1);  // (fuse() checks the reference's bytes are unchanged)
  CHECK(printed.find("qrt.clamp") == std::string::npos);
  CHECK(printed.find("%z = \"qrt.conv_transpose2d\"(%x, %f) {clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32") !=
        std::string::npos);
}
