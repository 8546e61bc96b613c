// Tests: the per-op choice between the thread pool and the calling thread (runtime/split_choice.h)
// — the probe's alternation, the decision, the re-probe — and that a context's outputs are the
// same bytes through the probe and after it, with the choice and without (QRT_PLAN_FIXED_SPLIT).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "runtime/split_choice.h"
#include "runtime_test_util.h"

namespace {

using qrt::runtime::SplitChoice;

// One run of `choice` in which op o takes pool_ns[o] on the pool and serial_ns[o] alone.
void run(SplitChoice& choice, const std::vector<uint64_t>& pool_ns, const std::vector<uint64_t>& serial_ns) {
  for (size_t o = 0; o < pool_ns.size(); ++o) choice.record(o, choice.on_pool(o) ? pool_ns[o] : serial_ns[o]);
  choice.end_run();
}

}  // namespace

TEST_CASE("SplitChoice: a probe alternates every op, then each op keeps its faster mode") {
  SplitChoice choice;
  choice.reset(4);
  // Op 0 is faster alone, op 1 on the pool, op 2 ties (the pool keeps it), op 3 is faster alone.
  const std::vector<uint64_t> pool = {9000, 2000, 5000, 3100}, serial = {4000, 4000, 5000, 3000};
  for (uint32_t r = 0; r < SplitChoice::kProbeRuns; ++r) {
    CHECK(choice.probing());
    for (size_t o = 0; o < 4; ++o) CHECK(choice.on_pool(o) == ((r + o) % 2 == 0));
    run(choice, pool, serial);
  }
  CHECK_FALSE(choice.probing());
  CHECK_FALSE(choice.on_pool(0));
  CHECK(choice.on_pool(1));
  CHECK(choice.on_pool(2));
  CHECK_FALSE(choice.on_pool(3));
  CHECK(choice.serial_ops() == 2);
  // The fastest run of each mode decides: one slow pool run among fast ones does not.
  SplitChoice noisy;
  noisy.reset(1);
  for (uint32_t r = 0; r < SplitChoice::kProbeRuns; ++r) run(noisy, {r == 0 ? 90000u : 2000u}, {4000});
  CHECK(noisy.on_pool(0));
}

TEST_CASE("SplitChoice: probes repeat every kReprobeRuns runs and may change the choice") {
  SplitChoice choice;
  choice.reset(2);
  const std::vector<uint64_t> pool = {1000, 8000}, serial = {3000, 4000};
  for (uint32_t r = 0; r < SplitChoice::kProbeRuns; ++r) run(choice, pool, serial);
  CHECK(choice.on_pool(0));
  CHECK_FALSE(choice.on_pool(1));
  // Until the next probe the modes hold, whatever the times.
  for (uint32_t r = SplitChoice::kProbeRuns; r < SplitChoice::kReprobeRuns; ++r) {
    REQUIRE_FALSE(choice.probing());
    run(choice, serial, pool);
  }
  CHECK(choice.on_pool(0));
  CHECK_FALSE(choice.on_pool(1));
  // The next probe sees the host changed: op 0 now pays for its hand-off, op 1 gains.
  CHECK(choice.probing());
  for (uint32_t r = 0; r < SplitChoice::kProbeRuns; ++r) run(choice, {5000, 2000}, {3000, 4000});
  CHECK_FALSE(choice.on_pool(0));
  CHECK(choice.on_pool(1));
}

TEST_CASE("SplitChoice: ops seen in one mode only, and an empty choice, stay on the pool") {
  SplitChoice choice;
  choice.reset(2);
  for (uint32_t r = 0; r < SplitChoice::kProbeRuns; ++r) {
    // Op 1 is recorded only in its pool runs (as if skipped in the others).
    choice.record(0, choice.on_pool(0) ? 5000 : 1000);
    if (choice.on_pool(1)) choice.record(1, 7000);
    choice.end_run();
  }
  CHECK_FALSE(choice.on_pool(0));
  CHECK(choice.on_pool(1));
  SplitChoice none;  // a context on one thread never resets its choice
  CHECK(none.on_pool(0));
  none.end_run();
  CHECK(none.on_pool(3));
}

TEST_CASE("outputs are the same bytes through the probe and after it, with and without QRT_PLAN_FIXED_SPLIT") {
  for (const char* path : {"tflite-micro/person_detect.tflite", "onnx/fashion_cnn_qdq_u8.onnx"}) {
    CAPTURE(path);
    std::vector<std::vector<uint8_t>> first;
    for (unsigned flags : {0u, unsigned(QRT_PLAN_FIXED_SPLIT)}) {
      for (size_t threads : {1, 2, 3}) {
        qrt_model_t* model = nullptr;
        qrt_plan_t* plan = nullptr;
        qrt_context_t* ctx = nullptr;
        REQUIRE(qrt_model_load_file((qrt_test::kModels + "/" + path).c_str(), &model) == QRT_OK);
        qrt_plan_options opts;
        qrt_plan_options_init(&opts);
        opts.threads = threads;
        opts.flags = flags;
        REQUIRE_MESSAGE(qrt_plan_create(model, &opts, &plan) == QRT_OK, qrt_last_error_message());
        REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
        size_t outputs = 0;
        qrt_model_num_outputs(model, &outputs);
        const qrt_test::Inputs in = qrt_test::make_inputs(model, 5);
        // Through a whole probe and past it.
        for (uint32_t r = 0; r < SplitChoice::kProbeRuns + 3; ++r) {
          const auto out = qrt_test::run_once(ctx, in, outputs);
          if (first.empty()) first = out;
          CHECK_MESSAGE(out == first, "threads " << threads << ", flags " << flags << ", run " << r);
        }
        qrt_context_destroy(ctx);
        qrt_plan_destroy(plan);
        qrt_model_destroy(model);
      }
    }
  }
}
