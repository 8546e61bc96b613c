// Tests: post-training quantization of the bundled float ONNX models through the C API —
// calibrate on a slice of the test inputs, quantize with the calibration pipeline, and compare
// accuracy with the float model on the whole test set (the bound: at most 1.0 point
// lost). The quantized plans must run integer kernels only between the input quantize and the
// output dequantize. On a slow host (qemu, sanitizers: tests/slow_host.h) both the calibration
// and the accuracy use a slice of the test set.
#include <doctest/doctest.h>

#include <qrt.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/importers/model_files.h"
#include "tests/slow_host.h"
#include "tools/npy.h"

namespace {

using model_files::kModels;
using model_files::load;


// Top-1 accuracy (percent) of `m` on x (as `dims`) against labels y; counts ops run by the
// reference (not a generated kernel) other than constants.
double accuracy(qrt_model_t* m, const qrt_tools::NpyArray& x, std::vector<int64_t> dims, const qrt_tools::NpyArray& y,
                size_t* reference_ops) {
  qrt_plan_t* plan = nullptr;
  qrt_context_t* ctx = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(m, nullptr, &plan) == QRT_OK, qrt_last_error_message());
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  *reference_ops = 0;
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    qrt_plan_op_info(plan, i, &info);
    *reference_ops += std::strcmp(info.kernel, "reference") == 0 && std::strcmp(info.op, "qrt.constant") != 0;
  }
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  REQUIRE_MESSAGE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, dims.size(), dims.data(), x.data.data(),
                                        x.data.size()) == QRT_OK, qrt_last_error_message());
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  const float* logits = static_cast<const float*>(view.data);
  const int64_t* labels = reinterpret_cast<const int64_t*>(y.data.data());
  size_t correct = 0;
  for (int64_t i = 0; i < view.dims[0]; ++i) {
    int best = 0;
    for (int j = 1; j < 10; ++j) best = logits[i * 10 + j] > logits[i * 10 + best] ? j : best;
    correct += best == labels[i];
  }
  const double n = double(view.dims[0]);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  return 100.0 * double(correct) / n;
}

struct PtqResult {
  double float_accuracy = 0, quant_accuracy = 0;
  size_t float_reference_ops = 0, quant_reference_ops = 0;
  std::string report;
  std::string printed;  // the quantized model's text
  int64_t calibrated = 0, measured = 0;  // rows calibrated on, rows measured
};

// Calibrates `model` on the first `samples` rows of x in batches of 100, quantizes it with
// `pipeline` and measures both models on all of x (on a slow host: at most 200 calibration rows
// and the first kSlowHostSamples rows of x).
PtqResult post_training_quantization(const std::string& model, const std::string& dataset, std::vector<int64_t> sample_dims,
                                     int64_t samples, const std::string& pipeline) {
  qrt_tools::NpyArray x = load(dataset + "_test_x.npy");
  qrt_tools::NpyArray y = load(dataset + "_test_y.npy");
  if (qrt_test::slow_host() && x.shape[0] > qrt_test::kSlowHostSamples) {
    x.data.resize(x.data.size() / size_t(x.shape[0]) * qrt_test::kSlowHostSamples);
    y.data.resize(y.data.size() / size_t(y.shape[0]) * qrt_test::kSlowHostSamples);
    x.shape[0] = y.shape[0] = qrt_test::kSlowHostSamples;
  }
  if (qrt_test::slow_host()) samples = std::min<int64_t>(samples, 200);
  qrt_model_t* m = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_file((kModels + "/onnx/" + model).c_str(), &m) == QRT_OK, qrt_last_error_message());
  std::vector<int64_t> all = {x.shape[0]};
  all.insert(all.end(), sample_dims.begin(), sample_dims.end());
  PtqResult r;
  r.calibrated = samples;
  r.measured = x.shape[0];
  r.float_accuracy = accuracy(m, x, all, y, &r.float_reference_ops);
  const size_t sample_bytes = x.data.size() / size_t(x.shape[0]);
  for (int64_t start = 0; start < samples; start += 100) {
    std::vector<int64_t> dims = all;
    dims[0] = std::min<int64_t>(100, samples - start);
    const qrt_tensor_view view = {QRT_DTYPE_F32, dims.size(), dims.data(), x.data.data() + size_t(start) * sample_bytes,
                                  size_t(dims[0]) * sample_bytes};
    REQUIRE_MESSAGE(qrt_model_calibrate(m, &view, 1) == QRT_OK, qrt_last_error_message());
  }
  char* report = nullptr;
  REQUIRE_MESSAGE(qrt_model_apply_passes(m, pipeline.c_str(), &report) == QRT_OK, qrt_last_error_message());
  r.report = report;
  qrt_free(report);
  r.quant_accuracy = accuracy(m, x, all, y, &r.quant_reference_ops);
  char* text = nullptr;
  REQUIRE(qrt_model_print(m, &text) == QRT_OK);
  r.printed = text;
  qrt_free(text);
  qrt_model_destroy(m);
  return r;
}

void check(const PtqResult& r, const char* what) {
  char line[200];
  std::snprintf(line, sizeof line, "%s (calibrated on %lld rows, measured on %lld): float %.2f%%, quantized %.2f%%", what,
                static_cast<long long>(r.calibrated), static_cast<long long>(r.measured), r.float_accuracy, r.quant_accuracy);
  MESSAGE(std::string(line));
  CHECK(r.quant_accuracy >= r.float_accuracy - 1.0);
  // Integer kernels from the input quantize to the output dequantize: the quantize and
  // dequantize themselves have kernels, so nothing runs on the reference.
  CHECK(r.quant_reference_ops == 0);
  CHECK(r.report.find("check-integer: ") != std::string::npos);
  CHECK(r.report.find(" 0 float path(s) between integer kernels") != std::string::npos);
  CHECK(r.printed.find("!quant.calibrated") == std::string::npos);  // all resolved
  CHECK(r.printed.find("quant.stats") == std::string::npos);
}

}  // namespace

TEST_CASE("post-training quantization of digits_cnn_f32 loses at most 1 accuracy point") {
  const PtqResult u8 = post_training_quantization("digits_cnn_f32.onnx", "digits", {1, 8, 8}, 300, qrt_calibration_pipeline());
  check(u8, "digits_cnn u8 activations");
  CHECK(u8.report.find("propagate: %input_q : !quant.uniform<u8:f32") != std::string::npos);
  const PtqResult i8 = post_training_quantization("digits_cnn_f32.onnx", "digits", {1, 8, 8}, 300,
                                                  "calibrate,propagate{activations=i8},fold-pad,fold-qdq,check-integer");
  check(i8, "digits_cnn i8 activations");
  CHECK(i8.report.find("propagate: %input_q : !quant.uniform<i8:f32") != std::string::npos);
}

TEST_CASE("post-training quantization of fashion_cnn_f32 loses at most 1 accuracy point") {
  const PtqResult r = post_training_quantization("fashion_cnn_f32.onnx", "fashion", {1, 28, 28}, 500, qrt_calibration_pipeline());
  check(r, "fashion_cnn u8 activations");
}

TEST_CASE("post-training quantization of digits_mlp_f32 (matmul + add bias layers)") {
  const PtqResult r = post_training_quantization("digits_mlp_f32.onnx", "digits", {64}, 300, qrt_calibration_pipeline());
  check(r, "digits_mlp u8 activations");
}

TEST_CASE("QDQ models: the default pipeline keeps every given parameter and leaves integer kernels only") {
  for (const char* model : {"digits_cnn_qdq_u8.onnx", "digits_cnn_qdq_s8.onnx", "digits_mlp_qdq_s8.onnx", "fashion_cnn_qdq_u8.onnx"}) {
    CAPTURE(model);
    qrt_model_t* m = nullptr;
    REQUIRE(qrt_model_load_file((kModels + "/onnx/" + model).c_str(), &m) == QRT_OK);
    char* report = nullptr;
    REQUIRE_MESSAGE(qrt_model_apply_passes(m, "default", &report) == QRT_OK, qrt_last_error_message());
    const std::string r = "\n" + std::string(report);
    qrt_free(report);
    qrt_model_destroy(m);
    // Every quantized activation keeps the type the model gives it: nothing is re-derived.
    size_t values = 0, immutable = 0;
    for (size_t at = 0; (at = r.find("\npropagate: %", at)) != std::string::npos; ++at) {
      ++values;
      const size_t end = r.find('\n', at + 1);
      immutable += r.substr(at, end - at).find("<- immutable: given in the graph") != std::string::npos;
    }
    CHECK(values >= 3);
    CHECK(immutable == values);
    CHECK(r.find("propagate: rescale") == std::string::npos);
    // One quantize of the input, one dequantize of the logits, integer kernels between.
    CHECK(r.find("integer kernel(s), 1 quantize(s), 1 dequantize(s) of integer results, 0 float path(s)") != std::string::npos);
  }
}

TEST_CASE("calibrating a QDQ model changes none of its parameters") {
  const qrt_tools::NpyArray x = load("digits_test_x.npy");
  qrt_model_t* m = nullptr;
  REQUIRE(qrt_model_load_file((kModels + "/onnx/digits_cnn_qdq_u8.onnx").c_str(), &m) == QRT_OK);
  std::vector<int64_t> dims = {50, 1, 8, 8};
  const qrt_tensor_view view = {QRT_DTYPE_F32, 4, dims.data(), x.data.data(), size_t(50 * 64 * 4)};
  REQUIRE_MESSAGE(qrt_model_calibrate(m, &view, 1) == QRT_OK, qrt_last_error_message());
  char* report = nullptr;
  REQUIRE_MESSAGE(qrt_model_apply_passes(m, qrt_calibration_pipeline(), &report) == QRT_OK, qrt_last_error_message());
  const std::string r = report;
  qrt_free(report);
  qrt_model_destroy(m);
  CHECK(r.find("from_stats") == std::string::npos);  // statistics never override given types
  CHECK(r.find("propagate: rescale") == std::string::npos);
  CHECK(r.find("integer kernel(s), 1 quantize(s), 1 dequantize(s) of integer results, 0 float path(s)") != std::string::npos);
}
