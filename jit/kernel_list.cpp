// qrt — the kernel list (see kernel_list.h) and the process-wide code cache behind it.
#include "jit/kernel_list.h"

#include "jit/llvm/llvm_backend.h"
#include "jit/ref/scalar_backend.h"
#if QRT_BACKEND_X86
#include "jit/asmjit_x86/x86_backend.h"
#endif
#if QRT_BACKEND_A64
#include "jit/asmjit_a64/a64_backend.h"
#endif

namespace qrt::jit {

namespace {

std::vector<KernelListRow> make_rows() {
  std::vector<KernelListRow> rows;
  auto every_kind = [&rows](const Backend& b) {
    for (size_t k = 0; k < size_t(KernelOp::kCount); ++k) {
      // Programs are compiled by the backends that compile them (the LLVM rows below) and
      // interpreted by the scalar twin.
      if (KernelOp(k) == KernelOp::kEwProgram && b.isa() != Isa::kScalar) continue;
      // The dot4 depthwise rows exist only where the backend has them (vpdpbusd).
      const bool dw_rows = KernelOp(k) == KernelOp::kDwInterleave || KernelOp(k) == KernelOp::kDwRows;
      if (!dw_rows || b.depthwise_traits().rows_panel != 0 || b.isa() == Isa::kScalar) {
        rows.push_back({KernelOp(k), b.isa(), &b});
      }
    }
  };
#if QRT_BACKEND_X86
  // The host's bf16/f16 array conversions, which every widening kernel uses.
  install_half_conversions(x86_half_conversions());
  // AMX: the GEMM tiles and their packing; avx512-vnni serves the rest.
  rows.push_back({KernelOp::kGemm, Isa::kAvx512Amx, &x86_avx512_amx_backend()});
  rows.push_back({KernelOp::kPackRows, Isa::kAvx512Amx, &x86_avx512_amx_backend()});
  for (const Backend* b : {&x86_avx512_vnni_backend(), &x86_avx2_vnni_backend()}) {
    rows.push_back({KernelOp::kGemm, b->isa(), b});
    rows.push_back({KernelOp::kPackRows, b->isa(), b});
    rows.push_back({KernelOp::kDynGemm, b->isa(), b});
  }
  // The dot4 depthwise rows on ymm (AVX-VNNI), with AVX2's pair kernel for what they refuse (a
  // depthwise op tries one backend per level); AVX-512's are in the list below.
  rows.push_back({KernelOp::kDepthwise, Isa::kAvx2Vnni, &x86_avx2_vnni_backend()});
  rows.push_back({KernelOp::kDwInterleave, Isa::kAvx2Vnni, &x86_avx2_vnni_backend()});
  rows.push_back({KernelOp::kDwRows, Isa::kAvx2Vnni, &x86_avx2_vnni_backend()});
  for (KernelOp op : {KernelOp::kDepthwise, KernelOp::kDwInterleave, KernelOp::kDwRows, KernelOp::kLut8, KernelOp::kF32Gemm,
                      KernelOp::kF32Dwconv, KernelOp::kWoGemm, KernelOp::kQAdd, KernelOp::kQMul, KernelOp::kRequantize,
                      KernelOp::kQuantize, KernelOp::kDequantize, KernelOp::kMaxPool, KernelOp::kAvgPool,
                      KernelOp::kRequantQ31, KernelOp::kRequantF64}) {
    rows.push_back({op, Isa::kAvx512Vnni, &x86_avx512_vnni_backend()});
  }
  every_kind(x86_avx2_backend());
#endif
#if QRT_BACKEND_A64
  // AArch64: GEMM tiles and their activation packing at each level, the element-wise kinds, the
  // weight-only, dynamic-i8 and f32 matmul kernels (dynamic-i8 on sdot where the dot product is,
  // on widening multiplies at plain neon), the dot4 depthwise rows where sdot is; the twins
  // serve the rest.
  for (const Backend* b : {&a64_neon_i8mm_backend(), &a64_neon_dot_backend(), &a64_neon_backend()}) {
    for (KernelOp op : {KernelOp::kGemm, KernelOp::kPackRows, KernelOp::kQAdd, KernelOp::kQMul, KernelOp::kRequantize,
                        KernelOp::kQuantize, KernelOp::kDequantize, KernelOp::kDepthwise, KernelOp::kMaxPool,
                        KernelOp::kAvgPool, KernelOp::kClamp, KernelOp::kLut8, KernelOp::kWoGemm,
                        KernelOp::kF32Gemm, KernelOp::kF32Dwconv, KernelOp::kRequantQ31, KernelOp::kRequantF64,
                        KernelOp::kDynGemm}) {
      rows.push_back({op, b->isa(), b});
    }
    if (b->depthwise_traits().rows_panel != 0) {
      rows.push_back({KernelOp::kDwInterleave, b->isa(), b});
      rows.push_back({KernelOp::kDwRows, b->isa(), b});
    }
  }
#endif
  // Element-wise programs: LLVM at each level it serves (its baseline level ahead of the
  // scalar twin, which interprets them).
  for (Isa isa : {Isa::kAvx512Vnni, Isa::kAvx2, Isa::kScalar}) {
    if (const Backend* b = llvm_backend(isa)) rows.push_back({KernelOp::kEwProgram, isa, b});
  }
  // The LLVM kernel templates (the portable path of QRT_BACKEND_LLVM plans): every micro-kernel
  // kind but the dot4 depthwise rows, at each level LLVM serves. Native selection never sees
  // them (kernel_list_backend matches the generator).
  if (llvm_kernel_templates_built()) {
    for (Isa isa : {Isa::kAvx512Vnni, Isa::kAvx2, Isa::kScalar}) {
      const Backend* b = llvm_backend(isa);
      if (!b) continue;
      for (size_t k = 0; k < size_t(KernelOp::kCount); ++k) {
        const KernelOp op = KernelOp(k);
        if (op != KernelOp::kEwProgram && op != KernelOp::kDwInterleave && op != KernelOp::kDwRows) rows.push_back({op, isa, b});
      }
    }
  }
  // The portable scalar twins: every kind, every host, last in preference.
  every_kind(scalar_backend());
  return rows;
}

}  // namespace

const std::vector<KernelListRow>& kernel_list() {
  static const std::vector<KernelListRow> rows = make_rows();
  return rows;
}

const Backend* kernel_list_backend(KernelOp op, Isa isa, Generator generator) {
  for (const KernelListRow& r : kernel_list()) {
    // Programs have one compiler per level (LLVM, else the interpreting twin) for every plan.
    const bool serves = r.backend->generator() == generator || op == KernelOp::kEwProgram;
    if (r.op == op && r.isa == isa && serves) return r.backend;
  }
  return nullptr;
}

ProgramCache& program_cache() {
  static ProgramCache cache([](const ProgramKey& k) -> Result<std::shared_ptr<const CompiledKernel>> {
    const Backend* b = kernel_list_backend(KernelOp::kEwProgram, k.isa);
    if (!b) return Status::error(std::string("no backend compiles element-wise programs at ") + isa_name(k.isa));
    return b->compile_program(k.program);
  });
  return cache;
}

CodeCache& code_cache() {
  static CodeCache cache([](const KernelDesc& d) -> Result<std::shared_ptr<const CompiledKernel>> {
    const Backend* b = kernel_list_backend(d.op, d.isa, d.generator);
    if (!b) {
      return Status::error(std::string("no ") + generator_name(d.generator) + " backend serves " + isa_name(d.isa) +
                           " for kernel " + d.name());
    }
    return b->generate(d);
  });
  return cache;
}

}  // namespace qrt::jit
