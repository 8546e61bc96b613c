// Tests: TFLite's 16x8 quantization (int16 activations, int8 weights, int64 bias) through the
// importer and the C API: FULLY_CONNECTED and CONV_2D models built here give, under
// `numerics = "tflite"`, the outputs of TFLite's reference kernels computed independently in
// this file (int64 accumulators, the int64 MultiplyByQuantizedMultiplier), on the generated
// kernels (the byte-half contractions), and the JIT and reference backends agree under both
// profiles.
#include <doctest/doctest.h>

#include <qrt.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "importers/tflite_schema_generated.h"
#include "ir/numerics.h"

namespace {

namespace fb = qrt::tflite_fb;

// A one-operator 16x8 model: x int16 (zero point 0, as TFLite's 16x8 requires), weights int8
// per output channel, bias int64, y int16.
struct Model16x8 {
  bool conv = false;
  std::vector<int32_t> x_dims, w_dims, y_dims;
  float sx = 0, sy = 0;
  std::vector<float> sw;
  std::vector<int8_t> w;
  std::vector<int64_t> bias;

  std::string build() const {
    flatbuffers::FlatBufferBuilder b;
    auto bytes = [&](const void* p, size_t n) { return fb::CreateBuffer(b, b.CreateVector(static_cast<const uint8_t*>(p), n)); };
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b), bytes(w.data(), w.size()),
                                                            bytes(bias.data(), bias.size() * 8)};
    auto quant = [&](std::vector<float> scales) {
      return fb::CreateQuantizationParameters(b, 0, 0, b.CreateVector(scales),
                                              b.CreateVector(std::vector<int64_t>(scales.size(), 0)), fb::QuantizationDetails_NONE,
                                              0, 0);
    };
    std::vector<float> bias_scales;
    for (float s : sw) bias_scales.push_back(sx * s);
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors = {
        fb::CreateTensor(b, b.CreateVector(x_dims), fb::TensorType_INT16, 0, b.CreateString("x"), quant({sx})),
        fb::CreateTensor(b, b.CreateVector(w_dims), fb::TensorType_INT8, 1, b.CreateString("w"), quant(sw)),
        fb::CreateTensor(b, b.CreateVector(std::vector<int32_t>{int32_t(bias.size())}), fb::TensorType_INT64, 2,
                         b.CreateString("b"), quant(bias_scales)),
        fb::CreateTensor(b, b.CreateVector(y_dims), fb::TensorType_INT16, 0, b.CreateString("y"), quant({sy}))};
    const int code = conv ? 3 : 9;  // CONV_2D, FULLY_CONNECTED
    flatbuffers::Offset<fb::Operator> op;
    const auto ins = b.CreateVector(std::vector<int32_t>{0, 1, 2}), outs = b.CreateVector(std::vector<int32_t>{3});
    if (conv) {
      op = fb::CreateOperator(b, 0, ins, outs, fb::BuiltinOptions_Conv2DOptions,
                              fb::CreateConv2DOptions(b, fb::Padding_SAME, 1, 1).Union());
    } else {
      op = fb::CreateOperator(b, 0, ins, outs, fb::BuiltinOptions_FullyConnectedOptions,
                              fb::CreateFullyConnectedOptions(b).Union());
    }
    auto sg = fb::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(std::vector<int32_t>{0}),
                                 b.CreateVector(std::vector<int32_t>{3}), b.CreateVector(std::vector<decltype(op)>{op}));
    auto opcode = fb::CreateOperatorCode(b, int8_t(code), 0, 1, code);
    auto model = fb::CreateModel(b, 3, b.CreateVector(std::vector<decltype(opcode)>{opcode}),
                                 b.CreateVector(std::vector<decltype(sg)>{sg}), 0, b.CreateVector(buffers));
    fb::FinishModelBuffer(b, model);
    return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  }
};

// TFLite's reference 16x8 kernels (reference_integer_ops::FullyConnected / ConvPerChannel with
// int64 accumulators), written here from their definitions: Σ x·w + bias in int64, then
// MultiplyByQuantizedMultiplier(int64) (the Q31 multiplier rounded to Q15, one rounding
// shift), clamped to int16.
int16_t tflite_16x8_output(int64_t acc, double real_multiplier) {
  const qrt::numerics::QuantizedMultiplier m = qrt::numerics::quantize_multiplier(real_multiplier, false);
  const int64_t reduced = m.multiplier < 0x7FFF0000 ? (int64_t(m.multiplier) + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - m.shift;
  const int64_t scaled = (acc * reduced + (int64_t(1) << (total_shift - 1))) >> total_shift;
  return int16_t(std::clamp<int64_t>(scaled, -32768, 32767));
}

std::vector<int16_t> expected(const Model16x8& m, const std::vector<int16_t>& x) {
  std::vector<int16_t> y;
  auto requant = [&](int64_t acc, size_t c) {
    return tflite_16x8_output(acc, double(m.sx) * double(m.sw[c]) / double(m.sy));
  };
  if (!m.conv) {
    const int32_t n = m.w_dims[0], k = m.w_dims[1];
    for (int32_t r = 0; r < m.x_dims[0]; ++r) {
      for (int32_t c = 0; c < n; ++c) {
        int64_t acc = m.bias[size_t(c)];
        for (int32_t i = 0; i < k; ++i) acc += int64_t(x[size_t(r * k + i)]) * m.w[size_t(c * k + i)];
        y.push_back(requant(acc, size_t(c)));
      }
    }
    return y;
  }
  // NHWC, 3x3 SAME stride 1: pad 1 on every side.
  const int32_t h = m.x_dims[1], w = m.x_dims[2], ci = m.x_dims[3], co = m.w_dims[0];
  for (int32_t oy = 0; oy < h; ++oy) {
    for (int32_t ox = 0; ox < w; ++ox) {
      for (int32_t o = 0; o < co; ++o) {
        int64_t acc = m.bias[size_t(o)];
        for (int32_t ky = 0; ky < 3; ++ky) {
          for (int32_t kx = 0; kx < 3; ++kx) {
            const int32_t iy = oy + ky - 1, ix = ox + kx - 1;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            for (int32_t c = 0; c < ci; ++c) {
              acc += int64_t(x[size_t((iy * w + ix) * ci + c)]) * m.w[size_t(((o * 3 + ky) * 3 + kx) * ci + c)];
            }
          }
        }
        y.push_back(requant(acc, size_t(o)));
      }
    }
  }
  return y;
}

// Runs `model` on `x` with `backend` under profile `numerics`; `kernel` receives the matmul's
// or convolution's kernel description.
std::vector<int16_t> run(const std::string& model, const std::vector<int16_t>& x, const std::vector<int32_t>& x_dims,
                         qrt_backend backend, const char* numerics, std::string* kernel) {
  qrt_model_t* m = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(model.data(), model.size(), "m.tflite", &m) == QRT_OK, qrt_last_error_message());
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.backend = backend;
  options.numerics = numerics;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
  size_t ops = 0;
  REQUIRE(qrt_plan_num_ops(plan, &ops) == QRT_OK);
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, i, &info) == QRT_OK);
    if (std::strcmp(info.op, "qrt.matmul") == 0 || std::strcmp(info.op, "qrt.conv2d") == 0) {
      *kernel = std::string(info.kernel) + " " + info.reason;
    }
  }
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  std::vector<int64_t> dims(x_dims.begin(), x_dims.end());
  REQUIRE_MESSAGE(qrt_context_set_input(ctx, 0, QRT_DTYPE_I16, dims.size(), dims.data(), x.data(), x.size() * 2) == QRT_OK,
                  qrt_last_error_message());
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view v;
  REQUIRE(qrt_context_output(ctx, 0, &v) == QRT_OK);
  std::vector<int16_t> y(v.bytes / 2);
  std::memcpy(y.data(), v.data, v.bytes);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
  return y;
}

}  // namespace

TEST_CASE("TFLite 16x8 FULLY_CONNECTED and CONV_2D reproduce TFLite's reference kernels") {
  std::mt19937 rng(168);
  std::uniform_int_distribution<int> x_value(-32768, 32767), w_value(-127, 127);
  for (const bool conv : {false, true}) {
    CAPTURE(conv);
    Model16x8 m;
    m.conv = conv;
    const int32_t k = conv ? 5 : 700, n = conv ? 6 : 9;
    m.x_dims = conv ? std::vector<int32_t>{1, 7, 8, k} : std::vector<int32_t>{3, k};
    m.w_dims = conv ? std::vector<int32_t>{n, 3, 3, k} : std::vector<int32_t>{n, k};
    m.y_dims = conv ? std::vector<int32_t>{1, 7, 8, n} : std::vector<int32_t>{3, n};
    m.sx = 0.0013f;
    m.sy = conv ? 0.004f : 0.25f;
    size_t weights = 1;
    for (int32_t d : m.w_dims) weights *= size_t(d);
    for (size_t i = 0; i < weights; ++i) m.w.push_back(int8_t(w_value(rng)));
    for (int32_t c = 0; c < n; ++c) {
      m.sw.push_back(0.004f + 0.001f * float(c));
      // Beyond int32 on purpose for some channels: TFLite's 16x8 bias is int64.
      m.bias.push_back(c % 3 == 0 ? int64_t(5) << 31 : int64_t(std::uniform_int_distribution<int>(-900000, 900000)(rng)));
    }
    size_t count = 1;
    for (int32_t d : m.x_dims) count *= size_t(d);
    std::vector<int16_t> x(count);
    for (int16_t& v : x) v = int16_t(x_value(rng));
    const std::string model = m.build();
    const std::vector<int16_t> want = expected(m, x);
    size_t saturated = 0;
    for (int16_t v : want) saturated += v == 32767 || v == -32768;
    CHECK(saturated < want.size() / 2);  // mostly real values, some clamped
    std::string kernel;
    CHECK(run(model, x, m.x_dims, QRT_BACKEND_JIT, "tflite", &kernel) == want);
    CHECK_MESSAGE(kernel.find("16-bit activations as two byte halves") != std::string::npos, kernel);
    CHECK(run(model, x, m.x_dims, QRT_BACKEND_REF, "tflite", &kernel) == want);
    // The default profile (f32 multipliers, round half to even): its own bytes, on both backends.
    const std::vector<int16_t> default_jit = run(model, x, m.x_dims, QRT_BACKEND_JIT, "default", &kernel);
    CHECK_MESSAGE(kernel.find("then the default requantization") != std::string::npos, kernel);
    CHECK(run(model, x, m.x_dims, QRT_BACKEND_REF, "default", &kernel) == default_jit);
    CHECK(default_jit != want);  // the profiles differ, so the tflite run above is the profile's
  }
}
