// qrt — the stream and pooling kernels at every ISA level the host has, on the op kernel as a
// plan calls it: BM_qrt_stream/<level>/<op>/n:N (quantized add, quantize, dequantize; N
// elements, tails included) and BM_qrt_pool/<level>/<op> (MobileNet's shapes: a 3x3 stride-2
// max pool over 112²·64 and the global 7x7 average over 1280 channels). Bytes/s count every
// operand read and the result written once. BM_requant/<level>/<kind>: the profiles'
// requantization micro-kernels alone (q31, q31-single, f64) on a block of int32 accumulators in
// cache (rows x channels, as the contraction drivers hand them over).
#include <benchmark/benchmark.h>

#include <random>
#include <tuple>
#include <vector>
#include <string>

#include "ir/text_format.h"
#include "jit/core/isa.h"
#include "jit/core/aligned_bytes.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/core/tensor.h"
#include "jit/kernel_list.h"
#include "jit/ops/select.h"
#include "jit/ops/op_kernel.h"

namespace {

const std::string kQ = "!quant.uniform<i8:f32, 0.0078125:-1>";
const std::string kQb = "!quant.uniform<i8:f32, 0.015625:3>";
const std::string kQo = "!quant.uniform<i8:f32, 0.03125:-5>";

/// The graph of one op named `kind` over `n` elements (or the pool shapes).
std::string stream_graph(const std::string& kind, int64_t n) {
  const std::string t = "tensor<" + std::to_string(n) + "x";
  if (kind == "add") {
    return "func.func @main(%x: " + t + kQ + ">, %b: " + t + kQb + ">) -> " + t + kQo + "> {\n  %y = \"qrt.add\"(%x, %b) : (" +
           t + kQ + ">, " + t + kQb + ">) -> " + t + kQo + ">\n  return %y : " + t + kQo + ">\n}\n";
  }
  const bool quantize = kind == "quantize";
  const std::string in = t + (quantize ? "f32>" : kQ + ">"), out = t + (quantize ? kQ + ">" : "f32>");
  return "func.func @main(%x: " + in + ") -> " + out + " {\n  %y = \"quant." + (quantize ? "qcast" : "dcast") + "\"(%x) : (" +
         in + ") -> " + out + "\n  return %y : " + out + "\n}\n";
}

std::string pool_graph(const std::string& kind) {
  const bool max = kind == "maxpool";
  const std::string in = max ? "tensor<1x112x112x64x" + kQ + ">" : "tensor<1x7x7x1280x" + kQ + ">";
  const std::string out = max ? "tensor<1x56x56x64x" + kQ + ">" : "tensor<1x1x1x1280x" + kQo + ">";
  const std::string attrs = max ? "{kernel = [3, 3], pads = [0, 0, 1, 1], strides = [2, 2]}" : "{kernel = [7, 7], strides = [1, 1]}";
  return "func.func @main(%x: " + in + ") -> " + out + " {\n  %y = \"qrt." + (max ? "max_pool2d" : "avg_pool2d") + "\"(%x) " +
         attrs + " : (" + in + ") -> " + out + "\n  return %y : " + out + "\n}\n";
}

void run_op(benchmark::State& state, const std::string& text, qrt::jit::Isa level) {
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
  // Operands and result 64-byte aligned, as in a plan's arena.
  std::mt19937 rng(7);
  const qrt::Op& op = graph->ops.back();
  std::vector<qrt::jit::AlignedBytes> buffers;
  std::vector<qrt::Tensor> inputs;
  std::vector<const qrt::Tensor*> operands;
  int64_t bytes = 0;
  for (int v : op.operands) {
    const qrt::Type& type = graph->values[size_t(v)].type;
    buffers.emplace_back(size_t(qrt::Tensor::zeros(type).byte_size()));
    inputs.push_back(qrt::Tensor::view_of(type, buffers.back().data()));
  }
  std::normal_distribution<float> normal(0.0f, 0.5f);
  for (qrt::Tensor& x : inputs) {
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if (x.element_size() == 4) x.set_float(size_t(i), normal(rng));  // quantize: floats at the type's scale
      else x.bytes()[i] = uint8_t(rng());
    }
    operands.push_back(&x);
    bytes += x.byte_size();
  }
  const qrt::Type result = choice->kernel->result_type();
  buffers.emplace_back(size_t(qrt::Tensor::zeros(result).byte_size()));
  qrt::Tensor y = qrt::Tensor::view_of(result, buffers.back().data());
  bytes += y.byte_size();
  for (auto _ : state) {
    auto status = choice->kernel->run_into(operands, y, qrt::jit::serial());
    benchmark::DoNotOptimize(status);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.SetLabel(choice->kernel->describe());
}

// The requantization micro-kernel `op` of `level` on rows x channels accumulators (an 8-bit
// signed result), parameters as a 1x1 convolution's per-channel ones.
void run_requant(benchmark::State& state, qrt::jit::KernelOp op, bool single, qrt::jit::Isa level) {
  using namespace qrt::jit;
  const int64_t rows = state.range(0), channels = state.range(1);
  KernelDesc d;
  d.op = op;
  d.isa = level;
  d.storage_signed = true;
  d.single_rounding = single;
  auto code = code_cache().get(d);
  if (!code.is_ok()) {
    state.SkipWithError(code.status().message().c_str());
    return;
  }
  std::mt19937 rng(11);
  const size_t n = static_cast<size_t>(channels);
  std::vector<int32_t> acc(static_cast<size_t>(rows * channels)), multiplier(n), shift(n), lo(n, -128 + 5), hi(n, 127 + 5),
      zo(n, -5);
  std::vector<float> f32(n);
  for (int32_t& a : acc) a = int32_t(rng() % 200001) - 100000;
  for (int64_t c = 0; c < channels; ++c) {
    multiplier[size_t(c)] = int32_t((1u << 30) + rng() % (1u << 30));
    shift[size_t(c)] = -int32_t(7 + rng() % 4);
    f32[size_t(c)] = 1.0f / float(100 + rng() % 900);
  }
  std::vector<uint8_t> y(static_cast<size_t>(rows * channels));
  for (auto _ : state) {
    if (op == KernelOp::kRequantF64) {
      const RequantF64Args args{acc.data(), y.data(), rows, channels, channels, channels, f32.data(), lo.data(), hi.data(), zo.data()};
      call_microkernel((*code)->entry(), args, d);
    } else {
      const RequantQ31Args args{acc.data(), y.data(), rows, channels, channels, channels, multiplier.data(), shift.data(),
                                lo.data(), hi.data(), zo.data()};
      call_microkernel((*code)->entry(), args, d);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * channels);
  state.SetLabel(d.name());
}

// Rows per native ISA level the host has (the levels with an element-wise kernel of their own
// or the one they fall back to: avx2-vnni runs the avx2 kernels).
const bool registered = [] {
  for (const qrt::jit::KernelListRow& row : qrt::jit::kernel_list()) {
    if (row.op != qrt::jit::KernelOp::kGemm || !row.backend->available() || row.isa == qrt::jit::Isa::kScalar ||
        row.backend->generator() != qrt::jit::Generator::kNative) {
      continue;
    }
    const qrt::jit::Isa level = row.isa;
    const std::string name = qrt::jit::isa_name(level);
    for (const char* kind : {"add", "quantize", "dequantize"}) {
      benchmark::RegisterBenchmark(("BM_qrt_stream/" + name + "/" + kind).c_str(),
                                   [kind, level](benchmark::State& s) { run_op(s, stream_graph(kind, s.range(0)), level); })
          ->ArgName("n")
          ->Arg(1003)
          ->Arg(75264)  // 56²·24: MobileNetV2's first residual add
          ->Unit(benchmark::kMicrosecond);
    }
    for (const auto& [kind, op, single] : {std::tuple{"q31", qrt::jit::KernelOp::kRequantQ31, false},
                                            std::tuple{"q31-single", qrt::jit::KernelOp::kRequantQ31, true},
                                            std::tuple{"f64", qrt::jit::KernelOp::kRequantF64, false}}) {
      if (!row.backend->why_not([&] {
            qrt::jit::KernelDesc d;
            d.op = op;
            d.isa = level;
            return d;
          }()).empty()) {
        continue;
      }
      // 1344 rows x 96 channels: one 512 KiB block of MobileNetV2's 112²·96 expansion.
      benchmark::RegisterBenchmark(("BM_requant/" + name + "/" + kind).c_str(), [op = op, single = single, level](benchmark::State& s) {
        run_requant(s, op, single, level);
      })->Args({1344, 96})->Args({336, 96})->ArgNames({"rows", "channels"})->Unit(benchmark::kMicrosecond);
    }
    for (const char* kind : {"maxpool", "avgpool"}) {
      benchmark::RegisterBenchmark(("BM_qrt_pool/" + name + "/" + kind).c_str(),
                                   [kind, level](benchmark::State& s) { run_op(s, pool_graph(kind), level); })
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return true;
}();

}  // namespace
