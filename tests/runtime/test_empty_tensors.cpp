// Tests: tensors with a zero in their shape, through the C API. An op whose result is empty
// computes nothing; one whose operand is empty (an empty reduction, a concatenated piece with no
// columns, K = 0) still has a result. Every ISA level, the reference and each numerics profile
// must agree byte for byte, and none of them may crash (an empty batch once divided by zero
// in the pooling kernels' task split, an empty softmax row in the reference).
#include <doctest/doctest.h>
#include <qrt.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/host_levels.h"

namespace {

const char* const kI8 = "!quant.uniform<i8:f32, 0.0078125:-1>";
const char* const kProb = "!quant.uniform<i8:f32, 0.00390625:-128>";

// A tensor type of `shape` (a list like "0x4x4x8") and element `e`.
std::string tensor(const std::string& shape, const std::string& e) { return "tensor<" + shape + "x" + e + ">"; }

// A one-op graph: `op` on arguments of the given types, its result of type `result`.
std::string one_op(const std::string& op, const std::vector<std::string>& args, const std::string& result,
                   const std::string& attrs = "") {
  std::string params, names, types;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string sep = i ? ", " : "";
    params += sep + "%a" + std::to_string(i) + ": " + args[i];
    names += sep + "%a" + std::to_string(i);
    types += sep + args[i];
  }
  return "func.func @main(" + params + ") -> " + result + " {\n  %y = \"" + op + "\"(" + names + ") " + attrs +
         " : (" + types + ") -> " + result + "\n  return %y : " + result + "\n}\n";
}

struct Case {
  const char* name;
  std::string text;
};

std::vector<Case> cases() {
  const std::string f32 = "f32";
  return {
      {"8-bit average pool of an empty batch",
       one_op("qrt.avg_pool2d", {tensor("0x4x4x8", kI8)}, tensor("0x2x2x8", kI8), "{kernel = [2, 2], strides = [2, 2]}")},
      {"8-bit max pool of an empty batch",
       one_op("qrt.max_pool2d", {tensor("0x4x4x8", kI8)}, tensor("0x2x2x8", kI8), "{kernel = [2, 2], strides = [2, 2]}")},
      {"f32 average pool with no channels",
       one_op("qrt.avg_pool2d", {tensor("1x4x4x0", f32)}, tensor("1x2x2x0", f32), "{kernel = [2, 2], strides = [2, 2]}")},
      {"f32 softmax of empty rows",
       one_op("qrt.softmax", {tensor("4x0", f32)}, tensor("4x0", f32), "{axis = 1 : i64}")},
      {"8-bit softmax with an empty inner dimension",
       one_op("qrt.softmax", {tensor("2x3x0", kI8)}, tensor("2x3x0", kProb), "{axis = 1 : i64}")},
      {"8-bit add broadcasting an empty batch",
       one_op("qrt.add", {tensor("0x8", kI8), tensor("1x8", kI8)}, tensor("0x8", kI8))},
      {"8-bit concat of a piece without columns",
       one_op("qrt.concat", {tensor("2x0", kI8), tensor("2x3", kI8)}, tensor("2x3", kI8), "{axis = 1 : i64}")},
      {"f32 mean over an empty axis (NaN)",
       one_op("qrt.mean", {tensor("4x0", f32)}, tensor("4", f32), "{axes = [1]}")},
      {"8-bit mean over an empty axis",
       one_op("qrt.mean", {tensor("4x0", kI8)}, tensor("4", kI8), "{axes = [1]}")},
      {"f32 matmul with K = 0", one_op("qrt.matmul", {tensor("2x0", f32), tensor("0x3", f32)}, tensor("2x3", f32))},
      {"8-bit matmul with K = 0", one_op("qrt.matmul", {tensor("2x0", kI8), tensor("0x3", kI8)}, tensor("2x3", kI8))},
      {"8-bit convolution without input channels",
       one_op("qrt.conv2d", {tensor("1x4x4x0", kI8), tensor("2x1x1x0", kI8)}, tensor("1x4x4x2", kI8))},
      {"quantize an empty tensor", one_op("quant.qcast", {tensor("0x8", f32)}, tensor("0x8", kI8))},
      // fuzz_c_api -seed=52: the reference divided by the empty trailing extent.
      {"argmax over a full axis of an empty tensor",
       one_op("qrt.argmax", {tensor("2x3x0", f32)}, tensor("1x3x0", "i64"), "{axis = 0 : i64, keepdims = 1 : i64}")},
  };
}

// A model loaded from `text`, planned for `backend` at `isa` (null: the best) under `profile`
// (null: the default) on two threads, with one context; destroyed with it.
struct Loaded {
  qrt_model_t* model = nullptr;
  qrt_plan_t* plan = nullptr;
  qrt_context_t* ctx = nullptr;
  Loaded(const std::string& text, qrt_backend backend, const char* isa = nullptr, const char* profile = nullptr) {
    REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "empty.mlir", &model) == QRT_OK,
                    qrt_last_error_message());
    qrt_plan_options options;
    qrt_plan_options_init(&options);
    options.backend = backend;
    options.isa = isa;
    options.numerics = profile;
    options.threads = 2;
    REQUIRE_MESSAGE(qrt_plan_create(model, &options, &plan) == QRT_OK, qrt_last_error_message());
    REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  }
  ~Loaded() {
    qrt_context_destroy(ctx);
    qrt_plan_destroy(plan);
    qrt_model_destroy(model);
  }
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;
};

// The output bytes of `text` run on `backend` at `isa` (null: the best) under `profile`, on
// deterministic inputs.
std::vector<uint8_t> run(const std::string& text, qrt_backend backend, const char* isa, const char* profile) {
  const Loaded loaded(text, backend, isa, profile);
  qrt_model_t* model = loaded.model;
  qrt_context_t* ctx = loaded.ctx;
  size_t inputs = 0;
  qrt_model_num_inputs(model, &inputs);
  std::mt19937 rng(11);
  std::vector<std::vector<uint8_t>> data(inputs);
  for (size_t i = 0; i < inputs; ++i) {
    qrt_tensor_info info;
    REQUIRE(qrt_model_input_info(model, i, &info) == QRT_OK);
    size_t count = 1;
    for (size_t d = 0; d < info.rank; ++d) count *= size_t(info.dims[d]);
    data[i].resize(count * qrt_dtype_size(info.dtype));
    for (size_t k = 0; k < count; ++k) {
      if (info.dtype == QRT_DTYPE_F32) {
        const float v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        std::memcpy(data[i].data() + 4 * k, &v, 4);
      } else {
        data[i][k] = uint8_t(std::uniform_int_distribution<int64_t>(info.storage_min, info.storage_max)(rng));
      }
    }
    REQUIRE_MESSAGE(qrt_context_bind_input(ctx, i, info.dtype, info.rank, info.dims, data[i].data(), data[i].size()) == QRT_OK,
                    qrt_last_error_message());
  }
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  const auto* p = static_cast<const uint8_t*>(view.data);
  return std::vector<uint8_t>(p, p + view.bytes);
}

}  // namespace

TEST_CASE("empty tensors: every level and profile gives the reference's bytes, without a crash") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    for (const char* profile : {"default", "tflite", "stablehlo", "onnx"}) {
      // onnx redefines only the contractions.
      const bool contraction = c.text.find("qrt.matmul") != std::string::npos || c.text.find("qrt.conv2d") != std::string::npos;
      if (std::string(profile) == "onnx" && !contraction) continue;
      CAPTURE(profile);
      const std::vector<uint8_t> want = run(c.text, QRT_BACKEND_REF, nullptr, profile);
      for (const std::string& level : qrt_test::tested_levels()) {
        CAPTURE(level);
        CHECK(run(c.text, QRT_BACKEND_JIT, level.c_str(), profile) == want);
      }
    }
  }
  // The results that are not empty hold what the formulas give for empty sums: a K = 0 matmul
  // is its zero point, an empty f32 mean NaN (0 / 0).
  const std::vector<uint8_t> k0 = run(cases()[10].text, QRT_BACKEND_JIT, nullptr, "default");
  CHECK(k0 == std::vector<uint8_t>(6, uint8_t(int8_t(-1))));
  const std::vector<uint8_t> mean = run(cases()[7].text, QRT_BACKEND_JIT, nullptr, "default");
  REQUIRE(mean.size() == 16);
  float first;
  std::memcpy(&first, mean.data(), 4);
  CHECK(first != first);
}

TEST_CASE("an empty graph output that is an input or a constant reports its shape, type and no bytes") {
  // fuzz_c_api -seed=48 (tests/data/fuzz_findings/capi-empty-outputs-input-and-constant.onnx):
  // the outputs' views were kept from run to run while they pointed at the same bytes, and an
  // empty value has none (nullptr), as has a view never set, so these outputs stayed default
  // views of 4 bytes at nullptr, rank 0: qrun crashed printing them.
  const std::string text =
      "func.func @main(%x: tensor<3x0x5xf32>) -> (tensor<3x0x5xf32>, tensor<3x0x5xi1>) {\n"
      "  %z = \"qrt.constant\"() {value = dense<> : tensor<3x0x5xi1>} : () -> tensor<3x0x5xi1>\n"
      "  return %x, %z : tensor<3x0x5xf32>, tensor<3x0x5xi1>\n}\n";
  for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
    CAPTURE(int(backend));
    const Loaded loaded(text, backend);
    qrt_context_t* ctx = loaded.ctx;
    const int64_t dims[3] = {3, 0, 5};
    REQUIRE_MESSAGE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 3, dims, nullptr, 0) == QRT_OK, qrt_last_error_message());
    for (int round = 0; round < 2; ++round) {  // the second run keeps the first run's views
      CAPTURE(round);
      REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
      for (size_t i = 0; i < 2; ++i) {
        qrt_tensor_view view;
        REQUIRE(qrt_context_output(ctx, i, &view) == QRT_OK);
        CHECK(view.dtype == (i == 0 ? QRT_DTYPE_F32 : QRT_DTYPE_BOOL));
        REQUIRE(view.rank == 3);
        CHECK(std::vector<int64_t>(view.dims, view.dims + 3) == std::vector<int64_t>{3, 0, 5});
        CHECK(view.bytes == 0);
      }
    }
  }
}
