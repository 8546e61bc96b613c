// libFuzzer target: the C API sequence a user runs on a model file — load (any format), plan,
// set inputs, run — on the JIT at the host's best level and on the reference, whose outputs
// must agree bit for bit (docs/numerics.md). Inputs are filled from a seed taken from the
// data; models whose inputs or arena exceed the budget in diff_check.h are loaded and planned
// but not run.
#include <qrt.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "diff_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<qrt_fuzz::RunConfig> configs = [] {
    std::vector<qrt_fuzz::RunConfig> all = qrt_fuzz::host_configs({false, 1});
    return std::vector<qrt_fuzz::RunConfig>{all.front()};  // the best level, one thread
  }();
  qrt_model_t* model = nullptr;
  if (qrt_model_load_buffer(data, size, "fuzz", &model) != QRT_OK) return 0;
  uint64_t seed = size;
  for (size_t i = 0; i < size && i < 64; ++i) seed = seed * 131 + data[i];
  qrt_fuzz::DiffBudget budget;
  budget.max_input_elements = int64_t{1} << 18;
  budget.max_arena_bytes = size_t{64} << 20;
  const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_model(model, seed, configs, nullptr, budget);
  qrt_model_destroy(model);
  if (o.kind == qrt_fuzz::DiffOutcome::kMismatch) {
    std::fprintf(stderr, "fuzz_c_api: the JIT and the reference disagree: %s\n", o.message.c_str());
    std::abort();
  }
  return 0;
}
