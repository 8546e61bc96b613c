// Tests: weight-only quantization of the bundled float ONNX models through the C API, as
// `qopt --weight-only` does it — the quantize-weights pass, then plans on the reference and on
// the JIT at every ISA level this host has (and LLVM where built). The generated kernels keep
// the weights packed (the weight-only GEMM for matmuls) and give the reference's bytes; the
// accuracy lost against the float model stays within the bound each case states.
#include <doctest/doctest.h>

#include <qrt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/importers/onnx_builders.h"
#include "tests/importers/model_files.h"
#include "tests/slow_host.h"
#include "tools/npy.h"

namespace {

using onnx_builders::host_levels;
using onnx_builders::tested_levels;

using model_files::kModels;
using model_files::load;
using qrt_test::kSlowHostSamples;
using qrt_test::slow_host;


struct WeightOnlyOutcome {
  double accuracy = 0;
  std::vector<uint8_t> logits;        // the output's bytes
  std::vector<std::string> matmuls;   // the kernel of every qrt.matmul
};

// A plan of `m` on `backend` capped at `isa` (nullptr: the host's best), or nullptr where this
// build or host cannot make one (qrt_last_error_message() says why).
qrt_plan_t* plan_for(qrt_model_t* m, qrt_backend backend, const char* isa) {
  qrt_plan_options o;
  qrt_plan_options_init(&o);
  o.backend = backend;
  o.isa = isa;
  qrt_plan_t* plan = nullptr;
  return qrt_plan_create(m, &o, &plan) == QRT_OK ? plan : nullptr;
}

// Runs `plan` on all of x (as `dims`), then destroys it.
WeightOnlyOutcome run(qrt_plan_t* plan, const qrt_tools::NpyArray& x, const std::vector<int64_t>& dims, const qrt_tools::NpyArray& y) {
  REQUIRE_MESSAGE(plan != nullptr, qrt_last_error_message());
  qrt_context_t* ctx = nullptr;
  WeightOnlyOutcome r;
  r.matmuls = onnx_builders::matmul_kernels(plan);
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  REQUIRE_MESSAGE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, dims.size(), dims.data(), x.data.data(), x.data.size()) == QRT_OK,
                  qrt_last_error_message());
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  const float* logits = static_cast<const float*>(view.data);
  r.logits.assign(static_cast<const uint8_t*>(view.data), static_cast<const uint8_t*>(view.data) + view.bytes);
  const int64_t* labels = reinterpret_cast<const int64_t*>(y.data.data());
  size_t correct = 0;
  for (int64_t i = 0; i < view.dims[0]; ++i) {
    int best = 0;
    for (int j = 1; j < 10; ++j) best = logits[i * 10 + j] > logits[i * 10 + best] ? j : best;
    correct += best == labels[i];
  }
  r.accuracy = 100.0 * double(correct) / double(view.dims[0]);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  return r;
}

// Quantizes `model`'s weights with `spec`, checks every backend and level against the reference,
// and returns the accuracy points lost against the float model.
double points_lost(const std::string& model, const std::string& dataset, std::vector<int64_t> sample_dims, const std::string& spec) {
  CAPTURE(model);
  CAPTURE(spec);
  qrt_tools::NpyArray x = load(dataset + "_test_x.npy");
  qrt_tools::NpyArray y = load(dataset + "_test_y.npy");
  // Every level still runs on a slow host, on a slice: half of it for the 28x28 images, whose
  // convolutions on the reference dominate this test under qemu.
  const int64_t slice = x.data.size() / size_t(x.shape[0]) > 64 * sizeof(float) ? kSlowHostSamples / 2 : kSlowHostSamples;
  if (slow_host() && x.shape[0] > slice) {
    x.data.resize(x.data.size() / size_t(x.shape[0]) * size_t(slice));
    y.data.resize(y.data.size() / size_t(y.shape[0]) * size_t(slice));
    x.shape[0] = y.shape[0] = slice;
  }
  std::vector<int64_t> dims = {x.shape[0]};
  dims.insert(dims.end(), sample_dims.begin(), sample_dims.end());
  qrt_model_t* m = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_file((kModels + "/onnx/" + model).c_str(), &m) == QRT_OK, qrt_last_error_message());
  // The float model's accuracy, once per model (the float reference is the slowest run here).
  static std::map<std::string, double> float_accuracy;
  if (!float_accuracy.count(model)) float_accuracy[model] = run(plan_for(m, QRT_BACKEND_REF, nullptr), x, dims, y).accuracy;
  const double float_points = float_accuracy[model];
  char* report = nullptr;
  REQUIRE_MESSAGE(qrt_model_apply_passes(m, spec.c_str(), &report) == QRT_OK, qrt_last_error_message());
  const std::string r = report;
  qrt_free(report);
  CHECK(r.find("kept float") == std::string::npos);  // every matmul and conv weight quantized
  const WeightOnlyOutcome ref = run(plan_for(m, QRT_BACKEND_REF, nullptr), x, dims, y);
  // Activations quantized per call (lower-hybrid{mode=dynamic-i8}) run the dynamic i8 kernels.
  // f16 scales reach the dynamic kernel's records as f16 (the "_h" in its name).
  const bool dynamic = spec.find("dynamic-i8") != std::string::npos;
  const std::string kernel = !dynamic ? "_wogemm_" : spec.find("scales=f16") != std::string::npos ? "_h_f32_dyngemm_" : "_dyngemm_";
  for (const std::string& level : tested_levels()) {
    CAPTURE(level);
    const WeightOnlyOutcome jit = run(plan_for(m, QRT_BACKEND_JIT, level.c_str()), x, dims, y);
    CHECK(jit.logits == ref.logits);
    REQUIRE(!jit.matmuls.empty());
    for (const std::string& k : jit.matmuls) CHECK_MESSAGE(k.find(kernel) != std::string::npos, k);
  }
  if (qrt_plan_t* llvm_plan = plan_for(m, QRT_BACKEND_LLVM, nullptr)) {
    const WeightOnlyOutcome llvm = run(llvm_plan, x, dims, y);
    CHECK(llvm.logits == ref.logits);
    for (const std::string& k : llvm.matmuls) CHECK_MESSAGE(k.find(kernel) != std::string::npos, k);
  } else {
    MESSAGE("LLVM backend not in this build: " << qrt_last_error_message());
  }
  qrt_model_destroy(m);
  char line[200];
  std::snprintf(line, sizeof line, "%s %s: float %.2f%%, weight-only %.2f%%", model.c_str(), spec.c_str(), float_points,
                ref.accuracy);
  MESSAGE(std::string(line));
  return float_points - ref.accuracy;
}

}  // namespace

TEST_CASE("qopt --weight-only on the bundled float models: the reference's bytes at every level, few points lost") {
  // 8-bit weights lose (nearly) nothing; 4-bit ones per column a little more, and blocks
  // along K win part of it back. The bounds are the measured losses plus a margin.
  CHECK(points_lost("digits_mlp_f32.onnx", "digits", {64}, "quantize-weights{bits=i8}") <= 0.5);
  CHECK(points_lost("digits_mlp_f32.onnx", "digits", {64}, "quantize-weights{bits=i4}") <= 2.0);
  CHECK(points_lost("digits_mlp_f32.onnx", "digits", {64}, "quantize-weights{bits=i4 block=16}") <= 1.5);
  CHECK(points_lost("digits_mlp_f32.onnx", "digits", {64}, "quantize-weights{bits=u4 block=32 search=mse}") <= 1.5);
  // The same weights with activations quantized to i8 per row and block (llama.cpp's Q8 form).
  CHECK(points_lost("digits_mlp_f32.onnx", "digits", {64}, "quantize-weights{bits=i4 block=16},lower-hybrid{mode=dynamic-i8}") <= 2.0);
  CHECK(points_lost("digits_mlp_f32.onnx", "digits", {64}, "quantize-weights{bits=u4 block=32 search=mse},lower-hybrid{mode=dynamic-i8}") <= 2.0);
  // llama.cpp's Q4_0 form: symmetric, f16 scales (the dynamic kernel's 4.5-bit records).
  CHECK(points_lost("digits_mlp_f32.onnx", "digits", {64},
                    "quantize-weights{bits=i4 block=32 symmetric=true scales=f16},lower-hybrid{mode=dynamic-i8}") <= 2.0);
  CHECK(points_lost("digits_cnn_f32.onnx", "digits", {1, 8, 8}, "quantize-weights{bits=i8}") <= 0.5);
  CHECK(points_lost("digits_cnn_f32.onnx", "digits", {1, 8, 8}, "quantize-weights{bits=i4}") <= 2.0);
  CHECK(points_lost("digits_cnn_f32.onnx", "digits", {1, 8, 8}, "quantize-weights{bits=i4 block=32}") <= 1.5);
  CHECK(points_lost("fashion_cnn_f32.onnx", "fashion", {1, 28, 28}, "quantize-weights{bits=i8}") <= 0.5);
  CHECK(points_lost("fashion_cnn_f32.onnx", "fashion", {1, 28, 28}, "quantize-weights{bits=i4}") <= 2.0);
  CHECK(points_lost("fashion_cnn_f32.onnx", "fashion", {1, 28, 28}, "quantize-weights{bits=i4 block=32}") <= 1.5);
  CHECK(points_lost("fashion_cnn_f32.onnx", "fashion", {1, 28, 28}, "quantize-weights{bits=i4 block=32 symmetric=true}") <= 2.0);
}
