// Tests: pad folding into quantized convolutions, text in -> text out, and the cases it must
// leave alone (float convs, non-zero fill, channel padding, a second reader).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "ir/text_format.h"
#include "passes/dead_code.h"
#include "passes/fold_pad.h"
#include "jit/ref/reference.h"

namespace {

const std::string kQ = "!quant.uniform<i8:f32, 0.5:-3>";

std::string conv_graph(const std::string& pad_attrs, const std::string& element, bool second_reader) {
  const std::string x = "tensor<1x4x4x2x" + element + ">", p = "tensor<1x6x5x2x" + element + ">",
                    f = "tensor<3x3x3x2x" + (element == "f32" ? std::string("f32") : "!quant.uniform<i8:f32, 0.25>") + ">",
                    y = "tensor<1x4x3x3x" + (element == "f32" ? std::string("f32") : "!quant.uniform<i32:f32, 0.125>") + ">";
  std::string s = "func.func @main(%x: " + x + ", %f: " + f + ") -> " + (second_reader ? "(" + y + ", " + p + ")" : y) +
                  " {\n  %p = \"qrt.pad\"(%x) {pads = " + pad_attrs + "} : (" + x + ") -> " + p +
                  "\n  %y = \"qrt.conv2d\"(%p, %f) {pads = [0, 0, 0, 0]} : (" + p + ", " + f + ") -> " + y + "\n";
  s += second_reader ? "  return %y, %p : " + y + ", " + p + "\n}\n" : "  return %y : " + y + "\n}\n";
  return s;
}

size_t fold(const std::string& text, std::string* printed = nullptr) {
  auto g = qrt::parse_graph(text);
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  size_t folded = 0;
  const qrt::Graph out = qrt::passes::eliminate_dead_ops(qrt::passes::fold_pad_into_conv(*g, &folded));
  CHECK(qrt::verify_graph(out).is_ok());
  if (printed) *printed = qrt::print_graph(out);
  return folded;
}

}  // namespace

TEST_CASE("a zero pad of H and W folds into a quantized conv's pads") {
  std::string printed;
  CHECK(fold(conv_graph("[0, 1, 0, 0, 0, 1, 1, 0]", kQ, false), &printed) == 1);
  CHECK(printed.find("qrt.pad") == std::string::npos);
  CHECK(printed.find("%y = \"qrt.conv2d\"(%x, %f) {pads = [1, 0, 1, 1]}") != std::string::npos);
}

TEST_CASE("pads that would change the result stay") {
  CHECK(fold(conv_graph("[0, 1, 0, 0, 0, 1, 1, 0]", "f32", false)) == 0);              // float conv
  CHECK(fold(conv_graph("[0, 1, 0, 0, 0, 1, 1, 0], value = 1.0", kQ, false)) == 0);     // fill is not 0
  CHECK(fold(conv_graph("[0, 1, 0, 0, 0, 1, 1, 0]", kQ, true)) == 0);                   // also returned
}

TEST_CASE("the folded conv computes the same bytes as pad then conv") {
  const std::string text = conv_graph("[0, 1, 0, 0, 0, 1, 1, 0]", kQ, false);
  auto g = qrt::parse_graph(text);
  REQUIRE(g.is_ok());
  const qrt::Graph folded = qrt::passes::eliminate_dead_ops(qrt::passes::fold_pad_into_conv(*g));
  std::vector<qrt::Tensor> inputs;
  for (int v : g->inputs) {
    qrt::Tensor t = qrt::Tensor::zeros(g->values[size_t(v)].type);
    for (size_t i = 0; i < size_t(t.num_elements()); ++i) t.set_int(i, int64_t((i * 37 + 11) % 200) - 100);
    inputs.push_back(std::move(t));
  }
  auto want = qrt::run_reference(*g, inputs);
  auto got = qrt::run_reference(folded, inputs);
  REQUIRE(want.is_ok());
  REQUIRE(got.is_ok());
  const qrt::Tensor &a = (*want)[0], &b = (*got)[0];
  CHECK(std::equal(a.bytes(), a.bytes() + a.byte_size(), b.bytes()));
}

TEST_CASE("a pad whose sum with the conv's pads passes 2^31 - 1 stays a pad") {
  // Both are at most 2^31 - 1, so the sum fits int64, but the folded conv would not verify.
  const std::string q = "!quant.uniform<i8:f32, 5.000000e-01>", x = "tensor<1x?x?x1x" + q + ">",
                    f = "tensor<1x1x1x1x" + q + ">";
  auto graph = [&](int64_t pad) {
    return "func.func @main(%x: " + x + ", %f: " + f + ") -> " + x + " {\n  %p = \"qrt.pad\"(%x) {pads = [0, " +
           std::to_string(pad) + ", 0, 0, 0, 0, 0, 0]} : (" + x + ") -> " + x +
           "\n  %y = \"qrt.conv2d\"(%p, %f) {pads = [1, 0, 0, 0]} : (" + x + ", " + f + ") -> " + x +
           "\n  return %y : " + x + "\n}\n";
  };
  CHECK(fold(graph(2147483647)) == 0);
  std::string printed;
  CHECK(fold(graph(2147483646), &printed) == 1);
  CHECK(printed.find("{pads = [2147483647, 0, 0, 0]}") != std::string::npos);
}
