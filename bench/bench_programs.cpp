// Benchmarks of element-wise programs: how long the LLVM backend takes to compile one (IR
// build, O2, code generation and linking, per level), and how fast compiled programs stream
// against a plain memory copy of the same bytes (the target: a fused dcast -> clamp -> qcast
// region at >= 80% of copy bandwidth above L2).
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "jit/kernel_list.h"

namespace {

using namespace qrt::jit;

EwInstr instr(EwOp op, EwType type, uint8_t a = 0, uint8_t b = 0) {
  EwInstr e;
  e.op = op;
  e.type = type;
  e.a = a;
  e.b = b;
  return e;
}

// The programs measured: a float add, erf-GELU, and the QDQ clamp region a fusion makes of
// `u8 -> dcast -> clamp(0, 6) -> qcast -> u8`.
EwProgram program(int kind, float salt) {
  EwProgram p;
  EwInstr load = instr(EwOp::kLoad, EwType::kF32);
  if (kind == 0) {
    p.inputs = {{EwStorage::kF32, false}, {EwStorage::kF32, false}};
    EwInstr load1 = load;
    load1.input = 1;
    p.code = {load, load1, instr(EwOp::kAdd, EwType::kF32, 0, 1)};
  } else if (kind == 1) {
    p.inputs = {{EwStorage::kF32, false}};
    EwInstr gelu = instr(EwOp::kGelu, EwType::kF32, 0);
    p.code = {load, gelu};
  } else {
    p.inputs = {{EwStorage::kU8, false}};
    load.type = EwType::kI64;
    EwInstr dq = instr(EwOp::kDequant, EwType::kF32, 0);
    dq.i = 128;
    dq.f = 0.05f;
    EwInstr clamp = instr(EwOp::kClamp, EwType::kF32, 1);
    clamp.f = 0.0f;
    clamp.g = 6.0f;
    EwInstr q = instr(EwOp::kQuant, EwType::kI64, 2);
    q.f = 0.025f;
    q.i = 0;
    q.j = 0;
    q.k = 255;
    p.code = {load, dq, clamp, q};
    p.out = EwStorage::kU8;
  }
  // A constant that changes per iteration makes every compilation a fresh one.
  EwInstr c = instr(EwOp::kConst, EwType::kF32);
  c.f = salt;
  p.code.push_back(c);
  p.result = uint8_t(p.code.size() - 2);
  return p;
}

const char* kind_name(int kind) { return kind == 0 ? "add" : kind == 1 ? "gelu" : "u8_dcast_clamp_qcast"; }

const Backend* best_program_backend() {
  for (Isa isa : host_isas().by_preference()) {
    const Backend* b = kernel_list_backend(KernelOp::kEwProgram, isa);
    if (b && std::string(b->name()) == "llvm" && b->available()) return b;
  }
  return nullptr;
}

void BM_llvm_compile_program(benchmark::State& state) {
  const Backend* b = best_program_backend();
  if (!b) {
    state.SkipWithError("no LLVM program backend on this host (built with -Dllvm=disabled?)");
    return;
  }
  const int kind = int(state.range(0));
  state.SetLabel(std::string(kind_name(kind)) + " at " + isa_name(b->isa()));
  float salt = 0.0f;
  for (auto _ : state) {
    auto code = b->compile_program(program(kind, salt += 1.0f));
    if (!code.is_ok()) {
      state.SkipWithError(code.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(code);
  }
}
BENCHMARK(BM_llvm_compile_program)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

// Streams `n` elements through a compiled program; bytes = input + output bytes.
void BM_program_run(benchmark::State& state) {
  const Backend* b = best_program_backend();
  if (!b) {
    state.SkipWithError("no LLVM program backend on this host");
    return;
  }
  const int kind = int(state.range(0));
  const int64_t n = state.range(1);
  const EwProgram p = program(kind, 0.0f);
  auto code = b->compile_program(p);
  if (!code.is_ok()) {
    state.SkipWithError(code.status().message().c_str());
    return;
  }
  std::vector<std::vector<uint8_t>> in;
  EwArgs args{};
  int64_t bytes = 0;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    in.emplace_back(size_t(n) * ew_storage_bytes(p.inputs[k].storage), uint8_t(3 * k + 1));
    if (p.inputs[k].storage == EwStorage::kF32) {
      // Values of activations (no subnormals, which would slow the FPU down).
      for (int64_t i = 0; i < n; ++i) {
        const float v = float(i % 97) * 0.0825f - 4.0f;
        std::memcpy(in.back().data() + i * 4, &v, 4);
      }
    }
    args.in[k] = in.back().data();
    bytes += int64_t(in.back().size());
  }
  std::vector<uint8_t> out(size_t(n) * ew_storage_bytes(p.out));
  bytes += int64_t(out.size());
  args.out = out.data();
  args.n = n;
  args.rows = 1;
  const EwFn fn = reinterpret_cast<EwFn>(const_cast<void*>((*code)->entry()));
  for (auto _ : state) {
    fn(&args, &p);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(std::string(kind_name(kind)) + " at " + isa_name(b->isa()));
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_program_run)->ArgsProduct({{0, 1, 2}, {16384, 4 << 20}})->Unit(benchmark::kMicrosecond);

// The yardstick: memcpy of `bytes` (read + write counted, as above).
void BM_memcpy(benchmark::State& state) {
  const size_t bytes = size_t(state.range(0));
  std::vector<uint8_t> a(bytes, 1), b(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::DoNotOptimize(b.data());
  }
  state.SetBytesProcessed(state.iterations() * int64_t(2 * bytes));
}
BENCHMARK(BM_memcpy)->Arg(4 << 20)->Arg(16 << 20)->Unit(benchmark::kMicrosecond);

}  // namespace
