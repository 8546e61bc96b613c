// Tests: qrt.conv2d's batch_groups (StableHLO's batch_group_count) on the reference, by hand
// and against its definition; the verifier's rules; and the expand-batch-groups pass, whose
// pieces give the whole op's bytes (on the JIT: tests/runtime/test_batch_groups.cpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ir/ops.h"
#include "ir/text_format.h"
#include "jit/ref/reference.h"
#include "tests/passes/batch_group_graphs.h"
#include "tests/passes/pass_test_util.h"

namespace {

using batch_group_test::ConvCase;
using batch_group_test::inputs_of;

std::vector<uint8_t> bytes_of(const qrt::Tensor& t) { return std::vector<uint8_t>(t.bytes(), t.bytes() + t.byte_size()); }

std::string verify(const std::string& text) {
  auto g = qrt::parse_graph(text);
  return g.is_ok() ? "ok" : g.status().message();
}

}  // namespace

TEST_CASE("batch_groups on the reference: batch group g meets output channels g") {
  // x [2, 1, 1, 1] = [1, 10]; filter [2, 1, 1, 1] = [2, 3]: channel 0 reads sample 0, channel 1
  // sample 1; the result holds one sample.
  const std::string text = R"(func.func @main(%x: tensor<2x1x1x1xf32>, %f: tensor<2x1x1x1xf32>) -> tensor<1x1x1x2xf32> {
  %y = "qrt.conv2d"(%x, %f) {batch_groups = 2 : i64} : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x1x1x2xf32>
  return %y : tensor<1x1x1x2xf32>
}
)";
  const qrt::Graph g = pass_test::parse(text);
  std::vector<qrt::Tensor> in = {qrt::Tensor::zeros(g.values[size_t(g.inputs[0])].type),
                                 qrt::Tensor::zeros(g.values[size_t(g.inputs[1])].type)};
  in[0].set_float(0, 1);
  in[0].set_float(1, 10);
  in[1].set_float(0, 2);
  in[1].set_float(1, 3);
  auto out = qrt::run_reference(g, in);
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  CHECK((*out)[0].float_at(0) == 2);
  CHECK((*out)[0].float_at(1) == 30);
}

TEST_CASE("batch_groups: the verifier's rules name the values at fault") {
  auto graph = [](const std::string& x, const std::string& f, const std::string& y, const std::string& attrs) {
    return "func.func @main(%x: " + x + ", %f: " + f + ") -> " + y + " {\n  %y = \"qrt.conv2d\"(%x, %f) " + attrs + " : (" +
           x + ", " + f + ") -> " + y + "\n  return %y : " + y + "\n}\n";
  };
  CHECK(verify(graph("tensor<3x4x4x2xf32>", "tensor<2x1x1x2xf32>", "tensor<1x4x4x2xf32>", "{batch_groups = 2 : i64}"))
            .find("batch 3 is not divisible by batch_groups 2") != std::string::npos);
  CHECK(verify(graph("tensor<4x4x4x2xf32>", "tensor<3x1x1x2xf32>", "tensor<2x4x4x3xf32>", "{batch_groups = 2 : i64}"))
            .find("output channels 3 are not divisible by batch_groups 2") != std::string::npos);
  CHECK(verify(graph("tensor<4x4x4x2xf32>", "tensor<2x1x1x1xf32>", "tensor<2x4x4x2xf32>",
                     "{batch_groups = 2 : i64, groups = 2 : i64}"))
            .find("at most one of them may exceed 1") != std::string::npos);
  CHECK(verify(graph("tensor<4x4x4x2xf32>", "tensor<2x1x1x2xf32>", "tensor<4x4x4x2xf32>", "{batch_groups = 0 : i64}"))
            .find("batch_groups must be >= 1, got 0") != std::string::npos);
  // The result holds N / B samples.
  CHECK(verify(graph("tensor<4x4x4x2xf32>", "tensor<2x1x1x2xf32>", "tensor<4x4x4x2xf32>", "{batch_groups = 2 : i64}"))
            .find("does not match the expected shape [2x4x4x2]") != std::string::npos);
}

TEST_CASE("batch_groups on the reference equals its definition: slices, one convolution each, a concat") {
  // The definition written out by hand with batch_groups = 1 pieces; the pass must produce the
  // same bytes, and so must the whole op.
  for (const ConvCase& c : batch_group_test::conv_cases()) {
    CAPTURE(c.name);
    const std::string text = batch_group_test::conv_text(c);
    const qrt::Graph whole = pass_test::parse(text);
    std::vector<std::string> log;
    const qrt::Graph split = pass_test::run_pipeline(whole, "expand-batch-groups", log);
    CHECK(pass_test::has_line(log, "batch_groups " + std::to_string(c.groups) + " -> " + std::to_string(c.groups) +
                                       " convolutions and a concat"));
    const std::string printed = qrt::print_graph(split);
    CHECK(printed.find("batch_groups") == std::string::npos);
    CHECK(printed.find("qrt.concat") != std::string::npos);
    const auto in = inputs_of(whole);
    auto a = qrt::run_reference(whole, in);
    auto b = qrt::run_reference(split, in);
    REQUIRE_MESSAGE(a.is_ok(), a.status().to_string());
    REQUIRE_MESSAGE(b.is_ok(), b.status().to_string());
    CHECK(bytes_of((*a)[0]) == bytes_of((*b)[0]));
    // Not all zeros or saturated: the case tests something.
    const qrt::Tensor& y = (*a)[0];
    int64_t distinct = 0;
    for (size_t i = 1; i < size_t(y.num_elements()); ++i) {
      distinct += y.type.element.is_float() ? y.float_at(i) != y.float_at(0) : y.int_at(i) != y.int_at(0);
    }
    CHECK(distinct > int64_t(y.num_elements()) / 2);
  }
}

TEST_CASE("expand-batch-groups keeps what it cannot split whole, saying why") {
  ConvCase dynamic;
  dynamic.dynamic_batch = true;
  std::vector<std::string> log;
  const qrt::Graph g = pass_test::run_pipeline(pass_test::parse(batch_group_test::conv_text(dynamic)), "expand-batch-groups", log);
  CHECK(pass_test::has_line(log, "kept whole (runs on the reference): a dynamic batch"));
  CHECK(qrt::print_graph(g).find("batch_groups = 2") != std::string::npos);
  // A dynamic batch that the run makes 4: the reference computes the whole op; 3 is refused.
  qrt::Type xt = g.values[size_t(g.inputs[0])].type;
  xt.dims[0] = 4;
  qrt::Tensor x = qrt::Tensor::zeros(xt);
  CHECK(qrt::run_reference(g, {x}).is_ok());
  xt.dims[0] = 3;
  auto bad = qrt::run_reference(g, {qrt::Tensor::zeros(xt)});
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("not divisible by batch_groups 2") != std::string::npos);
}
