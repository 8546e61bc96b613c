// Tests: an NCHW QDQ ConvTranspose as ONNX Runtime's static quantizer writes it (u8
// activations, s8 weights per output channel, an i32 bias at s_x * s_w, a Relu between the
// QDQ pairs) imports, folds into an integer qrt.conv_transpose2d and runs on the generated
// kernels with the reference backend's bytes, at every ISA level the host has.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <qrt.h>

#include "onnx_builders.h"

namespace {

using namespace onnx_builders;

// x [1, 4, 5, 5] -> QuantizeLinear -> DequantizeLinear -> ConvTranspose (3x3, stride 2, pads 1,
// output_padding 1; weights [4, 6, 3, 3] per output channel, bias) -> Relu -> QDQ -> y
// [1, 6, 10, 10].
onnx::ModelProto qdq_conv_transpose() {
  onnx::ModelProto model = empty_model(13);
  onnx::GraphProto* g = model.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 4, 5, 5});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 6, 10, 10});
  const float sx = 0.05f, sy = 0.1f;
  const uint8_t zx = 120, zy = 0;
  std::vector<float> sw(6);
  for (size_t o = 0; o < sw.size(); ++o) sw[o] = 0.01f * float(o + 1);
  add_floats(g, "sx", {}, {sx});
  add_raw(g, "zx", onnx::TensorProto::UINT8, {}, &zx, 1);
  add_floats(g, "sy", {}, {sy});
  add_raw(g, "zy", onnx::TensorProto::UINT8, {}, &zy, 1);
  add_floats(g, "sw", {6}, sw);
  std::vector<int8_t> zw(6, 0), w(4 * 6 * 3 * 3);
  add_raw(g, "zw", onnx::TensorProto::INT8, {6}, zw.data(), zw.size());
  std::mt19937 rng(5);
  for (auto& v : w) v = int8_t(std::uniform_int_distribution<int>(-127, 127)(rng));
  add_raw(g, "wq", onnx::TensorProto::INT8, {4, 6, 3, 3}, w.data(), w.size());
  std::vector<int32_t> bias(6);
  std::vector<float> sb(6);
  std::vector<int32_t> zb(6, 0);
  for (size_t o = 0; o < bias.size(); ++o) {
    bias[o] = std::uniform_int_distribution<int32_t>(-3000, 3000)(rng);
    sb[o] = sx * sw[o];
  }
  add_raw(g, "bq", onnx::TensorProto::INT32, {6}, bias.data(), bias.size() * 4);
  add_floats(g, "sb", {6}, sb);
  add_raw(g, "zb", onnx::TensorProto::INT32, {6}, zb.data(), zb.size() * 4);
  add_node(g, "QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  add_node(g, "DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
  set_int_attr(add_node(g, "DequantizeLinear", {"wq", "sw", "zw"}, {"wd"}), "axis", 1);
  set_int_attr(add_node(g, "DequantizeLinear", {"bq", "sb", "zb"}, {"bd"}), "axis", 0);
  onnx::NodeProto* ct = add_node(g, "ConvTranspose", {"xd", "wd", "bd"}, {"c"});
  set_ints_attr(ct, "strides", {2, 2});
  set_ints_attr(ct, "pads", {1, 1, 1, 1});
  set_ints_attr(ct, "output_padding", {1, 1});
  add_node(g, "Relu", {"c"}, {"r"});
  add_node(g, "QuantizeLinear", {"r", "sy", "zy"}, {"yq"});
  add_node(g, "DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  return model;
}

struct TransposeRun {
  std::vector<float> y;
  std::string kernel;  // the conv_transpose2d's
};

TransposeRun run(const std::string& bytes, qrt_backend backend, const char* isa, const char* passes = nullptr) {
  qrt_model_t* m = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(bytes.data(), bytes.size(), "ct.onnx", &m) == QRT_OK, qrt_last_error_message());
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.backend = backend;
  options.isa = isa;
  options.passes = passes;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
  TransposeRun r;
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, i, &info) == QRT_OK);
    if (std::string(info.op) == "qrt.conv_transpose2d") r.kernel = info.kernel;
  }
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  std::vector<float> x(4 * 5 * 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 37 % 101) - 40) * 0.07f;
  const int64_t dims[] = {1, 4, 5, 5};
  REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 4, dims, x.data(), x.size() * 4) == QRT_OK);
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view v;
  REQUIRE(qrt_context_output(ctx, 0, &v) == QRT_OK);
  r.y.resize(v.bytes / 4);
  std::memcpy(r.y.data(), v.data, v.bytes);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
  return r;
}

}  // namespace

TEST_CASE("an NCHW QDQ ConvTranspose folds into an integer conv_transpose2d on the kernels, with the reference's bytes") {
  const std::string bytes = qdq_conv_transpose().SerializeAsString();
  const TransposeRun ref = run(bytes, QRT_BACKEND_REF, nullptr);
  REQUIRE(ref.y.size() == 6 * 10 * 10);
  size_t positive = 0;
  for (float v : ref.y) positive += v > 0.0f;
  CHECK(positive > 100);  // the case exercises real values, not a relu of nothing
  // The fold keeps QDQ's meaning: the float graph (no passes: dequantize, f32 ConvTranspose,
  // quantize) agrees within one output step (0.1), and the region did fold.
  const TransposeRun unfolded = run(bytes, QRT_BACKEND_REF, nullptr, "");
  CHECK(unfolded.kernel == "reference");
  size_t within = 0;
  for (size_t i = 0; i < ref.y.size(); ++i) within += std::fabs(double(ref.y[i]) - double(unfolded.y[i])) <= 0.1001;
  CHECK(within == ref.y.size());
  for (const std::string& level : tested_levels()) {
    CAPTURE(level);
    const TransposeRun jit = run(bytes, QRT_BACKEND_DEFAULT, level.c_str());
    CHECK_MESSAGE(jit.kernel.find("sub-pixel phases of stride") != std::string::npos, jit.kernel);
    CHECK(std::memcmp(jit.y.data(), ref.y.data(), ref.y.size() * 4) == 0);
  }
}
