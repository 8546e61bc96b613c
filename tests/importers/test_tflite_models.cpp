// Tests: the bundled TFLite models through the importer and the reference backend, via the
// C API — person_detect tells person.bmp from no_person.bmp, hello_world tracks sin(x),
// mobilenet_v2 runs end to end — and malformed or unsupported TFLite files are refused.
#include <doctest/doctest.h>

#include <qrt.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "importers/tflite_schema_generated.h"
#include "ir/numerics.h"
#include "tests/importers/model_files.h"

namespace {

const std::string kDir = std::string(MODELS_DIR) + "/tflite-micro/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What the tests need of an input or output description (qrt_tensor_info's pointers die
// with the model).
struct Io {
  size_t rank = 0;
  std::vector<int64_t> dims;
  double scale = 0;
  int64_t zero_point = 0;
};

Io io_of(const qrt_tensor_info& info) {
  Io io;
  io.rank = info.rank;
  io.dims.assign(info.dims, info.dims + info.rank);
  if (info.quant_count > 0) {
    io.scale = info.scales[0];
    io.zero_point = info.zero_points[0];
  }
  return io;
}

// Loads, compiles and runs a one-input model; returns output 0's bytes.
// `kernels` (if given) receives how many ops run on generated kernels.
std::vector<uint8_t> run(const std::string& model, const std::vector<uint8_t>& input, Io* in_io = nullptr,
                         Io* out_io = nullptr, qrt_backend backend = QRT_BACKEND_DEFAULT, size_t* kernels = nullptr) {
  qrt_model_t* m = nullptr;
  qrt_plan_t* plan = nullptr;
  qrt_context_t* ctx = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_file((kDir + model).c_str(), &m) == QRT_OK, qrt_last_error_message());
  qrt_tensor_info info;
  REQUIRE(qrt_model_input_info(m, 0, &info) == QRT_OK);
  if (in_io) *in_io = io_of(info);
  qrt_tensor_info out_info;
  REQUIRE(qrt_model_output_info(m, 0, &out_info) == QRT_OK);
  if (out_io) *out_io = io_of(out_info);
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.backend = backend;
  REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
  if (kernels) {
    size_t ops = 0;
    REQUIRE(qrt_plan_num_ops(plan, &ops) == QRT_OK);
    *kernels = 0;
    for (size_t i = 0; i < ops; ++i) {
      qrt_op_info op;
      REQUIRE(qrt_plan_op_info(plan, i, &op) == QRT_OK);
      *kernels += std::strcmp(op.kernel, "reference") != 0;
    }
  }
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  REQUIRE_MESSAGE(qrt_context_set_input(ctx, 0, info.dtype, info.rank, info.dims, input.data(), input.size()) == QRT_OK,
                  qrt_last_error_message());
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

// The 96x96 8-bit grey BMP as upstream feeds it: rows top first (the file stores them bottom
// up), each byte copied unchanged into the int8 input tensor.
std::vector<uint8_t> bmp_input(const std::string& file) {
  const std::string bmp = slurp(kDir + file);
  REQUIRE(bmp.size() == 1078 + 96 * 96);
  REQUIRE(bmp.compare(0, 2, "BM") == 0);
  std::vector<uint8_t> pixels(96 * 96);
  for (int row = 0; row < 96; ++row) {
    std::memcpy(pixels.data() + row * 96, bmp.data() + 1078 + (95 - row) * 96, 96);
  }
  return pixels;
}

}  // namespace

TEST_CASE("person_detect: person.bmp is a person, no_person.bmp is not") {
  const auto person = run("person_detect.tflite", bmp_input("person.bmp"));
  const auto nobody = run("person_detect.tflite", bmp_input("no_person.bmp"));
  REQUIRE(person.size() == 2);
  const int8_t p_not = int8_t(person[0]), p_yes = int8_t(person[1]);
  const int8_t n_not = int8_t(nobody[0]), n_yes = int8_t(nobody[1]);
  MESSAGE("person.bmp: [not " << int(p_not) << ", person " << int(p_yes) << "]; no_person.bmp: [not "
                              << int(n_not) << ", person " << int(n_yes) << "]");
  CHECK(p_yes > p_not);
  CHECK(n_not > n_yes);
}

TEST_CASE("hello_world tracks sin(x) over [0, 2 pi]") {
  double worst = 0, total = 0;
  const int n = 64;
  for (int i = 0; i < n; ++i) {
    const double x = 2 * M_PI * i / (n - 1);
    Io in, out;
    // Quantize x with the input's own parameters (qcast formula).
    qrt_model_t* m = nullptr;
    REQUIRE(qrt_model_load_file((kDir + "hello_world_int8.tflite").c_str(), &m) == QRT_OK);
    qrt_tensor_info info;
    REQUIRE(qrt_model_input_info(m, 0, &info) == QRT_OK);
    const double s = info.scales[0];
    const int64_t zp = info.zero_points[0];
    qrt_model_destroy(m);
    const long q = std::lround(std::nearbyint(float(x) / float(s))) + zp;
    const std::vector<uint8_t> input = {uint8_t(int8_t(std::max<long>(-128, std::min<long>(127, q))))};
    const auto y = run("hello_world_int8.tflite", input, &in, &out);
    const double value = double(int8_t(y[0]) - out.zero_point) * out.scale;
    worst = std::max(worst, std::abs(value - std::sin(x)));
    total += std::abs(value - std::sin(x));
  }
  MESSAGE("hello_world: max |y - sin x| = " << worst << ", mean " << total / n);
  CHECK(worst < 0.15);
  CHECK(total / n < 0.05);
}

TEST_CASE("mobilenet_v2 runs end to end, deterministically") {
  // A smooth synthetic image: the stored values of a diagonal gradient.
  std::vector<uint8_t> input(3 * 224 * 224);
  for (size_t c = 0; c < 3; ++c) {
    for (size_t y = 0; y < 224; ++y) {
      for (size_t x = 0; x < 224; ++x) input[(c * 224 + y) * 224 + x] = uint8_t(int8_t((x + y + 40 * c) % 200 - 100));
    }
  }
  Io in, out;
  const auto a = run("mobilenet_v2_quantized_1x3x224x224.tflite", input, &in, &out);
  CHECK(in.rank == 4);
  CHECK(in.dims[1] == 3);
  CHECK(out.dims[1] == 1000);
  REQUIRE(a.size() == 1000);
  const auto b = run("mobilenet_v2_quantized_1x3x224x224.tflite", input);
  CHECK(a == b);
  int distinct = 0;
  for (size_t i = 1; i < a.size(); ++i) distinct += a[i] != a[0];
  CHECK(distinct > 100);  // real logits, not a constant
}

namespace {

using model_files::load_error;

// Quantization of a tiny model's tensors: int8 with scale and zero point, or f32 (scale 0).
struct TinyQuant {
  float scale = 0;
  int64_t zero_point = 0;
};

// A one-operator model: x [1, n] -> op -> y [1, n], f32 or int8 per side.
std::string tiny_model(int builtin_code, TinyQuant qx = {}, TinyQuant qy = {}, int32_t n = 4) {
  namespace fb = qrt::tflite_fb;
  flatbuffers::FlatBufferBuilder b;
  auto tensor = [&](const char* name, TinyQuant q) {
    if (q.scale == 0) {
      return fb::CreateTensor(b, b.CreateVector(std::vector<int32_t>{1, n}), fb::TensorType_FLOAT32, 0, b.CreateString(name));
    }
    auto qp = fb::CreateQuantizationParameters(b, 0, 0, b.CreateVector(std::vector<float>{q.scale}),
                                               b.CreateVector(std::vector<int64_t>{q.zero_point}));
    return fb::CreateTensor(b, b.CreateVector(std::vector<int32_t>{1, n}), fb::TensorType_INT8, 0, b.CreateString(name), qp);
  };
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors = {tensor("x", qx), tensor("y", qy)};
  auto op = fb::CreateOperator(b, 0, b.CreateVector(std::vector<int32_t>{0}), b.CreateVector(std::vector<int32_t>{1}));
  auto sg = fb::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(std::vector<int32_t>{0}),
                               b.CreateVector(std::vector<int32_t>{1}), b.CreateVector(std::vector<decltype(op)>{op}));
  auto code = fb::CreateOperatorCode(b, int8_t(std::min(builtin_code, 127)), 0, 1, builtin_code);
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b)};
  auto model = fb::CreateModel(b, 3, b.CreateVector(std::vector<decltype(code)>{code}),
                               b.CreateVector(std::vector<decltype(sg)>{sg}), 0, b.CreateVector(buffers));
  fb::FinishModelBuffer(b, model);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

}  // namespace

TEST_CASE("malformed and unsupported TFLite files are refused with a clear message") {
  const std::string good = slurp(kDir + "person_detect.tflite");
  CHECK(load_error(good.substr(0, good.size() / 3), "cut.tflite") ==
        "cut.tflite: error: not a valid TFLite flatbuffer (the flatbuffers verifier rejected it; the file is "
        "truncated or corrupted)");
  std::string corrupt = good;
  for (size_t i = 16; i < 64; ++i) corrupt[i] = char(0xff);  // smash the root table's offsets
  CHECK(load_error(corrupt, "bad.tflite").find("bad.tflite: error: not a valid TFLite flatbuffer") == 0);
  CHECK(load_error(std::string(16, '\0'), "zero.tflite") ==
        "zero.tflite: error: not a TFLite model (no \"TFL3\" identifier at byte offset 4)");
  CHECK(load_error(tiny_model(43), "sq.tflite") ==
        "sq.tflite: error: operator #0 (SQUEEZE): unsupported TFLite operator SQUEEZE");
  CHECK(load_error(tiny_model(200), "hi.tflite") ==
        "hi.tflite: error: operator #0 (code 200): unsupported TFLite operator with builtin code 200");
  // Every single-byte corruption of a small model is refused or imported, never a crash.
  const std::string small = slurp(kDir + "hello_world_int8.tflite");
  for (size_t i = 0; i < small.size(); i += 7) {
    std::string mutated = small;
    mutated[i] = char(mutated[i] ^ 0x5a);
    qrt_model_t* m = nullptr;
    const qrt_status st = qrt_model_load_buffer(mutated.data(), mutated.size(), "m.tflite", &m);
    CHECK_MESSAGE(st != QRT_INTERNAL_ERROR, qrt_last_error_message());  // a clear error, not a bug
    if (st == QRT_OK) qrt_model_destroy(m);
  }
}

TEST_CASE("TFLite SAME padding with a dynamic filter is refused (its -1 rows made meaningless pads)") {
  namespace fb = qrt::tflite_fb;
  for (const bool same : {true, false}) {
    CAPTURE(same);
    flatbuffers::FlatBufferBuilder b;
    auto tensor = [&](std::vector<int32_t> dims, const char* name) {
      return fb::CreateTensor(b, b.CreateVector(dims), fb::TensorType_FLOAT32, 0, b.CreateString(name));
    };
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors = {tensor({1, 4, 4, 1}, "x"), tensor({1, -1, -1, 1}, "w"),
                                                            tensor({1, -1, -1, 1}, "y")};
    auto options = fb::CreateConv2DOptions(b, same ? fb::Padding_SAME : fb::Padding_VALID, 1, 1);
    auto op = fb::CreateOperator(b, 0, b.CreateVector(std::vector<int32_t>{0, 1}), b.CreateVector(std::vector<int32_t>{2}),
                                 fb::BuiltinOptions_Conv2DOptions, options.Union());
    auto sg = fb::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(std::vector<int32_t>{0, 1}),
                                 b.CreateVector(std::vector<int32_t>{2}), b.CreateVector(std::vector<decltype(op)>{op}));
    auto code = fb::CreateOperatorCode(b, 3, 0, 1, 3);
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b)};
    auto model = fb::CreateModel(b, 3, b.CreateVector(std::vector<decltype(code)>{code}),
                                 b.CreateVector(std::vector<decltype(sg)>{sg}), 0, b.CreateVector(buffers));
    fb::FinishModelBuffer(b, model);
    const std::string bytes(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
    qrt_model_t* m = nullptr;
    if (same) {
      CHECK(load_error(bytes, "dyn.tflite") ==
            "dyn.tflite: error: operator #0 (CONV_2D): SAME padding needs static kernel sizes >= 1, got -1 x -1");
    } else {
      CHECK_MESSAGE(qrt_model_load_buffer(bytes.data(), bytes.size(), "dyn.tflite", &m) == QRT_OK, qrt_last_error_message());
      qrt_model_destroy(m);
    }
  }
}

TEST_CASE("TFLite TRANSPOSE_CONV: SAME and VALID padding against TFLite's scatter loop") {
  namespace fb = qrt::tflite_fb;
  // x [1, 2, 3, 1] = 1..6, weights [1, 3, 3, 1] = 1..9, stride 2; output shapes as a converter
  // writes them for SAME ([1, 4, 6, 1]) and VALID ([1, 5, 7, 1]).
  for (const bool same : {true, false}) {
    CAPTURE(same);
    const int32_t oh = same ? 4 : 5, ow = same ? 6 : 7;
    flatbuffers::FlatBufferBuilder b;
    const std::vector<int32_t> shape = {1, oh, ow, 1};
    std::vector<float> weights(9);
    for (int i = 0; i < 9; ++i) weights[size_t(i)] = float(i + 1);
    auto bytes = [&](const void* p, size_t n) {
      return fb::CreateBuffer(b, b.CreateVector(static_cast<const uint8_t*>(p), n));
    };
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b), bytes(shape.data(), 16), bytes(weights.data(), 36)};
    auto tensor = [&](std::vector<int32_t> dims, fb::TensorType t, uint32_t buffer, const char* name) {
      return fb::CreateTensor(b, b.CreateVector(dims), t, buffer, b.CreateString(name));
    };
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors = {
        tensor({4}, fb::TensorType_INT32, 1, "shape"), tensor({1, 3, 3, 1}, fb::TensorType_FLOAT32, 2, "w"),
        tensor({1, 2, 3, 1}, fb::TensorType_FLOAT32, 0, "x"), tensor({1, oh, ow, 1}, fb::TensorType_FLOAT32, 0, "y")};
    auto options = fb::CreateTransposeConvOptions(b, same ? fb::Padding_SAME : fb::Padding_VALID, 2, 2);
    auto op = fb::CreateOperator(b, 0, b.CreateVector(std::vector<int32_t>{0, 1, 2}), b.CreateVector(std::vector<int32_t>{3}),
                                 fb::BuiltinOptions_TransposeConvOptions, options.Union());
    auto sg = fb::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(std::vector<int32_t>{2}),
                                 b.CreateVector(std::vector<int32_t>{3}), b.CreateVector(std::vector<decltype(op)>{op}));
    auto code = fb::CreateOperatorCode(b, 67, 0, 1, 67);
    auto model = fb::CreateModel(b, 3, b.CreateVector(std::vector<decltype(code)>{code}),
                                 b.CreateVector(std::vector<decltype(sg)>{sg}), 0, b.CreateVector(buffers));
    fb::FinishModelBuffer(b, model);
    qrt_model_t* m = nullptr;
    REQUIRE_MESSAGE(qrt_model_load_buffer(b.GetBufferPointer(), b.GetSize(), "tc.tflite", &m) == QRT_OK,
                    qrt_last_error_message());
    qrt_plan_t* plan = nullptr;
    REQUIRE_MESSAGE(qrt_plan_create(m, nullptr, &plan) == QRT_OK, qrt_last_error_message());
    qrt_context_t* ctx = nullptr;
    REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
    const float x[6] = {1, 2, 3, 4, 5, 6};
    const int64_t xd[] = {1, 2, 3, 1};
    REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 4, xd, x, sizeof(x)) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view v;
    REQUIRE(qrt_context_output(ctx, 0, &v) == QRT_OK);
    REQUIRE(v.bytes == size_t(oh * ow) * 4);
    // TFLite's reference loop: each input adds w·x at (in·stride - pad + tap); SAME pads by
    // the forward convolution from the output size (here 0 before), VALID by 0.
    std::vector<float> want(size_t(oh * ow), 0.0f);
    for (int iy = 0; iy < 2; ++iy)
      for (int ix = 0; ix < 3; ++ix)
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const int y = iy * 2 + ky, xx = ix * 2 + kx;
            if (y < oh && xx < ow) want[size_t(y * ow + xx)] += x[iy * 3 + ix] * weights[size_t(ky * 3 + kx)];
          }
    CHECK(std::vector<float>(static_cast<const float*>(v.data), static_cast<const float*>(v.data) + oh * ow) == want);
    qrt_context_destroy(ctx);
    qrt_plan_destroy(plan);
    qrt_model_destroy(m);
  }
}

TEST_CASE("TFLite element-wise functions of one operand: float, and int8 as dequantize, op, quantize") {
  // EXP 47, LOG 73, SIN 66, COS 108, SQRT 75, RSQRT 76, ABS 101, NEG 59, FLOOR 8, CEIL 104,
  // ROUND 116, TANH 28, SIGN 158.
  struct Case {
    int code;
    float (*f)(float);
  };
  const Case cases[] = {{47, qrt::numerics::exp_f32},
                        {73, qrt::numerics::log_f32},
                        {66, qrt::numerics::sin_f32},
                        {108, qrt::numerics::cos_f32},
                        {75, [](float x) { return std::sqrt(x); }},
                        {76, qrt::numerics::rsqrt_f32},
                        {101, [](float x) { return std::fabs(x); }},
                        {59, [](float x) { return -x; }},
                        {8, [](float x) { return std::floor(x); }},
                        {104, [](float x) { return std::ceil(x); }},
                        {116, [](float x) { return float(qrt::numerics::round_half_even(x)); }},
                        {28, qrt::numerics::tanh_f32},
                        {158, qrt::numerics::sign_f32}};
  auto run_bytes = [](const std::string& bytes, qrt_dtype dtype, const void* x, int64_t n, size_t size, void* y) {
    qrt_model_t* m = nullptr;
    REQUIRE_MESSAGE(qrt_model_load_buffer(bytes.data(), bytes.size(), "u.tflite", &m) == QRT_OK, qrt_last_error_message());
    qrt_plan_t* plan = nullptr;
    REQUIRE_MESSAGE(qrt_plan_create(m, nullptr, &plan) == QRT_OK, qrt_last_error_message());
    qrt_context_t* ctx = nullptr;
    REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
    const int64_t dims[] = {1, n};
    REQUIRE(qrt_context_set_input(ctx, 0, dtype, 2, dims, x, size_t(n) * size) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view v;
    REQUIRE(qrt_context_output(ctx, 0, &v) == QRT_OK);
    REQUIRE(v.bytes == size_t(n) * size);
    std::memcpy(y, v.data, v.bytes);
    qrt_context_destroy(ctx);
    qrt_plan_destroy(plan);
    qrt_model_destroy(m);
  };
  const TinyQuant qx{0.0625f, -3}, qy{0.015625f, 5};
  for (const Case& c : cases) {
    CAPTURE(c.code);
    const float xf[4] = {0.75f, 2.5f, -1.5f, 3.0f};
    float yf[4];
    run_bytes(tiny_model(c.code), QRT_DTYPE_F32, xf, 4, 4, yf);
    for (int i = 0; i < 4; ++i) {
      const float want = c.f(xf[i]);
      CHECK((std::memcmp(&yf[i], &want, 4) == 0 || (std::isnan(want) && std::isnan(yf[i]))));
    }
    // int8: every stored value, through dequantize -> op -> quantize (a 256-entry table).
    int8_t xq[256], yq[256];
    for (int i = 0; i < 256; ++i) xq[i] = int8_t(i - 128);
    run_bytes(tiny_model(c.code, qx, qy, 256), QRT_DTYPE_I8, xq, 256, 1, yq);
    for (int i = 0; i < 256; ++i) {
      const float x = qrt::numerics::dequantize_f32(xq[i], qx.zero_point, qx.scale);
      CHECK(int(yq[i]) == qrt::numerics::quantize_f32(c.f(x), qy.scale, qy.zero_point, -128, 127));
    }
  }
}

TEST_CASE("TFLite models: the JIT backend's outputs equal the reference's bit for bit") {
  qrt_plan_options jit_only;
  qrt_plan_options_init(&jit_only);
  jit_only.backend = QRT_BACKEND_JIT;
  qrt_model_t* probe = nullptr;
  REQUIRE(qrt_model_load_file((kDir + "hello_world_int8.tflite").c_str(), &probe) == QRT_OK);
  qrt_plan_t* plan = nullptr;
  const bool has_jit = qrt_plan_create(probe, &jit_only, &plan) == QRT_OK;
  qrt_plan_destroy(plan);
  qrt_model_destroy(probe);
  if (!has_jit) {
    MESSAGE("no JIT backend on this CPU: skipped");
    return;
  }
  // Random stored values (fixed seed) over each model's input; the generated kernels (GEMM,
  // im2col convolutions, depthwise) must give the reference's bytes.
  struct Case {
    const char* model;
    size_t input_bytes;
    size_t min_kernels;
  };
  const Case cases[] = {{"hello_world_int8.tflite", 1, 3},
                        {"person_detect.tflite", 96 * 96, 27},
                        {"mobilenet_v2_quantized_1x3x224x224.tflite", 224 * 224 * 3, 53}};
  uint32_t state = 12345;
  for (const Case& c : cases) {
    CAPTURE(c.model);
    std::vector<uint8_t> input(c.input_bytes);
    for (uint8_t& b : input) b = uint8_t((state = state * 1664525u + 1013904223u) >> 24);
    size_t kernels = 0;
    const auto jit = run(c.model, input, nullptr, nullptr, QRT_BACKEND_JIT, &kernels);
    const auto ref = run(c.model, input, nullptr, nullptr, QRT_BACKEND_REF);
    CHECK(kernels >= c.min_kernels);
    CHECK(jit == ref);
  }
}
