// Benchmarks driven by the kernel list: one row per (kernel kind, ISA level) the host can run.
// The GEMM tile rows measure a micro-kernel alone (one full tile, K = 512, operands in L1):
// the ceiling the operator layer's blocking works against at that level.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "jit/core/aligned_bytes.h"
#include "jit/core/microkernel.h"
#include "jit/kernel_list.h"

namespace {

using namespace qrt::jit;

void BM_gemm_tile(benchmark::State& state, const Backend* backend, GemmPath path) {
  const GemmTraits t = *backend->gemm_traits(path);
  KernelDesc d;
  d.op = KernelOp::kGemm;
  d.isa = backend->isa();
  d.path = path;
  d.out = OutKind::kS32;
  d.mr = uint8_t(t.mr);
  d.nr = uint8_t(t.panel);
  d.panel = uint8_t(t.panel);
  auto code = code_cache().get(d);
  if (!code.is_ok()) {
    state.SkipWithError(code.status().message().c_str());
    return;
  }
  const int64_t k = 512, k_steps = k / t.k_group;
  AlignedBytes a(size_t(t.mr * k * t.a_bytes)), w(size_t(k * t.panel)), ep(size_t(kEpFields * t.panel * 4));
  std::memset(a.data(), 3, a.size());
  std::memset(w.data(), 1, w.size());
  std::vector<int32_t> c(size_t(t.mr * t.panel)), sums(t.mr);
  const GemmTileArgs args{a.data(), k * t.a_bytes, w.data(), k_steps, c.data(), int64_t(t.panel * 4), ep.data(),
                          sums.data()};
  for (auto _ : state) {
    call_microkernel((*code)->entry(), args, d);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(t.mr * t.panel * k), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.SetLabel(d.name());
}

const bool registered = [] {
  for (const KernelListRow& row : kernel_list()) {
    if (row.op != KernelOp::kGemm || !row.backend->available()) continue;
    for (GemmPath path : {GemmPath::kDot4, GemmPath::kMaddubs, GemmPath::kMaddwd}) {
      if (!row.backend->gemm_traits(path)) continue;
      const std::string name = std::string("BM_gemm_tile/") + isa_name(row.isa) + "/" + gemm_path_name(path);
      benchmark::RegisterBenchmark(name.c_str(), BM_gemm_tile, row.backend, path);
    }
  }
  return true;
}();

}  // namespace
