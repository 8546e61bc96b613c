// libFuzzer target: the C API sequence a user runs on a model file — load (any format), plan,
// set inputs, run — on the JIT at the host's best level and on the reference, whose outputs
// must agree bit for bit (docs/numerics.md). Inputs are filled from a seed taken from the
// data. Loads and plans run under a 256 MiB memory budget (qrt_load_options.max_memory,
// qrt_plan_options.max_memory); models over it, or with inputs over 2^18 elements, are not run.
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
  // A budget well inside libFuzzer's RSS limit: hostile sizes must be refused, not tried.
  constexpr size_t kBudget = size_t{256} << 20;
  qrt_load_options load;
  qrt_load_options_init(&load);
  load.max_memory = kBudget;
  qrt_model_t* model = nullptr;
  if (qrt_model_load_buffer_ex(data, size, "fuzz", &load, &model) != QRT_OK) return 0;
  uint64_t seed = size;
  for (size_t i = 0; i < size && i < 64; ++i) seed = seed * 131 + data[i];
  qrt_fuzz::DiffBudget budget;
  budget.max_input_elements = int64_t{1} << 18;
  budget.max_memory = kBudget;
  const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_model(model, seed, configs, nullptr, budget);
  qrt_model_destroy(model);
  if (o.kind == qrt_fuzz::DiffOutcome::kMismatch) {
    std::fprintf(stderr, "fuzz_c_api: the JIT and the reference disagree: %s\n", o.message.c_str());
    std::abort();
  }
  return 0;
}
