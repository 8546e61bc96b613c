// Google Benchmark: qrt's generated int8 GEMM, convolution and depthwise kernels on the shapes
// of docs/performance.md, at 1 and 2 threads (qrt's thread pool). GOPS = 2·M·N·K per second. Peer rows (oneDNN,
// XNNPACK) are in bench_peers.cpp of the same binary when Debian's packages are installed.
// Run: build/bench/bench_qrt --benchmark_filter='gemm|conv' --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "bench_shapes.h"
#include "ir/text_format.h"
#include "jit/kernel_list.h"
#include "jit/ops/gemm_kernels.h"
#include "jit/ops/select.h"
#include "runtime/thread_pool.h"

namespace {

std::vector<int32_t> random_ints(size_t n, int lo, int hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = std::uniform_int_distribution<int>(lo, hi)(rng);
  return v;
}

// qrt GEMM u8 activations x s8 weights -> u8, per-channel requantization, on the GEMM
// backend of one ISA level (a kernel-list row). On AVX2, `full_range` weights in [-127, 127]
// force the exact s16 (vpmaddwd) path and narrow ones |w| <= 63 let vpmaddubsw prove itself
// exact; the VNNI levels' vpdpbusd is exact for both.
// `block`: the rows' fifth argument is the L2 block of activation rows in KiB, 0 for the
// default policy (BM_qrt_gemm_block).
void BM_qrt_gemm(benchmark::State& state, bool full_range, const qrt::jit::Backend* backend, bool block) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int64_t block_kib = block ? state.range(4) : 0;
  qrt::runtime::ThreadPool pool(size_t(state.range(3)));
  qrt::jit::GemmSpec s;
  s.k = k, s.n = n;
  s.a_zero_point = 128;
  s.w = random_ints(size_t(k * n), full_range ? -127 : -63, full_range ? 127 : 63, 1);
  s.w_zero_point.assign(size_t(n), 0);
  s.bias = std::vector<int64_t>(size_t(n), 1000);
  s.out = qrt::jit::OutKind::kU8;
  s.multiplier.assign(size_t(n), 1.0f / float(k * 64));
  s.out_zero_point.assign(size_t(n), 128);
  s.out_lo.assign(size_t(n), 0);  // u8 storage bounds, no fused clamp (read per channel)
  s.out_hi.assign(size_t(n), 255);
  auto g = qrt::jit::GemmKernel::create(s, qrt::jit::analyze_gemm(s), *backend);
  if (!g.is_ok()) {
    state.SkipWithError(g.status().message().c_str());
    return;
  }
  if (block_kib > 0) (*g)->set_block_bytes(block_kib * 1024);
  std::vector<uint8_t> a(size_t(m * k)), c(size_t(m * n));
  const auto av = random_ints(a.size(), 0, 255, 2);
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(av[i]);
  for (auto _ : state) {
    (*g)->run(a.data(), m, k, c.data(), n, pool);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(m * n * k), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  // GEMV-like rows also report the weights' stream rate (bytes_per_second), to set beside
  // BM_read_bandwidth at the same size.
  if (const int64_t bytes = bench::weight_stream_bytes(m, k, n)) state.SetBytesProcessed(int64_t(state.iterations()) * bytes);
  state.SetLabel((*g)->name());
}

// qrt.conv2d NHWC (batch 1) through select_kernel capped at `level`: u8 input, s8 per-channel
// filter, u8 output; strided shapes carry `strides` (bench_shapes.h lists the shapes).
void BM_qrt_conv(benchmark::State& state, qrt::jit::Isa level) {
  const bench::ConvShape cs = bench::conv_shapes()[size_t(state.range(0))];
  qrt::runtime::ThreadPool pool(size_t(state.range(1)));
  const int64_t per_group = cs.depthwise ? 1 : cs.c;
  const int64_t oh = cs.out_h(), ow = cs.out_w();
  auto shape = [](std::vector<int64_t> d) {
    std::string s;
    for (auto x : d) s += std::to_string(x) + "x";
    return s;
  };
  const std::string xt = "tensor<" + shape({1, cs.h, cs.w, cs.c}) + "!quant.uniform<u8:f32, 0.02:128>>";
  std::string wscales;
  for (int64_t o = 0; o < cs.o; ++o) wscales += std::string(o ? ", " : "") + "0.003";
  const std::string ft = "tensor<" + shape({cs.o, cs.k, cs.k, per_group}) + "!quant.uniform<i8<-127:127>:f32:0, {" + wscales + "}>>";
  const std::string ot = "tensor<" + shape({1, oh, ow, cs.o}) + "!quant.uniform<u8:f32, 0.05:120>>";
  const auto w = random_ints(size_t(cs.o * cs.k * cs.k * per_group), -127, 127, 3);
  std::string hex = "0x";
  for (int32_t v : w) {
    static const char* d = "0123456789ABCDEF";
    hex += d[(uint8_t(v) >> 4) & 15];
    hex += d[uint8_t(v) & 15];
  }
  const std::string p = std::to_string(cs.pad), st = std::to_string(cs.stride);
  const std::string text = "func.func @main(%x: " + xt + ") -> " + ot + " {\n  %f = \"qrt.constant\"() {value = dense<\"" +
                           hex + "\"> : tensor<" + shape({cs.o, cs.k, cs.k, per_group}) + "i8>} : () -> " + ft +
                           "\n  %y = \"qrt.conv2d\"(%x, %f) {groups = " + std::to_string(cs.depthwise ? cs.c : 1) +
                           " : i64, pads = [" + p + ", " + p + ", " + p + ", " + p + "], strides = [" + st + ", " + st +
                           "]} : (" + xt + ", " + ft +
                           ") -> " + ot + "\n  return %y : " + ot + "\n}\n";
  auto graph = qrt::parse_graph(text, "bench.mlir");
  if (!graph.is_ok()) {
    state.SkipWithError(graph.status().to_string().c_str());
    return;
  }
  const auto isas = qrt::jit::capped_isas(level, nullptr);
  auto choice = qrt::jit::select_kernel(*graph, graph->ops.back(), *isas);
  if (!choice.is_ok() || !choice->kernel) {
    state.SkipWithError(choice.is_ok() ? choice->why_not.c_str() : choice.status().message().c_str());
    return;
  }
  qrt::Tensor x = qrt::Tensor::zeros(graph->values[0].type);
  const auto xv = random_ints(size_t(x.num_elements()), 0, 255, 4);
  for (size_t i = 0; i < xv.size(); ++i) x.bytes()[i] = uint8_t(xv[i]);
  const std::vector<const qrt::Tensor*> operands{&x};
  // The output lives across iterations, as a plan's arena would hold it.
  qrt::Type yt = choice->kernel->result_type();
  qrt::Tensor y = qrt::Tensor::zeros(yt);
  for (auto _ : state) {
    auto status = choice->kernel->run_into(operands, y, pool);
    benchmark::DoNotOptimize(status);
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(oh * ow * cs.o * per_group * cs.k * cs.k),
                                              benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.SetLabel(choice->kernel->describe().substr(0, choice->kernel->describe().find(' ')));
}

// Every shape at 1 and 2 threads (the pool's workers plus the calling thread).
void gemm_args(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    for (const auto& s : bench::gemm_shapes()) b->Args({s.m, s.k, s.n, threads});
  }
  b->ArgNames({"M", "K", "N", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

// The square and transformer shapes at 1 thread (and one of rows 6144 bytes long), L2 blocks
// of activation rows from 96 KiB to 1.5 MiB, and block_kib 0: the default policy
// (GemmKernel::block_rows). Run with --benchmark_enable_random_interleaving to compare them on
// a drifting host.
void gemm_block_args(benchmark::internal::Benchmark* b) {
  std::vector<bench::GemmShape> shapes;
  for (const auto& s : bench::gemm_shapes()) {
    if (s.m >= 128) shapes.push_back(s);
  }
  shapes.push_back({132, 6144, 768});
  for (const auto& s : shapes) {
    for (int64_t kib : {0, 96, 192, 384, 768, 1536}) b->Args({s.m, s.k, s.n, 1, kib});
  }
  b->ArgNames({"M", "K", "N", "threads", "block_kib"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void conv_args(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    for (size_t i = 0; i < bench::conv_shapes().size(); ++i) b->Args({int64_t(i), threads});
  }
  b->ArgNames({"shape", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

// One set of rows per ISA level the host has, from the kernel list: BM_qrt_gemm/<level>/...
// (s16_exact and maddubs_proven weights on the AVX2 level, exact elsewhere) and
// BM_qrt_conv/<level>.
namespace {
const bool registered = [] {
  for (const qrt::jit::KernelListRow& row : qrt::jit::kernel_list()) {
    if (row.op != qrt::jit::KernelOp::kGemm || !row.backend->available() || row.isa == qrt::jit::Isa::kScalar) continue;
    // The native backend's rows by level; the LLVM backend's GEMM rows as llvm@<level>.
    // Convolutions go through select_kernel, which picks the native backend.
    const bool native = row.backend->generator() == qrt::jit::Generator::kNative;
    const std::string level = (native ? "" : std::string(row.backend->name()) + "@") + qrt::jit::isa_name(row.isa);
    benchmark::RegisterBenchmark(("BM_qrt_gemm/" + level + "/s16_exact").c_str(), BM_qrt_gemm, true, row.backend, false)
        ->Apply(gemm_args);
    if (native) {
      benchmark::RegisterBenchmark(("BM_qrt_gemm_block/" + level).c_str(), BM_qrt_gemm, true, row.backend, true)
          ->Apply(gemm_block_args);
    }
    if (row.isa == qrt::jit::Isa::kAvx2) {
      benchmark::RegisterBenchmark(("BM_qrt_gemm/" + level + "/maddubs_proven").c_str(), BM_qrt_gemm, false,
                                   row.backend, false)
          ->Apply(gemm_args);
    }
    if (native) benchmark::RegisterBenchmark(("BM_qrt_conv/" + level).c_str(), BM_qrt_conv, row.isa)->Apply(conv_args);
  }
  return true;
}();
}  // namespace
