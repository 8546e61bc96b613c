// Google Benchmark: weight-only matmuls (f32 activations, quantized weights kept packed) on
// the LLM shapes of the weight-only issue — 1 and 8 rows x 4096x4096, 4096x11008, 11008x4096 —
// and a stack of 4096x11008 layers too big for the last-level cache, beside the f32 path the
// weight-only kernel replaced (weights dequantized to f32 once: the f32 GEMM) and oneDNN's f32
// matmul (bench_peers.cpp). Rows report GOPS and the weights' stream rate (bytes_per_second:
// the bytes the kernel streams per call: its packed records, or the weights as stored plus its
// scales and zero points); set it beside BM_read_bandwidth
// (bench_peak.cpp) at the same size.
//   BM_wo_matmul/<level>/<weights>/M:../K:../N:../layers:../threads:..
// <weights>: i4_b32 (4-bit, an f32 scale and a zero point per 32 weights along K), i4_b32_sym
// (4-bit, symmetric, a scale per 32 that is exactly an f16 value: llama.cpp's Q4_0 form and an
// f16 MatMulNBits export's; the dynamic kernel's records then hold f16 scales and no zero
// points, 4.5 bits per weight), i8 (per column), f32 (the dequantized path); _dyn: the same
// weights with activations = "dynamic_i8" (i8 per row and block, integer dot products:
// kDynGemm); _bf16 / _f16: activations, weights' expressed
// type and results in that type (weight-only: each dequantized weight rounded to it, sums in
// f32; dynamic: the rows widened to f32 before their quantization, results rounded once).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/kernel_list.h"
#include "jit/ops/select.h"
#include "runtime/thread_pool.h"

namespace {

enum class Weights { kI4Block32, kI4Block32Sym, kI8, kF32 };

// The weights' form and whether the matmul quantizes its activations per call (activations =
// "dynamic_i8": i8 per row and block, integer dot products) instead of the exact weight-only
// f32 arithmetic.
struct Form {
  Weights weights;
  bool dynamic = false;
  qrt::FloatKind act = qrt::FloatKind::kF32;  // activations, the weights' expressed type, results
};

// One matmul x[M, K] · W[K, N] with W a constant of the given form, filled by a cheap
// generator (the values do not change the kernels' speed).
qrt::Graph matmul_graph(int64_t m, int64_t k, int64_t n, Form f, uint64_t seed) {
  const Weights form = f.weights;
  using namespace qrt;
  Graph g;
  const Type xt = Type::tensor({m, k}, ElementType::make_float(f.act));
  const int x = g.add_input(xt, "x");
  ElementType we;
  Type stored;
  if (form == Weights::kF32) {
    we = ElementType::make_float(FloatKind::kF32);
    stored = Type::tensor({k, n}, we);
  } else {
    const bool i4 = form == Weights::kI4Block32 || form == Weights::kI4Block32Sym;
    const unsigned bits = i4 ? 4 : 8;
    const int64_t block = i4 ? 32 : k, blocks = k / block;
    std::vector<double> scales(size_t(blocks * n));
    std::vector<int64_t> zps(size_t(blocks * n));
    for (size_t i = 0; i < scales.size(); ++i) {
      scales[i] = form == Weights::kI4Block32Sym ? double(1 + i % 7) / 1024.0 : 0.001 * double(1 + i % 7);
      zps[i] = form == Weights::kI4Block32 ? int64_t(i % 3) - 1 : 0;
    }
    const QuantStorage s = QuantStorage::full_range(bits, true);
    we = i4
             ? ElementType::make_sub_channel(s, f.act, {0, 1}, {block, 1}, {blocks, n}, std::move(scales), std::move(zps))
             : ElementType::make_per_axis(s, f.act, 1, std::move(scales), std::move(zps));
    stored = Type::tensor({k, n}, ElementType::make_int(bits, Signedness::kSignless));
  }
  DenseElements d = DenseElements::zeros(stored);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  if (form == Weights::kF32) {
    float* w = reinterpret_cast<float*>(d.bytes.data());
    for (size_t i = 0; i < d.bytes.size() / 4; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      w[i] = float(int(state >> 58) - 32) * 0.001f;
    }
  } else {
    for (uint8_t& b : d.bytes) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      b = uint8_t(state >> 56);
    }
  }
  const int c = g.add_op(OpKind::kConstant, {}, {Type::tensor({k, n}, we)}, {{"value", Attribute::make_dense(std::move(d))}});
  std::vector<std::pair<std::string, Attribute>> attrs;
  if (f.dynamic) attrs.push_back({"activations", Attribute::make_string("dynamic_i8")});
  const int y = g.add_op(OpKind::kMatmul, {x, g.result(c)}, {Type::tensor({m, n}, ElementType::make_float(f.act))}, attrs);
  g.outputs = {g.result(y)};
  qrt::share_dense_attributes(g);  // as a loaded model holds its weights: kernels read them in place
  return g;
}

// The weights' bytes as stored per layer (4-bit: two per byte), scales and zero points apart.
int64_t weight_bytes(int64_t k, int64_t n, Weights form) {
  switch (form) {
    case Weights::kI4Block32:
    case Weights::kI4Block32Sym: return k * n / 2;
    case Weights::kI8: return k * n;
    case Weights::kF32: return k * n * 4;
  }
  return 0;
}

void BM_wo_matmul(benchmark::State& state, qrt::jit::Isa level, Form f) {
  const Weights form = f.weights;
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2), layers = state.range(3);
  qrt::runtime::ThreadPool pool(size_t(state.range(4)));
  const auto isas = qrt::jit::capped_isas(level, nullptr);
  std::vector<qrt::Graph> graphs;
  std::vector<std::unique_ptr<qrt::jit::OpKernel>> kernels;
  for (int64_t l = 0; l < layers; ++l) {
    graphs.push_back(matmul_graph(m, k, n, f, uint64_t(l + 1)));
    auto choice = qrt::jit::select_kernel(graphs.back(), graphs.back().ops.back(), *isas);
    if (!choice.is_ok() || !choice->kernel) {
      state.SkipWithError(choice.is_ok() ? choice->why_not.c_str() : choice.status().message().c_str());
      return;
    }
    kernels.push_back(std::move(choice->kernel));
    if (form == Weights::kF32) graphs.back() = qrt::Graph();  // the f32 GEMM holds its packed copy
  }
  qrt::Tensor x = qrt::Tensor::zeros(qrt::Type::tensor({m, k}, qrt::ElementType::make_float(f.act)));
  for (int64_t i = 0; i < m * k; ++i) x.set_float(size_t(i), double(i % 17 - 8) * 0.125);
  qrt::Tensor y = qrt::Tensor::zeros(kernels[0]->result_type());
  const std::vector<const qrt::Tensor*> operands{&x};
  for (auto _ : state) {
    for (const auto& kernel : kernels) {
      auto status = kernel->run_into(operands, y, pool);
      benchmark::DoNotOptimize(status);
    }
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(m * n * k * layers), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  // What a call streams: the kernel's own packed copy (dynamic records, the f32 GEMM's panels),
  // or the weights read in place plus the scales and zero points it holds.
  int64_t streamed = 0;
  for (const auto& kernel : kernels) streamed += int64_t(kernel->owned_bytes()) + (kernel->holds_operand_copy(1) ? 0 : weight_bytes(k, n, form));
  state.SetBytesProcessed(int64_t(state.iterations()) * streamed);
  state.counters["bits/weight"] = double(streamed) * 8.0 / double(k * n * layers);
  const std::string name = kernels[0]->describe();
  state.SetLabel(name.substr(0, name.find(' ')));
}

// Layers of 4096x11008 whose 4-bit weights take at least twice the last-level cache (at least
// 256 MiB when the host does not say).
int64_t stack_layers() {
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const int64_t target = std::max<int64_t>(int64_t(256) << 20, 2 * int64_t(llc > 0 ? llc : 0));
  return (target + weight_bytes(4096, 11008, Weights::kI4Block32) - 1) / weight_bytes(4096, 11008, Weights::kI4Block32);
}

void add_shapes(benchmark::internal::Benchmark* b, bool stack) {
  for (int64_t threads : {1, 2}) {
    for (int64_t m : {1, 8}) {
      for (auto [k, n] : {std::pair<int64_t, int64_t>{4096, 4096}, {4096, 11008}, {11008, 4096}}) b->Args({m, k, n, 1, threads});
      if (stack) b->Args({m, 4096, 11008, stack_layers(), threads});
    }
  }
  b->ArgNames({"M", "K", "N", "layers", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}
void shapes_and_stack(benchmark::internal::Benchmark* b) { add_shapes(b, true); }
void shapes_only(benchmark::internal::Benchmark* b) { add_shapes(b, false); }

const bool registered = [] {
  const qrt::jit::IsaSet& host = qrt::jit::host_isas();
  bool best = true;  // the first level the host has: the highest of those the kernels differ on
  for (qrt::jit::Isa level : {qrt::jit::Isa::kAvx512Vnni, qrt::jit::Isa::kAvx2, qrt::jit::Isa::kNeonDot, qrt::jit::Isa::kScalar}) {
    if (!host.has(level)) continue;
    const std::string l = qrt::jit::isa_name(level);
    auto* const shapes = best ? shapes_and_stack : shapes_only;  // the stack at the best level
    benchmark::RegisterBenchmark(("BM_wo_matmul/" + l + "/i4_b32").c_str(), BM_wo_matmul, level, Form{Weights::kI4Block32})
        ->Apply(shapes);
    benchmark::RegisterBenchmark(("BM_wo_matmul/" + l + "/i4_b32_dyn").c_str(), BM_wo_matmul, level,
                                 Form{Weights::kI4Block32, true})
        ->Apply(shapes);
    benchmark::RegisterBenchmark(("BM_wo_matmul/" + l + "/i4_b32_sym_dyn").c_str(), BM_wo_matmul, level,
                                 Form{Weights::kI4Block32Sym, true})
        ->Apply(shapes);
    benchmark::RegisterBenchmark(("BM_wo_matmul/" + l + "/i8").c_str(), BM_wo_matmul, level, Form{Weights::kI8})
        ->Apply(shapes);
    for (auto [suffix, kind] : {std::pair<const char*, qrt::FloatKind>{"_bf16", qrt::FloatKind::kBF16}, {"_f16", qrt::FloatKind::kF16}}) {
      benchmark::RegisterBenchmark(("BM_wo_matmul/" + l + "/i4_b32" + suffix).c_str(), BM_wo_matmul, level,
                                   Form{Weights::kI4Block32, false, kind})
          ->Apply(shapes_only);
      benchmark::RegisterBenchmark(("BM_wo_matmul/" + l + "/i4_b32_dyn" + suffix).c_str(), BM_wo_matmul, level,
                                   Form{Weights::kI4Block32, true, kind})
          ->Apply(shapes_only);
    }
    benchmark::RegisterBenchmark(("BM_wo_matmul/" + l + "/i8_dyn").c_str(), BM_wo_matmul, level, Form{Weights::kI8, true})
        ->Apply(shapes);
    // The dequantized path at the best level only (at the lower levels it is slower still).
    if (best) {
      benchmark::RegisterBenchmark(("BM_wo_matmul/" + l + "/f32").c_str(), BM_wo_matmul, level, Form{Weights::kF32})
          ->Apply(shapes_and_stack);
    }
    best = false;
  }
  return true;
}();

}  // namespace
