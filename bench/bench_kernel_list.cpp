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
#include "jit/llvm/llvm_backend.h"

namespace {

using namespace qrt::jit;

void BM_gemm_tile(benchmark::State& state, const Backend* backend, GemmPath path) {
  const GemmTraits t = *backend->gemm_traits(path);
  KernelDesc d;
  d.op = KernelOp::kGemm;
  d.isa = backend->isa();
  d.generator = backend->generator();  // LLVM's rows have their own tile shapes
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
      // asmjit rows keep their short names (docs/performance.md quotes them); other generators
      // are named, as the LLVM rows would otherwise read as the asmjit ones.
      const std::string gen = row.backend->generator() == Generator::kNative ? "" : row.backend->name() + std::string("@");
      const std::string name = "BM_gemm_tile/" + gen + isa_name(row.isa) + "/" + gemm_path_name(path);
      benchmark::RegisterBenchmark(name.c_str(), BM_gemm_tile, row.backend, path);
    }
  }
  return true;
}();

// Code generation latency per kernel kind and backend: one generate() per iteration, past
// every cache (the code cache is not asked; the LLVM object cache only when QRT_CACHE_DIR is
// set, so leave it unset here). For LLVM this is module build (parse the embedded templates,
// add the description), O2 for the level's CPU, code generation and linking; for asmjit,
// emission and relocation. A plan pays it once per distinct description.
KernelDesc compile_desc(const Backend& b, KernelOp op) {
  KernelDesc d;
  d.op = op;
  d.isa = b.isa();
  d.generator = b.generator();
  d.out = OutKind::kU8;
  d.storage_signed = false;
  d.qmin = 0;
  d.qmax = 255;
  d.zero_point = 3;
  d.scale = 0.05f;
  switch (op) {
    case KernelOp::kGemm: {
      const GemmPath path = b.gemm_traits(GemmPath::kDot4) ? GemmPath::kDot4 : GemmPath::kMaddwd;
      const GemmTraits t = *b.gemm_traits(path);
      d.path = path;
      d.mr = uint8_t(t.mr);
      d.nr = uint8_t(t.panel);
      d.panel = uint8_t(t.panel);
      break;
    }
    case KernelOp::kDepthwise:
      d.taps = 10;  // a 3x3 window padded to an even count
      d.channels = 32;
      d.panel = uint8_t(b.depthwise_traits().block ? b.depthwise_traits().block : 16);
      break;
    case KernelOp::kMaxPool: d.taps = 9; d.channels = 32; break;
    default: break;
  }
  return d;
}

void BM_generate(benchmark::State& state, const Backend* backend, KernelOp op) {
  const KernelDesc d = compile_desc(*backend, op);
  if (std::string why = backend->why_not(d); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  const LlvmCacheStats before = llvm_cache_stats();
  for (auto _ : state) {
    auto code = backend->generate(d);
    if (!code.is_ok()) {
      state.SkipWithError(code.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(code);
  }
  if (backend->generator() == Generator::kLlvm) {
    // The phases of each generation, ms per kernel.
    const LlvmCacheStats after = llvm_cache_stats();
    const double n = double(state.iterations()) * 1e6;
    state.counters["build_ms"] = double(after.build_ns - before.build_ns) / n;
    state.counters["opt_ms"] = double(after.optimize_ns - before.optimize_ns) / n;
    state.counters["codegen_ms"] = double(after.codegen_ns - before.codegen_ns) / n;
    state.counters["link_ms"] = double(after.link_ns - before.link_ns) / n;
  }
  state.SetLabel(d.name());
}

const bool registered_generate = [] {
  for (const KernelListRow& row : kernel_list()) {
    if (!row.backend->available()) continue;
    for (KernelOp op : {KernelOp::kGemm, KernelOp::kDepthwise, KernelOp::kQuantize, KernelOp::kRequantize,
                        KernelOp::kMaxPool}) {
      if (row.op != op) continue;
      const std::string name = std::string("BM_generate/") + kernel_op_name(op) + "/" + row.backend->name() + "@" +
                               isa_name(row.isa);
      benchmark::RegisterBenchmark(name.c_str(), BM_generate, row.backend, op)->Unit(benchmark::kMillisecond);
    }
  }
  return true;
}();

// A 256-entry byte table over n bytes (what a single-input 8-bit region runs as); bytes =
// input + output, as BM_memcpy counts them.
void BM_lut8(benchmark::State& state, const Backend* backend) {
  KernelDesc d;
  d.op = KernelOp::kLut8;
  d.isa = backend->isa();
  d.generator = backend->generator();
  if (std::string why = backend->why_not(d); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  auto code = code_cache().get(d);
  if (!code.is_ok()) {
    state.SkipWithError(code.status().message().c_str());
    return;
  }
  const size_t n = size_t(state.range(0));
  std::vector<uint8_t> table(256), x(n), y(n);
  for (size_t i = 0; i < 256; ++i) table[i] = uint8_t(255 - i);
  for (size_t i = 0; i < n; ++i) x[i] = uint8_t(i * 131);
  for (auto _ : state) {
    call_microkernel((*code)->entry(), LutArgs{x.data(), y.data(), n, table.data()}, d);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * int64_t(2 * n));
  state.SetLabel(d.name());
}

const bool registered_lut = [] {
  for (const KernelListRow& row : kernel_list()) {
    if (row.op != KernelOp::kLut8 || !row.backend->available()) continue;
    const std::string name = std::string("BM_lut8/") + row.backend->name() + "@" + isa_name(row.isa);
    benchmark::RegisterBenchmark(name.c_str(), BM_lut8, row.backend)
        ->Arg(64 << 10)->Arg(4 << 20)->Arg(16 << 20)->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

// The f32 GEMM micro-kernel on one call of M x K x N (rows blocked inside the kernel, as the
// float_gemm_tasks.h blocks give it): an in-L1 tile, then MobileNetV2's 1x1 convolutions at
// 224² (112²x16->96, 56²x144->24, 28²x192->32, 14²x384->64, 7²x960->160) and its classifier
// GEMV (1x1280->1000, weights streamed). GOPS counts 2 ops per multiply-add; BM_peak_f32
// (bench_peak.cpp) is the ceiling of the separate multiply and add.
void BM_f32_gemm(benchmark::State& state, const Backend* backend) {
  const KernelDesc d = f32_gemm_desc(backend->isa(), backend->generator());
  auto code = code_cache().get(d);
  if (!code.is_ok()) {
    state.SkipWithError(code.status().message().c_str());
    return;
  }
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2), n_padded = (n + 15) / 16 * 16;
  std::vector<float> x(size_t(m * k), 0.5f), w(size_t(k * n_padded), 0.25f), bias(size_t(n_padded), 1.0f), y(size_t(m * n));
  const F32GemmArgs args{x.data(), w.data(), bias.data(), y.data(), m, k, n, n_padded, k, n, 0.0f, 6.0f};
  for (auto _ : state) {
    call_microkernel((*code)->entry(), args, d);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(m * k * n), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.SetLabel(d.name());
}

const bool registered_f32 = [] {
  for (const KernelListRow& row : kernel_list()) {
    if (row.op != KernelOp::kF32Gemm || !row.backend->available()) continue;
    const std::string name = std::string("BM_f32_gemm/") + row.backend->name() + "@" + isa_name(row.isa);
    benchmark::RegisterBenchmark(name.c_str(), BM_f32_gemm, row.backend)
        ->ArgNames({"m", "k", "n"})
        ->Args({12, 256, 32})
        ->Args({12544, 16, 96})
        ->Args({3136, 144, 24})
        ->Args({784, 192, 32})
        ->Args({196, 384, 64})
        ->Args({49, 960, 160})
        ->Args({1, 1280, 1000})
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

// The f32 depthwise row kernel: one output row of a 3x3 window (pad 1) over three input rows
// of width iw and c channels, at stride s: MobileNetV2's depthwise layers at 224²
// (112²x32 s1, 112²x96 s2, 56²x144 s1, 14²x576 s1, 7²x960 s1).
void BM_f32_dwconv(benchmark::State& state, const Backend* backend) {
  const KernelDesc d = f32_dwconv_desc(backend->isa(), backend->generator());
  auto code = code_cache().get(d);
  if (!code.is_ok()) {
    state.SkipWithError(code.status().message().c_str());
    return;
  }
  const int64_t iw = state.range(0), c = state.range(1), stride = state.range(2), ow = (iw - 1) / stride + 1;
  // 64-byte aligned, as the runtime's arena places tensors.
  AlignedBytes in(size_t(3 * iw * c * 4)), w(size_t(9 * c * 4)), bias(size_t(c * 4)), y(size_t(ow * c * 4));
  const float* x = reinterpret_cast<const float*>(in.data());
  const float* rows[3] = {x, x + iw * c, x + 2 * iw * c};
  const F32DwArgs args{rows, reinterpret_cast<const float*>(w.data()), reinterpret_cast<const float*>(bias.data()),
                       reinterpret_cast<float*>(y.data()), c, ow, iw, 3, 3, stride, 1, 1, 0.0f, 6.0f};
  for (auto _ : state) {
    call_microkernel((*code)->entry(), args, d);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * 9 * double(ow * c), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.SetLabel(d.name());
}

const bool registered_f32_dw = [] {
  for (const KernelListRow& row : kernel_list()) {
    if (row.op != KernelOp::kF32Dwconv || !row.backend->available()) continue;
    const std::string name = std::string("BM_f32_dwconv/") + row.backend->name() + "@" + isa_name(row.isa);
    benchmark::RegisterBenchmark(name.c_str(), BM_f32_dwconv, row.backend)
        ->ArgNames({"iw", "c", "stride"})
        ->Args({112, 32, 1})
        ->Args({112, 96, 2})
        ->Args({56, 144, 1})
        ->Args({14, 576, 1})
        ->Args({7, 960, 1})
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
