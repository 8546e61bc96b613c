// qrt — the scalar twins: a portable C++ implementation of every micro-kernel ABI
// (jit/core/microkernel.h), bit-exact with every backend's kernel of the same description.
// They are the scalar backend's kernels (every host) and the yardstick of the kernel-list
// tests. Unlike generated code they read the description at run time, so one function serves
// every description of its kind (any panel width, tile shape, tap count or signedness).
#pragma once

#include "jit/core/ew_program.h"
#include "jit/core/microkernel.h"

namespace qrt::jit {

/// kQuantize / kDequantize (desc->op decides) over args->n elements (any n, not only whole
/// stream blocks): numerics::quantize_f32 / dequantize_f32 with desc's parameters.
void twin_convert(const ConvertArgs* args, const KernelDesc* desc);
/// kGemm: one desc->mr x desc->nr tile in the packed layout of desc->path (u8 quads, or s16
/// pairs against u16 activations for kMaddwd) and desc->panel, then desc->out's epilogue.
void twin_gemm(const GemmTileArgs* args, const KernelDesc* desc);
/// TFLite's double-rounding requantization (KernelDesc::q31) of accumulator `acc` (bias and
/// corrections in) with the Q31 fields of lane `lane` of an epilogue block `width` lanes wide,
/// narrowed to `out` (kU8 / kS8) at *dst: the twins' and the LLVM templates' Q31 epilogue.
void store_q31_epilogue(int32_t acc, OutKind out, const void* ep, size_t width, size_t lane, uint8_t* dst);
/// kPackRows: one activation row into the layout of desc->path (sign bit flipped for s8
/// storage, zero-padded to k_padded), with the sum of the packed values.
void twin_pack_rows(const PackRowsArgs* args, const KernelDesc* desc);
/// kDepthwise: args->pixels output pixels of desc->channels channels and desc->taps taps,
/// weights and epilogue in the depthwise layout of desc->panel-channel blocks.
void twin_depthwise(const DepthwiseArgs* args, const KernelDesc* desc);
/// kDwInterleave: one input row into the dot4 depthwise layout of desc->panel-lane blocks.
void twin_dw_interleave(const DwInterleaveArgs* args, const KernelDesc* desc);
/// kDwRows: one output row of a dot4 depthwise convolution from desc->kh interleaved rows.
void twin_dw_rows(const DwRowsArgs* args, const KernelDesc* desc);
/// kMaxPool / kAvgPool (desc->op decides) over desc->channels channels and desc->taps taps.
void twin_pool(const PoolArgs* args, const KernelDesc* desc);
/// kQAdd / kQMul / kRequantize (desc->op decides) over args->blocks * 8 elements.
void twin_elementwise(const ElementwiseArgs* args, const KernelDesc* desc);
/// kClamp: y = min(max(x, lo), hi) over stored 8-bit values (desc->storage_signed).
void twin_clamp(const ClampArgs* args, const KernelDesc* desc);
/// kLut8: y[i] = table[x[i]].
void twin_lut8(const LutArgs* args, const KernelDesc* desc);
/// kInterleavePlanes: pixel by pixel, plane by plane.
void twin_interleave_planes(const PlanesArgs* args, const KernelDesc* desc);
/// kF32Gemm: k-ordered f32 sums from +0, one rounding per multiply and add, then the bias
/// and the clamp.
void twin_f32_gemm(const F32GemmArgs* args, const KernelDesc* desc);
/// kWoGemm: the reference's hybrid matmul over packed weights, element by element.
void twin_wo_gemm(const WoGemmArgs* args, const KernelDesc* desc);
/// kDynGemm: the reference's dynamic-i8 matmul over the record layout, element by element.
void twin_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc);
/// kRequantQ31: numerics::requantize_tflite element by element.
void twin_requant_q31(const RequantQ31Args* args, const KernelDesc* desc);
/// kRequantF64: numerics::requantize_onnx element by element.
void twin_requant_f64(const RequantF64Args* args, const KernelDesc* desc);
/// kF32Dwconv: one NHWC depthwise output row, taps in (ky, kx) order, padding skipped.
void twin_f32_dwconv(const F32DwArgs* args, const KernelDesc* desc);

/// kEwProgram: interprets `program` element by element with the reference's formulas
/// (numerics::exp_f32 and the rest), args->rows rows of args->n elements.
void twin_ew_program(const EwArgs* args, const EwProgram* program);

/// The twin of kernel kind `op` as a micro-kernel entry point (null for kCount).
const void* twin_entry(KernelOp op);

}  // namespace qrt::jit
