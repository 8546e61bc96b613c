// Google Benchmark: end-to-end latency of the bundled models through the C API at 1 and 2
// threads (the JIT backend, inputs bound once, outputs in the arena).
// Run: build/bench/bench_qrt --benchmark_filter=model
#include <benchmark/benchmark.h>

#include <qrt.h>

#include <random>
#include <string>
#include <vector>

namespace {

const char* const kModels[] = {
    "onnx/digits_cnn_qdq_u8.onnx",
    "onnx/fashion_cnn_qdq_u8.onnx",
    "tflite-micro/person_detect.tflite",
    "tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite",
};

void BM_model(benchmark::State& state) {
  const std::string path = std::string(MODELS_DIR) + "/" + kModels[state.range(0)];
  qrt_model_t* model = nullptr;
  qrt_plan_t* plan = nullptr;
  qrt_context_t* ctx = nullptr;
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  opts.threads = size_t(state.range(1));
  if (qrt_model_load_file(path.c_str(), &model) != QRT_OK || qrt_plan_create(model, &opts, &plan) != QRT_OK ||
      qrt_context_create(plan, &ctx) != QRT_OK) {
    state.SkipWithError(qrt_last_error_message());
    qrt_plan_destroy(plan);
    qrt_model_destroy(model);
    return;
  }
  size_t inputs = 0;
  qrt_model_num_inputs(model, &inputs);
  std::vector<std::vector<uint8_t>> buffers;
  std::mt19937 rng(1);
  for (size_t i = 0; i < inputs; ++i) {
    qrt_tensor_info info;
    qrt_model_input_info(model, i, &info);
    std::vector<int64_t> dims(info.dims, info.dims + info.rank);
    size_t n = 1;
    for (int64_t& d : dims) n *= size_t(d = d < 0 ? 1 : d);
    buffers.emplace_back(n * qrt_dtype_size(info.dtype));
    if (info.dtype == QRT_DTYPE_F32) {
      auto* f = reinterpret_cast<float*>(buffers.back().data());
      for (size_t k = 0; k < n; ++k) f[k] = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
    } else {
      for (auto& b : buffers.back()) b = uint8_t(std::uniform_int_distribution<int64_t>(info.storage_min, info.storage_max)(rng));
    }
    qrt_context_bind_input(ctx, i, info.dtype, dims.size(), dims.data(), buffers.back().data(), buffers.back().size());
  }
  for (auto _ : state) {
    if (qrt_context_run(ctx) != QRT_OK) {
      state.SkipWithError(qrt_last_error_message());
      break;
    }
  }
  state.SetLabel(kModels[state.range(0)]);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);
}

}  // namespace

BENCHMARK(BM_model)
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2}})
    ->ArgNames({"model", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
