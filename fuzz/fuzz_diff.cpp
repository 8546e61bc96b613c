// libFuzzer target: the differential graph fuzzer with structured input. The bytes are the
// generator's choices (ByteChooser), so libFuzzer's mutations and coverage feedback steer
// which ops, shapes and quantization parameters a graph gets. Each graph runs on every JIT
// level of the host at 1 and 3 threads, without fusion and without passes (not LLVM: its
// compilations would dominate), and must match the reference bit for bit.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "diff_check.h"
#include "graph_gen.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<qrt_fuzz::RunConfig> configs = qrt_fuzz::host_configs({false, 3});
  qrt_fuzz::ByteChooser chooser(data, size);
  qrt_fuzz::GenLimits limits;
  limits.max_ops = 4;
  const qrt_fuzz::GeneratedGraph g = qrt_fuzz::generate_graph(chooser, limits);
  const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_graph(g.mlir, size, configs);
  if (o.kind == qrt_fuzz::DiffOutcome::kMismatch || o.kind == qrt_fuzz::DiffOutcome::kInvalid) {
    std::fprintf(stderr, "fuzz_diff: %s: %s\n%s", o.kind == qrt_fuzz::DiffOutcome::kInvalid ? "invalid graph" : "mismatch",
                 o.message.c_str(), g.mlir.c_str());
    std::abort();
  }
  return 0;
}
