// qrt — internal to the AArch64 backend: the asmjit a64 generators, each with the ABI of
// jit/core/microkernel.h.
#pragma once

#include <asmjit/arm/a64assembler.h>

#include <functional>
#include <memory>
#include <string>

#include "jit/asmjit_common/asmjit_finish.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"

namespace qrt::jit::a64gen {

using asmjit_common::finish;
using asmjit::a64::Assembler;
using asmjit::a64::GpX;
using asmjit::a64::VecV;

/// Prepares `code` for AArch64; asmjit errors become qrt errors naming d's kernel.
Status init_code(asmjit::CodeHolder& code, const KernelDesc& d);

/// Narrows four int32 vectors (16 lanes, `v[0]` first) to 16 saturated bytes of `out` (s8 or
/// u8) in `dst`, as vpackssdw then vpack{ss,us}wb; `hi` is scratch.
void emit_narrow16(Assembler& a, OutKind out, const VecV (&v)[4], const VecV& dst, const VecV& hi);

/// Registers of a window kernel's pixel loop (DepthwiseArgs and PoolArgs).
struct WindowRegs {
  GpX args, taps, out_pixel, out_stride, pixels, taps_stride, pixel_step, pixel_offset, channel, block_count;
};
/// Where a window kernel's argument block keeps the loop's fields.
struct WindowArgOffsets {
  size_t taps, out, out_stride, pixels, taps_stride, pixel_step;
};
/// Loads the loop's arguments, then per output pixel: per_pixel(), then block(16) over the
/// whole 16-channel blocks (after_block() after each) and block(tail) for the last channels,
/// with `channel` at each block's first channel and `pixel_offset` at p · pixel_step; the
/// pixel's tap pointers are at `taps`.
void emit_window_pixels(Assembler& a, const WindowRegs& r, const WindowArgOffsets& o, uint32_t channels,
                        const std::function<void()>& per_pixel, const std::function<void(unsigned)>& block,
                        const std::function<void()>& after_block);

/// Where an epilogue's operands live: the epilogue block, the row sums (row correction only),
/// the first output row and the bytes between rows, and two scratch registers.
struct EpilogueRegs {
  asmjit::a64::GpX ep, row_sums, out_base, out_stride, out, tmp;
};

/// What an epilogue computes: `rows` rows of 16 lanes held as 4 vectors each (acc(r, j): lanes
/// 4j..4j+3, the epilogue block's lane order), `cols` columns stored from the vectors in
/// store_order; vector registers tmp_base..tmp_base + 7 (+ rows with row_correction) are free.
struct EpilogueLayout {
  unsigned rows = 1, cols = 16;
  OutKind out = OutKind::kU8;
  bool row_correction = false;
  bool q31 = false;           ///< 8-bit results by TFLite's Q31 requantization (KernelDesc::q31)
  unsigned field_bytes = 64;  ///< bytes per epilogue field (4 x the panel or block width)
  std::function<asmjit::a64::VecV(unsigned, unsigned)> acc;
  unsigned store_order[4] = {0, 1, 2, 3};
  unsigned tmp_base = 0;
};

/// The requantization epilogue of GemmTileArgs / DepthwiseArgs (shared_a64.cpp).
void emit_epilogue(asmjit::a64::Assembler& a, const EpilogueLayout& layout, const EpilogueRegs& regs);
/// Saves the callee-saved low halves of v8..v15 (AAPCS64) in 64 bytes of stack.
void save_d8_d15(asmjit::a64::Assembler& a);
/// Restores them and frees the stack.
void restore_d8_d15(asmjit::a64::Assembler& a);
/// Stores the low `bytes` (< 16) bytes of `x` at [base + offset], lane by lane.
void store_low_bytes(asmjit::a64::Assembler& a, const asmjit::a64::VecV& x, const asmjit::a64::GpX& base,
                     unsigned offset, unsigned bytes, const asmjit::a64::GpX& tmp);
/// Loads `bytes` (1..16) bytes at [base] into the low bytes of `x`, zeroing the rest, without
/// reading past them.
void load_low_bytes(asmjit::a64::Assembler& a, const asmjit::a64::VecV& x, const asmjit::a64::GpX& base,
                    unsigned bytes, const asmjit::a64::GpX& tmp);

/// Rows of every AArch64 GEMM tile (16 columns per panel).
constexpr unsigned kGemmRows = 4;

/// kGemm: one tile (GemmTileArgs) of the mlal (NEON), sdot4 (dot product) or usmmla8 (i8mm)
/// path, 1..4 rows x 1..16 columns.
Result<std::shared_ptr<ExecutableCode>> generate_gemm(const KernelDesc& desc);
/// Whether quantize/dequantize parameters are in the range the NEON kernels compute exactly
/// (zero point and bounds within ±2^16): "" or why not.
inline std::string convert_why_not(const KernelDesc& d) {
  const bool small = d.qmin <= d.qmax && d.zero_point >= -65536 && d.zero_point <= 65536 && d.qmin >= -65536 &&
                     d.qmax <= 65536;
  return small ? "" : "zero point or bounds beyond +-65536";
}
/// kQuantize / kDequantize (ConvertArgs), 8 elements per step; convert_why_not(desc) == "".
Result<std::shared_ptr<ExecutableCode>> generate_convert(const KernelDesc& desc);
/// "" when generate_depthwise can build `d`: 16-channel blocks, tap pairs, at most 2^20
/// channels and 1024 taps (immediate counts).
inline std::string depthwise_why_not(const KernelDesc& d) {
  if (d.panel != 16) return "the AArch64 depthwise kernel works in 16-channel blocks";
  if (d.taps == 0 || d.taps % 2 != 0 || d.taps > 1024) return "the window must have an even number of taps, at most 1024";
  if (d.channels == 0 || d.channels > (1u << 20)) return "the AArch64 depthwise kernel takes 1 to 2^20 channels";
  return "";
}
/// kDepthwise (DepthwiseArgs): 16-channel blocks, the x86 lane order (microkernel.h).
Result<std::shared_ptr<ExecutableCode>> generate_depthwise(const KernelDesc& desc);
/// "" when the dot4 depthwise row kernels can take `desc` (beyond dw_rows_why_not): 16-lane
/// blocks, and a pixel pair's interleaved positions within ldr's immediate offsets.
std::string dw_rows_a64_why_not(const KernelDesc& desc);
/// kDwInterleave (DwInterleaveArgs) into s8 quads (desc.path = kSdot4), 16-lane blocks, st4.
Result<std::shared_ptr<ExecutableCode>> generate_dw_interleave_a64(const KernelDesc& desc);
/// kDwRows (DwRowsArgs) on sdot, 16-lane blocks, the GEMM tiles' epilogue (Q31 included).
Result<std::shared_ptr<ExecutableCode>> generate_dw_rows_a64(const KernelDesc& desc);
/// "" when generate_pool can build `d`: 1 to 2^20 channels, at least one tap.
inline std::string pool_why_not(const KernelDesc& d) {
  if (d.op != KernelOp::kMaxPool && d.op != KernelOp::kAvgPool) return "not a pooling kernel";
  if (d.taps == 0) return "the window has no taps";
  if (d.channels == 0 || d.channels > (1u << 20)) return "the AArch64 pooling kernel takes 1 to 2^20 channels";
  return "";
}
/// kMaxPool / kAvgPool (PoolArgs): 16-channel blocks, a loop over the taps.
Result<std::shared_ptr<ExecutableCode>> generate_pool(const KernelDesc& desc);
/// kClamp (ClampArgs) and kLut8 (LutArgs), 16 bytes per step, then byte by byte.
Result<std::shared_ptr<ExecutableCode>> generate_bytes(const KernelDesc& desc);
/// kQAdd / kQMul / kRequantize (ElementwiseArgs), 8 elements per step; every NEON level.
Result<std::shared_ptr<ExecutableCode>> generate_elementwise(const KernelDesc& desc);
/// kDynGemm (DynGemmArgs) on sdot by element, 4- or 8-bit weights: NEON intrinsics compiled
/// for armv8.2-a+dotprod (dynamic_gemm_a64.cpp); call it only where the CPU has the dot product.
void a64_dot_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc);
/// The same at plain neon: sdot by element emulated with vmull_s8 and pairwise widening adds.
void a64_neon_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc);
/// kWoGemm (WoGemmArgs), 4- or 8-bit weights dequantized in registers, 4 rows x 16 columns per
/// step: NEON intrinsics (weight_only_a64.cpp), every level.
void a64_wo_gemm(const WoGemmArgs* args, const KernelDesc* desc);
/// kRequantQ31 with NEON intrinsics (profile_requant_a64.cpp): 8 channels per step, scalar tail.
void a64_requant_q31(const RequantQ31Args* args, const KernelDesc* desc);
/// kRequantF64 with NEON intrinsics: 8 channels per step (f64 pairs), scalar tail.
void a64_requant_f64(const RequantF64Args* args, const KernelDesc* desc);
/// kF32Gemm (F32GemmArgs), 4 rows x 16 columns per step, the reference's order (fmul, fadd):
/// NEON intrinsics (f32_kernels_a64.cpp), every level.
void a64_f32_gemm(const F32GemmArgs* args, const KernelDesc* desc);
/// kF32Dwconv (F32DwArgs), 16 channels per step, taps in (ky, kx) order (f32_kernels_a64.cpp).
void a64_f32_dwconv(const F32DwArgs* args, const KernelDesc* desc);

}  // namespace qrt::jit::a64gen
