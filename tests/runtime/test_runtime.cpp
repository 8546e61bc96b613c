// Tests: the runtime under threads — the memory planner's invariant (no two simultaneously
// live tensors overlap) on random lifetimes and on every bundled model, with the arena
// against the naive sum reported; bit-identical outputs for 1, 2, 3 and 4 threads on every
// model; several threads running one plan with their own contexts for many iterations.
#include <doctest/doctest.h>

#include <qrt.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/memory_plan.h"
#include "runtime/thread_pool.h"
#include "tests/host_levels.h"
#include "tests/runtime/runtime_test_util.h"

namespace {

using namespace qrt_test;

const char* const kAllModels[] = {
    "onnx/digits_cnn_f32.onnx",     "onnx/digits_cnn_qdq_s8.onnx",   "onnx/digits_cnn_qdq_u8.onnx",
    "onnx/digits_mlp_f32.onnx",     "onnx/digits_mlp_qdq_s8.onnx",   "onnx/fashion_cnn_f32.onnx",
    "onnx/fashion_cnn_qdq_u8.onnx", "tflite-micro/hello_world_int8.tflite", "tflite-micro/person_detect.tflite",
    "tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite",
};


}  // namespace

TEST_CASE("the memory planner never overlaps simultaneously live tensors") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const int ops = std::uniform_int_distribution<int>(1, 40)(rng);
    std::vector<qrt::runtime::PlannedValue> values(size_t(ops + 5));
    for (size_t v = 0; v < values.size(); ++v) {
      if (std::uniform_int_distribution<int>(0, 6)(rng) == 0) continue;  // not in the arena
      auto& pv = values[v];
      pv.bytes = size_t(std::uniform_int_distribution<int>(1, 5000)(rng));
      pv.first = std::uniform_int_distribution<int>(0, ops - 1)(rng);
      pv.last = std::min(ops, pv.first + std::uniform_int_distribution<int>(0, 8)(rng));
    }
    // A few in-place handovers: a value born where an earlier one dies.
    for (size_t v = 1; v < values.size(); ++v) {
      for (size_t u = 0; u < v; ++u) {
        if (values[u].bytes && values[v].bytes && values[u].last == values[v].first &&
            values[u].in_place_of < 0 && values[v].in_place_of < 0 && rng() % 4 == 0) {
          bool taken = false;
          for (const auto& w : values) taken = taken || w.in_place_of == int(u);
          if (!taken) values[v].in_place_of = int(u);
          break;
        }
      }
    }
    const auto plan = qrt::runtime::plan_memory(values);
    CHECK(qrt::runtime::memory_plan_is_valid(values, plan));
    CHECK(plan.arena_bytes <= plan.naive_bytes + qrt::runtime::kArenaAlignment * values.size());
    const auto again = qrt::runtime::plan_memory(values);
    CHECK(again.offsets == plan.offsets);  // deterministic
  }
  // The checker itself catches an overlap.
  std::vector<qrt::runtime::PlannedValue> two(2);
  two[0] = {128, 0, 2, -1};
  two[1] = {128, 1, 3, -1};
  qrt::runtime::MemoryPlan bad;
  bad.offsets = {0, 64};
  bad.arena_bytes = 192;
  CHECK_FALSE(qrt::runtime::memory_plan_is_valid(two, bad));
}

TEST_CASE("every model: arena against the naive sum, and identical outputs for 1-4 threads") {
  for (const char* path : kAllModels) {
    CAPTURE(path);
    std::vector<std::vector<uint8_t>> first;
    for (size_t threads : {1, 2, 3, 4}) {
      Compiled c;
      compile(path, threads, c);
      if (threads == 1) {
        qrt_memory_info mem;
        REQUIRE(qrt_plan_memory_info(c.plan, &mem) == QRT_OK);
        MESSAGE(std::string(path) << ": arena " << mem.arena_bytes << " bytes for " << mem.naive_bytes
                     << " bytes of intermediates, " << mem.in_place << " in place");
        CHECK(mem.arena_bytes <= mem.naive_bytes + 64 * 1024);
      }
      qrt_context_t* ctx = nullptr;
      REQUIRE(qrt_context_create(c.plan, &ctx) == QRT_OK);
      const Inputs in = make_inputs(c.model, 77);
      auto out = run_once(ctx, in, c.outputs);
      qrt_context_destroy(ctx);
      if (threads == 1) {
        first = std::move(out);
      } else {
        CHECK_MESSAGE(out == first, "threads = " << threads);
      }
    }
  }
}

using qrt_test::host_levels;
using qrt_test::tested_levels;

// Inputs of the model at `path` from `seed` (make_inputs).
Inputs model_inputs(const char* path, uint32_t seed) {
  Compiled ref;
  compile(path, 1, ref, nullptr, QRT_BACKEND_REF);
  return make_inputs(ref.model, seed);
}

// The reference backend's outputs of the model at `path` on `in`.
std::vector<std::vector<uint8_t>> reference_outputs(const char* path, const Inputs& in) {
  Compiled ref;
  compile(path, 1, ref, nullptr, QRT_BACKEND_REF);
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(ref.plan, &ctx) == QRT_OK);
  auto out = run_once(ctx, in, ref.outputs);
  qrt_context_destroy(ctx);
  return out;
}

TEST_CASE("every model gives the reference's bytes at every ISA level the host has") {
  const std::vector<std::string> levels = tested_levels();
  MESSAGE("host levels: " << qrt_host_isas());
  REQUIRE(std::find(levels.begin(), levels.end(), "scalar") != levels.end());
  for (const char* path : kAllModels) {
    CAPTURE(path);
    const Inputs in = model_inputs(path, 91);
    const auto want = reference_outputs(path, in);
    qrt_context_t* ctx = nullptr;
    for (const std::string& level : levels) {
      CAPTURE(level);
      Compiled c;
      compile(path, 2, c, level.c_str());
      REQUIRE(qrt_context_create(c.plan, &ctx) == QRT_OK);
      CHECK(run_once(ctx, in, c.outputs) == want);
      qrt_context_destroy(ctx);
      // Every kernel the plan chose comes from an allowed level.
      size_t ops = 0;
      qrt_plan_num_ops(c.plan, &ops);
      for (size_t o = 0; o < ops; ++o) {
        const char* selection = nullptr;
        REQUIRE(qrt_plan_op_selection(c.plan, o, &selection) == QRT_OK);
        const std::string chain = selection;
        if (chain.find("chosen") == std::string::npos || chain.rfind("any ISA", 0) == 0) continue;
        CHECK_MESSAGE(chain.find(level + ": ") == 0, "op " << o << ": " << chain);
      }
    }
  }
}

TEST_CASE("every model gives the reference's bytes on the LLVM backend, whose kernels all come from LLVM") {
  if (std::string(qrt_build_info()).find("llvm (every kernel from LLVM: built)") == std::string::npos) {
    qrt_model_t* model = nullptr;
    REQUIRE(qrt_model_load_file((kModels + "/onnx/digits_cnn_qdq_u8.onnx").c_str(), &model) == QRT_OK);
    qrt_plan_options opts;
    qrt_plan_options_init(&opts);
    opts.backend = QRT_BACKEND_LLVM;
    qrt_plan_t* plan = nullptr;
    CHECK(qrt_plan_create(model, &opts, &plan) == QRT_UNSUPPORTED);
    CHECK(std::string(qrt_last_error_message()).find("LLVM backend is not in this build") != std::string::npos);
    qrt_model_destroy(model);
    MESSAGE("this build has no LLVM kernel templates: only the refusal is tested");
    return;
  }
  // The levels LLVM serves on x86-64 (avx2-vnni plans fall back to its avx2 kernels).
  std::vector<std::string> levels;
  for (const std::string& level : host_levels()) {
    if (level == "scalar" || level == "avx2" || level == "avx512-vnni") levels.push_back(level);
  }
  for (const char* path : kAllModels) {
    CAPTURE(path);
    const Inputs in = model_inputs(path, 93);
    const auto want = reference_outputs(path, in);
    qrt_context_t* ctx = nullptr;
    for (const std::string& level : levels) {
      CAPTURE(level);
      Compiled c;
      compile(path, 3, c, level.c_str(), QRT_BACKEND_LLVM);
      REQUIRE(qrt_context_create(c.plan, &ctx) == QRT_OK);
      CHECK(run_once(ctx, in, c.outputs) == want);
      qrt_context_destroy(ctx);
      size_t ops = 0, llvm_kernels = 0;
      qrt_plan_num_ops(c.plan, &ops);
      for (size_t o = 0; o < ops; ++o) {
        qrt_op_info info;
        REQUIRE(qrt_plan_op_info(c.plan, o, &info) == QRT_OK);
        const std::string kernel = info.kernel;
        // Kernel contract names carry "__<level>"; every one of them is LLVM's.
        CHECK_MESSAGE((kernel.find("__") == std::string::npos || kernel.find("llvm") != std::string::npos),
                      "op " << o << ": " << kernel);
        if (kernel.find("_llvm") != std::string::npos) ++llvm_kernels;
      }
      CHECK(llvm_kernels > 0);
    }
  }
}

TEST_CASE("plans refuse ISA levels that are unknown or that the host lacks, naming them") {
  qrt_model_t* model = nullptr;
  REQUIRE(qrt_model_load_file((kModels + "/onnx/digits_cnn_qdq_u8.onnx").c_str(), &model) == QRT_OK);
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  qrt_plan_t* plan = nullptr;
  opts.isa = "avx9000";
  CHECK(qrt_plan_create(model, &opts, &plan) == QRT_INVALID_ARGUMENT);
  CHECK(std::string(qrt_last_error_message()).find("unknown ISA level 'avx9000'") != std::string::npos);
  const std::vector<std::string> levels = host_levels();
  for (const char* level : {"avx2", "avx2-vnni", "avx512-vnni", "neon", "neon-dot", "neon-i8mm"}) {
    if (std::find(levels.begin(), levels.end(), level) != levels.end()) continue;
    opts.isa = level;
    CHECK(qrt_plan_create(model, &opts, &plan) == QRT_UNSUPPORTED);
    CHECK(std::string(qrt_last_error_message()).find(std::string("'") + level + "'") != std::string::npos);
  }
  qrt_model_destroy(model);
}

TEST_CASE("several threads run one plan with their own contexts") {
  for (const char* path : {"onnx/digits_cnn_qdq_u8.onnx", "tflite-micro/person_detect.tflite"}) {
    CAPTURE(path);
    Compiled c;
    compile(path, 2, c);  // each context has a pool of 2 on top of the 4 callers
    std::vector<Inputs> inputs;
    std::vector<std::vector<std::vector<uint8_t>>> expected;
    {
      qrt_context_t* ctx = nullptr;
      REQUIRE(qrt_context_create(c.plan, &ctx) == QRT_OK);
      for (uint32_t seed = 0; seed < 4; ++seed) {
        inputs.push_back(make_inputs(c.model, seed));
        expected.push_back(run_once(ctx, inputs.back(), c.outputs));
      }
      qrt_context_destroy(ctx);
    }
    std::vector<int> mismatches(4, 0), failures(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        qrt_context_t* ctx = nullptr;
        if (qrt_context_create(c.plan, &ctx) != QRT_OK) {
          ++failures[size_t(t)];
          return;
        }
        for (int it = 0; it < 15; ++it) {
          const size_t which = size_t((t + it) % 4);
          const Inputs& in = inputs[which];
          for (size_t i = 0; i < in.bytes.size(); ++i) {
            qrt_context_bind_input(ctx, i, in.dtypes[i], in.dims[i].size(), in.dims[i].data(), in.bytes[i].data(),
                                   in.bytes[i].size());
          }
          if (qrt_context_run(ctx) != QRT_OK) {
            ++failures[size_t(t)];
            continue;
          }
          for (size_t o = 0; o < c.outputs; ++o) {
            qrt_tensor_view view;
            qrt_context_output(ctx, o, &view);
            const auto* p = static_cast<const uint8_t*>(view.data);
            if (std::vector<uint8_t>(p, p + view.bytes) != expected[which][o]) ++mismatches[size_t(t)];
          }
        }
        qrt_context_destroy(ctx);
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) {
      CHECK(failures[size_t(t)] == 0);
      CHECK(mismatches[size_t(t)] == 0);
    }
  }
}

TEST_CASE("memory budget: hostile but valid models fail before allocating, naming the budget") {
  // Two 4 MB splats: a few bytes of text that claim 8 MB of constants.
  const std::string splats =
      "func.func @main() -> tensor<1000000xf32> {\n"
      "  %c = \"qrt.constant\"() {value = dense<1.0> : tensor<1000000xf32>} : () -> tensor<1000000xf32>\n"
      "  %d = \"qrt.constant\"() {value = dense<2.0> : tensor<1000000xf32>} : () -> tensor<1000000xf32>\n"
      "  %y = \"qrt.add\"(%c, %d) : (tensor<1000000xf32>, tensor<1000000xf32>) -> tensor<1000000xf32>\n"
      "  return %y : tensor<1000000xf32>\n}\n";
  qrt_load_options load;
  qrt_load_options_init(&load);
  load.max_memory = 6000000;  // the first splat fits, the second does not
  qrt_model_t* model = nullptr;
  CHECK(qrt_model_load_buffer_ex(splats.data(), splats.size(), "splats.mlir", &load, &model) == QRT_OUT_OF_MEMORY);
  CHECK(model == nullptr);
  const std::string load_error = qrt_last_error_message();
  CHECK(load_error.find("splats.mlir:3:") != std::string::npos);
  CHECK(load_error.find("memory budget") != std::string::npos);

  // Loaded with room to spare, the plan needs both copies of the constants and the arena.
  load.max_memory = 64 << 20;
  REQUIRE(qrt_model_load_buffer_ex(splats.data(), splats.size(), "splats.mlir", &load, &model) == QRT_OK);
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  opts.max_memory = 10000000;
  qrt_plan_t* plan = nullptr;
  CHECK(qrt_plan_create(model, &opts, &plan) == QRT_OUT_OF_MEMORY);
  CHECK(plan == nullptr);
  CHECK(std::string(qrt_last_error_message()).find("8000000 bytes of constants") != std::string::npos);
  opts.max_memory = 64 << 20;
  REQUIRE(qrt_plan_create(model, &opts, &plan) == QRT_OK);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);

  // A 4 TB arena (no constants at all) is refused at plan time under the default budget,
  // the host's physical memory; a small one passes under a small budget and not under a
  // smaller one.
  auto chain = [](const std::string& shape) {
    const std::string t = "tensor<" + shape + "xf32>";
    return "func.func @main(%x: " + t + ") -> " + t + " {\n  %y = \"qrt.relu\"(%x) : (" + t + ") -> " + t +
           "\n  %z = \"qrt.relu\"(%y) : (" + t + ") -> " + t + "\n  return %z : " + t + "\n}\n";
  };
  const std::string huge = chain("1000000x1000000");
  REQUIRE(qrt_model_load_buffer(huge.data(), huge.size(), "huge.mlir", &model) == QRT_OK);
  qrt_plan_options_init(&opts);
  CHECK(qrt_plan_create(model, &opts, &plan) == QRT_OUT_OF_MEMORY);
  CHECK(std::string(qrt_last_error_message()).find("bytes of arena") != std::string::npos);
  qrt_model_destroy(model);
  const std::string small = chain("1000x1000");
  REQUIRE(qrt_model_load_buffer(small.data(), small.size(), "small.mlir", &model) == QRT_OK);
  opts.max_memory = 1 << 20;
  CHECK(qrt_plan_create(model, &opts, &plan) == QRT_OUT_OF_MEMORY);
  opts.max_memory = 64 << 20;
  REQUIRE(qrt_plan_create(model, &opts, &plan) == QRT_OK);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);

  // Options from a future, larger struct are refused, not misread.
  load.struct_size = sizeof load + 8;
  CHECK(qrt_model_load_buffer_ex(small.data(), small.size(), "small.mlir", &load, &model) == QRT_INVALID_ARGUMENT);
  CHECK(std::string(qrt_last_error_message()).find("struct_size") != std::string::npos);
}

TEST_CASE("numerics profiles: the bundled TFLite models give the reference's bytes under each profile") {
  // digits_cnn_qdq_u8.onnx has a dynamic batch: its contractions still run on kernels.
  for (const char* path : {"tflite-micro/person_detect.tflite", "tflite-micro/hello_world_int8.tflite",
                           "tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite", "onnx/digits_cnn_qdq_u8.onnx"}) {
    const bool large = std::string(path).find("mobilenet") != std::string::npos;  // 0.9 s on the reference (Intel Xeon model 167)
    for (const char* profile : {"tflite", "tflite-single-rounding", "stablehlo", "onnx"}) {
      if (large && std::string(profile) != "tflite") continue;
      CAPTURE(std::string(path));
      CAPTURE(std::string(profile));
      Compiled jit, ref, plain;
      compile(path, 2, jit, nullptr, QRT_BACKEND_DEFAULT, profile);
      compile(path, 1, ref, nullptr, QRT_BACKEND_REF, profile);
      compile(path, 1, plain);
      const char* name = nullptr;
      REQUIRE(qrt_plan_numerics(jit.plan, &name) == QRT_OK);
      CHECK(std::string(name) == profile);
      // Every op a profile redefines says so: the reference runs it and names the formula, or
      // (contractions under tflite and onnx) its kernel names the profile's requantization.
      size_t ops = 0, redefined = 0;
      qrt_plan_num_ops(jit.plan, &ops);
      for (size_t i = 0; i < ops; ++i) {
        qrt_op_info info;
        REQUIRE(qrt_plan_op_info(jit.plan, i, &info) == QRT_OK);
        const bool by_reference = std::string(info.reason).find(std::string("numerics profile ") + profile) != std::string::npos;
        // (or, under tflite, the GEMM tiles requantize as TFLite does: names ending "_q31__...")
        // (or, under stablehlo, the dequantize-op-quantize kernels and byte tables of the formula)
        const std::string kernel = info.kernel;
        const bool by_kernel = kernel.find(std::string("then the ") + profile + " requantization") != std::string::npos ||
                               (std::string(profile) == "tflite" && kernel.find("_q31__") != std::string::npos) ||
                               (std::string(profile) == "stablehlo" && (kernel.find("stablehlo dequantize-op-quantize") == 0 ||
                                                                        kernel.find("stablehlo requantize") != std::string::npos));
        redefined += by_reference || by_kernel;
        // Quantized contractions keep kernels under every profile (int32 results are the same
        // in every profile; stablehlo's run on the float kernels).
        const std::string op = info.op;
        if (op == "qrt.conv2d" || op == "qrt.matmul") {
          CHECK_MESSAGE(std::string(info.kernel) != "reference", op << " on the reference: " << info.reason);
        }
      }
      CHECK(redefined > 0);
      const Inputs in = make_inputs(jit.model, 3);
      qrt_context_t *a = nullptr, *b = nullptr, *c = nullptr;
      REQUIRE(qrt_context_create(jit.plan, &a) == QRT_OK);
      REQUIRE(qrt_context_create(ref.plan, &b) == QRT_OK);
      REQUIRE(qrt_context_create(plain.plan, &c) == QRT_OK);
      const auto got = run_once(a, in, jit.outputs);
      CHECK(got == run_once(b, in, ref.outputs));
      // TFLite's requantization changes mobilenet's 1000 logits (the small models' outputs
      // can coincide: a saturated softmax, a 1-element regression).
      if (large) CHECK(got != run_once(c, in, plain.outputs));
      qrt_context_destroy(a);
      qrt_context_destroy(b);
      qrt_context_destroy(c);
    }
  }
}

TEST_CASE("numerics profiles: recorded in the model, saved, loaded, overridden, and unknown names refused") {
  qrt_model_t* model = nullptr;
  REQUIRE(qrt_model_load_file((kModels + "/tflite-micro/hello_world_int8.tflite").c_str(), &model) == QRT_OK);
  const char* name = nullptr;
  REQUIRE(qrt_model_numerics(model, &name) == QRT_OK);
  CHECK(std::string(name) == "default");
  CHECK(qrt_model_set_numerics(model, "gemmlowp") == QRT_INVALID_ARGUMENT);
  CHECK(std::string(qrt_last_error_message()).find("unknown numerics profile 'gemmlowp'") != std::string::npos);
  REQUIRE(qrt_model_set_numerics(model, "tflite") == QRT_OK);
  const std::string path = "numerics_profile_test.qrt";
  REQUIRE(qrt_model_save(model, path.c_str(), QRT_FORMAT_BINARY) == QRT_OK);
  qrt_model_t* loaded = nullptr;
  REQUIRE(qrt_model_load_file(path.c_str(), &loaded) == QRT_OK);
  REQUIRE(qrt_model_numerics(loaded, &name) == QRT_OK);
  CHECK(std::string(name) == "tflite");
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  qrt_plan_t* plan = nullptr;
  REQUIRE(qrt_plan_create(loaded, &opts, &plan) == QRT_OK);  // the model's profile
  REQUIRE(qrt_plan_numerics(plan, &name) == QRT_OK);
  CHECK(std::string(name) == "tflite");
  qrt_plan_destroy(plan);
  opts.numerics = "default";  // the options override it
  REQUIRE(qrt_plan_create(loaded, &opts, &plan) == QRT_OK);
  REQUIRE(qrt_plan_numerics(plan, &name) == QRT_OK);
  CHECK(std::string(name) == "default");
  qrt_plan_destroy(plan);
  opts.numerics = "tflite2";
  CHECK(qrt_plan_create(loaded, &opts, &plan) == QRT_INVALID_ARGUMENT);
  CHECK(std::string(qrt_last_error_message()).find("unknown numerics profile 'tflite2'") != std::string::npos);
  std::remove(path.c_str());
  qrt_model_destroy(loaded);
  qrt_model_destroy(model);
}

TEST_CASE("the thread pool runs every task of every job exactly once, however late its workers are") {
  // A stress test: back-to-back jobs of different sizes, so that a worker still leaving one
  // job overlaps the publication of the next. Such a worker must never claim a task against
  // the next job's parameters (the hang ThreadSanitizer's timing exposed in CI: a task index
  // the job did not have, and the next job's pending count decremented once too often). The
  // window is a few instructions wide, so this test makes the overlap frequent rather than
  // certain; thread_pool.cpp's comments give the ordering argument.
  for (size_t threads : {2, 3, 4}) {
    CAPTURE(threads);
    qrt::runtime::ThreadPool pool(threads);
    std::vector<std::atomic<int>> runs(64);
    size_t mismatches = 0;
    for (int job = 0; job < 50000; ++job) {
      const size_t n = 2 + size_t(job * 7919) % 62;
      for (size_t i = 0; i < n; ++i) runs[i].store(0, std::memory_order_relaxed);
      pool.for_each(n, [&](size_t i) {
        if (i < runs.size()) runs[i].fetch_add(1, std::memory_order_relaxed);
      });
      for (size_t i = 0; i < n; ++i) mismatches += runs[i].load(std::memory_order_relaxed) != 1;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("plans run a quantized conv_transpose2d on the kernels with the reference's bytes") {
  const char* text = R"(func.func @main(%x: tensor<1x3x3x2x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x6x6x3x!quant.uniform<i8:f32, 0.75:1>> {
  %w = "qrt.constant"() {value = dense<[[[[1, -2], [3, 4]], [[5, 6], [-7, 8]]], [[[9, 10], [11, -12]], [[13, 14], [15, 16]]], [[[-17, 18], [19, 20]], [[21, 22], [23, -24]]]]> : tensor<3x2x2x2xi8>} : () -> tensor<3x2x2x2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.05}>>
  %y = "qrt.conv_transpose2d"(%x, %w) {strides = [2, 2]} : (tensor<1x3x3x2x!quant.uniform<u8:f32, 0.5:128>>, tensor<3x2x2x2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.05}>>) -> tensor<1x6x6x3x!quant.uniform<i8:f32, 0.75:1>>
  return %y : tensor<1x6x6x3x!quant.uniform<i8:f32, 0.75:1>>
})";
  std::vector<std::vector<uint8_t>> outputs;
  for (qrt_backend backend : {QRT_BACKEND_REF, QRT_BACKEND_DEFAULT}) {
    qrt_model_t* m = nullptr;
    REQUIRE_MESSAGE(qrt_model_load_buffer(text, std::strlen(text), "ct.mlir", &m) == QRT_OK, qrt_last_error_message());
    qrt_plan_options options;
    qrt_plan_options_init(&options);
    options.backend = backend;
    qrt_plan_t* plan = nullptr;
    REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, 1, &info) == QRT_OK);
    CHECK(std::string(info.op) == "qrt.conv_transpose2d");
    // The kernels run it by sub-pixel phases (stride 2: four); ops counts the
    // scatter form's products: 9 input pixels x 3 x 2 x 2 x 2 filter taps, 2 ops each.
    if (backend == QRT_BACKEND_DEFAULT) CHECK(std::string(info.kernel).find("sub-pixel phases of stride") != std::string::npos);
    CHECK(info.ops == 2 * 9 * 24);
    qrt_context_t* ctx = nullptr;
    REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
    std::vector<uint8_t> x(18);
    for (size_t i = 0; i < x.size(); ++i) x[i] = uint8_t(i * 37 % 256);
    const int64_t dims[] = {1, 3, 3, 2};
    REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_U8, 4, dims, x.data(), x.size()) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view v;
    REQUIRE(qrt_context_output(ctx, 0, &v) == QRT_OK);
    const auto* p = static_cast<const uint8_t*>(v.data);
    outputs.emplace_back(p, p + v.bytes);
    qrt_context_destroy(ctx);
    qrt_plan_destroy(plan);
    qrt_model_destroy(m);
  }
  CHECK(outputs[0] == outputs[1]);
  CHECK(outputs[0].size() == 6 * 6 * 3);
}

TEST_CASE("plans run graphs whose intermediate and output values have no elements") {
  // The memory plan places no bytes for an empty value; its kernel and the output still get
  // its shape (a run once crashed on the missing view, and an element-wise program on an empty
  // last dimension divided by zero).
  const char* text = R"(func.func @main(%x: tensor<3x0xf32>) -> tensor<3x0xf32> {
  %a = "qrt.add"(%x, %x) : (tensor<3x0xf32>, tensor<3x0xf32>) -> tensor<3x0xf32>
  %y = "qrt.mul"(%a, %x) : (tensor<3x0xf32>, tensor<3x0xf32>) -> tensor<3x0xf32>
  return %y : tensor<3x0xf32>
})";
  for (qrt_backend backend : {QRT_BACKEND_REF, QRT_BACKEND_DEFAULT}) {
    CAPTURE(int(backend));
    qrt_model_t* m = nullptr;
    REQUIRE_MESSAGE(qrt_model_load_buffer(text, std::strlen(text), "empty.mlir", &m) == QRT_OK, qrt_last_error_message());
    qrt_plan_options options;
    qrt_plan_options_init(&options);
    options.backend = backend;
    qrt_plan_t* plan = nullptr;
    REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
    qrt_context_t* ctx = nullptr;
    REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
    const int64_t dims[] = {3, 0};
    const float none = 0.0f;
    REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 2, dims, &none, 0) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view v;
    REQUIRE(qrt_context_output(ctx, 0, &v) == QRT_OK);
    CHECK(v.bytes == 0);
    CHECK(v.rank == 2);
    CHECK(v.dims[0] == 3);
    CHECK(v.dims[1] == 0);
    qrt_context_destroy(ctx);
    qrt_plan_destroy(plan);
    qrt_model_destroy(m);
  }
}
