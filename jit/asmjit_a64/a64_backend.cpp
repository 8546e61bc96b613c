// qrt — the AArch64 backend, one Backend per level (see a64_backend.h): traits,
// applicability and dispatch to the generators.
//   neon:      GEMM tiles, 4 rows x 16 columns, on smlal by element (k_group 1).
//   neon-dot:  GEMM tiles on sdot by element (k_group 4; activations packed as a' - 128).
//   neon-i8mm: GEMM tiles on usmmla (k_group 8).
// neon-dot, neon-i8mm: depthwise convolution on the dot4 rows (s8 quads on sdot, dwrows_a64.cpp).
// Every level: depthwise convolution and pooling (16-channel blocks); quantized add, multiply and
// requantize, quantize and dequantize, 8 elements per step; clamp and 256-entry tables, 16
// bytes per step.
// Every level: the weight-only matmul (kWoGemm), the f32 GEMM (kF32Gemm) and f32 depthwise
// rows (kF32Dwconv), compiled kernels (weight_only_a64.cpp, f32_kernels_a64.cpp).
// Every level: the dynamic-i8 matmul (kDynGemm), a compiled kernel (dynamic_gemm_a64.cpp) on
// sdot by element (neon-dot, neon-i8mm) or, at plain neon, on widening multiplies that give the
// same int32 sums. Activation rows are
// packed by the portable packing kernel (the twin); every other kernel kind comes from the
// scalar twins (the kernel list's last rows).
#include "jit/asmjit_a64/a64_backend.h"

#include <string>

#include "jit/asmjit_a64/generators.h"
#include "jit/ref/twins.h"

namespace qrt::jit {

namespace {

class A64Backend final : public Backend {
 public:
  explicit A64Backend(Isa isa) : isa_(isa) {}
  const char* name() const override { return "a64"; }
  Isa isa() const override { return isa_; }
  bool available() const override { return host_isas().has(isa_); }

  std::optional<GemmTraits> gemm_traits(GemmPath path) const override {
    // Each level offers its fastest exact path only: 16 accumulators (4 rows x 16 columns
    // of s32) leave the other 16 vector registers to operands.
    const GemmPath own = isa_ == Isa::kNeonI8mm ? GemmPath::kUsmmla8 : isa_ == Isa::kNeonDot ? GemmPath::kSdot4 : GemmPath::kMlal;
    if (path != own) return std::nullopt;
    // The tiles take TFLite's Q31 requantization in their epilogue (shared_a64.cpp).
    return GemmTraits{a64gen::kGemmRows, 16, gemm_path_k_group(own), 1, true, true};
  }
  // The dot4 depthwise rows where the dot product is (s8 quads on sdot).
  DepthwiseTraits depthwise_traits() const override { return {16, isa_ == Isa::kNeon ? 0u : 16u, isa_ != Isa::kNeon}; }
  StreamTraits stream_traits() const override { return {8}; }

  std::string why_not(const KernelDesc& d) const override {
    if (d.isa != isa_) {
      return std::string("the a64 ") + isa_name(isa_) + " backend does not generate " + isa_name(d.isa) + " kernels";
    }
    if (!available()) return std::string("the CPU lacks ") + isa_name(isa_);
    if (d.op == KernelOp::kDynGemm) {
      return d.weight_bits == 4 || d.weight_bits == 8 ? "" : "the AArch64 dynamic i8 kernel reads 4- or 8-bit weights";
    }
    if (d.op == KernelOp::kF32Gemm || d.op == KernelOp::kF32Dwconv || d.op == KernelOp::kRequantQ31 ||
        d.op == KernelOp::kRequantF64) {
      return "";
    }
    if (d.op == KernelOp::kWoGemm) {
      return d.weight_bits == 4 || d.weight_bits == 8 ? "" : "the AArch64 weight-only kernel reads 4- or 8-bit weights";
    }
    if (!serves(d.op)) {
      return std::string("no ") + kernel_op_name(d.op) + " kernel at this level";
    }
    if (d.op == KernelOp::kPackRows) return gemm_traits(d.path) ? "" : "no such GEMM path at this level";
    if (d.op == KernelOp::kGemm) return gemm_tile_why_not(d, gemm_traits(d.path));
    if (d.op == KernelOp::kQuantize || d.op == KernelOp::kDequantize) return a64gen::convert_why_not(d);
    if (d.op == KernelOp::kMaxPool || d.op == KernelOp::kAvgPool) {
      if (std::string why = window_kernel_why_not(d, depthwise_traits().block); !why.empty()) return why;
      return a64gen::pool_why_not(d);
    }
    if (d.op == KernelOp::kDepthwise) {
      if (std::string why = window_kernel_why_not(d, depthwise_traits().block); !why.empty()) return why;
      return a64gen::depthwise_why_not(d);
    }
    if (d.op == KernelOp::kDwInterleave || d.op == KernelOp::kDwRows) {
      const DepthwiseTraits t = depthwise_traits();
      if (std::string why = dw_rows_why_not(d, t.rows_panel, true, t.rows_signed_quads); !why.empty()) return why;
      return a64gen::dw_rows_a64_why_not(d);
    }
    return "";  // the element-wise kinds take every signedness and 8-bit output
  }

  Result<std::shared_ptr<const CompiledKernel>> generate(const KernelDesc& d) const override {
    if (std::string why = why_not(d); !why.empty()) return Status::error(d.name() + ": " + why);
    if (d.op == KernelOp::kPackRows) {
      return std::shared_ptr<const CompiledKernel>(std::make_shared<StaticKernel>(twin_entry(KernelOp::kPackRows)));
    }
    if (d.op == KernelOp::kWoGemm) {
      return std::shared_ptr<const CompiledKernel>(std::make_shared<StaticKernel>(reinterpret_cast<const void*>(&a64gen::a64_wo_gemm)));
    }
    if (d.op == KernelOp::kF32Gemm) {
      return std::shared_ptr<const CompiledKernel>(std::make_shared<StaticKernel>(reinterpret_cast<const void*>(&a64gen::a64_f32_gemm)));
    }
    if (d.op == KernelOp::kF32Dwconv) {
      return std::shared_ptr<const CompiledKernel>(
          std::make_shared<StaticKernel>(reinterpret_cast<const void*>(&a64gen::a64_f32_dwconv)));
    }
    if (d.op == KernelOp::kRequantF64) {
      return std::shared_ptr<const CompiledKernel>(
          std::make_shared<StaticKernel>(reinterpret_cast<const void*>(&a64gen::a64_requant_f64)));
    }
    if (d.op == KernelOp::kRequantQ31) {
      return std::shared_ptr<const CompiledKernel>(
          std::make_shared<StaticKernel>(reinterpret_cast<const void*>(&a64gen::a64_requant_q31)));
    }
    if (d.op == KernelOp::kDynGemm) {
      return std::shared_ptr<const CompiledKernel>(
          std::make_shared<StaticKernel>(reinterpret_cast<const void*>(isa_ == Isa::kNeon ? &a64gen::a64_neon_dyn_gemm
                                                                                              : &a64gen::a64_dot_dyn_gemm)));
    }
    Result<std::shared_ptr<ExecutableCode>> r = d.op == KernelOp::kGemm        ? a64gen::generate_gemm(d)
                                                : d.op == KernelOp::kDepthwise ? a64gen::generate_depthwise(d)
                                                : d.op == KernelOp::kDwInterleave ? a64gen::generate_dw_interleave_a64(d)
                                                : d.op == KernelOp::kDwRows       ? a64gen::generate_dw_rows_a64(d)
                                                : d.op == KernelOp::kMaxPool || d.op == KernelOp::kAvgPool
                                                    ? a64gen::generate_pool(d)
                                                : d.op == KernelOp::kClamp || d.op == KernelOp::kLut8
                                                    ? a64gen::generate_bytes(d)
                                                : d.op == KernelOp::kQuantize || d.op == KernelOp::kDequantize
                                                    ? a64gen::generate_convert(d)
                                                    : a64gen::generate_elementwise(d);
    if (!r.is_ok()) return r.status();
    return std::shared_ptr<const CompiledKernel>(std::move(r).value());
  }

 private:
  static bool serves(KernelOp op) {
    return op == KernelOp::kGemm || op == KernelOp::kPackRows || op == KernelOp::kQAdd || op == KernelOp::kQMul ||
           op == KernelOp::kRequantize || op == KernelOp::kQuantize || op == KernelOp::kDequantize ||
           op == KernelOp::kDepthwise || op == KernelOp::kMaxPool || op == KernelOp::kAvgPool || op == KernelOp::kClamp ||
           op == KernelOp::kLut8 || op == KernelOp::kDwInterleave || op == KernelOp::kDwRows;
  }
  Isa isa_;
};

}  // namespace

const Backend& a64_neon_backend() {
  static const A64Backend backend(Isa::kNeon);
  return backend;
}

const Backend& a64_neon_dot_backend() {
  static const A64Backend backend(Isa::kNeonDot);
  return backend;
}

const Backend& a64_neon_i8mm_backend() {
  static const A64Backend backend(Isa::kNeonI8mm);
  return backend;
}

}  // namespace qrt::jit
