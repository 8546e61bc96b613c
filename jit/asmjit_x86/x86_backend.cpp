// qrt — the x86 backend at the AVX2 level (see x86_backend.h): traits, applicability and
// dispatch to the generators.
#include "jit/asmjit_x86/x86_backend.h"

#include <string>

#include "jit/asmjit_x86/generators.h"

namespace qrt::jit {

namespace {

class X86Avx2Backend final : public Backend {
 public:
  const char* name() const override { return "x86"; }
  Isa isa() const override { return Isa::kAvx2; }
  bool available() const override { return host_isas().has(Isa::kAvx2); }

  std::optional<GemmTraits> gemm_traits(GemmPath path) const override {
    // vpmaddubsw needs a register for its s16 ones: 4 rows x 2 accumulators; the widened
    // vpmaddwd path fits 6 x 2 of the 16 ymm registers.
    if (path == GemmPath::kMaddubs) return GemmTraits{4, 16, 4, 1};
    return GemmTraits{6, 16, 2, 2};
  }
  DepthwiseTraits depthwise_traits() const override { return {16}; }
  StreamTraits stream_traits() const override { return {8}; }

  std::string why_not(const KernelDesc& d) const override {
    if (d.isa != Isa::kAvx2) return std::string("the x86 AVX2 backend does not generate ") + isa_name(d.isa) + " kernels";
    if (!available()) return "the CPU has no AVX2";
    if (d.op == KernelOp::kCount) return "not a kernel kind";
    if (d.op == KernelOp::kGemm) return gemm_tile_why_not(d, gemm_traits(d.path));
    return window_kernel_why_not(d, depthwise_traits().block);
  }

  Result<std::shared_ptr<const CompiledKernel>> generate(const KernelDesc& d) const override {
    if (std::string why = why_not(d); !why.empty()) return Status::error(d.name() + ": " + why);
    switch (d.op) {
      case KernelOp::kQuantize:
      case KernelOp::kDequantize: return cast(x86gen::generate_avx2_convert(d));
      case KernelOp::kGemm: return cast(x86gen::generate_avx2_gemm(d));
      case KernelOp::kDepthwise: return cast(x86gen::generate_avx2_depthwise(d));
      case KernelOp::kQAdd:
      case KernelOp::kQMul:
      case KernelOp::kRequantize: return cast(x86gen::generate_avx2_elementwise(d));
      case KernelOp::kMaxPool:
      case KernelOp::kAvgPool: return cast(x86gen::generate_avx2_pool(d));
      case KernelOp::kPackRows: return fixed(&x86gen::avx2_pack_rows);
      case KernelOp::kClamp: return fixed(&x86gen::avx2_clamp);
      case KernelOp::kF32Gemm: return fixed(&x86gen::avx2_f32_gemm);
      case KernelOp::kCount: break;
    }
    return Status::error("no x86 generator for kernel " + d.name());
  }

 private:
  static Result<std::shared_ptr<const CompiledKernel>> cast(Result<std::shared_ptr<ExecutableCode>> r) {
    if (!r.is_ok()) return r.status();
    return std::shared_ptr<const CompiledKernel>(std::move(r).value());
  }
  template <typename Args>
  static Result<std::shared_ptr<const CompiledKernel>> fixed(MicrokernelFn<Args> fn) {
    return std::shared_ptr<const CompiledKernel>(std::make_shared<StaticKernel>(reinterpret_cast<const void*>(fn)));
  }
};

}  // namespace

const Backend& x86_avx2_backend() {
  static const X86Avx2Backend backend;
  return backend;
}

}  // namespace qrt::jit
