// Tests: the ONNX ops qrt composes from its own (importers/onnx_composite_ops.cpp) on
// hand-computed cases the node tests do not reach (ties, out-of-range indices, negative
// depth offsets, infinities), and their refusals, which must name the node and the value.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/ref/reference.h"
#include "tests/importers/onnx_builders.h"

namespace {

using namespace onnx_builders;

/// Imports `m` and runs it on the reference with float input `x`; the output as doubles.
std::vector<double> run(OneNode& m, const std::vector<int64_t>& dims, const std::vector<float>& x) {
  auto g = import(m.model);
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  qrt::Tensor t = qrt::Tensor::zeros(g->values[size_t(g->inputs[0])].type);
  t.type.dims = dims;
  REQUIRE(size_t(t.num_elements()) == x.size());
  for (size_t i = 0; i < x.size(); ++i) t.set_float(i, x[i]);
  auto out = qrt::run_reference(*g, {t});
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  std::vector<double> y;
  const qrt::Tensor& r = out->at(0);
  for (size_t i = 0; i < size_t(r.num_elements()); ++i) {
    y.push_back(r.type.element.is_float() ? r.float_at(i) : double(r.int_at(i)));
  }
  return y;
}

}  // namespace

TEST_CASE("Hardmax marks the first maximum; OneHot maps negative indices and leaves out-of-range rows off") {
  OneNode h("Hardmax", {2, 3});
  CHECK(run(h, {2, 3}, {1, 5, 5, -INFINITY, -INFINITY, -INFINITY}) == std::vector<double>{0, 1, 0, 1, 0, 0});

  OneNode o("OneHot", {4}, {"depth", "values"});
  add_int64s(o.g, "depth", {3}, true);
  add_floats(o.g, "values", {2}, {-1.0f, 7.0f});
  // Indices 2, -1 (= 2), 3 and -4 (out of range: every position off), 0.9 (truncates to 0).
  CHECK(run(o, {4}, {2, -1, 3, 0.9f}) == std::vector<double>{-1, -1, 7, -1, -1, 7, -1, -1, -1, 7, -1, -1});
  set_int_attr(o.node, "axis", 0);
  CHECK(run(o, {4}, {2, -1, -4, 0}) == std::vector<double>{-1, -1, -1, 7, -1, -1, -1, -1, 7, 7, -1, -1});
}

TEST_CASE("Tile repeats every axis in order; PRelu, Softplus, Shrink and IsInf on hand-computed values") {
  OneNode t("Tile", {2, 2}, {"repeats"});
  add_int64s(t.g, "repeats", {2, 3});
  const std::vector<double> tiled = run(t, {2, 2}, {1, 2, 3, 4});
  CHECK(tiled == std::vector<double>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});

  OneNode p("PRelu", {2, 2}, {"slope"});
  add_floats(p.g, "slope", {2}, {0.5f, -2.0f});  // one slope per column
  CHECK(run(p, {2, 2}, {-4, -4, 3, -1}) == std::vector<double>{-2, 8, 3, 2});

  OneNode s("Softplus", {4});
  const std::vector<double> sp = run(s, {4}, {0, 100, -100, -INFINITY});
  CHECK(sp[0] == doctest::Approx(std::log(2.0)).epsilon(1e-7));
  CHECK(sp[1] == 100);  // ONNX's log(exp(x) + 1) would overflow to inf
  CHECK(sp[2] == doctest::Approx(std::exp(-100.0)).epsilon(1e-6));
  CHECK(sp[3] == 0);

  OneNode k("Shrink", {5});
  k.node->add_attribute()->set_name("lambd");
  k.node->mutable_attribute(0)->set_type(onnx::AttributeProto::FLOAT);
  k.node->mutable_attribute(0)->set_f(1.5f);
  k.node->add_attribute()->set_name("bias");
  k.node->mutable_attribute(1)->set_type(onnx::AttributeProto::FLOAT);
  k.node->mutable_attribute(1)->set_f(1.0f);
  CHECK(run(k, {5}, {-3, -1.5f, 0, 1.5f, 2}) == std::vector<double>{-2, 0, 0, 0, 1});

  OneNode i("IsInf", {4});
  set_int_attr(i.node, "detect_positive", 0);
  CHECK(run(i, {4}, {INFINITY, -INFINITY, NAN, 1}) == std::vector<double>{0, 1, 0, 0});
}

TEST_CASE("a Reduce op with no axes and noop_with_empty_axes is the identity (ReduceL2 included, as ONNX's spec says)") {
  for (const char* op : {"ReduceL2", "ReduceLogSumExp", "ReduceSumSquare"}) {
    CAPTURE(op);
    OneNode r(op, {3});
    r.model.mutable_opset_import(0)->set_version(18);
    set_int_attr(r.node, "noop_with_empty_axes", 1);
    CHECK(run(r, {3}, {-2, 0.5f, 3}) == std::vector<double>{-2, 0.5, 3});
  }
}

TEST_CASE("composed ops refuse what they cannot express, naming the node and the value") {
  OneNode t("Tile", {2, 2}, {"repeats"});
  add_int64s(t.g, "repeats", {2});
  CHECK(import_error(t) == "node 'Tile_node' (Tile): repeats has 1 entries for an input of rank 2");

  OneNode o("OneHot", {4}, {"depth", "values"});
  add_value(o.g->mutable_input(), "depth", onnx::TensorProto::INT64, {1});
  add_floats(o.g, "values", {2}, {0, 1});
  CHECK(import_error(o) == "node 'OneHot_node' (OneHot): needs depth as a constant scalar");

  OneNode p("PRelu", {2, 4}, {"slope"});
  add_floats(p.g, "slope", {3}, {1, 2, 3});
  CHECK(import_error(p) == "node 'PRelu_node' (PRelu): slope tensor<3xf32> does not broadcast to x tensor<2x4xf32>");

  OneNode s("Softsign", {4}, {}, onnx::TensorProto::INT32);
  CHECK(import_error(s) == "node 'Softsign_node' (Softsign): expects a float tensor, got tensor<4xi32>");

  OneNode n("InstanceNormalization", {1, 2, 3}, {"scale", "B"});
  add_floats(n.g, "scale", {3}, {1, 1, 1});
  add_floats(n.g, "B", {2}, {0, 0});
  CHECK(import_error(n) == "node 'InstanceNormalization_node' (InstanceNormalization): scale and B must be f32 of shape [2], got tensor<3xf32>");
}
