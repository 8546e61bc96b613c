// Google Benchmark: end-to-end latency of the bundled models through the C API at 1 and 2
// threads and at every ISA level the host has (the JIT backend capped by
// qrt_plan_options.isa, inputs bound once, outputs in the arena):
// BM_model/model:<i>/threads:<n>/isa:<level>, e.g. BM_model/model:3/threads:1/isa:avx512-vnni;
// and the TFLite models under each numerics profile, BM_model_numerics/.../numerics:<profile>.
// Run: build/bench/bench_qrt --benchmark_filter=model
// With QRT_BENCH_MODELS=DIR in the environment, the generated benchmark models found there are
// added after the bundled ones: MobileNetV2 224² in f32 and in QDQ int8 (written by
// `python3 scripts/make_onnx_test_models.py --bench DIR`), so the float-to-int8 ratio is
// measured side by side in one run.
#include <benchmark/benchmark.h>

#include <qrt.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// The models' paths: the bundled ones, then the generated ones QRT_BENCH_MODELS names.
std::vector<std::string> model_paths() {
  std::vector<std::string> paths;
  for (const char* m : {"onnx/digits_cnn_qdq_u8.onnx", "onnx/fashion_cnn_qdq_u8.onnx", "tflite-micro/person_detect.tflite",
                        "tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite", "onnx/digits_cnn_f32.onnx"}) {
    paths.push_back(std::string(MODELS_DIR) + "/" + m);
  }
  if (const char* dir = std::getenv("QRT_BENCH_MODELS"); dir && *dir) {
    for (const char* m : {"mobilenet_v2_f32_224.onnx", "mobilenet_v2_qdq_224.onnx"}) {
      const std::string path = std::string(dir) + "/" + m;
      if (std::ifstream(path).good()) paths.push_back(path);
    }
  }
  return paths;
}

const std::vector<std::string>& kModels() {
  static const std::vector<std::string> paths = model_paths();
  return paths;
}

/// Runs model `index` (into kModels) on `threads` threads with the JIT capped at `isa`, under
/// numerics profile `numerics` ("": the model's), with plan flags `flags`.
void BM_model(benchmark::State& state, size_t index, size_t threads, const std::string& isa,
              const std::string& numerics = "", unsigned flags = 0) {
  const std::string& path = kModels()[index];
  qrt_model_t* model = nullptr;
  qrt_plan_t* plan = nullptr;
  qrt_context_t* ctx = nullptr;
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  opts.threads = threads;
  opts.isa = isa.c_str();
  opts.numerics = numerics.empty() ? nullptr : numerics.c_str();
  opts.flags = flags;
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
  state.SetLabel(path.substr(path.find_last_of('/') + 1));
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);
}

/// The host's levels, most capable first, as qrt_host_isas() lists them ("a, b, scalar").
std::vector<std::string> host_levels() {
  std::vector<std::string> levels;
  std::stringstream list(qrt_host_isas());
  for (std::string level; std::getline(list, level, ',');) {
    level.erase(0, level.find_first_not_of(' '));
    if (!level.empty()) levels.push_back(level);
  }
  return levels;
}

// Only the host's levels are registered (a level the host lacks would fail plan creation
// with QRT_UNSUPPORTED). The scalar level is registered too: it is the JIT's path on hosts
// without a code generator, about 50x slower than avx2, so its rows take a few iterations.
const bool registered = [] {
  const std::vector<std::string> levels = host_levels();
  for (size_t model = 0; model < kModels().size(); ++model) {
    for (size_t threads : {1, 2}) {
      for (const std::string& isa : levels) {
        const std::string name = "BM_model/model:" + std::to_string(model) + "/threads:" + std::to_string(threads) +
                                 "/isa:" + isa;
        benchmark::RegisterBenchmark(name.c_str(), BM_model, model, threads, isa, std::string(), 0u)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
  // The ONNX CNNs (a dynamic batch) on the graph walk, beside BM_model's rows, which take the
  // static plan compiled for batch 1 from the third run on (QRT_PLAN_NO_SPECIALIZATION).
  for (size_t model : {size_t(0), size_t(1)}) {
    for (size_t threads : {1, 2}) {
      const std::string name = "BM_model_walk/model:" + std::to_string(model) + "/threads:" + std::to_string(threads) +
                               "/isa:" + levels.front();
      benchmark::RegisterBenchmark(name.c_str(), BM_model, model, threads, levels.front(), std::string(),
                                   unsigned(QRT_PLAN_NO_SPECIALIZATION))
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  // mobilenet_v2 with its 1x1 convolutions' rows made as their depthwise readers need them
  // (QRT_PLAN_ROW_FUSION), beside BM_model's rows, which write the whole results first.
  for (size_t threads : {1, 2}) {
    const std::string name = "BM_model_row_fusion/model:3/threads:" + std::to_string(threads) + "/isa:" + levels.front();
    benchmark::RegisterBenchmark(name.c_str(), BM_model, size_t(3), threads, levels.front(), std::string(),
                                 unsigned(QRT_PLAN_ROW_FUSION))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  // The TFLite models under the numerics profiles (docs/numerics.md, "Profiles"), at the
  // host's best level, beside the default profile: what reproducing another stack's integers
  // costs. BM_model_numerics/model:<i>/threads:<n>/numerics:<profile>.
  for (size_t model : {size_t(2), size_t(3)}) {
    for (size_t threads : {1, 2}) {
      for (const char* profile : {"default", "tflite", "tflite-single-rounding", "onnx"}) {
        const std::string name = "BM_model_numerics/model:" + std::to_string(model) + "/threads:" +
                                 std::to_string(threads) + "/numerics:" + profile;
        benchmark::RegisterBenchmark(name.c_str(), BM_model, model, threads, levels.front(), std::string(profile), 0u)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
  return true;
}();

}  // namespace
