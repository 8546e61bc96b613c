// Tests: the to-nhwc pass (passes/layout_nhwc.h): NCHW convolutions, depthwise convolutions
// and pools become NHWC; element-wise readers, concat and residual adds follow; transposes
// stay only at region borders and inverse pairs cancel; per-axis axes follow their dimension;
// the rewritten graph computes the same bytes as the source on the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "ir/text_format.h"
#include "tests/passes/pass_test_util.h"
#include "jit/ref/reference.h"
#include "passes/layout_nhwc.h"

namespace {

const std::string kX = "tensor<1x2x5x5x!quant.uniform<u8:f32, 0.5:128>>";
const std::string kF = "tensor<3x2x3x3x!quant.uniform<i8:f32:0, {0.25, 0.125, 0.5}>>";
const std::string kY = "tensor<1x3x5x5x!quant.uniform<u8:f32, 0.75:120>>";
const std::string kYAxis = "tensor<1x3x5x5x!quant.uniform<i32:f32:1, {0.25, 0.125, 0.5}>>";
const std::string kD = "tensor<3x1x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>>";

using pass_test::parse;

size_t count(const qrt::Graph& g, qrt::OpKind kind) {
  return size_t(std::count_if(g.ops.begin(), g.ops.end(), [&](const qrt::Op& op) { return op.kind == kind; }));
}

// Rewrites; checks the result verifies and computes the source's bytes on the reference.
qrt::Graph rewrite(const std::string& text, qrt::passes::LayoutReport& report) {
  const qrt::Graph g = parse(text);
  const qrt::Graph out = qrt::passes::to_nhwc(g, &report);
  REQUIRE_MESSAGE(qrt::verify_graph(out).is_ok(), std::string(qrt::verify_graph(out).to_string() + "\n" + qrt::print_graph(out)));
  std::vector<qrt::Tensor> inputs;
  for (int v : g.inputs) {
    qrt::Tensor t = qrt::Tensor::zeros(g.values[size_t(v)].type);
    const bool is_signed = t.type.element.storage.is_signed;
    for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
      t.set_int(i, int64_t((i * 37 + 11) % 255) - (is_signed ? 128 : 0));
    }
    inputs.push_back(std::move(t));
  }
  pass_test::check_same_reference_outputs(g, out, inputs);
  return out;
}

std::string conv(const std::string& out, const std::string& in, const std::string& f, const std::string& in_t,
                 const std::string& f_t, const std::string& out_t, const std::string& extra = "") {
  return "  " + out + " = \"qrt.conv2d\"(" + in + ", " + f + ") {layout = \"NCHW\", pads = [1, 1, 1, 1]" + extra +
         "} : (" + in_t + ", " + f_t + ") -> " + out_t + "\n";
}

}  // namespace

TEST_CASE("conv -> clamp -> depthwise conv -> add (residual) -> max pool: one transpose in, one out") {
  const std::string text =
      "func.func @main(%x: " + kX + ", %f: " + kF + ", %d: " + kD + ") -> tensor<1x3x2x2x!quant.uniform<u8:f32, 0.75:120>> {\n" +
      conv("%y", "%x", "%f", kX, kF, kY) +
      "  %c = \"qrt.clamp\"(%y) {max = 6.0 : f32, min = 0.0 : f32} : (" + kY + ") -> " + kY + "\n" +
      conv("%e", "%c", "%d", kY, kD, kY, ", groups = 3 : i64") +
      "  %s = \"qrt.add\"(%e, %c) : (" + kY + ", " + kY + ") -> " + kY + "\n" +
      "  %p = \"qrt.max_pool2d\"(%s) {kernel = [2, 2], layout = \"NCHW\", strides = [2, 2]} : (" + kY +
      ") -> tensor<1x3x2x2x!quant.uniform<u8:f32, 0.75:120>>\n" +
      "  return %p : tensor<1x3x2x2x!quant.uniform<u8:f32, 0.75:120>>\n}\n";
  qrt::passes::LayoutReport r;
  const qrt::Graph out = rewrite(text, r);
  CHECK(r.converted == 3);
  CHECK(r.followed == 2);  // the clamp and the add
  // The input's transpose, the two filters' (constants at plan time), the output's.
  CHECK(count(out, qrt::OpKind::kTranspose) == 4);
  for (const qrt::Op& op : out.ops) {
    if (const qrt::Attribute* layout = op.attr("layout")) CHECK(layout->s == "NHWC");
  }
  // The returned value keeps its name.
  CHECK(out.values[size_t(out.outputs[0])].name == "p");
}

TEST_CASE("a per-axis result's channel axis follows its dimension") {
  const std::string text = "func.func @main(%x: " + kX + ", %f: " + kF + ") -> " + kYAxis + " {\n" +
                           conv("%y", "%x", "%f", kX, kF, kYAxis) + "  return %y : " + kYAxis + "\n}\n";
  qrt::passes::LayoutReport r;
  const qrt::Graph out = rewrite(text, r);
  CHECK(r.converted == 1);
  bool found = false;
  for (const qrt::Op& op : out.ops) {
    if (op.kind != qrt::OpKind::kConv2d) continue;
    const qrt::Type& t = out.values[size_t(op.results[0])].type;
    CHECK(t.dims == std::vector<int64_t>{1, 5, 5, 3});
    CHECK(t.element.axis == 3);
    found = true;
  }
  CHECK(found);
}

TEST_CASE("a transpose back to NHWC cancels; a flatten after global pooling reads NHWC") {
  const std::string p = "tensor<1x3x1x1x!quant.uniform<u8:f32, 0.75:120>>";
  const std::string text =
      "func.func @main(%x: " + kX + ", %f: " + kF +
      ") -> (tensor<1x5x5x3x!quant.uniform<u8:f32, 0.75:120>>, tensor<1x3x!quant.uniform<u8:f32, 0.75:120>>) {\n" +
      conv("%y", "%x", "%f", kX, kF, kY) +
      "  %t = \"qrt.transpose\"(%y) {perm = [0, 2, 3, 1]} : (" + kY + ") -> tensor<1x5x5x3x!quant.uniform<u8:f32, 0.75:120>>\n" +
      "  %g = \"qrt.avg_pool2d\"(%y) {kernel = [5, 5], layout = \"NCHW\"} : (" + kY + ") -> " + p + "\n" +
      "  %r = \"qrt.reshape\"(%g) : (" + p + ") -> tensor<1x3x!quant.uniform<u8:f32, 0.75:120>>\n" +
      "  return %t, %r : tensor<1x5x5x3x!quant.uniform<u8:f32, 0.75:120>>, tensor<1x3x!quant.uniform<u8:f32, 0.75:120>>\n}\n";
  qrt::passes::LayoutReport r;
  const qrt::Graph out = rewrite(text, r);
  CHECK(r.converted == 2);
  // Only the input's and the filter's transposes remain.
  CHECK(count(out, qrt::OpKind::kTranspose) == 2);
}

TEST_CASE("NHWC graphs and readers the pass does not know are left as they are, behind one transpose") {
  const std::string nhwc_x = "tensor<1x5x5x2x!quant.uniform<u8:f32, 0.5:128>>";
  const std::string nhwc_f = "tensor<3x3x3x2x!quant.uniform<i8:f32:0, {0.25, 0.125, 0.5}>>";
  const std::string nhwc_y = "tensor<1x5x5x3x!quant.uniform<u8:f32, 0.75:120>>";
  const std::string text = "func.func @main(%x: " + nhwc_x + ", %f: " + nhwc_f + ") -> " + nhwc_y + " {\n" +
                           "  %y = \"qrt.conv2d\"(%x, %f) {pads = [1, 1, 1, 1]} : (" + nhwc_x + ", " + nhwc_f + ") -> " +
                           nhwc_y + "\n  return %y : " + nhwc_y + "\n}\n";
  qrt::passes::LayoutReport r;
  const qrt::Graph out = rewrite(text, r);
  CHECK(r.converted == 0);
  CHECK(count(out, qrt::OpKind::kTranspose) == 0);
  // A softmax over the channels of an NCHW conv result reads the NCHW value.
  const std::string s = "func.func @main(%x: " + kX + ", %f: " + kF + ") -> " + kY + " {\n" +
                        conv("%y", "%x", "%f", kX, kF, kY) + "  %s = \"qrt.softmax\"(%y) {axis = 1 : i64} : (" + kY +
                        ") -> " + kY + "\n  return %s : " + kY + "\n}\n";
  const qrt::Graph out2 = rewrite(s, r);
  CHECK(r.converted == 1);
  CHECK(count(out2, qrt::OpKind::kTranspose) == 3);  // input, filter, back to NCHW for the softmax
}

namespace {

// A small CNN's classifier as the ONNX importer writes it: an NCHW convolution, a Flatten
// ([1, 3, 5, 5] -> [1, 75]) and a quantized matmul on constant weights, either [75, 4]
// (per output column) or a transposed [4, 75] (an ONNX Gemm's transB). `also_return`: the
// flatten is returned too.
// `also`: the flatten is also returned ("return") or also read by a relu that is returned
// ("relu"); "" neither.
std::string classifier(bool transposed_weights, const std::string& also = "") {
  const bool also_return = !also.empty();
  std::string hex;
  for (int i = 0; i < 75 * 4; ++i) {
    const int v = (i * 53 + 17) % 255 - 127;  // -127..127, every k and column different
    const char* digits = "0123456789ABCDEF";
    hex += digits[(uint8_t(v) >> 4) & 15];
    hex += digits[uint8_t(v) & 15];
  }
  const std::string scales = "{0.01, 0.02, 0.015, 0.005}";
  const std::string w = "tensor<75x4x!quant.uniform<i8:f32:1, " + scales + ">>";
  const std::string wt = "tensor<4x75x!quant.uniform<i8:f32:0, " + scales + ">>";
  const std::string flat = "tensor<1x75x!quant.uniform<u8:f32, 0.75:120>>";
  const std::string out = "tensor<1x4x!quant.uniform<u8:f32, 4.0:128>>";
  std::string t = "func.func @main(%x: " + kX + ", %f: " + kF + ") -> " + (also_return ? "(" + out + ", " + flat + ")" : out) + " {\n" +
                  conv("%y", "%x", "%f", kX, kF, kY) + "  %r = \"qrt.reshape\"(%y) : (" + kY + ") -> " + flat + "\n";
  if (transposed_weights) {
    t += "  %c = \"qrt.constant\"() {value = dense<\"0x" + hex + "\"> : tensor<4x75xi8>} : () -> " + wt + "\n";
    t += "  %w = \"qrt.transpose\"(%c) {perm = [1, 0]} : (" + wt + ") -> " + w + "\n";
  } else {
    t += "  %w = \"qrt.constant\"() {value = dense<\"0x" + hex + "\"> : tensor<75x4xi8>} : () -> " + w + "\n";
  }
  t += "  %m = \"qrt.matmul\"(%r, %w) : (" + flat + ", " + w + ") -> " + out + "\n";
  if (also == "relu") t += "  %q = \"qrt.relu\"(%r) : (" + flat + ") -> " + flat + "\n";
  t += also_return ? "  return %m, " + std::string(also == "relu" ? "%q" : "%r") + " : " + out + ", " + flat + "\n}\n"
                   : "  return %m : " + out + "\n}\n";
  return t;
}

}  // namespace

TEST_CASE("a flatten that only quantized matmuls read takes the NHWC order, the weights' rows permuted") {
  for (bool transposed : {false, true}) {
    CAPTURE(transposed);
    qrt::passes::LayoutReport r;
    const qrt::Graph out = rewrite(classifier(transposed), r);  // same bytes on the reference
    CHECK(r.converted == 1);
    CHECK(r.flattens == 1);
    CHECK(r.permuted == 1);
    // The flatten reads the convolution's NHWC result: only the input's and the filter's
    // transposes are left (and the weights' own transB, a constant).
    CHECK(count(out, qrt::OpKind::kTranspose) == (transposed ? 3 : 2));
    for (const qrt::Op& op : out.ops) {
      if (op.kind != qrt::OpKind::kReshape) continue;
      CHECK(out.values[size_t(op.operands[0])].type.dims == std::vector<int64_t>{1, 5, 5, 3});
    }
  }
}

TEST_CASE("a flatten with other readers, or returned, keeps the NCHW order") {
  for (const std::string also : {"return", "relu"}) {
    CAPTURE(also);
    qrt::passes::LayoutReport r;
    const qrt::Graph out = rewrite(classifier(true, also), r);
    CHECK(r.flattens == 0);
    CHECK(r.permuted == 0);
    bool nchw_flatten = false;
    for (const qrt::Op& op : out.ops) {
      if (op.kind == qrt::OpKind::kReshape) nchw_flatten = out.values[size_t(op.operands[0])].type.dims == std::vector<int64_t>{1, 3, 5, 5};
    }
    CHECK(nchw_flatten);
  }
}
