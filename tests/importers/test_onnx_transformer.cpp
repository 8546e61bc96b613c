// Tests: the transformer op set and dynamic quantization through the ONNX importer — the
// generated quantize_dynamic-style encoder (models/onnx/encoder_dynamic_int8*) against its
// float64 numpy expectation, JIT == reference, import-time folding of shape sub-graphs,
// MatMulInteger with DynamicQuantizeLinear's run-time zero point, and refusals.
#include <doctest/doctest.h>

#include <qrt.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer.h"
#include "tests/importers/onnx_builders.h"
#include "ir/text_format.h"
#include "tools/npy.h"

namespace {

using namespace onnx_builders;

const std::string kOnnx = std::string(MODELS_DIR) + "/onnx/";

qrt_tools::NpyArray npy(const std::string& path) {
  qrt_tools::NpyArray a;
  std::string error;
  REQUIRE_MESSAGE(qrt_tools::read_npy(path, a, error), error);
  return a;
}

struct EncoderRun {
  std::vector<float> hidden, pooled;
  size_t reference_ops = 0;
};

EncoderRun run_encoder(qrt_backend backend, int threads) {
  const qrt_tools::NpyArray ids = npy(kOnnx + "encoder_dynamic_int8_ids.npy");
  const qrt_tools::NpyArray mask = npy(kOnnx + "encoder_dynamic_int8_mask.npy");
  qrt_model_t* m = nullptr;
  qrt_plan_t* plan = nullptr;
  qrt_context_t* ctx = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_file((kOnnx + "encoder_dynamic_int8.onnx").c_str(), &m) == QRT_OK,
                  qrt_last_error_message());
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.backend = backend;
  options.threads = size_t(threads);
  REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
  EncoderRun r;
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    qrt_plan_op_info(plan, i, &info);
    r.reference_ops += std::strcmp(info.kernel, "reference") == 0 && std::strcmp(info.op, "qrt.constant") != 0;
  }
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  for (size_t i = 0; i < 2; ++i) {
    const qrt_tools::NpyArray& a = i == 0 ? ids : mask;
    REQUIRE_MESSAGE(qrt_context_set_input(ctx, i, QRT_DTYPE_I64, a.shape.size(), a.shape.data(), a.data.data(),
                                          a.data.size()) == QRT_OK, qrt_last_error_message());
  }
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  for (size_t o = 0; o < 2; ++o) {
    qrt_tensor_view view;
    REQUIRE(qrt_context_output(ctx, o, &view) == QRT_OK);
    std::vector<float>& dst = o == 0 ? r.hidden : r.pooled;
    dst.resize(view.bytes / 4);
    std::memcpy(dst.data(), view.data, view.bytes);
  }
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
  return r;
}

std::vector<float> floats_of(const std::string& file) {
  const qrt_tools::NpyArray a = npy(kOnnx + file);
  std::vector<float> v(a.data.size() / 4);
  std::memcpy(v.data(), a.data.data(), a.data.size());
  return v;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
  return worst;
}

// Loads serialized ONNX `bytes`, runs them once on `backend` with the one f32 input `x` of
// shape `dims`, and returns the first output's bytes.
std::vector<uint8_t> run_onnx(const std::string& bytes, qrt_backend backend, const std::vector<int64_t>& dims,
                              const std::vector<float>& x) {
  qrt_model_t* m = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(bytes.data(), bytes.size(), "t.onnx", &m) == QRT_OK, qrt_last_error_message());
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.backend = backend;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, dims.size(), dims.data(), x.data(), x.size() * 4) == QRT_OK);
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  const auto* p = static_cast<const uint8_t*>(view.data);
  std::vector<uint8_t> out(p, p + view.bytes);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
  return out;
}

}  // namespace

TEST_CASE("a quantize_dynamic BERT-style encoder: outputs match the float64 expectation, JIT == reference") {
  const EncoderRun jit = run_encoder(QRT_BACKEND_JIT, 1);
  const std::vector<float> hidden = floats_of("encoder_dynamic_int8_hidden.npy");
  const std::vector<float> pooled = floats_of("encoder_dynamic_int8_pooled.npy");
  // Dynamic quantization computed in f32 (qrt) vs float64 (numpy): the stated tolerance is
  // 1e-3 absolute on layer-normed values of magnitude ~3 (measured: 5e-7).
  CHECK(max_abs_diff(jit.hidden, hidden) <= 1e-3);
  CHECK(max_abs_diff(jit.pooled, pooled) <= 1e-3);
  const EncoderRun ref = run_encoder(QRT_BACKEND_REF, 1);
  CHECK(ref.hidden == jit.hidden);
  CHECK(ref.pooled == jit.pooled);
  const EncoderRun threaded = run_encoder(QRT_BACKEND_JIT, 3);
  CHECK(threaded.hidden == jit.hidden);
  MESSAGE("ops left on the reference: " << jit.reference_ops);
}

TEST_CASE("shape sub-graphs fold at import: Shape -> Gather -> Unsqueeze -> Concat -> Reshape") {
  onnx::ModelProto model = empty_model(13);
  onnx::GraphProto* g = model.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 6});
  add_int64s(g, "zero", {0}, true);
  add_int64s(g, "axes", {0});
  add_int64s(g, "tail", {3, 2});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_node(g, "Gather", {"shape", "zero"}, {"batch"});
  add_node(g, "Unsqueeze", {"batch", "axes"}, {"batch1"});
  auto* cat = add_node(g, "Concat", {"batch1", "tail"}, {"target"});
  auto* axis = cat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  add_node(g, "Reshape", {"x", "target"}, {"y"});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2, 3, 2});
  auto graph = import(model);
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  const std::string text = qrt::print_graph(*graph);
  CHECK(text.find("qrt.shape") == std::string::npos);
  CHECK(text.find("qrt.gather") == std::string::npos);
  CHECK(text.find("-> tensor<2x3x2xf32>") != std::string::npos);
}

TEST_CASE("unsupported or unfoldable transformer patterns are refused naming the node and the reason") {
  {  // MatMulInteger with a run-time A zero point and a run-time B.
    onnx::ModelProto model = empty_model(13);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 4});
    add_value(g->mutable_input(), "w", onnx::TensorProto::INT8, {4, 3});
    add_node(g, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
    add_node(g, "MatMulInteger", {"xq", "w", "xz"}, {"y"});
    add_value(g->mutable_output(), "y", onnx::TensorProto::INT32, {2, 3});
    auto graph = import(model);
    REQUIRE_FALSE(graph.is_ok());
    CHECK(graph.status().message().find("'MatMulInteger_node' (MatMulInteger): B must be a constant when A's zero point "
                                        "is computed at run time") != std::string::npos);
  }
  {  // ConstantOfShape of a run-time shape.
    onnx::ModelProto model = empty_model(13);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "s", onnx::TensorProto::INT64, {2});
    add_node(g, "ConstantOfShape", {"s"}, {"y"});
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {});
    auto graph = import(model);
    REQUIRE_FALSE(graph.is_ok());
    CHECK(graph.status().message().find("(ConstantOfShape): its inputs must be computable at import") !=
          std::string::npos);
  }
  {  // Split sizes that do not add up.
    onnx::ModelProto model = empty_model(13);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {5});
    add_int64s(g, "sizes", {2, 2});
    add_node(g, "Split", {"x", "sizes"}, {"a", "b"});
    add_value(g->mutable_output(), "a", onnx::TensorProto::FLOAT, {2});
    auto graph = import(model);
    REQUIRE_FALSE(graph.is_ok());
    CHECK(graph.status().message().find("split sizes add up to 4, the axis has 5") != std::string::npos);
  }
}

TEST_CASE("Split, Slice with steps, Where and Expand import and run") {
  onnx::ModelProto model = empty_model(13);
  onnx::GraphProto* g = model.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {6});
  add_int64s(g, "sizes", {2, 4});
  add_int64s(g, "starts", {3});
  add_int64s(g, "ends", {-100});
  add_int64s(g, "axes", {0});
  add_int64s(g, "steps", {-2});
  add_int64s(g, "shape", {2, 2});
  add_node(g, "Split", {"x", "sizes"}, {"head", "rest"});
  add_node(g, "Slice", {"rest", "starts", "ends", "axes", "steps"}, {"odd"});  // rest[3], rest[1]
  add_node(g, "Less", {"head", "odd"}, {"lt"});
  add_node(g, "Where", {"lt", "head", "odd"}, {"mn"});
  add_node(g, "Expand", {"mn", "shape"}, {"y"});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2, 2});
  auto graph = import(model);
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  std::string bytes;
  model.SerializeToString(&bytes);
  qrt_model_t* m = nullptr;
  REQUIRE(qrt_model_load_buffer(bytes.data(), bytes.size(), "t.onnx", &m) == QRT_OK);
  qrt_plan_t* plan = nullptr;
  REQUIRE(qrt_plan_create(m, nullptr, &plan) == QRT_OK);
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  const float x[6] = {10, -1, 0, 3, 4, 5};  // head [10, -1], rest [0, 3, 4, 5] -> odd [5, 3]
  const int64_t dims[1] = {6};
  REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 1, dims, x, sizeof x) == QRT_OK);
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  REQUIRE(view.bytes == 16);
  const float* y = static_cast<const float*>(view.data);
  CHECK(y[0] == 5);  // min(10, 5)
  CHECK(y[1] == -1);
  CHECK(y[2] == 5);
  CHECK(y[3] == -1);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
}

TEST_CASE("ConvInteger with DynamicQuantizeLinear's run-time zero point equals the direct integer sum") {
  const int64_t C = 3, H = 7, W = 6, O = 4, K = 3;
  for (bool per_channel : {false, true}) {
    onnx::ModelProto model = empty_model(13);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, C, H, W});
    std::vector<int8_t> w(size_t(O * C * K * K));
    for (size_t i = 0; i < w.size(); ++i) w[i] = int8_t(int(i * 37 % 255) - 127);
    std::vector<int8_t> zw = per_channel ? std::vector<int8_t>{3, -5, 0, 127} : std::vector<int8_t>{-7};
    onnx::TensorProto* wt = g->add_initializer();
    wt->set_name("w");
    wt->set_data_type(onnx::TensorProto::INT8);
    for (int64_t d : {O, C, K, K}) wt->add_dims(d);
    wt->set_raw_data(std::string(reinterpret_cast<const char*>(w.data()), w.size()));
    onnx::TensorProto* zt = g->add_initializer();
    zt->set_name("wz");
    zt->set_data_type(onnx::TensorProto::INT8);
    if (per_channel) zt->add_dims(O);
    zt->set_raw_data(std::string(reinterpret_cast<const char*>(zw.data()), zw.size()));
    add_node(g, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
    onnx::NodeProto* conv = add_node(g, "ConvInteger", {"xq", "w", "xz", "wz"}, {"y"});
    auto ints = [&](const char* name, std::vector<int64_t> v) {
      auto* a = conv->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t x : v) a->add_ints(x);
    };
    ints("pads", {1, 1, 1, 0});
    ints("strides", {2, 1});
    const int64_t OH = (H + 2 - K) / 2 + 1, OW = (W + 1 - K) / 1 + 1;
    add_value(g->mutable_output(), "y", onnx::TensorProto::INT32, {1, O, OH, OW});
    std::string bytes;
    model.SerializeToString(&bytes);
    // Inputs, and the expectation straight from the ONNX definitions.
    std::vector<float> x(size_t(C * H * W));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 53 % 97) - 30) * 0.037f;
    float lo = 0.0f, hi = 0.0f;
    for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
    const float scale = (hi - lo) / 255.0f;
    const int zx = int(std::clamp(std::nearbyint(0.0f - lo / scale), 0.0f, 255.0f));
    std::vector<int> q(x.size());
    for (size_t i = 0; i < x.size(); ++i) q[i] = int(std::clamp(std::nearbyint(x[i] / scale) + float(zx), 0.0f, 255.0f));
    std::vector<int32_t> want(size_t(O * OH * OW), 0);
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t py = 0; py < OH; ++py) {
        for (int64_t px = 0; px < OW; ++px) {
          int64_t s = 0;
          for (int64_t c = 0; c < C; ++c) {
            for (int64_t ky = 0; ky < K; ++ky) {
              for (int64_t kx = 0; kx < K; ++kx) {
                const int64_t yy = py * 2 - 1 + ky, xx = px - 1 + kx;
                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;  // padding holds the zero point
                s += int64_t(q[size_t((c * H + yy) * W + xx)] - zx) *
                     (w[size_t(((o * C + c) * K + ky) * K + kx)] - zw[per_channel ? size_t(o) : 0]);
              }
            }
          }
          want[size_t((o * OH + py) * OW + px)] = int32_t(s);
        }
      }
    }
    for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
      const std::vector<uint8_t> got = run_onnx(bytes, backend, {1, C, H, W}, x);
      REQUIRE(got.size() == want.size() * 4);
      CHECK(std::memcmp(got.data(), want.data(), got.size()) == 0);
    }
  }
}

TEST_CASE("Resize imports with ONNX's coordinate rules: nearest and linear by hand; unknown modes are refused by name") {
  auto model_with = [](const std::string& mode, const std::vector<float>& scales) {
    onnx::ModelProto model = empty_model(13);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 2, 3});
    onnx::TensorProto* s = g->add_initializer();
    s->set_name("scales");
    s->set_data_type(onnx::TensorProto::FLOAT);
    s->add_dims(int64_t(scales.size()));
    for (float v : scales) s->add_float_data(v);
    onnx::NodeProto* n = add_node(g, "Resize", {"x", "", "scales"}, {"y"});
    auto* m = n->add_attribute();
    m->set_name("mode");
    m->set_type(onnx::AttributeProto::STRING);
    m->set_s(mode);
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 1, 4, 6});
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
  };
  // Upsampling by 2 with half_pixel and round_prefer_floor (the defaults) repeats each pixel.
  const std::string bytes = model_with("nearest", {1.0f, 1.0f, 2.0f, 2.0f});
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> want;
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 6; ++c) want.push_back(x[size_t(r / 2 * 3 + c / 2)]);
  }
  for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
    const std::vector<uint8_t> got = run_onnx(bytes, backend, {1, 1, 2, 3}, x);
    REQUIRE(got.size() == want.size() * 4);
    CHECK(std::memcmp(got.data(), want.data(), got.size()) == 0);
  }
  // Linear (half_pixel): each axis samples at (j + 0.5) / 2 - 0.5, neighbours clamped to the
  // edge. Rows become [1, 1.25, 1.75, 2.25, 2.75, 3] and [4, ..., 6]; columns r0, r0 + 0.75,
  // r0 + 2.25, r1 (all exact in binary).
  const std::string linear = model_with("linear", {1.0f, 1.0f, 2.0f, 2.0f});
  const float row[6] = {1.0f, 1.25f, 1.75f, 2.25f, 2.75f, 3.0f}, down[4] = {0.0f, 0.75f, 2.25f, 3.0f};
  want.clear();
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 6; ++c) want.push_back(row[c] + down[r]);
  }
  for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
    const std::vector<uint8_t> got = run_onnx(linear, backend, {1, 1, 2, 3}, x);
    REQUIRE(got.size() == want.size() * 4);
    CHECK(std::memcmp(got.data(), want.data(), got.size()) == 0);
  }
  const std::string unknown = model_with("bicubic", {1.0f, 1.0f, 2.0f, 2.0f});
  qrt_model_t* m = nullptr;
  CHECK(qrt_model_load_buffer(unknown.data(), unknown.size(), "resize.onnx", &m) != QRT_OK);
  CHECK(std::string(qrt_last_error_message()).find("(Resize): mode 'bicubic' is not supported (nearest, linear, cubic)") !=
        std::string::npos);
}

TEST_CASE("hostile window attributes and Resize scales are import errors, checked before the arithmetic") {
  auto string_attr = [](onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  };
  // x [1, 1, h, 4] through one node with a [1, 1, 1, 1] filter.
  auto conv_model = [&](const std::string& op, const std::vector<int64_t>& strides, int64_t h = 4) {
    onnx::ModelProto model = empty_model(13);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 1, h, 4});
    add_floats(g, "w", {1, 1, 1, 1}, {1.0f});
    onnx::NodeProto* n = add_node(g, op, {"x", "w"}, {"y"});
    string_attr(n, "auto_pad", "SAME_UPPER");
    set_ints_attr(n, "strides", strides);
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
    return model;
  };
  // A stride of 0 divided by zero resolving SAME padding.
  CHECK(import(conv_model("Conv", {0, 1})).status().to_string() ==
        "t.onnx: error: node 'Conv_node' (Conv): auto_pad SAME_UPPER needs strides in [1, 2147483647], got [0, 1]");
  CHECK(import(conv_model("Conv", {2, 1})).is_ok());
  // in x stride and stride x (in - 1) overflowed int64.
  CHECK(import(conv_model("ConvTranspose", {INT64_MAX, 1})).status().to_string() ==
        "t.onnx: error: node 'ConvTranspose_node' (ConvTranspose): strides must be in [1, 2147483647], got "
        "[9223372036854775807, 1]");
  CHECK(import(conv_model("ConvTranspose", {2147483647, 1}, 262144)).status().to_string() ==
        "t.onnx: error: node 'ConvTranspose_node' (ConvTranspose): auto_pad SAME_UPPER makes an output of 262144 x "
        "stride 2147483647, more than qrt's limit of 2^48");
  CHECK(import(conv_model("ConvTranspose", {1, 1})).is_ok());
  onnx::ModelProto shaped = conv_model("ConvTranspose", {2147483647, 1}, int64_t(1) << 40);
  set_ints_attr(shaped.mutable_graph()->mutable_node(0), "output_shape", {10, 4});  // (in - 1) x stride is 2^71
  CHECK(import(shaped).status().to_string() ==
        "t.onnx: error: node 'ConvTranspose_node' (ConvTranspose): output_shape [10, 4] needs pads beyond qrt's limit "
        "of 2147483647");
  // Resize: floor(4 x 1e30) was converted to int64.
  onnx::ModelProto model = empty_model(13);
  onnx::GraphProto* g = model.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  add_floats(g, "s", {4}, {1.0f, 1.0f, 1e30f, 1.0f});
  string_attr(add_node(g, "Resize", {"x", "", "s"}, {"y"}), "mode", "nearest");
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  CHECK(import(model).status().to_string().find(
            "t.onnx: error: node 'Resize_node' (Resize): scale 1000000015047466219876688855040.000000 of dimension 2 resizes "
            "4 elements to more than qrt's limit of 2^48") == 0);
  // Resize by sizes: each must be a dimension (it was taken as given, -1 as a dynamic one).
  for (const auto& [size, why] : std::vector<std::pair<int64_t, std::string>>{
           {-1, "size -1 of dimension 3 is negative"},
           {(int64_t(1) << 48) + 1, "size 281474976710657 of dimension 3 is above qrt's limit of 2^48"}}) {
    onnx::ModelProto sized = empty_model(13);
    onnx::GraphProto* sg = sized.mutable_graph();
    add_value(sg->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
    add_int64s(sg, "z", {1, 1, 8, size});
    string_attr(add_node(sg, "Resize", {"x", "", "", "z"}, {"y"}), "mode", "nearest");
    add_value(sg->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 1, 8, 8});
    CHECK(import(sized).status().to_string() == "t.onnx: error: node 'Resize_node' (Resize): " + why);
  }
  onnx::ModelProto sized = empty_model(13);
  add_value(sized.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  add_int64s(sized.mutable_graph(), "z", {1, 1, 8, 8});
  string_attr(add_node(sized.mutable_graph(), "Resize", {"x", "", "", "z"}, {"y"}), "mode", "nearest");
  add_value(sized.mutable_graph()->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 1, 8, 8});
  CHECK(import(sized).is_ok());
}

TEST_CASE("Trilu imports as a where over a constant mask of the last two axes (upper, lower, k, batches)") {
  // x: 2 batches of 3x4, values 1..24; k as a constant input or absent.
  auto model_with = [](int64_t upper, const int64_t* k) {
    onnx::ModelProto model = empty_model(14);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3, 4});
    std::vector<std::string> inputs{"x"};
    if (k) {
      onnx::TensorProto* t = g->add_initializer();
      t->set_name("k");
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_int64_data(*k);
      inputs.push_back("k");
    }
    onnx::NodeProto* n = add_node(g, "Trilu", inputs, {"y"});
    auto* u = n->add_attribute();
    u->set_name("upper");
    u->set_type(onnx::AttributeProto::INT);
    u->set_i(upper);
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {2, 3, 4});
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
  };
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i + 1);
  const int64_t ks[] = {0, 1, -1, 5, -7};
  int cases = 0;
  for (int64_t upper : {1, 0}) {
    for (int variant = -1; variant < 5; ++variant) {
      const int64_t k = variant < 0 ? 0 : ks[variant];
      CAPTURE(upper);
      CAPTURE(k);
      const std::string bytes = model_with(upper, variant < 0 ? nullptr : &ks[variant]);
      std::vector<float> want(24);
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t i = 0; i < 3; ++i) {
          for (int64_t j = 0; j < 4; ++j) {
            const size_t at = size_t((b * 3 + i) * 4 + j);
            want[at] = (upper ? j - i >= k : j - i <= k) ? x[at] : 0.0f;
          }
        }
      }
      for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
        const std::vector<uint8_t> got = run_onnx(bytes, backend, {2, 3, 4}, x);
        REQUIRE(got.size() == want.size() * 4);
        CHECK(std::memcmp(got.data(), want.data(), got.size()) == 0);
      }
      ++cases;
    }
  }
  CHECK(cases == 12);
}

TEST_CASE("Pad: wrap, edge and reflect by hand, negative pads crop, axes name the padded axes") {
  // x = [[1, 2, 3], [4, 5, 6]]; pads per mode, the expected rows by hand.
  auto model_with = [](const std::string& mode, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                       const std::vector<int64_t>& out) {
    onnx::ModelProto model = empty_model(18);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
    onnx::TensorProto* p = g->add_initializer();
    p->set_name("pads");
    p->set_data_type(onnx::TensorProto::INT64);
    p->add_dims(int64_t(pads.size()));
    for (int64_t v : pads) p->add_int64_data(v);
    std::vector<std::string> inputs{"x", "pads"};
    if (!axes.empty()) {
      onnx::TensorProto* a = g->add_initializer();
      a->set_name("axes");
      a->set_data_type(onnx::TensorProto::INT64);
      a->add_dims(int64_t(axes.size()));
      for (int64_t v : axes) a->add_int64_data(v);
      inputs.push_back("");
      inputs.push_back("axes");
    }
    onnx::NodeProto* n = add_node(g, "Pad", inputs, {"y"});
    auto* m = n->add_attribute();
    m->set_name("mode");
    m->set_type(onnx::AttributeProto::STRING);
    m->set_s(mode);
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, out);
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
  };
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  struct Case {
    std::string mode;
    std::vector<int64_t> pads, axes, out;
    std::vector<float> want;
  };
  const Case cases[] = {
      // Columns: 2 before, 1 after.
      {"wrap", {0, 2, 0, 1}, {}, {2, 6}, {2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4}},
      {"reflect", {0, 2, 0, 1}, {}, {2, 6}, {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}},
      {"edge", {0, 2, 0, 1}, {}, {2, 6}, {1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6}},
      // A row before by edge, the first column cropped.
      {"edge", {1, -1, 0, 0}, {}, {3, 2}, {2, 3, 2, 3, 5, 6}},
      // Only axis 1 (axes = [-1]): a constant 0 on both sides.
      {"constant", {1, 1}, {-1}, {2, 5}, {0, 1, 2, 3, 0, 0, 4, 5, 6, 0}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mode);
    const std::string bytes = model_with(c.mode, c.pads, c.axes, c.out);
    for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
      const std::vector<uint8_t> got = run_onnx(bytes, backend, {2, 3}, x);
      REQUIRE(got.size() == c.want.size() * 4);
      CHECK(std::memcmp(got.data(), c.want.data(), got.size()) == 0);
    }
  }
  // Reflect pads as large as the dimension are refused, naming them.
  const std::string bad = model_with("reflect", {0, 3, 0, 0}, {}, {2, 6});
  qrt_model_t* m = nullptr;
  CHECK(qrt_model_load_buffer(bad.data(), bad.size(), "pad.onnx", &m) != QRT_OK);
  CHECK_MESSAGE(std::string(qrt_last_error_message()).find("(Pad): reflect pads of 3 need a dimension larger than 3") !=
                    std::string::npos,
                qrt_last_error_message());
}
