// Tests: plans with dynamic shapes — the graph walk's kept result buffers across shape
// changes, and the static plans compiled for input shapes a context runs twice in a row
// (runtime/shape_specialization.cpp): the reference's bytes on every run, the plan's cache
// shared by its contexts, the memory budget, the opt-out flag.
#include <doctest/doctest.h>

#include <qrt.h>

#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "tests/runtime/runtime_test_util.h"

using namespace qrt_test;

TEST_CASE("dynamic shapes: one context runs batches of 3, 1 and 3 again with the reference's bytes") {
  // run_dynamic keeps each kernel's result buffer while its shape holds and makes a new one
  // when the batch changes; every run must still give the reference's bytes, and an output
  // must not keep a previous run's values.
  for (const char* path : {"onnx/digits_cnn_qdq_u8.onnx", "onnx/fashion_cnn_qdq_u8.onnx"}) {
    CAPTURE(path);
    Compiled jit, ref;
    compile(path, 2, jit);
    compile(path, 1, ref, nullptr, QRT_BACKEND_REF);
    qrt_context_t* jc = nullptr;
    qrt_context_t* rc = nullptr;
    REQUIRE(qrt_context_create(jit.plan, &jc) == QRT_OK);
    REQUIRE(qrt_context_create(ref.plan, &rc) == QRT_OK);
    std::vector<std::vector<uint8_t>> first;
    for (int64_t batch : {3, 1, 3}) {
      CAPTURE(batch);
      Inputs in = make_inputs(jit.model, uint32_t(11 + batch));
      REQUIRE(in.dims[0][0] == 1);  // the dynamic batch dimension
      in.dims[0][0] = batch;
      const std::vector<uint8_t> one = in.bytes[0];
      for (int64_t b = 1; b < batch; ++b) {  // later images: the first one's bytes reversed
        in.bytes[0].insert(in.bytes[0].end(), one.rbegin(), one.rend());
      }
      const auto got = run_once(jc, in, jit.outputs);
      const auto want = run_once(rc, in, ref.outputs);
      REQUIRE(got.size() == want.size());
      CHECK(got[0].size() == want[0].size());
      CHECK(got == want);
      if (first.empty()) first = got;
      else if (batch == 3) CHECK(got == first);  // the same inputs again
    }
    qrt_context_destroy(jc);
    qrt_context_destroy(rc);
  }
}

TEST_CASE("dynamic shapes: a rank-0 kernel result gets its bytes on the first run and after a shape change") {
  // A rank-0 result's dims equal those of a buffer never made (once a crash: run_dynamic took
  // the empty buffer for the result's).
  const char* text = R"(func.func @main(%x: tensor<?x4xf32>) -> tensor<f32> {
  %a = "qrt.add"(%x, %x) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = "qrt.reduce_sum"(%a) {axes = [0, 1], keepdims = 0 : i64} : (tensor<?x4xf32>) -> tensor<f32>
  %b = "qrt.add"(%s, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %b : tensor<f32>
})";
  qrt_model_t* m = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(text, std::strlen(text), "scalar.mlir", &m) == QRT_OK, qrt_last_error_message());
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  const float x[8] = {0.5f, 1.0f, -2.0f, 0.25f, 3.0f, -1.5f, 0.75f, 1.25f};
  for (int64_t rows : {1, 2, 2, 1}) {
    CAPTURE(rows);
    const int64_t dims[] = {rows, 4};
    REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 2, dims, x, size_t(rows) * 4 * sizeof(float)) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view v;
    REQUIRE(qrt_context_output(ctx, 0, &v) == QRT_OK);
    REQUIRE(v.rank == 0);
    REQUIRE(v.bytes == sizeof(float));
    float got;
    std::memcpy(&got, v.data, sizeof got);
    float sum = 0.0f;  // small exact values: any order gives the same sum
    for (int64_t i = 0; i < rows * 4; ++i) sum += 2.0f * x[i];
    CHECK(got == 2.0f * sum);
  }
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
}

namespace {

// A plan of `model` with plan flags and a memory budget (0: the default).
qrt_plan_t* plan_with(qrt_model_t* model, size_t threads, unsigned flags, size_t max_memory) {
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  opts.threads = threads;
  opts.flags = flags;
  opts.max_memory = max_memory;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(model, &opts, &plan) == QRT_OK, qrt_last_error_message());
  return plan;
}

// `batch` images of the model's input, image b from seed `seed + b`.
Inputs batch_inputs(qrt_model_t* model, int64_t batch, uint32_t seed) {
  Inputs in = make_inputs(model, seed);
  REQUIRE(in.dims[0][0] == 1);  // the dynamic batch dimension
  in.dims[0][0] = batch;
  for (int64_t b = 1; b < batch; ++b) {
    const Inputs more = make_inputs(model, seed + uint32_t(b));
    in.bytes[0].insert(in.bytes[0].end(), more.bytes[0].begin(), more.bytes[0].end());
  }
  return in;
}

size_t specializations(const qrt_plan_t* plan) {
  size_t n = 99;
  REQUIRE(qrt_plan_num_specializations(plan, &n) == QRT_OK);
  return n;
}

}  // namespace

TEST_CASE("dynamic shapes: a shape run twice in a row gets a static plan, and every run the reference's bytes") {
  for (const char* path : {"onnx/digits_cnn_qdq_u8.onnx", "onnx/fashion_cnn_qdq_u8.onnx"}) {
    CAPTURE(path);
    Compiled ref;
    compile(path, 1, ref, nullptr, QRT_BACKEND_REF);
    qrt_context_t* rc = nullptr;
    REQUIRE(qrt_context_create(ref.plan, &rc) == QRT_OK);
    for (unsigned flags : {0u, unsigned(QRT_PLAN_NO_SPECIALIZATION)}) {
      CAPTURE(flags);
      qrt_plan_t* plan = plan_with(ref.model, 2, flags, 0);
      qrt_context_t* jc = nullptr;
      REQUIRE(qrt_context_create(plan, &jc) == QRT_OK);
      CHECK(specializations(plan) == 0);
      // Batch 2 twice makes the first static plan; batch 5 twice the second; batch 2 again
      // takes the first; batch 1 once stays on the walk. New images every run: a specialized
      // run must read this run's inputs, not replay an earlier one.
      const int64_t batches[] = {2, 2, 2, 5, 5, 5, 2, 1};
      const size_t expected[] = {0, 1, 1, 1, 2, 2, 2, 2};
      for (size_t r = 0; r < std::size(batches); ++r) {
        CAPTURE(r);
        const Inputs in = batch_inputs(ref.model, batches[r], uint32_t(100 * r));
        const auto got = run_once(jc, in, ref.outputs);
        const auto want = run_once(rc, in, ref.outputs);
        REQUIRE(got.size() == want.size());
        CHECK(got == want);
        CHECK(specializations(plan) == (flags ? 0 : expected[r]));
      }
      // A second context shares the plan's static plans (no third one for batch 2) and runs
      // them with its own arena.
      qrt_context_t* second = nullptr;
      REQUIRE(qrt_context_create(plan, &second) == QRT_OK);
      for (uint32_t r = 0; r < 3; ++r) {
        const Inputs in = batch_inputs(ref.model, 2, 1000 + r);
        CHECK(run_once(second, in, ref.outputs) == run_once(rc, in, ref.outputs));
      }
      CHECK(specializations(plan) == (flags ? 0 : 2));
      qrt_context_destroy(second);
      qrt_context_destroy(jc);
      qrt_plan_destroy(plan);
    }
    qrt_context_destroy(rc);
  }
}

TEST_CASE("dynamic shapes: a static plan that does not fit the budget the plan leaves is not made, and runs go on") {
  Compiled ref;
  compile("onnx/digits_cnn_qdq_u8.onnx", 1, ref, nullptr, QRT_BACKEND_REF);
  qrt_context_t* rc = nullptr;
  REQUIRE(qrt_context_create(ref.plan, &rc) == QRT_OK);
  // The smallest budget the dynamic plan passes (its constants, twice) leaves none for a
  // specialization's prepared weights and arena.
  qrt_plan_t* probe = plan_with(ref.model, 1, 0, 0);
  qrt_weight_memory w;
  std::memset(&w, 0, sizeof w);
  w.struct_size = sizeof w;
  REQUIRE(qrt_plan_weight_memory(probe, &w) == QRT_OK);
  qrt_plan_destroy(probe);
  REQUIRE(w.constant_bytes > 0);
  qrt_plan_t* plan = plan_with(ref.model, 1, 0, 2 * w.constant_bytes);
  qrt_context_t* jc = nullptr;
  REQUIRE(qrt_context_create(plan, &jc) == QRT_OK);
  for (uint32_t r = 0; r < 4; ++r) {
    const Inputs in = batch_inputs(ref.model, 3, 7 * r);
    CHECK(run_once(jc, in, ref.outputs) == run_once(rc, in, ref.outputs));
  }
  CHECK(specializations(plan) == 0);
  qrt_context_destroy(jc);
  qrt_plan_destroy(plan);
  qrt_context_destroy(rc);
}
