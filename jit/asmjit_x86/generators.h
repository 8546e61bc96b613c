// qrt — internal to the x86 backend: the asmjit generators (one file per kernel kind) and
// the AVX2 C++ micro-kernels, each with the ABI of jit/core/microkernel.h.
#pragma once

#include <memory>

#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"

namespace qrt::jit::x86gen {

/// kQuantize / kDequantize: whole blocks of 8 elements (ConvertArgs::n a multiple of 8).
Result<std::shared_ptr<ExecutableCode>> generate_avx2_convert(const KernelDesc& desc);
/// Rows of the AVX-512 GEMM tile.
constexpr unsigned kAvx512GemmRows = 12;

/// kGemm on ymm: one tile (GemmTileArgs) of the maddubs and maddwd paths (AVX2) or the dot4
/// path (AVX-VNNI, VEX vpdpbusd).
Result<std::shared_ptr<ExecutableCode>> generate_avx2_gemm(const KernelDesc& desc);
/// kGemm on zmm: one tile of the dot4 path (AVX-512 VNNI), 32 columns per panel.
Result<std::shared_ptr<ExecutableCode>> generate_avx512_gemm(const KernelDesc& desc);
/// kGemm on AMX tiles: one tile of the dot4 path, up to 32 rows x 32 columns (gemm_amx.cpp).
Result<std::shared_ptr<ExecutableCode>> generate_amx_gemm(const KernelDesc& desc);
/// kDepthwise (DepthwiseArgs) on ymm, 16-channel blocks.
Result<std::shared_ptr<ExecutableCode>> generate_avx2_depthwise(const KernelDesc& desc);
/// kDepthwise on zmm, 32-channel blocks (AVX-512).
Result<std::shared_ptr<ExecutableCode>> generate_avx512_depthwise(const KernelDesc& desc);
/// kDwInterleave (DwInterleaveArgs) on zmm, 64-lane blocks (AVX-512 BW).
Result<std::shared_ptr<ExecutableCode>> generate_avx512_dw_interleave(const KernelDesc& desc);
/// kDwRows (DwRowsArgs) on zmm, 64-lane blocks (AVX-512 VNNI vpdpbusd).
Result<std::shared_ptr<ExecutableCode>> generate_avx512_dw_rows(const KernelDesc& desc);
/// kDwInterleave on ymm/xmm, 16-lane blocks (VEX only).
Result<std::shared_ptr<ExecutableCode>> generate_avx2vnni_dw_interleave(const KernelDesc& desc);
/// kDwRows on ymm, 16-lane blocks (AVX-VNNI {vex} vpdpbusd).
Result<std::shared_ptr<ExecutableCode>> generate_avx2vnni_dw_rows(const KernelDesc& desc);
/// kQAdd / kQMul / kRequantize (ElementwiseArgs).
Result<std::shared_ptr<ExecutableCode>> generate_avx2_elementwise(const KernelDesc& desc);
/// kQAdd / kQMul / kRequantize on zmm: 16 lanes per step, the tail (ElementwiseArgs::tail
/// included) in one masked step.
Result<std::shared_ptr<ExecutableCode>> generate_avx512_elementwise(const KernelDesc& desc);
/// kQuantize / kDequantize on zmm: any ConvertArgs::n, the tail in one masked step.
Result<std::shared_ptr<ExecutableCode>> generate_avx512_convert(const KernelDesc& desc);
/// kMaxPool / kAvgPool (PoolArgs).
Result<std::shared_ptr<ExecutableCode>> generate_avx2_pool(const KernelDesc& desc);
/// kMaxPool / kAvgPool on zmm: 64-channel blocks, the last one masked.
Result<std::shared_ptr<ExecutableCode>> generate_avx512_pool(const KernelDesc& desc);

/// kPackRows with AVX2 intrinsics (32 values per step, the row sum by vpsadbw).
void avx2_pack_rows(const PackRowsArgs* args, const KernelDesc* desc);
/// kPackRows with AVX-512 intrinsics on the byte paths (64 values per step, the row's tail
/// and zero padding in one masked step).
void avx512_pack_rows(const PackRowsArgs* args, const KernelDesc* desc);
/// kClamp with AVX2 intrinsics.
void avx2_clamp(const ClampArgs* args, const KernelDesc* desc);
/// kLut8 with AVX2 intrinsics (sixteen vpshufb sub-tables per 32 bytes).
void avx2_lut8(const LutArgs* args, const KernelDesc* desc);
/// kInterleavePlanes with AVX2 intrinsics, 32 pixels per step (vpshufb per 128-bit lane for 3
/// planes, vpunpck for 2 and 4); every x86 level runs it.
void avx2_interleave_planes(const PlanesArgs* args, const KernelDesc* desc);
/// kLut8 with AVX-512 VBMI intrinsics (two vpermi2b and a blend per 64 bytes, masked tail).
void avx512_lut8(const LutArgs* args, const KernelDesc* desc);
/// kRequantQ31 with AVX2 intrinsics (profile_requant_x86.cpp): 8 channels per step, scalar tail.
void avx2_requant_q31(const RequantQ31Args* args, const KernelDesc* desc);
/// kRequantQ31 with AVX-512 intrinsics: 16 channels per step, masked tail.
void avx512_requant_q31(const RequantQ31Args* args, const KernelDesc* desc);
/// kRequantF64 with AVX2 intrinsics: 8 channels per step (two 4-lane f64 halves), scalar tail.
void avx2_requant_f64(const RequantF64Args* args, const KernelDesc* desc);
/// kRequantF64 with AVX-512 intrinsics: 16 channels per step (two 8-lane f64 halves), masked tail.
void avx512_requant_f64(const RequantF64Args* args, const KernelDesc* desc);
/// kF32Gemm with AVX2 intrinsics: 6 x 16 tiles, separate multiply and add, k in order.
void avx2_f32_gemm(const F32GemmArgs* args, const KernelDesc* desc);
/// kF32Gemm with AVX-512 intrinsics: 12 x 32 tiles, masked column tails.
void avx512_f32_gemm(const F32GemmArgs* args, const KernelDesc* desc);
/// kWoGemm with AVX2 (weight_only_x86.cpp): 16 columns x up to 4 rows per step.
void avx2_wo_gemm(const WoGemmArgs* args, const KernelDesc* desc);
/// kWoGemm with AVX-512 (weight_only_x86.cpp): 64 columns x up to 4 rows per step, masked tails.
void avx512_wo_gemm(const WoGemmArgs* args, const KernelDesc* desc);
/// kDynGemm with AVX-512 VNNI (dynamic_gemm_x86.cpp): vpdpbusd, 64 columns x up to 4 rows.
void avx512_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc);
/// kDynGemm with AVX-VNNI ({vex} vpdpbusd on ymm): 16 columns x up to 2 rows.
void avx2_vnni_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc);
/// kDynGemm with AVX2 (vpmaddubsw + vpmaddwd, exact: see dynamic_gemm_x86.cpp).
void avx2_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc);
/// kF32Dwconv with AVX2 intrinsics: 8 channels per vector, 3-wide windows' weights in registers.
void avx2_f32_dwconv(const F32DwArgs* args, const KernelDesc* desc);
/// kF32Dwconv with AVX-512 intrinsics: 16 channels per vector, masked channel tail.
void avx512_f32_dwconv(const F32DwArgs* args, const KernelDesc* desc);

}  // namespace qrt::jit::x86gen
