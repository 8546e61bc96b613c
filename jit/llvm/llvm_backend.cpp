// qrt — the LLVM ORC backend (see llvm_backend.h): one LLJIT per ISA level, created on first
// use with the level's CPU and features; each element-wise program, and each micro-kernel
// made from the kernel templates (llvm_kernels.cpp), becomes a module that is optimized at O2
// for that target machine (the loop vectorizer picks the vector width) and linked into a JIT
// dylib of the level. llvm::Error becomes a qrt Status here and nowhere else.
#include "jit/llvm/llvm_backend.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "ir/numerics.h"
#include "jit/core/host_info.h"
#include "jit/llvm/llvm_codegen.h"
#include "jit/llvm/llvm_object_cache.h"

namespace qrt::jit {

namespace {

// numerics::pow_f32, the function llvm_ir::kPowSymbol names in generated code.
float pow_f32_for_jit(float a, float b) { return numerics::pow_f32(a, b); }

// The LLVM CPU name and extra features of a level on this architecture ("" CPU: not served).
struct LevelTarget {
  const char* cpu = "";
  const char* features = "";
};

LevelTarget level_target(Isa isa) {
#if defined(__x86_64__)
  switch (isa) {
    case Isa::kScalar: return {"x86-64", ""};
    case Isa::kAvx2: return {"x86-64-v3", ""};
    case Isa::kAvx512Vnni: return {"x86-64-v4", "+avx512vnni"};
    default: return {};
  }
#elif defined(__aarch64__)
  switch (isa) {
    case Isa::kScalar: return {"generic", "+neon"};
    default: return {};
  }
#else
  return isa == Isa::kScalar ? LevelTarget{"generic", ""} : LevelTarget{};
#endif
}

// The name of the function in every object (program or kernel).
constexpr const char* kFunctionName = "qrt_jit_entry";

// Programs compiled and programs linked from the disk cache, in this process (the levels
// compile concurrently).
struct AtomicStats {
  std::atomic<size_t> compiled{0}, loaded{0};
  std::atomic<uint64_t> build_ns{0}, optimize_ns{0}, codegen_ns{0}, link_ns{0};
};

// Adds the time since `start` to `into` and restarts the clock.
void lap(std::chrono::steady_clock::time_point& start, std::atomic<uint64_t>& into) {
  const auto now = std::chrono::steady_clock::now();
  into += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count());
  start = now;
}
AtomicStats& stats() {
  static AtomicStats s;
  return s;
}

// A compiled program: code owned by the level's JIT, which lives as long as the process.
class LlvmKernel final : public CompiledKernel {
 public:
  explicit LlvmKernel(const void* entry) { entry_ = entry; }
};

// The GEMM tile of the templates at each level: rows x 16 columns of int32 accumulators fill
// about half the vector registers (SSE2: 16 x xmm; AVX2: 16 x ymm; AVX-512: 32 x zmm).
unsigned template_gemm_rows(Isa isa) {
  switch (isa) {
    case Isa::kAvx512Vnni: return 8;
    case Isa::kAvx2: return 4;
    default: return 2;
  }
}

class LlvmBackend final : public Backend {
 public:
  explicit LlvmBackend(Isa isa) : isa_(isa), target_(level_target(isa)) {}

  const char* name() const override { return "llvm"; }
  Isa isa() const override { return isa_; }
  Generator generator() const override { return Generator::kLlvm; }
  bool available() const override { return host_isas().has(isa_) && jit_status().is_ok(); }
  // The templates multiply u8 quads (exact int32 sums, as vpdpbusd does) on every level.
  std::optional<GemmTraits> gemm_traits(GemmPath path) const override {
    if (path != GemmPath::kDot4) return std::nullopt;
    // The templates' tiles take TFLite's Q31 epilogue too (the twin's arithmetic per lane).
    return GemmTraits{template_gemm_rows(isa_), 16, 4, 1, false, true};
  }
  DepthwiseTraits depthwise_traits() const override { return {16, 0}; }
  StreamTraits stream_traits() const override { return {8}; }

  std::string why_not(const KernelDesc& d) const override {
    if (d.isa != isa_) return std::string("the LLVM ") + isa_name(isa_) + " backend does not serve " + isa_name(d.isa);
    if (d.generator != Generator::kLlvm) return "the description names another generator";
    if (d.op == KernelOp::kEwProgram) return "element-wise programs are compiled with compile_program";
    if (d.op == KernelOp::kDwInterleave || d.op == KernelOp::kDwRows) return "LLVM has no dot4 depthwise row kernels";
    if (d.op == KernelOp::kCount) return "not a kernel kind";
    if (std::string why = llvm_ir::kernel_templates_why_not(); !why.empty()) return why;
    if (!host_isas().has(isa_)) return std::string("the CPU lacks ") + isa_name(isa_);
    if (Status s = jit_status(); !s.is_ok()) return s.message();
    if (d.op == KernelOp::kGemm) return gemm_tile_why_not(d, gemm_traits(d.path));
    return window_kernel_why_not(d, depthwise_traits().block);
  }

  Result<std::shared_ptr<const CompiledKernel>> generate(const KernelDesc& d) const override {
    if (std::string why = why_not(d); !why.empty()) {
      return Status::error(d.name() + ": " + why).with_code(ErrorCode::kUnsupported);
    }
    const std::string key = "kernel|" + llvm_ir::kernel_key(d);
    auto build = [&d](llvm::LLVMContext& ctx) { return llvm_ir::build_kernel_module(ctx, kFunctionName, d); };
    QRT_ASSIGN_OR_RETURN(const void* entry, compile_and_link(key, d.name(), build));
    return std::shared_ptr<const CompiledKernel>(std::make_shared<LlvmKernel>(entry));
  }

  std::string program_why_not(const EwProgram& program) const override {
    if (!host_isas().has(isa_)) return std::string("the CPU lacks ") + isa_name(isa_);
    if (Status s = jit_status(); !s.is_ok()) return s.message();
    return program.validate();
  }

  Result<std::shared_ptr<const CompiledKernel>> compile_program(const EwProgram& program) const override {
    if (std::string why = program_why_not(program); !why.empty()) {
      return Status::error(program.name() + ": " + why).with_code(ErrorCode::kUnsupported);
    }
    auto build = [&program](llvm::LLVMContext& ctx) -> Result<std::unique_ptr<llvm::Module>> {
      auto module = std::make_unique<llvm::Module>("qrt_ew", ctx);
      QRT_RETURN_IF_ERROR(llvm_ir::build_ew_function(*module, kFunctionName, program));
      return module;
    };
    QRT_ASSIGN_OR_RETURN(const void* entry, compile_and_link("program|" + program.key(), program.name(), build));
    return std::shared_ptr<const CompiledKernel>(std::make_shared<LlvmKernel>(entry));
  }

 private:
  using ModuleBuilder = std::function<Result<std::unique_ptr<llvm::Module>>(llvm::LLVMContext&)>;

  // The object of `key` from the disk cache, or compiled from the module `build` makes; linked
  // into a JIT dylib of its own (objects from the cache may all name their function alike).
  // Modules are built, optimized and compiled one at a time per level (the target machine is
  // shared).
  Result<const void*> compile_and_link(const std::string& key, const std::string& label, const ModuleBuilder& build) const {
    std::lock_guard<std::mutex> lock(compile_mutex_);
    const std::string full_key = cache_key(key), dir = llvm_ir::object_cache_dir();
    std::optional<std::string> object = dir.empty() ? std::nullopt : llvm_ir::read_cached_object(dir, full_key);
    if (object) {
      ++stats().loaded;
    } else {
      QRT_ASSIGN_OR_RETURN(std::string compiled, compile_to_object(label, build));
      if (!dir.empty()) llvm_ir::write_cached_object(dir, full_key, compiled);
      object = std::move(compiled);
      ++stats().compiled;
    }
    auto clock = std::chrono::steady_clock::now();
    auto dylib = jit_->createJITDylib("qrt_" + std::to_string(next_id_++));
    if (!dylib) return Status::error("LLVM ORC could not make a dylib: " + llvm::toString(dylib.takeError()));
    QRT_RETURN_IF_ERROR(define_symbols(*dylib));
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(*object, label);
    if (llvm::Error e = jit_->addObjectFile(*dylib, std::move(buffer))) {
      return Status::error("LLVM could not link " + label + ": " + llvm::toString(std::move(e)));
    }
    auto address = jit_->lookup(*dylib, kFunctionName);
    if (!address) return Status::error("LLVM could not link " + label + ": " + llvm::toString(address.takeError()));
    lap(clock, stats().link_ns);
    return address->toPtr<const void*>();
  }

  // Everything that decides an object's machine code: LLVM, the level's target, the key.
  std::string cache_key(const std::string& key) const {
    return std::string(LLVM_VERSION_STRING) + "|" + tm_->getTargetTriple().str() + "|" + tm_->getTargetCPU().str() + "|" +
           tm_->getTargetFeatureString().str() + "|" + isa_name(isa_) + "|" + key;
  }

  // The module `build` makes as an object file for the level's target machine. With
  // QRT_LLVM_DUMP_DIR set, the optimized IR is also written to DIR/LABEL.ll (for people
  // reading what the vectorizer made of a kernel).
  Result<std::string> compile_to_object(const std::string& label, const ModuleBuilder& build) const {
    auto clock = std::chrono::steady_clock::now();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    QRT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module, build(*ctx));
    module->setDataLayout(tm_->createDataLayout());
    module->setTargetTriple(tm_->getTargetTriple().str());
    for (llvm::Function& f : *module) {
      if (f.isDeclaration()) continue;
      // The level's CPU for every function (the templates' bitcode names the baseline).
      f.addFnAttr("target-cpu", tm_->getTargetCPU());
      f.addFnAttr("target-features", tm_->getTargetFeatureString());
      f.removeFnAttr("tune-cpu");
      // Long element-wise chains (erf, gelu) are latency-bound per vector: zmm halves the work.
      if (isa_ == Isa::kAvx512Vnni) f.addFnAttr("prefer-vector-width", "512");
    }
    lap(clock, stats().build_ns);
    optimize(*module);
    lap(clock, stats().optimize_ns);
    if (const char* dump = std::getenv("QRT_LLVM_DUMP_DIR"); dump && *dump) {
      std::error_code ec;
      llvm::raw_fd_ostream ll(std::string(dump) + "/" + label + ".ll", ec);
      if (!ec) module->print(ll, nullptr);
    }
    llvm::SmallVector<char, 0> bytes;
    llvm::raw_svector_ostream os(bytes);
    llvm::legacy::PassManager codegen;
    if (tm_->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
      return Status::error("LLVM cannot emit objects for " + std::string(target_.cpu));
    }
    codegen.run(*module);
    lap(clock, stats().codegen_ns);
    return std::string(bytes.data(), bytes.size());
  }

  // qrt's functions that generated code calls, in `dylib`.
  Status define_symbols(llvm::orc::JITDylib& dylib) const {
    llvm::orc::SymbolMap symbols;
    symbols[jit_->mangleAndIntern(llvm_ir::kPowSymbol)] = {
        llvm::orc::ExecutorAddr::fromPtr(&pow_f32_for_jit), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    const std::pair<EwOp, float (*)(float)> unary[] = {
        {EwOp::kLog, &numerics::log_f32}, {EwOp::kLog1p, &numerics::log1p_f32}, {EwOp::kExpm1, &numerics::expm1_f32},
        {EwOp::kSin, &numerics::sin_f32}, {EwOp::kCos, &numerics::cos_f32},     {EwOp::kCbrt, &numerics::cbrt_f32},
        {EwOp::kAsin, &numerics::asin_f32}, {EwOp::kAcos, &numerics::acos_f32},   {EwOp::kAtan, &numerics::atan_f32},
        {EwOp::kAsinh, &numerics::asinh_f32}, {EwOp::kAcosh, &numerics::acosh_f32}, {EwOp::kAtanh, &numerics::atanh_f32}};
    for (const auto& [op, fn] : unary) {
      symbols[jit_->mangleAndIntern(llvm_ir::scalar_call_symbol(op))] = {
          llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    }
    if (llvm::Error e = dylib.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
      return Status::error("LLVM ORC could not define qrt's symbols: " + llvm::toString(std::move(e)));
    }
    return Status::ok();
  }

  // Creates the level's JIT once; its status afterwards.
  Status jit_status() const {
    std::call_once(once_, [this] { status_ = create_jit(); });
    return status_;
  }

  Status create_jit() const {
    if (*target_.cpu == '\0') return Status::error(std::string("LLVM serves no ") + isa_name(isa_) + " level here");
    if (!llvm_info().orc_jit) return Status::error("LLVM ORC is unavailable: " + llvm_info().error);
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) return Status::error("LLVM cannot describe the host: " + llvm::toString(jtmb.takeError()));
    jtmb->setCPU(target_.cpu);
    jtmb->getFeatures() = llvm::SubtargetFeatures();
    if (*target_.features) jtmb->getFeatures().AddFeature(target_.features);
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    auto tm = jtmb->createTargetMachine();
    if (!tm) return Status::error("LLVM has no target machine for " + std::string(target_.cpu) + ": " + llvm::toString(tm.takeError()));
    tm_ = std::move(*tm);
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
    if (!jit) return Status::error("LLVM ORC could not start: " + llvm::toString(jit.takeError()));
    jit_ = std::move(*jit);
    return Status::ok();
  }

  // The O2 pipeline for the level's target machine (its cost model sizes the vectors).
  void optimize(llvm::Module& module) const {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm_.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(module, mam);
  }

  Isa isa_;
  LevelTarget target_;
  mutable std::once_flag once_;
  mutable Status status_ = Status::ok();
  mutable std::unique_ptr<llvm::TargetMachine> tm_;
  mutable std::unique_ptr<llvm::orc::LLJIT> jit_;
  mutable std::mutex compile_mutex_;
  mutable uint64_t next_id_ = 0;
};

}  // namespace

LlvmCacheStats llvm_cache_stats() {
  const AtomicStats& s = stats();
  return {s.compiled.load(), s.loaded.load(), s.build_ns.load(), s.optimize_ns.load(), s.codegen_ns.load(), s.link_ns.load()};
}

bool llvm_kernel_templates_built() { return llvm_ir::kernel_templates_built(); }

const Backend* llvm_backend(Isa isa) {
  // Never destroyed: compiled code may be called until the process exits.
  static LlvmBackend* const backends[] = {new LlvmBackend(Isa::kScalar), new LlvmBackend(Isa::kAvx2),
                                          new LlvmBackend(Isa::kAvx512Vnni)};
  for (LlvmBackend* b : backends) {
    if (b->isa() == isa && *level_target(isa).cpu != '\0') return b;
  }
  return nullptr;
}

}  // namespace qrt::jit
