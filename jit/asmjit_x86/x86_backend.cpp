// qrt — the x86 backend, one Backend per level (see x86_backend.h): traits, applicability
// and dispatch to the generators.
//   avx2:        every kernel kind (asmjit generators; packing, clamp and the f32 GEMM in
//                AVX2 intrinsics).
//   avx2-vnni:   the GEMM tile on VEX vpdpbusd over ymm (6 rows x 16 columns) and its
//                activation packing; other kinds come from the avx2 level.
//   avx512-vnni: the GEMM tile on EVEX vpdpbusd over zmm (12 rows x 32 columns, masked
//                tails) and its activation packing; depthwise on zmm (32-channel blocks);
//                f32 GEMM, byte tables and the weight-only matmul on zmm.
//   avx512-amx:  the GEMM tile on AMX tdpbusd (32 rows x 32 columns, 64 bytes of k per step)
//                and its activation packing (AVX-512's); other kinds come from avx512-vnni.
#include "jit/asmjit_x86/x86_backend.h"

#include <string>

#include "jit/asmjit_x86/generators.h"

namespace qrt::jit {

namespace {

/// The element-wise and convert kinds (StreamTraits).
bool is_stream_op(KernelOp op) {
  return op == KernelOp::kQAdd || op == KernelOp::kQMul || op == KernelOp::kRequantize || op == KernelOp::kQuantize ||
         op == KernelOp::kDequantize;
}

class X86Backend final : public Backend {
 public:
  explicit X86Backend(Isa isa) : isa_(isa) {}
  const char* name() const override { return "x86"; }
  Isa isa() const override { return isa_; }
  bool available() const override { return host_isas().has(isa_); }

  std::optional<GemmTraits> gemm_traits(GemmPath path) const override {
    std::optional<GemmTraits> t = byte_tile_traits(path);
    // The byte paths' tiles also read convolution windows in place (GemmTileArgs::tap_offsets).
    if (t && t->a_bytes == 1) t->window_taps = true;
    // The zmm tiles' GEMV prefetch (gemm_avx512.cpp).
    if (t && isa_ == Isa::kAvx512Vnni) t->prefetch_tiles = true;
    return t;
  }
  std::optional<GemmTraits> byte_tile_traits(GemmPath path) const {
    switch (isa_) {
      case Isa::kAvx2:
        // vpmaddubsw needs a register for its s16 ones: 4 rows x 2 accumulators; the widened
        // vpmaddwd path fits 6 x 2 of the 16 ymm registers.
        // Every tile narrows with saturating packs, so each honours KernelDesc::saturate.
        // Every tile has the Q31 (tflite) epilogue.
        if (path == GemmPath::kMaddubs) return GemmTraits{4, 16, 4, 1, true, true};
        if (path == GemmPath::kMaddwd) return GemmTraits{6, 16, 2, 2, true, true};
        return std::nullopt;
      case Isa::kAvx2Vnni:
        // 12 ymm accumulators, 2 weight registers, 1 broadcast.
        if (path == GemmPath::kDot4) return GemmTraits{6, 16, 4, 1, true, true};
        return std::nullopt;
      case Isa::kAvx512Vnni:
        // 24 zmm accumulators, 2 weight registers, broadcasts: 28 of 32.
        if (path == GemmPath::kDot4) return GemmTraits{x86gen::kAvx512GemmRows, 32, 4, 1, true, true};
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }
  DepthwiseTraits depthwise_traits() const override {
    // The dot4 row path: 32-lane blocks on zmm, 16-lane blocks on ymm with AVX-VNNI, and on
    // plain AVX2 the same quads split into u16 pairs for vpmaddwd (s16 weights).
    if (isa_ == Isa::kAvx512Vnni) return DepthwiseTraits{32, 32};
    return isa_ == Isa::kAvx2Vnni ? DepthwiseTraits{16, 16} : DepthwiseTraits{16, 16, false, true};
  }
  // AVX-512 stream kernels take 16 lanes per step and finish any tail in one masked step.
  StreamTraits stream_traits() const override { return {8, isa_ == Isa::kAvx512Vnni}; }

  std::string why_not(const KernelDesc& d) const override {
    if (d.isa != isa_) {
      return std::string("the x86 ") + isa_name(isa_) + " backend does not generate " + isa_name(d.isa) + " kernels";
    }
    if (!available()) return std::string("the CPU lacks ") + isa_name(isa_);
    if (d.op == KernelOp::kCount) return "not a kernel kind";
    if (d.op == KernelOp::kEwProgram) return "the asmjit backend compiles no element-wise programs";
    const bool served = isa_ == Isa::kAvx2 || d.op == KernelOp::kGemm || d.op == KernelOp::kPackRows || d.op == KernelOp::kDynGemm ||
                        (isa_ == Isa::kAvx2Vnni && (d.op == KernelOp::kDepthwise || d.op == KernelOp::kDwInterleave ||
                                                    d.op == KernelOp::kDwRows)) ||
                        (isa_ == Isa::kAvx512Vnni && (d.op == KernelOp::kDepthwise || d.op == KernelOp::kDwInterleave ||
                                                      d.op == KernelOp::kDwRows || d.op == KernelOp::kLut8 ||
                                                      d.op == KernelOp::kF32Gemm || d.op == KernelOp::kF32Dwconv ||
                                                      d.op == KernelOp::kWoGemm || d.op == KernelOp::kRequantQ31 || d.op == KernelOp::kRequantF64 ||
                                                      is_stream_op(d.op) ||
                                                      d.op == KernelOp::kMaxPool || d.op == KernelOp::kAvgPool));
    if (!served) {
      return std::string("no ") + kernel_op_name(d.op) + " kernel at this level";
    }
    // The 256-entry table in four zmm registers needs vpermi2b (Ice Lake, Zen 4 and later; not
    // Cascade Lake): without it the AVX2 level's kernel serves.
    if (d.op == KernelOp::kLut8 && isa_ == Isa::kAvx512Vnni && !host_cpu_features().avx512_vbmi) {
      return "the CPU lacks AVX-512 VBMI (vpermi2b)";
    }
    if (d.op == KernelOp::kGemm) return gemm_tile_why_not(d, gemm_traits(d.path));
    // f16 weights round with vcvtps2ph: AVX-512 F has it, the AVX2 levels need F16C (every
    // AVX2 CPU made has it, but the CPUID bit is what counts).
    if (d.op == KernelOp::kWoGemm && d.weight_round == WeightRound::kF16 && isa_ != Isa::kAvx512Vnni &&
        !__builtin_cpu_supports("f16c")) {
      return "the CPU lacks F16C (vcvtps2ph) for f16 weights";
    }
    if (d.op == KernelOp::kPackRows && !gemm_traits(d.path)) return "no such GEMM path at this level";
    if (d.op == KernelOp::kDwInterleave || d.op == KernelOp::kDwRows) return dw_rows_why_not(d, depthwise_traits().rows_panel, true, false, true, depthwise_traits().rows_maddwd);
    return window_kernel_why_not(d, depthwise_traits().block);
  }

  Result<std::shared_ptr<const CompiledKernel>> generate(const KernelDesc& d) const override {
    if (std::string why = why_not(d); !why.empty()) return Status::error(d.name() + ": " + why);
    switch (d.op) {
      case KernelOp::kQuantize:
      case KernelOp::kDequantize:
        return cast(isa_ == Isa::kAvx512Vnni ? x86gen::generate_avx512_convert(d) : x86gen::generate_avx2_convert(d));
      case KernelOp::kGemm:
        return cast(isa_ == Isa::kAvx512Vnni ? x86gen::generate_avx512_gemm(d) : x86gen::generate_avx2_gemm(d));
      case KernelOp::kDepthwise:
        return cast(isa_ == Isa::kAvx512Vnni ? x86gen::generate_avx512_depthwise(d) : x86gen::generate_avx2_depthwise(d));
      case KernelOp::kDwInterleave:
        return cast(isa_ == Isa::kAvx512Vnni ? x86gen::generate_avx512_dw_interleave(d) : x86gen::generate_avx2vnni_dw_interleave(d));
      case KernelOp::kDwRows:
        return cast(isa_ == Isa::kAvx512Vnni ? x86gen::generate_avx512_dw_rows(d) : x86gen::generate_avx2vnni_dw_rows(d));
      case KernelOp::kQAdd:
      case KernelOp::kQMul:
      case KernelOp::kRequantize:
        return cast(isa_ == Isa::kAvx512Vnni ? x86gen::generate_avx512_elementwise(d) : x86gen::generate_avx2_elementwise(d));
      case KernelOp::kMaxPool:
      case KernelOp::kAvgPool:
        return cast(isa_ == Isa::kAvx512Vnni ? x86gen::generate_avx512_pool(d) : x86gen::generate_avx2_pool(d));
      case KernelOp::kPackRows:  // AVX2 is part of every level
        return fixed(isa_ == Isa::kAvx512Vnni ? &x86gen::avx512_pack_rows : &x86gen::avx2_pack_rows);
      case KernelOp::kClamp: return fixed(&x86gen::avx2_clamp);
      case KernelOp::kInterleavePlanes: return fixed(&x86gen::avx2_interleave_planes);
      case KernelOp::kF32Gemm: return fixed(isa_ == Isa::kAvx512Vnni ? &x86gen::avx512_f32_gemm : &x86gen::avx2_f32_gemm);
      case KernelOp::kF32Dwconv:
        return fixed(isa_ == Isa::kAvx512Vnni ? &x86gen::avx512_f32_dwconv : &x86gen::avx2_f32_dwconv);
      case KernelOp::kLut8: return fixed(isa_ == Isa::kAvx512Vnni ? &x86gen::avx512_lut8 : &x86gen::avx2_lut8);
      case KernelOp::kWoGemm:
        if (d.weight_bits != 8 && d.weight_bits != 4) return Status::error(d.name() + ": weights of 8 or 4 bits only");
        return fixed(isa_ == Isa::kAvx512Vnni ? &x86gen::avx512_wo_gemm : &x86gen::avx2_wo_gemm);
      case KernelOp::kDynGemm:
        if (d.weight_bits != 8 && d.weight_bits != 4) return Status::error(d.name() + ": weights of 8 or 4 bits only");
        return fixed(isa_ == Isa::kAvx512Vnni ? &x86gen::avx512_dyn_gemm
                     : isa_ == Isa::kAvx2Vnni ? &x86gen::avx2_vnni_dyn_gemm
                                              : &x86gen::avx2_dyn_gemm);
      case KernelOp::kRequantQ31:
        return fixed(isa_ == Isa::kAvx512Vnni ? &x86gen::avx512_requant_q31 : &x86gen::avx2_requant_q31);
      case KernelOp::kRequantF64:
        return fixed(isa_ == Isa::kAvx512Vnni ? &x86gen::avx512_requant_f64 : &x86gen::avx2_requant_f64);
      case KernelOp::kEwProgram:  // programs are compiled (compile_program), never generated from a description
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

  Isa isa_;
};

/// The AMX level: GEMM tiles only (AmxBackend::why_not); selection takes every other kind from
/// the avx512-vnni level below it.
class AmxBackend final : public Backend {
 public:
  const char* name() const override { return "x86"; }
  Isa isa() const override { return Isa::kAvx512Amx; }
  bool available() const override { return host_isas().has(Isa::kAvx512Amx); }
  std::optional<GemmTraits> gemm_traits(GemmPath path) const override {
    // Two A and two B tiles, four accumulators; the dot4 layout of the AVX-512 tiles, stepped
    // 64 bytes of k (16 quads) at a time. u8 rows on tdpbusd (dot4), s8 rows on tdpbssd
    // (sdot4: the same weight layout), each read as it is stored.
    if (path != GemmPath::kDot4 && path != GemmPath::kSdot4) return std::nullopt;
    GemmTraits t{32, 32, 4, 1, true, true};
    t.k_step = 64;
    // Below one whole step the four accumulator tiles' trip through memory costs more than
    // the products save: mobilenet_v2's 1x1 convolutions of 16-32 input channels ran 8-35%
    // slower than on avx512-vnni's registers (Intel Xeon model 167, 2026-11-26).
    t.min_k = 64;
    // Convolutions whose channels fill whole steps read their windows in place (gemm_amx.cpp).
    t.window_taps = true;
    return t;
  }
  DepthwiseTraits depthwise_traits() const override { return {}; }
  StreamTraits stream_traits() const override { return {16, true}; }
  // The tiles load their configuration only when the thread's differs (gemm_amx.cpp) and
  // leave it loaded; the driver releases it after a task's last tile.
  bool keeps_thread_state() const override { return true; }
  void release_thread_state() const override { asm volatile("tilerelease" ::: "memory"); }
  std::string why_not(const KernelDesc& d) const override {
    if (d.isa != Isa::kAvx512Amx) {
      return std::string("the x86 avx512-amx backend does not generate ") + isa_name(d.isa) + " kernels";
    }
    if (!available()) return "the CPU (or the OS) does not offer AMX-INT8";
    if (d.op == KernelOp::kGemm) return gemm_tile_why_not(d, gemm_traits(d.path));
    if (d.op == KernelOp::kPackRows) return gemm_traits(d.path) ? "" : "no such GEMM path at this level";
    return std::string("no ") + kernel_op_name(d.op) + " kernel at this level";
  }
  Result<std::shared_ptr<const CompiledKernel>> generate(const KernelDesc& d) const override {
    if (std::string why = why_not(d); !why.empty()) return Status::error(d.name() + ": " + why);
    if (d.op == KernelOp::kPackRows) {
      return std::shared_ptr<const CompiledKernel>(
          std::make_shared<StaticKernel>(reinterpret_cast<const void*>(&x86gen::avx512_pack_rows)));
    }
    auto r = x86gen::generate_amx_gemm(d);
    if (!r.is_ok()) return r.status();
    return std::shared_ptr<const CompiledKernel>(std::move(r).value());
  }
};

}  // namespace

const Backend& x86_avx512_amx_backend() {
  static const AmxBackend backend;
  return backend;
}

const Backend& x86_avx2_backend() {
  static const X86Backend backend(Isa::kAvx2);
  return backend;
}

const Backend& x86_avx2_vnni_backend() {
  static const X86Backend backend(Isa::kAvx2Vnni);
  return backend;
}

const Backend& x86_avx512_vnni_backend() {
  static const X86Backend backend(Isa::kAvx512Vnni);
  return backend;
}

}  // namespace qrt::jit
