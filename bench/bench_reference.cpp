// Google Benchmark: the scalar reference backend (the numerics oracle, not a fast path) and
// the generated kernels measured against it, plus JIT latency.
// Run: build/bench/bench_qrt --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "ir/text_format.h"
#include "jit/core/code_cache.h"
#include "jit/kernel_list.h"
#include "jit/ops/select.h"
#include "jit/ref/reference.h"

namespace {

qrt::Graph parse_or_die(const std::string& text) {
  auto g = qrt::parse_graph(text, "bench.mlir");
  if (!g.is_ok()) {
    std::fprintf(stderr, "%s\n", g.status().to_string().c_str());
    std::abort();
  }
  return std::move(g).value();
}

qrt::Tensor random_tensor(const qrt::Type& type, uint64_t seed) {
  std::mt19937_64 rng(seed);
  qrt::Tensor t = qrt::Tensor::zeros(type);
  for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
    if (type.element.is_float()) {
      t.set_float(i, std::uniform_real_distribution<double>(-1, 1)(rng));
    } else {
      t.set_int(i, std::uniform_int_distribution<int64_t>(type.element.storage.min,
                                                          type.element.storage.max)(rng));
    }
  }
  return t;
}

// qs8 x qs8 -> qs8 matmul with per-channel weights, M = N = K = range(0).
void BM_ref_qs8_qc8w_matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string d = std::to_string(n);
  std::string scales;
  for (int64_t i = 0; i < n; ++i) scales += (i ? ", " : "") + std::string("0.01");
  const std::string a = "tensor<" + d + "x" + d + "x!quant.uniform<i8:f32, 0.05:-3>>";
  const std::string w = "tensor<" + d + "x" + d + "x!quant.uniform<i8<-127:127>:f32:1, {" + scales + "}>>";
  const std::string y = "tensor<" + d + "x" + d + "x!quant.uniform<i8:f32, 0.1:5>>";
  const qrt::Graph g = parse_or_die("func.func @main(%a: " + a + ", %w: " + w + ") -> " + y +
                                    " {\n  %y = \"qrt.matmul\"(%a, %w) : (" + a + ", " + w + ") -> " + y +
                                    "\n  return %y : " + y + "\n}\n");
  const std::vector<qrt::Tensor> inputs = {random_tensor(g.values[0].type, 1),
                                           random_tensor(g.values[1].type, 2)};
  for (auto _ : state) {
    auto out = qrt::run_reference(g, inputs);
    benchmark::DoNotOptimize(out);
  }
  // 2·M·N·K operations per iteration, reported in 1e9 per second.
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(n * n * n) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ref_qs8_qc8w_matmul)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond);

// f32 -> qs8 quantize of range(0) elements.
void BM_ref_qcast_f32_qs8(benchmark::State& state) {
  const std::string t = "tensor<" + std::to_string(state.range(0)) + "x";
  const qrt::Graph g = parse_or_die("func.func @main(%x: " + t + "f32>) -> " + t +
                                    "!quant.uniform<i8:f32, 0.0078125:-1>> {\n  %q = \"quant.qcast\"(%x) : (" + t +
                                    "f32>) -> " + t + "!quant.uniform<i8:f32, 0.0078125:-1>>\n  return %q : " + t +
                                    "!quant.uniform<i8:f32, 0.0078125:-1>>\n}\n");
  const std::vector<qrt::Tensor> inputs = {random_tensor(g.values[0].type, 3)};
  for (auto _ : state) {
    auto out = qrt::run_reference(g, inputs);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 5);
}
BENCHMARK(BM_ref_qcast_f32_qs8)->Arg(4096)->Arg(65536)->Unit(benchmark::kMicrosecond);

// The kernels of the host's best level on the same data, e.g. f32_qs8_quantize__avx2 and
// qs8_f32_dequantize__avx2 (the op kernel, as the plan calls it).
void BM_jit_convert(benchmark::State& state, bool quantize) {
  const std::string t = "tensor<" + std::to_string(state.range(0)) + "x";
  const std::string f = t + "f32>", q = t + "!quant.uniform<i8:f32, 0.0078125:-1>>";
  const std::string in = quantize ? f : q, out = quantize ? q : f;
  const qrt::Graph g = parse_or_die("func.func @main(%x: " + in + ") -> " + out + " {\n  %y = \"quant." +
                                    (quantize ? "qcast" : "dcast") + "\"(%x) : (" + in + ") -> " + out +
                                    "\n  return %y : " + out + "\n}\n");
  auto choice = qrt::jit::select_kernel(g, g.ops[0]);
  if (!choice.is_ok() || !choice->kernel) {
    state.SkipWithError(choice.is_ok() ? choice->why_not.c_str() : choice.status().to_string().c_str());
    return;
  }
  const qrt::Tensor x = random_tensor(g.values[0].type, 3);
  qrt::Tensor y = qrt::Tensor::zeros(g.values[1].type);
  state.SetLabel(choice->kernel->describe());
  for (auto _ : state) {
    (void)choice->kernel->run_into({&x}, y, qrt::jit::serial());
    benchmark::DoNotOptimize(y.bytes());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 5);
}
BENCHMARK_CAPTURE(BM_jit_convert, quantize, true)->Arg(4096)->Arg(65536)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_jit_convert, dequantize, false)->Arg(4096)->Arg(65536)->Unit(benchmark::kMicrosecond);

// JIT latency: generating a kernel (a fresh description each iteration) and a cache hit.
void BM_jit_generate_quantize(benchmark::State& state) {
  qrt::jit::KernelDesc d;
  d.isa = qrt::jit::host_best_isa();
  const qrt::jit::Backend* backend = qrt::jit::kernel_list_backend(d.op, d.isa);
  if (!backend) d.isa = qrt::jit::Isa::kAvx2, backend = qrt::jit::kernel_list_backend(d.op, d.isa);
  if (!backend) {
    state.SkipWithError("no code generator on this host");
    return;
  }
  state.SetLabel(d.name());
  int32_t zp = 0;
  for (auto _ : state) {
    d.zero_point = (zp++ % 200) - 100;
    d.scale = 1.0f + float(zp) * 1e-3f;  // always a new description: a real generation
    auto code = backend->generate(d);
    benchmark::DoNotOptimize(code);
  }
}
BENCHMARK(BM_jit_generate_quantize)->Unit(benchmark::kMicrosecond);

// JIT latency of the other kernel kinds (generation only, no cache): range(0) picks the kind.
void BM_jit_generate(benchmark::State& state) {
  qrt::jit::KernelDesc d;
  d.out = qrt::jit::OutKind::kU8;
  switch (state.range(0)) {
    case 0: d.op = qrt::jit::KernelOp::kGemm, d.path = qrt::jit::GemmPath::kMaddubs, d.mr = 4, d.nr = 16; break;
    case 1: d.op = qrt::jit::KernelOp::kGemm, d.path = qrt::jit::GemmPath::kMaddwd, d.mr = 6, d.nr = 16; break;
    case 2: d.op = qrt::jit::KernelOp::kDepthwise, d.taps = 10, d.channels = 32, d.panel = 16; break;
    case 3: d.op = qrt::jit::KernelOp::kQAdd; break;
    default: d.op = qrt::jit::KernelOp::kAvgPool, d.taps = 9, d.channels = 32; break;
  }
  d.isa = qrt::jit::Isa::kAvx2;
  const qrt::jit::Backend* backend = qrt::jit::kernel_list_backend(d.op, d.isa);
  if (!backend || !backend->available()) {
    state.SkipWithError("no AVX2 code generator on this host");
    return;
  }
  state.SetLabel(d.name());
  for (auto _ : state) {
    auto code = backend->generate(d);
    if (!code.is_ok()) {
      state.SkipWithError(code.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(code);
  }
}
BENCHMARK(BM_jit_generate)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);

void BM_jit_cache_hit(benchmark::State& state) {
  qrt::jit::KernelDesc d;
  (void)qrt::jit::code_cache().get(d);
  for (auto _ : state) {
    auto code = qrt::jit::code_cache().get(d);
    benchmark::DoNotOptimize(code);
  }
}
BENCHMARK(BM_jit_cache_hit);

}  // namespace

BENCHMARK_MAIN();
